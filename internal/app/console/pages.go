package console

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/linoone/linoone/client"
	"github.com/linoone/linoone/internal/core/shorturl"
)

// pageData is what every page template reads; Data is the page's own.
type pageData struct {
	Title    string
	Nav      string // which nav entry is the current page
	CSRF     string
	Identity string
	Endpoint string
	Local    bool
	Message  string // a notice at the top: what the last action did
	Error    string // a refusal or failure, in words
	Data     any
}

// parsePages parses each page with the layout.
func parsePages() (map[string]*template.Template, error) {
	files, err := fs.Glob(assets, "templates/*.html")
	if err != nil {
		return nil, err
	}
	pages := map[string]*template.Template{}
	for _, f := range files {
		name := strings.TrimSuffix(path.Base(f), ".html")
		if name == "layout" {
			continue
		}
		t, err := template.New("layout.html").ParseFS(assets, "templates/layout.html", f)
		if err != nil {
			return nil, fmt.Errorf("console template %s: %w", name, err)
		}
		pages[name] = t
	}
	return pages, nil
}

// render writes a page, filling in what every page shows.
func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, page string, sess *session, d pageData) {
	if sess != nil {
		d.CSRF = sess.csrf
	}
	d.Identity, d.Endpoint, d.Local = s.cfg.Identity, s.cfg.Endpoint, s.cfg.Local != nil
	var b bytes.Buffer
	if err := s.pages[page].Execute(&b, d); err != nil {
		s.cfg.Log.Error("console page", "page", page, "err", err)
		http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}

// callContext bounds one page's management API calls.
func callContext(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.Context(), 20*time.Second)
}

// shortened is one line of the Shorten page's answer.
type shortened struct {
	Target   string
	ShortURL string
	Token    string
	Replayed bool
	Problem  string // why it was refused, in words
}

func (s *Server) shortenPage(w http.ResponseWriter, r *http.Request, sess *session) {
	s.render(w, r, http.StatusOK, "shorten", sess, pageData{Title: "Shorten", Nav: "shorten"})
}

// shorten issues one short URL (POST /shorten) or several, one per line (POST
// /shorten/batch), and shows each with a Copy button or the refusal in words.
func (s *Server) shorten(w http.ResponseWriter, r *http.Request, sess *session) {
	var targets []string
	for _, line := range strings.Split(r.PostFormValue("urls"), "\n") {
		if t := strings.TrimSpace(line); t != "" {
			targets = append(targets, t)
		}
	}
	d := pageData{Title: "Shorten", Nav: "shorten"}
	if len(targets) == 0 {
		d.Error = "Paste a URL to shorten (or several, one per line)."
		s.render(w, r, http.StatusUnprocessableEntity, "shorten", sess, d)
		return
	}
	if len(targets) > 1000 {
		d.Error = fmt.Sprintf("%d URLs: the console shortens at most 1,000 at once; use linoone shorten --file for more.", len(targets))
		s.render(w, r, http.StatusUnprocessableEntity, "shorten", sess, d)
		return
	}
	ctx, cancel := callContext(r)
	defer cancel()
	var out []shortened
	if len(targets) == 1 {
		u, err := s.cfg.API.Shorten(ctx, targets[0])
		out = append(out, shortened{Target: targets[0], ShortURL: u.ShortURL, Token: u.Token, Replayed: u.Replayed, Problem: inWords(err)})
	} else {
		res, err := s.cfg.API.ShortenBatch(ctx, targets)
		if err != nil && res == nil {
			d.Error = inWords(err)
		}
		for _, b := range res {
			out = append(out, shortened{Target: b.TargetURL, ShortURL: b.ShortURL, Token: b.Token, Replayed: b.Replayed, Problem: inWords(b.Err)})
		}
	}
	for _, o := range out {
		if o.Problem != "" {
			s.audit(sess, "shorten refused", "target_url", o.Target, "why", o.Problem)
		} else {
			s.audit(sess, "shorten", "target_url", o.Target, "token", o.Token)
		}
	}
	d.Data = out
	s.render(w, r, http.StatusOK, "shorten", sess, d)
}

