// Package console is `linoone console`: a web app on a loopback address that holds
// the operator's credentials and signs each management API call for them, like
// `kubectl proxy`, so the API's SigV4 authentication stays as it is (issue 42).
//
// The browser never sees a credential. It reaches the console only on its own
// loopback address and port (any other Host is refused: DNS rebinding), after a
// one-time login URL was exchanged for an HttpOnly, SameSite=Strict session
// cookie; every state-changing request also carries the session's CSRF token and
// comes from the console's own origin. Pages are html/template rendered on the
// server with embedded assets and inline SVG charts, under a strict CSP.
package console

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"sync"

	"github.com/linoone/linoone/client"
)

//go:embed templates/*.html static/*
var assets embed.FS

// cookieName is the session cookie.
const cookieName = "linoone_console"

// csp allows the console's own script and style only: no inline script or style,
// no frame, forms posted only to the console.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// Config is what a console serves with.
type Config struct {
	// Addr is the address the console listens on, host:port with a loopback IP:
	// the only Host its requests may name.
	Addr string
	// API signs and sends the management API calls.
	API *client.Client
	// Endpoint is the management API's base URL, as pages show it.
	Endpoint string
	// Identity says whose credentials sign, as pages and logs show it (never a secret).
	Identity string
	// Local is the local serve's files (deny list, bus, DLQ); nil with --endpoint.
	Local *Local
	Log   *slog.Logger
}

// Server is a console's HTTP handler and its sessions.
type Server struct {
	cfg    Config
	origin string
	pages  map[string]*template.Template

	mu        sync.Mutex
	secret    string // the login URL's; "" once used
	sessions  map[string]*session
	mux       *http.ServeMux
	staticFS  http.Handler
	loginUsed bool
}

// session is one logged-in browser.
type session struct {
	name string // a short name for the logs, not the cookie
	csrf string
}

// CheckAddr refuses an address whose host is not a loopback IP: the console holds
// credentials and must never be reachable from another machine.
func CheckAddr(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--addr %q: want 127.0.0.1:PORT or [::1]:PORT: %w", addr, err)
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || !ip.IsLoopback() {
		return fmt.Errorf("--addr %q: the console listens on a loopback IP only (127.0.0.1 or ::1), never %q", addr, host)
	}
	return nil
}

// New is a console for cfg, with a fresh one-time login secret.
func New(cfg Config) (*Server, error) {
	if err := CheckAddr(cfg.Addr); err != nil {
		return nil, err
	}
	if cfg.API == nil || cfg.Log == nil {
		return nil, errors.New("console: API and Log are required")
	}
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, origin: "http://" + cfg.Addr, pages: pages, secret: rand.Text() + rand.Text(),
		sessions: map[string]*session{}}
	s.staticFS = http.FileServerFS(assets)
	s.mux = s.routes()
	return s, nil
}

// LoginURL is the one-time URL that opens a session.
func (s *Server) LoginURL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.origin + "/login?secret=" + s.secret
}

// ServeHTTP refuses a foreign Host before anything else, sets the headers every
// answer carries, and sends the request through the session and CSRF checks.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin") // no-referrer would make Chromium send Origin: null on our own POSTs
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	if r.Host != s.cfg.Addr {
		// DNS rebinding: a page of evil.example whose name now points at 127.0.0.1
		// sends Host: evil.example:PORT.
		s.cfg.Log.Warn("console refused a request", "reason", "host", "host", r.Host, "path", r.URL.Path)
		http.Error(w, "misdirected request: this console answers only to "+s.cfg.Addr, http.StatusMisdirectedRequest)
		return
	}
	s.mux.ServeHTTP(w, r)
}

