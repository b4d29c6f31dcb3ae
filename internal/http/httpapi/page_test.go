package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/linoone/linoone/internal/core/shorturl"
	"github.com/linoone/linoone/internal/http/httpapi"
)

// browserAccept is what Chromium sends when it navigates to a page.
const browserAccept = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7"

func TestPrefersHTML(t *testing.T) {
	for _, tt := range []struct {
		accept []string
		want   bool
	}{
		{[]string{browserAccept}, true},
		{[]string{"text/html"}, true},
		{[]string{"application/xhtml+xml"}, true},
		{[]string{"application/json", "text/html"}, false}, // a tie goes to JSON
		{[]string{"application/json;q=0.5, text/html"}, true},
		{[]string{"text/html;q=0.5, application/problem+json"}, false},
		{[]string{"text/html;q=0"}, false},
		{[]string{"text/html;q=2"}, false},
		{[]string{"*/*"}, false},
		{[]string{"text/*"}, false},
		{[]string{"application/json"}, false},
		{nil, false},
		{[]string{""}, false},
		{[]string{"garbage;;;,text/html"}, true},
	} {
		if got := httpapi.PrefersHTML(tt.accept); got != tt.want {
			t.Errorf("PrefersHTML(%q) = %t, want %t", tt.accept, got, tt.want)
		}
	}
}

// TestResolverPages: issue 41 item 4. A browser gets a page for 404 and 410, with
// the same status, a strict CSP, no script and nothing loaded from elsewhere, the
// path escaped; any other client keeps the problem.
func TestResolverPages(t *testing.T) {
	st := newStore()
	gone := shorturl.ShortURL{Token: "GoneGone00", Path: "https://s.example.com/GoneGone00", Target: "https://login.evil.example/x"}
	st.m[gone.Token] = gone
	rec, err := shorturl.NewRecorder(shorturl.RecorderConfig{Publisher: &publisher{}, DeadLetters: noDLQ{},
		EventIDs: func() (string, error) { return "ev_01JZ8Q6W3C4V5B6N7M8K9J0H1G", nil }})
	if err != nil {
		t.Fatal(err)
	}
	res, err := shorturl.NewResolver(st, rec, shorturl.Screening{Screen: holding(t, "*.evil.example"), Counters: &shorturl.ScreenCounters{}})
	if err != nil {
		t.Fatal(err)
	}
	h := httpapi.NewResolver(httpapi.ResolverDeps{Resolver: res})
	for _, tt := range []struct {
		name, path string
		status     int
		title      string
	}{
		{"unknown", "/AAAAAAAAAA", 404, "Link not found"},
		{"malformed", "/7BTadEDk-8", 404, "Link not found"},
		{"short", "/abc", 404, "Link not found"},
		{"two segments", "/a/b", 404, "Link not found"},
		{"escaped", "/%3Cscript%3Ealert(1)%3C%2Fscript%3E", 404, "Link not found"},
		{"markup", "/<b>x</b>&amp;", 404, "Link not found"},
		{"taken down", "/GoneGone00", 410, "Link taken down"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "http://s.example.com"+strings.ReplaceAll(strings.ReplaceAll(tt.path, "<", "%3C"), ">", "%3E"), nil)
			req.Header.Set("Accept", browserAccept)
			r, body := do(t, h, req)
			page := string(body)
			if r.StatusCode != tt.status || r.Header.Get("Content-Type") != "text/html; charset=utf-8" {
				t.Fatalf("%d %s: %s", r.StatusCode, r.Header.Get("Content-Type"), page)
			}
			csp := r.Header.Get("Content-Security-Policy")
			for _, want := range []string{"default-src 'none'", "style-src 'sha256-", "form-action 'none'", "frame-ancestors 'none'", "base-uri 'none'"} {
				if !strings.Contains(csp, want) {
					t.Errorf("CSP %q lacks %q", csp, want)
				}
			}
			if strings.Contains(csp, "unsafe") || strings.Contains(csp, "script-src") {
				t.Errorf("CSP %q allows too much", csp)
			}
			for name, want := range map[string]string{"Cache-Control": "no-store", "Vary": "Accept", "X-Content-Type-Options": "nosniff"} {
				if got := r.Header.Get(name); got != want {
					t.Errorf("%s %q, want %q", name, got, want)
				}
			}
			if !strings.Contains(page, "<title>"+tt.title+"</title>") || !strings.Contains(page, "<h1>"+tt.title+"</h1>") {
				t.Errorf("page lacks its title %q:\n%s", tt.title, page)
			}
			lower := strings.ToLower(page)
			for _, never := range []string{"<script", "src=", "href=", "<link", "<img", "@import", "url(", "<b>", "alert(1)</"} {
				if strings.Contains(lower, never) {
					t.Errorf("page holds %q:\n%s", never, page)
				}
			}
			if want := "<code>" + htmlEscape(req.URL.Path) + "</code>"; !strings.Contains(page, want) {
				t.Errorf("page does not show the path escaped as %s:\n%s", want, page)
			}
		})
	}
	// Every client that does not ask for HTML first keeps the problem.
	for _, accept := range []string{"", "*/*", "application/json", "application/problem+json", "application/json, text/html", "text/*"} {
		for path, status := range map[string]int{"/AAAAAAAAAA": 404, "/GoneGone00": 410, "/bad": 404} {
			req := httptest.NewRequest(http.MethodGet, path, nil)
			if accept != "" {
				req.Header.Set("Accept", accept)
			}
			r, body := do(t, h, req)
			if r.StatusCode != status || r.Header.Get("Vary") != "Accept" {
				t.Fatalf("Accept %q %s: %d Vary %q", accept, path, r.StatusCode, r.Header.Get("Vary"))
			}
			decodeProblem(t, r, body)
		}
	}
	// A redirect and a 503 are not pages, whatever the Accept.
	req := httptest.NewRequest(http.MethodGet, "/7BTadEDkJ8", nil)
	req.Header.Set("Accept", browserAccept)
	st.m[known.Token] = known
	if r, _ := do(t, h, req); r.StatusCode != http.StatusFound || r.Header.Get("Vary") != "" {
		t.Fatalf("redirect: %d, Vary %q", r.StatusCode, r.Header.Get("Vary"))
	}
	st.down = true
	req = httptest.NewRequest(http.MethodGet, "/7BTadEDkJ9", nil)
	req.Header.Set("Accept", browserAccept)
	if r, body := do(t, h, req); r.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("persist down: %d %s", r.StatusCode, body)
	} else {
		decodeProblem(t, r, body)
	}
}

func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;").Replace(s)
}