// inWords says what a management API error means for the operator; "" for nil.
func inWords(err error) string {
	var p *client.Problem
	switch {
	case err == nil:
		return ""
	case errors.Is(err, client.ErrTargetBlocked):
		return "Refused: this URL is on the deny list, so no short URL was made for it. " + detail(err)
	case errors.Is(err, client.ErrTargetInvalid):
		return "Refused: this is not a URL Linoone shortens (an absolute http or https URL with a host, no spaces or user name, at most 2,048 characters, not a short URL itself). " + detail(err)
	case errors.Is(err, client.ErrNotFound):
		return "No short URL has this token."
	case errors.Is(err, client.ErrUnauthorized):
		return "The management API refused the console's credentials (" + detail(err) + "): check the endpoint, region and identity linoone console printed."
	case errors.Is(err, client.ErrThrottled):
		return "The management API is throttling requests: wait a moment and try again."
	case errors.Is(err, client.ErrUnavailable):
		return "The management API is unavailable right now (" + detail(err) + "): try again shortly."
	case errors.As(err, &p):
		return "Refused: " + p.Detail
	default:
		return "The management API could not be reached: " + err.Error()
	}
}

// detail is a problem's own explanation.
func detail(err error) string {
	var p *client.Problem
	if errors.As(err, &p) {
		return p.Detail
	}
	return err.Error()
}

// linkView is what the Link page shows.
type linkView struct {
	Link    client.Link
	Stats   client.Stats
	Days    []dayRow
	Chart   template.HTML
	Visits  int64
	Blocked string // the rule that blocks it, "" when none (local mode)
	Rule    string // the rule Block would add
	Confirm string // "block" or "unblock" while asking to confirm
	// Breakdowns are the window's visits by browser, OS and device.
	Breakdowns []breakdown
}

// breakdown is one dimension of the Link page's breakdowns.
type breakdown struct {
	Title   string
	ID      string
	Classes []client.ClassClicks
}

// linkPage shows a link: target, created_at, clicks per day, Block/Unblock.
func (s *Server) linkPage(w http.ResponseWriter, r *http.Request, sess *session) {
	s.showLink(w, r, sess, r.PathValue("token"), r.URL.Query().Get("confirm"), pageData{})
}

// showLink renders the Link page of token with d's message or error.
func (s *Server) showLink(w http.ResponseWriter, r *http.Request, sess *session, token, confirm string, d pageData) {
	d.Title, d.Nav = "Link "+token, "links"
	if !shorturl.IsToken(token) {
		d.Error = "A token is 10 letters and digits, such as 7BTadEDkJ8."
		s.render(w, r, http.StatusNotFound, "link", sess, d)
		return
	}
	ctx, cancel := callContext(r)
	defer cancel()
	link, err := s.cfg.API.Inspect(ctx, token)
	if err != nil {
		d.Error = inWords(err)
		status := http.StatusBadGateway
		if errors.Is(err, client.ErrNotFound) {
			status = http.StatusNotFound
		}
		s.render(w, r, status, "link", sess, d)
		return
	}
	v := linkView{Link: link, Rule: link.TargetURL}
	if confirm == "block" || confirm == "unblock" {
		v.Confirm = confirm
	}
	if st, err := s.cfg.API.Stats(ctx, token, client.WithBreakdown(client.Browser, client.OS, client.Device)); err != nil {
		d.Error = "Clicks could not be read: " + inWords(err)
	} else {
		v.Stats = st
		v.Breakdowns = []breakdown{{"Browsers", "browsers", st.Browsers}, {"Operating systems", "oses", st.OSes}, {"Devices", "devices", st.Devices}}
		v.Days, v.Chart = chart(st.ByDay)
		for _, day := range st.ByDay {
			v.Visits += day.Clicks - day.Previews
		}
	}
	if s.cfg.Local != nil {
		if rule, ok, err := s.cfg.Local.blockedBy(link.TargetURL); err != nil {
			d.Error = "The deny list could not be read: " + err.Error()
		} else if ok {
			v.Blocked = rule
		}
	}
	d.Data = v
	s.render(w, r, http.StatusOK, "link", sess, d)
}