// routes are the console's pages; each but login and the assets needs a session.
func (s *Server) routes() *http.ServeMux {
	m := http.NewServeMux()
	m.Handle("GET /static/", s.staticFS)
	m.HandleFunc("GET /login", s.login)
	m.HandleFunc("GET /{$}", s.read(s.shortenPage))
	m.HandleFunc("POST /shorten", s.write(s.shorten))
	m.HandleFunc("GET /links", s.read(s.linksPage))
	m.HandleFunc("GET /link/{token}", s.read(s.linkPage))
	m.HandleFunc("GET /link/{token}/qr", s.read(s.linkQR))
	m.HandleFunc("POST /link/{token}/block", s.write(s.blockLink))
	m.HandleFunc("POST /link/{token}/unblock", s.write(s.unblockLink))
	m.HandleFunc("GET /denylist", s.read(s.denyListPage))
	m.HandleFunc("POST /denylist/add", s.write(s.denyListAdd))
	m.HandleFunc("POST /denylist/remove", s.write(s.denyListRemove))
	m.HandleFunc("GET /health", s.read(s.healthPage))
	m.HandleFunc("POST /health/replay", s.write(s.replay))
	return m
}

// login exchanges the one-time secret for a session cookie; the secret then dies.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	got := r.URL.Query().Get("secret")
	s.mu.Lock()
	ok := s.secret != "" && subtle.ConstantTimeCompare([]byte(got), []byte(s.secret)) == 1
	used := s.loginUsed
	var sess *session
	var id string
	if ok {
		s.secret, s.loginUsed = "", true
		id = rand.Text() + rand.Text()
		sum := sha256.Sum256([]byte(id))
		sess = &session{name: "session-" + hex.EncodeToString(sum[:4]), csrf: rand.Text() + rand.Text()}
		s.sessions[id] = sess
	}
	s.mu.Unlock()
	if !ok {
		reason := "this login URL is not the one linoone console printed"
		if used {
			reason = "this console's login URL was used already; restart linoone console for a new one"
		}
		s.cfg.Log.Warn("console refused a login", "reason", reason)
		s.render(w, r, http.StatusForbidden, "refused", nil, pageData{Title: "Login refused", Message: reason})
		return
	}
	s.cfg.Log.Info("console login", "who", sess.name, "identity", s.cfg.Identity)
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: id, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// sessionOf is the request's session, or nil.
func (s *Server) sessionOf(r *http.Request) *session {
	c, err := r.Cookie(cookieName)
	if err != nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessions[c.Value]
}

// handler is a page given its session.
type handler func(w http.ResponseWriter, r *http.Request, sess *session)

// read is a page that changes nothing: it needs a session.
func (s *Server) read(h handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sess := s.sessionOf(r)
		if sess == nil {
			s.render(w, r, http.StatusUnauthorized, "refused", nil, pageData{Title: "Not logged in",
				Message: "open the login URL that linoone console printed"})
			return
		}
		h(w, r, sess)
	}
}

// write is a request that changes something: it needs a session, the console's
// own Origin and the session's CSRF token.
func (s *Server) write(h handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, 4<<20)
		sess := s.sessionOf(r)
		reason := ""
		switch {
		case sess == nil:
			reason = "no session"
		case r.Header.Get("Origin") != s.origin:
			reason = "cross-origin"
		case subtle.ConstantTimeCompare([]byte(r.PostFormValue("csrf")), []byte(sess.csrf)) != 1:
			reason = "csrf token"
		}
		if reason != "" {
			s.cfg.Log.Warn("console refused a request", "reason", reason, "path", r.URL.Path, "origin", r.Header.Get("Origin"))
			s.render(w, r, http.StatusForbidden, "refused", nil, pageData{Title: "Request refused",
				Message: "refused (" + reason + "): changes are accepted only from the console's own pages"})
			return
		}
		h(w, r, sess)
	}
}

// audit logs who did what.
func (s *Server) audit(sess *session, action string, args ...any) {
	s.cfg.Log.Info("console action", append([]any{"who", sess.name, "identity", s.cfg.Identity, "action", action}, args...)...)
}
