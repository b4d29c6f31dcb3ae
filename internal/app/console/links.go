package console

import (
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/linoone/linoone/internal/core/shorturl"
)

// qrAvailable says whether the management API this console was built against
// serves GET /links/{token}/qr. UNFINISHED: that route arrives with issue 41
// (branch links), not merged here yet.
const qrAvailable = false

// linksView is what the Links page shows.
type linksView struct {
	Query string
}

// linksPage would list the links newest first with search and paging through GET
// /links. UNFINISHED: GET /links arrives with issue 41 (branch links), not merged
// here yet; until then the page opens a link by its token or short URL.
func (s *Server) linksPage(w http.ResponseWriter, r *http.Request, sess *session) {
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	if tok := tokenOf(q); shorturl.IsToken(tok) {
		http.Redirect(w, r, "/link/"+tok, http.StatusSeeOther)
		return
	}
	d := pageData{Title: "Links", Nav: "links", Data: linksView{Query: q}}
	if q != "" {
		d.Error = "Search by target URL needs GET /links, which this build's management API lacks: give a token or a short URL."
	}
	s.render(w, r, http.StatusOK, "links", sess, d)
}

// tokenOf is the token of a short URL (its last path segment), or s itself.
func tokenOf(s string) string {
	if u, err := url.Parse(s); err == nil && u.Scheme != "" && u.Host != "" {
		return path.Base(u.Path)
	}
	return s
}

// linkQR would serve the link's QR code from GET /links/{token}/qr. UNFINISHED, as
// qrAvailable says.
func (s *Server) linkQR(w http.ResponseWriter, r *http.Request, sess *session) {
	http.Error(w, "QR codes need GET /links/{token}/qr (issue 41), which this build lacks", http.StatusNotImplemented)
}
