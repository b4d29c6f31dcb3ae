package mgmtapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/linoone/linoone/api/management"
	"github.com/linoone/linoone/internal/core/denylist"
	"github.com/linoone/linoone/internal/core/qr"
	"github.com/linoone/linoone/internal/core/shorturl"
)

// Lister reads pages of short URLs back from the graph, newest first (links.go's
// Clicker reads one).
type Lister interface {
	Links(ctx context.Context, q shorturl.ListQuery) (shorturl.LinkPage, error)
}

// DenyList is the operator's deny list in force, read at each answer (a
// *denylist.Holder): a listing and an inspection say which rule blocks a link.
type DenyList interface {
	List() *denylist.List
}

// linkOf is the wire form of a link with the deny list's verdict at this moment.
// The management API is the operator's: unlike a visitor's 410 or a producer's 422,
// which name only the rule's kind, it names the rule itself.
func (s managementServer) linkOf(l shorturl.Link) management.Link {
	out := management.Link{Token: string(l.Token), ShortURL: l.Path, TargetURL: l.Target}
	if !l.CreatedAt.IsZero() {
		at := l.CreatedAt
		out.CreatedAt = &at
	}
	if s.deny == nil {
		return out
	}
	if r, blocked := s.deny.List().Match(l.Target); blocked {
		out.Blocked = true
		out.BlockRule = &management.BlockRule{Kind: management.BlockRuleKind(r.Kind), Rule: r.Text}
		if r.Line > 0 {
			line := r.Line
			out.BlockRule.Line = &line
		}
	}
	return out
}

// ListLinks answers a page of short URLs, newest first, each with its deny-list
// verdict.
func (s managementServer) ListLinks(ctx context.Context, req management.ListLinksRequestObject) (management.ListLinksResponseObject, error) {
	var limit int
	var cursor, search string
	if p := req.Params.Limit; p != nil {
		limit = *p
		if limit == 0 { // 0 would read as "the default"
			limit = -1
		}
	}
	if p := req.Params.Cursor; p != nil {
		cursor = *p
	}
	if p := req.Params.Q; p != nil {
		search = *p
	}
	q, err := shorturl.ParseListQuery(limit, cursor, search)
	if err != nil {
		return nil, err
	}
	if s.lister == nil {
		return nil, errors.New("management api has no lister")
	}
	page, err := s.lister.Links(ctx, q)
	s.observePersist(ctx, err)
	if err != nil {
		return nil, err
	}
	res := management.ListLinks200JSONResponse{Items: make([]management.Link, len(page.Links))}
	for i, l := range page.Links {
		res.Items[i] = s.linkOf(l)
	}
	if page.Next != nil {
		next := page.Next.Encode()
		res.NextCursor = &next
	}
	return res, nil
}

// qrCacheControl: a short URL never changes, so neither does its code.
const qrCacheControl = "private, max-age=31536000, immutable"

// GetLinkQR answers the QR code of a short URL, or 404 and 410 as the resolver.
func (s managementServer) GetLinkQR(ctx context.Context, req management.GetLinkQRRequestObject) (management.GetLinkQRResponseObject, error) {
	tok, err := shorturl.ParseToken(req.Token)
	if err != nil {
		return nil, err
	}
	p := req.Params
	format, size, margin, ecc := "svg", 256, 4, ""
	if p.Format != nil {
		format = string(*p.Format)
	}
	if p.Size != nil {
		size = *p.Size
	}
	if p.Margin != nil {
		margin = *p.Margin
	}
	if p.Ecc != nil {
		ecc = string(*p.Ecc)
	}
	level, err := qr.ParseECC(ecc)
	switch {
	case err != nil:
		return nil, &shorturl.ParamError{Rule: "qr-parameter-invalid", Detail: err.Error()}
	case format != "svg" && format != "png", size < 64 || size > 2048, margin < 0 || margin > 16:
		return nil, &shorturl.ParamError{Rule: "qr-parameter-invalid", Detail: "format is svg or png, size 64 to 2048, margin 0 to 16"}
	}
	l, err := s.clicker.Link(ctx, tok)
	s.observePersist(ctx, err)
	if err != nil {
		return nil, err
	}
	if v := s.linkOf(l); v.Blocked {
		return nil, &shorturl.BlockedError{Token: tok, Kind: string(v.BlockRule.Kind)}
	}
	img, err := drawQR(l.Path, level, format, size, margin)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(img)
	h := management.GetLinkQR200ResponseHeaders{CacheControl: qrCacheControl, ETag: `"` + hex.EncodeToString(sum[:16]) + `"`}
	if p.IfNoneMatch != nil && etagMatches(*p.IfNoneMatch, h.ETag) {
		return management.GetLinkQR304Response{Headers: management.GetLinkQR304ResponseHeaders(h)}, nil
	}
	if format == "png" {
		return management.GetLinkQR200ImagePngResponse{Body: bytes.NewReader(img), Headers: h, ContentLength: int64(len(img))}, nil
	}
	return management.GetLinkQR200ImageSvgXMLResponse{Body: bytes.NewReader(img), Headers: h, ContentLength: int64(len(img))}, nil
}

// drawQR encodes the short URL, byte for byte, and draws it.
func drawQR(shortURL string, level qr.ECC, format string, size, margin int) ([]byte, error) {
	c, err := qr.Encode(shortURL, level)
	if err != nil {
		return nil, fmt.Errorf("qr code of %s: %w", shortURL, err)
	}
	var img []byte
	if format == "png" {
		img, err = c.PNG(size, margin)
	} else {
		img, err = c.SVG(size, margin)
	}
	if errors.Is(err, qr.ErrTooSmall) {
		return nil, &shorturl.ParamError{Rule: "qr-size-too-small", Detail: err.Error()}
	}
	return img, err
}

// etagMatches is If-None-Match's weak comparison (RFC 9110 13.1.2): "*", or any of
// the listed tags with or without W/.
func etagMatches(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == "*" || t == etag {
			return true
		}
	}
	return false
}
