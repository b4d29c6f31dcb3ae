package smoke

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
)

// cacheControl is what a redirect must carry so that every click reaches the
// resolver to be counted (SPEC §2).
const cacheControl = "private, max-age=0"

func (s *session) checkRedirect(ctx context.Context) {
	const name = "redirect"
	if !s.needLink(name) {
		return
	}
	a, err := do(ctx, s.plain, http.MethodGet, s.link.ShortURL, "", nil)
	switch {
	case err != nil:
		s.fail(name, "%v", err)
	case a.status != http.StatusFound:
		s.fail(name, "want 302 to %s, got %s", s.link.TargetURL, a)
	case a.header.Get("Location") != s.link.TargetURL:
		s.fail(name, "GET %s: 302 to the wrong place: Location %q, want %q", s.link.ShortURL, a.header.Get("Location"), s.link.TargetURL)
	case a.header.Get("Cache-Control") != cacheControl:
		s.fail(name, "GET %s: Cache-Control %q, want %q (a cached redirect is a click never counted)", s.link.ShortURL, a.header.Get("Cache-Control"), cacheControl)
	default:
		s.pass(name, "302 Location %s, Cache-Control %s", s.link.TargetURL, cacheControl)
	}
}

func (s *session) checkInspect(ctx context.Context) {
	const name = "inspect"
	if !s.needLink(name) {
		return
	}
	a, err := do(ctx, s.signed, http.MethodGet, s.target.Management+"/links/"+s.link.Token, "application/json", nil)
	if err != nil {
		s.fail(name, "%v", err)
		return
	}
	var got Link
	if a.status != http.StatusOK || json.Unmarshal(a.body, &got) != nil {
		s.fail(name, "want 200 {token, short_url, target_url}, got %s", a)
		return
	}
	if got != *s.link {
		s.fail(name, "%s answered %+v, want %+v", a.call, got, *s.link)
		return
	}
	s.pass(name, "200 target_url %s", got.TargetURL)
}

// checkUnknownJSON: an API client asking for an unknown token gets a problem.
func (s *session) checkUnknownJSON(ctx context.Context) {
	const name = "unknown token (JSON)"
	a, err := do(ctx, s.plain, http.MethodGet, s.target.Resolver+"/"+unknownToken(), "application/json", nil)
	if err != nil {
		s.fail(name, "%v", err)
		return
	}
	var p struct {
		Status int `json:"status"`
	}
	if a.status != http.StatusNotFound || a.contentType() != "application/problem+json" || json.Unmarshal(a.body, &p) != nil || p.Status != http.StatusNotFound {
		s.fail(name, "want 404 application/problem+json with status 404, got %s (Content-Type %q)", a, a.header.Get("Content-Type"))
		return
	}
	s.pass(name, "404 application/problem+json")
}

// checkUnknownHTML: a browser asking for an unknown token gets a page, same status.
func (s *session) checkUnknownHTML(ctx context.Context) {
	const name = "unknown token (HTML)"
	const browser = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
	a, err := do(ctx, s.plain, http.MethodGet, s.target.Resolver+"/"+unknownToken(), browser, nil)
	if err != nil {
		s.fail(name, "%v", err)
		return
	}
	if a.status != http.StatusNotFound || a.contentType() != "text/html" || !strings.Contains(strings.ToLower(string(a.body)), "<html") {
		s.fail(name, "want 404 text/html page for a browser, got %s (Content-Type %q)", a, a.header.Get("Content-Type"))
		return
	}
	s.pass(name, "404 text/html")
}

// checkUnsignedGet: the API's description is public, unsigned.
func (s *session) checkUnsignedGet(ctx context.Context, name, path, contentType, contains string) {
	a, err := do(ctx, s.plain, http.MethodGet, s.target.Management+path, "", nil)
	switch {
	case err != nil:
		s.fail(name, "%v", err)
	case a.status != http.StatusOK || !strings.Contains(string(a.body), contains):
		s.fail(name, "want 200 holding %q unsigned, got %s", contains, a)
	case contentType != "" && a.contentType() != contentType:
		s.fail(name, "%s: Content-Type %q, want %s", a.call, a.header.Get("Content-Type"), contentType)
	default:
		s.pass(name, "200 unsigned, %d bytes", len(a.body))
	}
}

// checkUnsignedWrite: anyone on the internet must not issue short URLs.
func (s *session) checkUnsignedWrite(ctx context.Context) {
	const name = "unsigned write refused"
	target := uniqueTarget(s.run, -1)
	body, _ := json.Marshal(map[string]string{"target_url": target})
	a, err := do(ctx, s.plain, http.MethodPost, s.target.Management+"/shorten", "application/json", body)
	switch {
	case err != nil:
		s.fail(name, "%v", err)
	case a.status == http.StatusForbidden || a.status == http.StatusUnauthorized:
		s.pass(name, "%d", a.status)
	case a.status >= 200 && a.status < 300:
		var got Link
		if json.Unmarshal(a.body, &got) == nil && got.Token != "" {
			got.TargetURL = target
			s.created = append(s.created, got)
		}
		s.fail(name, "an unsigned POST %s/shorten was accepted (%s): anyone can issue short URLs; the management API must require SigV4 (AWS_IAM)", s.target.Management, a)
	default:
		s.fail(name, "want 403 for an unsigned POST /shorten, got %s", a)
	}
}
