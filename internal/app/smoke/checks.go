package smoke

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/linoone/linoone/internal/core/shorturl"
)

// maxBody bounds what is read of any answer.
const maxBody = 1 << 20

// session is one run's clients and findings.
type session struct {
	opts    Options
	target  Target
	run     string
	signed  *http.Client // management calls, SigV4-signed
	plain   *http.Client // everything unsigned, kept alive
	checks  []Check
	timings Timings
	created []Link
	link    *Link // the link the checks created, once shorten passed
}

func newSession(opts Options) *session {
	noFollow := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	t := Target{Resolver: strings.TrimRight(opts.Target.Resolver, "/"), Management: strings.TrimRight(opts.Target.Management, "/")}
	return &session{opts: opts, target: t, run: runID(),
		signed: &http.Client{Timeout: opts.Timeout, Transport: opts.Signer, CheckRedirect: noFollow},
		plain:  &http.Client{Timeout: opts.Timeout, Transport: keptAlive(), CheckRedirect: noFollow},
	}
}

// passed reports whether the check called name ran and passed.
func (s *session) passed(name string) bool {
	for _, c := range s.checks {
		if c.Name == name {
			return c.OK
		}
	}
	return false
}

func (s *session) pass(name, format string, args ...any) {
	s.checks = append(s.checks, Check{Name: name, OK: true, Detail: fmt.Sprintf(format, args...)})
}

func (s *session) fail(name, format string, args ...any) {
	s.checks = append(s.checks, Check{Name: name, Detail: fmt.Sprintf(format, args...)})
}

// answer is one HTTP exchange as the checks read it.
type answer struct {
	call   string
	status int
	header http.Header
	body   []byte
}

func (a answer) contentType() string {
	mt, _, _ := mime.ParseMediaType(a.header.Get("Content-Type"))
	return mt
}

func (a answer) String() string { return fmt.Sprintf("%s: %d %.200q", a.call, a.status, a.body) }

// do sends one request and reads its answer whole (bounded), so the connection
// can be reused.
func do(ctx context.Context, c *http.Client, method, url, accept string, body []byte) (answer, error) {
	call := method + " " + url
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return answer{call: call}, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	req.Header.Set("User-Agent", "linoone-smoke/1")
	res, err := c.Do(req)
	if err != nil {
		return answer{call: call}, fmt.Errorf("%s: %w", call, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, maxBody))
	if err != nil {
		return answer{call: call}, fmt.Errorf("%s: read answer: %w", call, err)
	}
	return answer{call: call, status: res.StatusCode, header: res.Header, body: b}, nil
}

// runChecks runs every check in order; one that needs the issued link is reported
// failed, saying so, when shorten failed.
func (s *session) runChecks(ctx context.Context) {
	s.checkShorten(ctx)
	s.checkRedirect(ctx)
	s.checkInspect(ctx)
	s.checkUnknownJSON(ctx)
	s.checkUnknownHTML(ctx)
	s.checkUnsignedGet(ctx, "docs", "/docs", "text/html", "<html")
	s.checkUnsignedGet(ctx, "openapi", "/openapi.yaml", "", "openapi:")
	s.checkUnsignedWrite(ctx)
}

// shorten issues target and returns the link, or why not.
func (s *session) shorten(ctx context.Context, target string) (Link, time.Duration, error) {
	body, _ := json.Marshal(map[string]string{"target_url": target})
	start := time.Now()
	a, err := do(ctx, s.signed, http.MethodPost, s.target.Management+"/shorten", "application/json", body)
	elapsed := time.Since(start)
	if err != nil {
		return Link{}, elapsed, err
	}
	if a.status != http.StatusCreated {
		return Link{}, elapsed, fmt.Errorf("want 201, got %s", a)
	}
	var got struct {
		Token    string `json:"token"`
		ShortURL string `json:"short_url"`
	}
	if err := json.Unmarshal(a.body, &got); err != nil || a.contentType() != "application/json" {
		return Link{}, elapsed, fmt.Errorf("want a JSON {token, short_url}, got %s (Content-Type %q)", a, a.header.Get("Content-Type"))
	}
	l := Link{Token: got.Token, ShortURL: got.ShortURL, TargetURL: target}
	if shorturl.IsToken(got.Token) {
		s.created = append(s.created, l)
	}
	switch {
	case !shorturl.IsToken(got.Token):
		return Link{}, elapsed, fmt.Errorf("token %q is not 10 letters and digits: %s", got.Token, a)
	case got.ShortURL != s.target.Resolver+"/"+got.Token:
		return l, elapsed, fmt.Errorf("short_url %q is not the resolver URL %s followed by /%s", got.ShortURL, s.target.Resolver, got.Token)
	}
	return l, elapsed, nil
}

func (s *session) checkShorten(ctx context.Context) {
	l, _, err := s.shorten(ctx, uniqueTarget(s.run, 0))
	if err != nil {
		s.fail("shorten", "POST %s/shorten (signed): %v", s.target.Management, err)
		return
	}
	s.link = &l
	s.pass("shorten", "201 {token %s, short_url %s}", l.Token, l.ShortURL)
}

// needLink reports the check failed when there is no link to check.
func (s *session) needLink(name string) bool {
	if s.link == nil {
		s.fail(name, "not run: shorten failed, so there is no short URL to check")
		return false
	}
	return true
}
