package client

import (
	"context"
	"fmt"
	"iter"
	"net/http"
	"strings"

	"github.com/linoone/linoone/api/management"
)

// LinksQuery selects the links Links lists.
type LinksQuery struct {
	// Search is a case-insensitive substring of the target URL, or an exact
	// token; empty lists every link.
	Search string
	// PageSize is how many links one request asks for, 1 to 100; 0 leaves it to
	// the API.
	PageSize int
	// Cursor starts at a page a LinksPage call returned; empty starts at the
	// newest link.
	Cursor string
}

// LinksPage is one page of GET /links.
type LinksPage struct {
	Links []Link // newest first
	// Next is the cursor of the next page; empty on the last page.
	Next string
}

// LinksPage reads one page of links, newest first, with GET /links: what a
// user interface that pages needs.
func (c *Client) LinksPage(ctx context.Context, q LinksQuery) (LinksPage, error) {
	var params management.ListLinksParams
	if q.Search != "" {
		params.Q = &q.Search
	}
	if q.PageSize != 0 {
		params.Limit = &q.PageSize
	}
	if q.Cursor != "" {
		params.Cursor = &q.Cursor
	}
	call := "GET /links"
	res, err := c.do(ctx, call, c.retry.attempts, func(ctx context.Context) (*http.Response, error) {
		return c.api.ListLinks(ctx, &params)
	})
	if err != nil {
		return LinksPage{}, err
	}
	r, err := management.ParseListLinksResponse(res)
	if err != nil {
		return LinksPage{}, fmt.Errorf("%s: %w", call, err)
	}
	if r.JSON200 == nil || r.JSON200.Items == nil {
		return LinksPage{}, unexpected(call, r.StatusCode(), r.Body)
	}
	page := LinksPage{Links: make([]Link, len(r.JSON200.Items))}
	for i, l := range r.JSON200.Items {
		link, ok := linkOf(l)
		if !ok {
			return LinksPage{}, unexpected(call, r.StatusCode(), r.Body)
		}
		page.Links[i] = link
	}
	if n := r.JSON200.NextCursor; n != nil {
		page.Next = *n
	}
	return page, nil
}

// Links lists the links q selects, newest first, over every page: it asks for
// the next page when the loop has taken the current one. An error ends the
// sequence, after it is yielded with a zero Link.
func (c *Client) Links(ctx context.Context, q LinksQuery) iter.Seq2[Link, error] {
	return func(yield func(Link, error) bool) {
		for {
			page, err := c.LinksPage(ctx, q)
			if err != nil {
				yield(Link{}, err)
				return
			}
			for _, l := range page.Links {
				if !yield(l, nil) {
					return
				}
			}
			if page.Next == "" {
				return
			}
			q.Cursor = page.Next
		}
	}
}

// QROptions shape a QR code; zero values leave them to the API (SVG, its
// default size, a quiet zone of 4 modules, error correction M).
type QROptions struct {
	Format string // "svg" or "png"
	Size   int    // width and height in pixels, 64 to 2048
	Margin int    // quiet zone in modules
	ECC    string // "L", "M", "Q" or "H"
}

// QR reads the QR code of token's short URL with GET /links/{token}/qr and
// returns the image with its content type. A blocked link is a *Problem with
// status 410; an unknown token is ErrNotFound.
func (c *Client) QR(ctx context.Context, token string, o QROptions) ([]byte, string, error) {
	var params management.GetLinkQRParams
	if o.Format != "" {
		f := management.GetLinkQRParamsFormat(strings.ToLower(o.Format))
		params.Format = &f
	}
	if o.Size != 0 {
		params.Size = &o.Size
	}
	if o.Margin != 0 {
		params.Margin = &o.Margin
	}
	if o.ECC != "" {
		e := management.GetLinkQRParamsEcc(strings.ToUpper(o.ECC))
		params.Ecc = &e
	}
	call := "GET /links/" + token + "/qr"
	res, err := c.do(ctx, call, c.retry.attempts, func(ctx context.Context) (*http.Response, error) {
		return c.api.GetLinkQR(ctx, token, &params)
	})
	if err != nil {
		return nil, "", err
	}
	r, err := management.ParseGetLinkQRResponse(res)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", call, err)
	}
	ct := res.Header.Get("Content-Type")
	if r.StatusCode() != http.StatusOK || len(r.Body) == 0 || !strings.HasPrefix(ct, "image/") {
		return nil, "", unexpected(call, r.StatusCode(), r.Body)
	}
	return r.Body, ct, nil
}
