package console

import (
	"errors"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"

	"github.com/linoone/linoone/client"
	"github.com/linoone/linoone/internal/core/shorturl"
)

// linksPerPage is how many links the Links page shows at once.
const linksPerPage = 25

// linksView is what the Links page shows.
type linksView struct {
	Query  string
	Links  []client.Link
	Cursor string // the cursor of this page, "" on the first
	Next   string // the cursor of the next page, "" on the last
}

// linksPage lists the links newest first through GET /links, one page at a
// time, searched by target URL substring or exact token. A short URL pasted in
// opens its link.
func (s *Server) linksPage(w http.ResponseWriter, r *http.Request, sess *session) {
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	cursor := r.URL.Query().Get("cursor")
	if tok, ok := shortURLToken(q); ok {
		http.Redirect(w, r, "/link/"+tok, http.StatusSeeOther)
		return
	}
	v := linksView{Query: q, Cursor: cursor}
	d := pageData{Title: "Links", Nav: "links", Data: &v}
	if len(q) > 2048 || len(cursor) > 512 {
		d.Error = "That search is too long: give part of a target URL or a token."
		s.render(w, r, http.StatusUnprocessableEntity, "links", sess, d)
		return
	}
	ctx, cancel := callContext(r)
	defer cancel()
	page, err := s.cfg.API.LinksPage(ctx, client.LinksQuery{Search: q, PageSize: linksPerPage, Cursor: cursor})
	if err != nil {
		d.Error = "The links could not be listed: " + inWords(err)
		s.render(w, r, http.StatusBadGateway, "links", sess, d)
		return
	}
	v.Links, v.Next = page.Links, page.Next
	s.render(w, r, http.StatusOK, "links", sess, d)
}

// shortURLToken is the token of s when s is a URL whose last path segment is
// one; a bare word is a search, since a target may hold a 10-letter word.
func shortURLToken(s string) (string, bool) {
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return "", false
	}
	tok := path.Base(u.Path)
	return tok, shorturl.IsToken(tok)
}

// qrFormats are the image formats the console passes on, with the file
// extension of a download.
var qrFormats = map[string]string{"svg": "svg", "png": "png"}

// linkQR serves the link's QR code from GET /links/{token}/qr, signed by the
// console, so that the page shows it as an image of its own origin (CSP img-src
// 'self'). ?download=1 makes it an attachment.
func (s *Server) linkQR(w http.ResponseWriter, r *http.Request, sess *session) {
	token := r.PathValue("token")
	format := r.URL.Query().Get("format")
	if format == "" {
		format = "svg"
	}
	ext, ok := qrFormats[format]
	if !shorturl.IsToken(token) || !ok {
		http.Error(w, "want a token and format svg or png", http.StatusNotFound)
		return
	}
	size := 256
	if v := r.URL.Query().Get("size"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 64 || n > 2048 {
			http.Error(w, "size is 64 to 2048 pixels", http.StatusBadRequest)
			return
		}
		size = n
	}
	ctx, cancel := callContext(r)
	defer cancel()
	img, ct, err := s.cfg.API.QR(ctx, token, client.QROptions{Format: format, Size: size})
	if err != nil {
		status := http.StatusBadGateway
		var p *client.Problem
		if errors.As(err, &p) && p.Status < 500 {
			status = p.Status
		}
		http.Error(w, inWords(err), status)
		return
	}
	if ct != "image/svg+xml" && ct != "image/png" {
		http.Error(w, "the management API answered a QR code of type "+ct, http.StatusBadGateway)
		return
	}
	h := w.Header()
	h.Set("Content-Type", ct)
	h.Set("Cache-Control", "private, max-age=300")
	// An SVG opened on its own is a document: no script of it may run.
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; sandbox")
	if r.URL.Query().Get("download") == "1" {
		h.Set("Content-Disposition", `attachment; filename="`+token+`-qr.`+ext+`"`)
	}
	_, _ = w.Write(img)
}
