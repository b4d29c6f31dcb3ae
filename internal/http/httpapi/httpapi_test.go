package httpapi_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/linoone/linoone/internal/core/clickfact"
	"github.com/linoone/linoone/internal/core/shorturl"
	"github.com/linoone/linoone/internal/http/httpapi"
	"github.com/linoone/linoone/internal/http/mgmtapi"
	"github.com/linoone/linoone/internal/http/sigv4"
	"github.com/linoone/linoone/internal/persist"
	"github.com/linoone/linoone/internal/testutil/schematest"
)

var update = flag.Bool("update", false, "rewrite golden files")

// store is a hand-written fake of shorturl.Store and mgmtapi.Clicker.
type store struct {
	mu      sync.Mutex
	m       map[shorturl.Token]shorturl.ShortURL
	clicks  map[shorturl.Token]int64
	visits  map[shorturl.Token]map[string][]string // user agent → effective_at (links_test.go)
	created map[shorturl.Token]time.Time           // Persist's created_at (links_test.go)
	down    bool
	lookups int
	saves   int
}

func newStore() *store {
	return &store{m: map[shorturl.Token]shorturl.ShortURL{}, clicks: map[shorturl.Token]int64{}}
}

func (s *store) Lookup(_ context.Context, tok shorturl.Token) (shorturl.ShortURL, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lookups++
	if s.down {
		return shorturl.ShortURL{}, fmt.Errorf("dial tcp: connection refused: %w", shorturl.ErrUnavailable)
	}
	u, ok := s.m[tok]
	if !ok {
		return shorturl.ShortURL{}, shorturl.ErrNotFound
	}
	return u, nil
}

func (s *store) Save(_ context.Context, u shorturl.ShortURL) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down {
		return fmt.Errorf("dial tcp: connection refused: %w", shorturl.ErrUnavailable)
	}
	s.saves++
	s.m[u.Token] = u
	return nil
}

type publisher struct {
	mu    sync.Mutex
	facts []clickfact.Fact
}

func (p *publisher) Publish(_ context.Context, f clickfact.Fact) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	f.Detail = bytes.Clone(f.Detail) // Publish must not keep the caller's buffer
	p.facts = append(p.facts, f)
	return nil
}

type noDLQ struct{}

func (noDLQ) DeadLetter(context.Context, clickfact.DeadLetter) error { return errors.New("unused") }

var known = shorturl.ShortURL{Token: "7BTadEDkJ8", Path: "https://s.example.com/7BTadEDkJ8", Target: "https://example.com/landing?message_id=msg_123"}

func goldenProblem(t *testing.T, name string, body []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".json")
	if *update {
		if err := os.WriteFile(path, body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update)", err)
	}
	if diff := cmp.Diff(string(want), string(body)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", name, diff)
	}
}

type problem struct {
	Type, Title, Detail string
	Status              int
}

func decodeProblem(t *testing.T, res *http.Response, body []byte) problem {
	t.Helper()
	if ct := res.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("Content-Type %q, body %s", ct, body)
	}
	var p problem
	if err := json.Unmarshal(body, &p); err != nil {
		t.Fatalf("problem body %s: %v", body, err)
	}
	if p.Status != res.StatusCode || p.Title == "" || p.Detail == "" || !strings.HasPrefix(p.Type, httpapi.ProblemTypePrefix) {
		t.Fatalf("problem %+v for status %d", p, res.StatusCode)
	}
	return p
}

func do(t *testing.T, h http.Handler, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	res := rec.Result()
	body, _ := io.ReadAll(res.Body)
	return res, body
}

func newResolverAPI(t *testing.T, st *store) (http.Handler, *publisher) {
	t.Helper()
	pub := &publisher{}
	rec, err := shorturl.NewRecorder(shorturl.RecorderConfig{Publisher: pub, DeadLetters: noDLQ{},
		EventIDs: func() (string, error) { return "ev_01JZ8Q6W3C4V5B6N7M8K9J0H1G", nil }})
	if err != nil {
		t.Fatal(err)
	}
	res, err := shorturl.NewResolver(st, rec, shorturl.Screening{})
	if err != nil {
		t.Fatal(err)
	}
	return httpapi.NewResolver(httpapi.ResolverDeps{Resolver: res}), pub
}

func TestResolveRedirects(t *testing.T) {
	st := newStore()
	st.m[known.Token] = known
	h, pub := newResolverAPI(t, st)
	req := httptest.NewRequest(http.MethodGet, "/7BTadEDkJ8", nil)
	req.Header.Set("User-Agent", "test-agent/1.0")
	res, _ := do(t, h, req)
	if res.StatusCode != http.StatusFound {
		t.Fatalf("status %d", res.StatusCode)
	}
	if loc := res.Header.Get("Location"); loc != known.Target {
		t.Errorf("Location %q", loc)
	}
	if cc := res.Header.Get("Cache-Control"); cc != "private, max-age=0" {
		t.Errorf("Cache-Control %q", cc)
	}
	if len(pub.facts) != 1 {
		t.Fatalf("%d facts published", len(pub.facts))
	}
	schematest.MustValidate(t, schematest.GraphFact, pub.facts[0].Detail)
	detail := string(pub.facts[0].Detail)
	for _, want := range []string{`"value":"192.0.2.1"`, `"value":"test-agent/1.0"`} {
		if !strings.Contains(detail, want) {
			t.Errorf("fact lacks %s: %s", want, detail)
		}
	}
}

func TestResolveNotFound(t *testing.T) {
	st := newStore()
	h, pub := newResolverAPI(t, st)
	res, body := do(t, h, httptest.NewRequest(http.MethodGet, "/AAAAAAAAAA", nil))
	if res.StatusCode != http.StatusNotFound {
		t.Fatalf("status %d", res.StatusCode)
	}
	decodeProblem(t, res, body)
	goldenProblem(t, "resolve_not_found", body)
	if st.lookups != 1 || len(pub.facts) != 0 {
		t.Fatalf("lookups %d, facts %d", st.lookups, len(pub.facts))
	}
}

func TestResolveInvalidTokensNeverReachPersist(t *testing.T) {
	st := newStore()
	h, pub := newResolverAPI(t, st)
	for _, path := range []string{"/short", "/7BTadEDkJ8x", "/7BTadEDk-8", "/7BTadEDk%208", "/7BTadEDk%2F8", "/%00%00%00%00%00%00%00%00%00%00", "/a/b", "/7BTadEDkJ8/", "/links/7BTadEDkJ8/stats", "/shorten"} {
		t.Run(path, func(t *testing.T) {
			res, body := do(t, h, httptest.NewRequest(http.MethodGet, path, nil))
			if res.StatusCode != http.StatusNotFound {
				t.Fatalf("status %d: %s", res.StatusCode, body)
			}
			decodeProblem(t, res, body)
		})
	}
	if st.lookups != 0 || len(pub.facts) != 0 {
		t.Fatalf("invalid tokens caused %d lookups, %d facts", st.lookups, len(pub.facts))
	}
}

func TestResolveMethodNotAllowed(t *testing.T) {
	h, _ := newResolverAPI(t, newStore())
	res, body := do(t, h, httptest.NewRequest(http.MethodPost, "/7BTadEDkJ8", nil))
	if res.StatusCode != http.StatusMethodNotAllowed || res.Header.Get("Allow") == "" {
		t.Fatalf("status %d, Allow %q", res.StatusCode, res.Header.Get("Allow"))
	}
	decodeProblem(t, res, body)
}

func TestResolvePersistDown(t *testing.T) {
	st := newStore()
	st.down = true
	h, pub := newResolverAPI(t, st)
	res, body := do(t, h, httptest.NewRequest(http.MethodGet, "/7BTadEDkJ8", nil))
	if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Location") != "" {
		t.Fatalf("status %d, Location %q", res.StatusCode, res.Header.Get("Location"))
	}
	decodeProblem(t, res, body)
	goldenProblem(t, "resolve_unavailable", body)
	if len(pub.facts) != 0 {
		t.Fatal("a fact was published for a failed resolution")
	}
}

func TestHealth(t *testing.T) {
	h, _ := newResolverAPI(t, newStore())
	res, body := do(t, h, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	if res.StatusCode != http.StatusOK || strings.TrimSpace(string(body)) != `{"status":"ok"}` {
		t.Fatalf("%d %s", res.StatusCode, body)
	}
	m, _ := newManagementAPI(t, newStore(), time.Now)
	res, body = do(t, m, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	if res.StatusCode != http.StatusOK || strings.TrimSpace(string(body)) != `{"status":"ok"}` {
		t.Fatalf("management healthz: %d %s", res.StatusCode, body)
	}
}

// TestManagementHealthNamesPersist: the management API's GET /healthz names persist
// while its last call to Persist found it unavailable, and only then: a refusal
// before the call and a caller who hung up leave it as it was; an answer, even "no
// such token", clears it. (Batches and keyed issuance: mgmtapi's tests.)
func TestManagementHealthNamesPersist(t *testing.T) {
	st := newStore()
	st.m[known.Token] = known
	m, _ := newManagementAPI(t, st, time.Now)
	health := func(want string) {
		t.Helper()
		res, body := do(t, m, httptest.NewRequest(http.MethodGet, "/healthz", nil))
		if res.StatusCode != http.StatusOK || strings.TrimSpace(string(body)) != want {
			t.Fatalf("GET /healthz: %d %s, want 200 %s", res.StatusCode, body, want)
		}
	}
	const ok, degraded = `{"status":"ok"}`, `{"degraded":["persist"],"status":"degraded"}`
	shorten := func(ctx context.Context, target string, want int) {
		t.Helper()
		body, _ := json.Marshal(map[string]string{"target_url": target})
		res, out := do(t, m, signed(t, http.MethodPost, "/shorten", "application/json", body, creds, time.Now()).WithContext(ctx))
		if res.StatusCode != want {
			t.Fatalf("POST /shorten %s: %d %s, want %d", target, res.StatusCode, out, want)
		}
	}
	get := func(path string, want int) {
		t.Helper()
		if res, out := do(t, m, signed(t, http.MethodGet, path, "", nil, creds, time.Now())); res.StatusCode != want {
			t.Fatalf("GET %s: %d %s, want %d", path, res.StatusCode, out, want)
		}
	}

	st.down = true
	shorten(context.Background(), "https://example.com/a", http.StatusServiceUnavailable)
	health(degraded)
	shorten(context.Background(), "javascript:alert(1)", http.StatusBadRequest) // refused before any call
	health(degraded)
	st.down = false
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	shorten(gone, "https://example.com/b", http.StatusCreated) // the fake store ignores the context
	health(degraded)
	shorten(context.Background(), "https://example.com/c", http.StatusCreated)
	health(ok)

	st.down = true
	get("/links/"+string(known.Token)+"/stats", http.StatusServiceUnavailable)
	health(degraded)
	st.down = false
	get("/links/AAAAAAAAAA", http.StatusNotFound) // Persist answered: no such token
	health(ok)
	st.down = true
	get("/links/"+string(known.Token), http.StatusServiceUnavailable)
	health(degraded)
	st.down = false
	get("/links/"+string(known.Token)+"/stats", http.StatusOK)
	health(ok)
}

var creds = sigv4.Credentials{AccessKeyID: "LNKTESTTESTTESTTEST1", SecretAccessKey: "test-secret-test-secret-test-secret-0000"}

func newManagementAPI(t *testing.T, st *store, now func() time.Time) (http.Handler, *shorturl.Issuer) {
	t.Helper()
	is, err := shorturl.NewIssuer(shorturl.IssuerConfig{Store: st, ResolverBaseURL: "https://s.example.com", Rand: rand.Reader})
	if err != nil {
		t.Fatal(err)
	}
	v, err := sigv4.New(creds, "us-east-1", "execute-api", sigv4.WithClock(now))
	if err != nil {
		t.Fatal(err)
	}
	h, err := mgmtapi.NewManagement(mgmtapi.ManagementDeps{Issuer: is, Clicker: st, Authenticator: v})
	if err != nil {
		t.Fatal(err)
	}
	return h, is
}

func signed(t *testing.T, method, path, contentType string, body []byte, c sigv4.Credentials, at time.Time) *http.Request {
	t.Helper()
	req := httptest.NewRequest(method, "http://127.0.0.1:8081"+path, bytes.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if err := sigv4.SignRequest(context.Background(), req, body, c, "us-east-1", "execute-api", at); err != nil {
		t.Fatal(err)
	}
	return req
}

func TestShortenCreates(t *testing.T) {
	st := newStore()
	h, _ := newManagementAPI(t, st, time.Now)
	for _, target := range []string{"https://example.com/landing?message_id=msg_123", "https://example.com/" + strings.Repeat("a", 2048-len("https://example.com/"))} {
		body, _ := json.Marshal(map[string]string{"target_url": target})
		res, out := do(t, h, signed(t, http.MethodPost, "/shorten", "application/json", body, creds, time.Now()))
		if res.StatusCode != http.StatusCreated {
			t.Fatalf("status %d: %s", res.StatusCode, out)
		}
		var got struct{ Token, ShortURL string }
		var raw map[string]string
		if err := json.Unmarshal(out, &raw); err != nil {
			t.Fatal(err)
		}
		got.Token, got.ShortURL = raw["token"], raw["short_url"]
		if !shorturl.IsToken(got.Token) || got.ShortURL != "https://s.example.com/"+got.Token || len(raw) != 2 {
			t.Fatalf("response %s", out)
		}
		if st.m[shorturl.Token(got.Token)].Target != target {
			t.Fatalf("stored %+v", st.m[shorturl.Token(got.Token)])
		}
	}
}

func TestShortenRejectsBadInput(t *testing.T) {
	long := "https://example.com/" + strings.Repeat("a", 2049-len("https://example.com/"))
	tests := []struct {
		name, contentType, body, wantType string
		status                            int
	}{
		{"not json", "application/json", `{"target_url":`, "invalid-request", 400},
		{"not an object", "application/json", `["https://example.com/"]`, "invalid-request", 400},
		{"null", "application/json", `null`, "invalid-request", 400},
		{"missing target_url", "application/json", `{}`, "target-url-required", 400},
		{"empty target_url", "application/json", `{"target_url":""}`, "target-url-required", 400},
		{"number target_url", "application/json", `{"target_url":42}`, "invalid-request", 400},
		{"created_by", "application/json", `{"target_url":"https://example.com/","created_by":"me"}`, "unknown-field", 400},
		{"created_at", "application/json", `{"target_url":"https://example.com/","created_at":"2026-01-01T00:00:00Z"}`, "unknown-field", 400},
		{"ftp scheme", "application/json", `{"target_url":"ftp://example.com/"}`, "target-url-scheme", 400},
		{"javascript", "application/json", `{"target_url":"javascript:alert(1)"}`, "target-url-scheme", 400},
		{"no host", "application/json", `{"target_url":"https:///x"}`, "target-url-host", 400},
		{"userinfo", "application/json", `{"target_url":"https://user:pw@example.com/"}`, "target-url-userinfo", 400},
		{"space", "application/json", `{"target_url":"https://example.com/a b"}`, "target-url-characters", 400},
		{"control character", "application/json", `{"target_url":"https://example.com/\u0007"}`, "target-url-characters", 400},
		{"too long", "application/json", `{"target_url":"` + long + `"}`, "target-url-too-long", 400},
		{"own resolver host", "application/json", `{"target_url":"https://s.example.com/7BTadEDkJ8"}`, "target-url-self", 400},
		{"form encoded", "application/x-www-form-urlencoded", `target_url=https://example.com/`, "unsupported-media-type", 415},
		{"no content type", "", `{"target_url":"https://example.com/"}`, "unsupported-media-type", 415},
		{"too large", "application/json", `{"target_url":"https://example.com/` + strings.Repeat("a", mgmtapi.MaxBodyBytes) + `"}`, "body-too-large", 413},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := newStore()
			h, _ := newManagementAPI(t, st, time.Now)
			res, body := do(t, h, signed(t, http.MethodPost, "/shorten", tt.contentType, []byte(tt.body), creds, time.Now()))
			if res.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %s", res.StatusCode, tt.status, body)
			}
			if p := decodeProblem(t, res, body); p.Type != httpapi.ProblemTypePrefix+tt.wantType {
				t.Fatalf("type %s, want %s (%s)", p.Type, tt.wantType, p.Detail)
			}
			if st.saves != 0 || len(st.m) != 0 {
				t.Fatal("something was written")
			}
			if tt.name == "userinfo" || tt.name == "created_by" {
				goldenProblem(t, "shorten_"+strings.ReplaceAll(tt.name, " ", "_"), body)
			}
		})
	}
}

func TestShortenRefusesBadSignatures(t *testing.T) {
	body := []byte(`{"target_url":"https://example.com/"}`)
	wrongSecret := creds
	wrongSecret.SecretAccessKey = "not-the-secret-not-the-secret-not-the-00"
	wrongKey := creds
	wrongKey.AccessKeyID = "LNKOTHEROTHEROTHER01"
	tests := map[string]func() *http.Request{
		"unsigned": func() *http.Request {
			r := httptest.NewRequest(http.MethodPost, "/shorten", bytes.NewReader(body))
			r.Header.Set("Content-Type", "application/json")
			return r
		},
		"wrong secret": func() *http.Request {
			return signed(t, http.MethodPost, "/shorten", "application/json", body, wrongSecret, time.Now())
		},
		"wrong key id": func() *http.Request {
			return signed(t, http.MethodPost, "/shorten", "application/json", body, wrongKey, time.Now())
		},
		"expired": func() *http.Request {
			return signed(t, http.MethodPost, "/shorten", "application/json", body, creds, time.Now().Add(-16*time.Minute))
		},
		"body tampered": func() *http.Request {
			r := signed(t, http.MethodPost, "/shorten", "application/json", body, creds, time.Now())
			evil := []byte(`{"target_url":"https://evil.example/"}`)
			r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(evil)), int64(len(evil))
			return r
		},
		"body tampered, hash header dropped": func() *http.Request {
			r := signed(t, http.MethodPost, "/shorten", "application/json", body, creds, time.Now())
			r.Header.Del("X-Amz-Content-Sha256")
			evil := []byte(`{"target_url":"https://evil.example/"}`)
			r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(evil)), int64(len(evil))
			return r
		},
	}
	for name, mk := range tests {
		t.Run(name, func(t *testing.T) {
			st := newStore()
			h, _ := newManagementAPI(t, st, time.Now)
			res, out := do(t, h, mk())
			if res.StatusCode != http.StatusForbidden {
				t.Fatalf("status %d: %s", res.StatusCode, out)
			}
			p := decodeProblem(t, res, out)
			if strings.Contains(string(out), creds.SecretAccessKey) || strings.Contains(p.Detail, "Signature=") {
				t.Fatal("the problem leaks signing material")
			}
			if st.saves != 0 || st.lookups != 0 {
				t.Fatalf("a refused request reached the store (%d saves, %d lookups)", st.saves, st.lookups)
			}
		})
	}
}

func TestShortenPersistDown(t *testing.T) {
	st := newStore()
	st.down = true
	h, _ := newManagementAPI(t, st, time.Now)
	res, body := do(t, h, signed(t, http.MethodPost, "/shorten", "application/json", []byte(`{"target_url":"https://example.com/"}`), creds, time.Now()))
	if res.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("status %d: %s", res.StatusCode, body)
	}
	decodeProblem(t, res, body)
	goldenProblem(t, "shorten_unavailable", body)
}

func TestLinkStats(t *testing.T) {
	st := newStore()
	st.m[known.Token] = known
	st.clicks[known.Token] = 3
	h, _ := newManagementAPI(t, st, time.Now)
	res, body := do(t, h, signed(t, http.MethodGet, "/links/7BTadEDkJ8/stats", "", nil, creds, time.Now()))
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(string(body), `{"by_day":[`) || !strings.HasSuffix(strings.TrimSpace(string(body)), `],"clicks":3,"token":"7BTadEDkJ8","unique_visitors":0}`) {
		t.Fatalf("%d %s", res.StatusCode, body)
	}
	for path, want := range map[string]int{"/links/AAAAAAAAAA/stats": 404, "/links/bad/stats": 404, "/links/7BTadEDk-8/stats": 404} {
		res, body := do(t, h, signed(t, http.MethodGet, path, "", nil, creds, time.Now()))
		if res.StatusCode != want {
			t.Errorf("%s: %d %s", path, res.StatusCode, body)
		}
		decodeProblem(t, res, body)
	}
	unsigned := httptest.NewRequest(http.MethodGet, "/links/7BTadEDkJ8/stats", nil)
	if res, _ := do(t, h, unsigned); res.StatusCode != http.StatusForbidden {
		t.Errorf("unsigned stats: %d", res.StatusCode)
	}
	st.down = true
	if res, _ := do(t, h, signed(t, http.MethodGet, "/links/7BTadEDkJ8/stats", "", nil, creds, time.Now())); res.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("stats with persist down: %d", res.StatusCode)
	}
}

func TestManagementRouting(t *testing.T) {
	h, _ := newManagementAPI(t, newStore(), time.Now)
	tests := []struct {
		method, path string
		status       int
	}{
		{http.MethodGet, "/shorten", 405},
		{http.MethodDelete, "/links/7BTadEDkJ8/stats", 405},
		{http.MethodGet, "/7BTadEDkJ8", 404},
		{http.MethodGet, "/nothing/here", 404},
		{http.MethodDelete, "/links/7BTadEDkJ8", 405},
		// Under /links/, only a link and its stats are routes (none on API Gateway either).
		{http.MethodGet, "/links/", 404},
		{http.MethodGet, "/links/7BTadEDkJ8/", 404},
		{http.MethodGet, "/links/7BTadEDkJ8/stats/", 404},
		{http.MethodGet, "/links/a/b/c", 404},
	}
	for _, tt := range tests {
		res, body := do(t, h, signed(t, tt.method, tt.path, "", nil, creds, time.Now()))
		if res.StatusCode != tt.status {
			t.Errorf("%s %s: %d %s", tt.method, tt.path, res.StatusCode, body)
		}
		decodeProblem(t, res, body)
	}
}

type failingPublisher struct{}

func (failingPublisher) Publish(context.Context, clickfact.Fact) error {
	return errors.New("PutEvents: FailedEntryCount=1 (InternalFailure)")
}

type failingDLQ struct{}

func (failingDLQ) DeadLetter(context.Context, clickfact.DeadLetter) error {
	return errors.New("SendMessage: connection refused")
}

// TestResolveRedirectsWhenBusAndDLQFail: the click is still a 302, and its fact is
// logged whole at ERROR so that it is not lost.
func TestResolveRedirectsWhenBusAndDLQFail(t *testing.T) {
	st := newStore()
	st.m[known.Token] = known
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	rec, err := shorturl.NewRecorder(shorturl.RecorderConfig{Publisher: failingPublisher{}, DeadLetters: failingDLQ{}, Logger: log,
		EventIDs: func() (string, error) { return "ev_01JZ8Q6W3C4V5B6N7M8K9J0H1G", nil }})
	if err != nil {
		t.Fatal(err)
	}
	res, _ := shorturl.NewResolver(st, rec, shorturl.Screening{})
	h := httpapi.NewResolver(httpapi.ResolverDeps{Resolver: res, Logger: log})
	resp, _ := do(t, h, httptest.NewRequest(http.MethodGet, "/7BTadEDkJ8", nil))
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != known.Target {
		t.Fatalf("status %d, Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	var line struct {
		Level     string          `json:"level"`
		GraphFact json.RawMessage `json:"graph_fact"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(logs.Bytes()), &line); err != nil || line.Level != "ERROR" {
		t.Fatalf("log %q: %v", logs.String(), err)
	}
	schematest.MustValidate(t, schematest.GraphFact, line.GraphFact)
	if rec.Counters().LostToLog.Load() != 1 {
		t.Fatal("the loss to the log was not counted")
	}
}

// TestLinkStatsMisbehavingPersist: a Persist that answers a click count that is not a
// count is an unavailable store (503), as documented, not an internal error.
func TestLinkStatsMisbehavingPersist(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"status":{"code":200,"message":""},"result":{"data":{"@type":"g:List","@value":[`+
			`{"@type":"g:Map","@value":["short_url_token","7BTadEDkJ8","clicks","many"]}]}}}`)
	}))
	defer srv.Close()
	pc, err := persist.New(persist.Config{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	is, _ := shorturl.NewIssuer(shorturl.IssuerConfig{Store: pc, ResolverBaseURL: "https://s.example.com", Rand: rand.Reader})
	v, _ := sigv4.New(creds, "us-east-1", "execute-api")
	h, err := mgmtapi.NewManagement(mgmtapi.ManagementDeps{Issuer: is, Clicker: pc, Authenticator: v})
	if err != nil {
		t.Fatal(err)
	}
	res, body := do(t, h, signed(t, http.MethodGet, "/links/7BTadEDkJ8/stats", "", nil, creds, time.Now()))
	if res.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("status %d: %s", res.StatusCode, body)
	}
	if p := decodeProblem(t, res, body); p.Type != httpapi.ProblemTypePrefix+httpapi.CodeUnavailable {
		t.Fatalf("problem %+v", p)
	}
	if res.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Fatal("problem without nosniff")
	}
}

func TestHealthReportsLagAndDegradation(t *testing.T) {
	res, _ := shorturl.NewResolver(newStore(), nil, shorturl.Screening{})
	var h httpapi.Health
	api := httpapi.NewResolver(httpapi.ResolverDeps{Resolver: res, Health: func() httpapi.Health { return h }})
	lag := int64(1300)
	h = httpapi.Health{BusLagBytes: &lag}
	r, body := do(t, api, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	if r.StatusCode != http.StatusOK || strings.TrimSpace(string(body)) != `{"bus_lag_bytes":1300,"status":"ok"}` {
		t.Fatalf("%d %s", r.StatusCode, body)
	}
	h = httpapi.Health{Degraded: []string{"click-recording"}}
	r, body = do(t, api, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	if r.StatusCode != http.StatusOK || strings.TrimSpace(string(body)) != `{"degraded":["click-recording"],"status":"degraded"}` {
		t.Fatalf("degraded: %d %s", r.StatusCode, body)
	}
}

// TestResolveNeverRedirectsToARogueTarget: a short_url vertex someone wrote into
// Persist behind issuance's back, with a target issuance refuses, is a 404 and an
// ERROR naming the token — never a redirect, never a click.
func TestResolveNeverRedirectsToARogueTarget(t *testing.T) {
	st := newStore()
	st.m["EvilEvil01"] = shorturl.ShortURL{Token: "EvilEvil01", Path: "https://s.example.com/EvilEvil01", Target: "javascript:alert(document.cookie)"}
	pub := &publisher{}
	rec, _ := shorturl.NewRecorder(shorturl.RecorderConfig{Publisher: pub, DeadLetters: noDLQ{},
		EventIDs: func() (string, error) { return "ev_01JZ8Q6W3C4V5B6N7M8K9J0H1G", nil }})
	res, _ := shorturl.NewResolver(st, rec, shorturl.Screening{})
	var logs bytes.Buffer
	h := httpapi.NewResolver(httpapi.ResolverDeps{Resolver: res, Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	for _, method := range []string{http.MethodGet, http.MethodHead} {
		r, body := do(t, h, httptest.NewRequest(method, "/EvilEvil01", nil))
		if r.StatusCode != http.StatusNotFound || r.Header.Get("Location") != "" {
			t.Fatalf("%s: %d %s, Location %q", method, r.StatusCode, body, r.Header.Get("Location"))
		}
	}
	if len(pub.facts) != 0 {
		t.Fatalf("%d facts recorded", len(pub.facts))
	}
	if !strings.Contains(logs.String(), `"level":"ERROR"`) || !strings.Contains(logs.String(), "EvilEvil01") {
		t.Fatalf("no ERROR naming the token: %s", logs.String())
	}
}

// TestHeadIsNotAVisit: HEAD answers exactly like GET (status and headers) and records
// no fact.
func TestHeadIsNotAVisit(t *testing.T) {
	st := newStore()
	st.m[known.Token] = known
	h, pub := newResolverAPI(t, st)
	get, _ := do(t, h, httptest.NewRequest(http.MethodGet, "/7BTadEDkJ8", nil))
	head, body := do(t, h, httptest.NewRequest(http.MethodHead, "/7BTadEDkJ8", nil))
	if head.StatusCode != http.StatusFound || len(body) != 0 {
		t.Fatalf("HEAD: %d, body %q", head.StatusCode, body)
	}
	for _, k := range []string{"Location", "Cache-Control"} {
		if head.Header.Get(k) != get.Header.Get(k) || get.Header.Get(k) == "" {
			t.Errorf("%s: HEAD %q, GET %q", k, head.Header.Get(k), get.Header.Get(k))
		}
	}
	if len(pub.facts) != 1 {
		t.Fatalf("GET then HEAD recorded %d facts, want 1 (the GET)", len(pub.facts))
	}
	if r, _ := do(t, h, httptest.NewRequest(http.MethodHead, "/AAAAAAAAAA", nil)); r.StatusCode != http.StatusNotFound {
		t.Fatalf("HEAD unknown token: %d", r.StatusCode)
	}
}

// TestForbiddenSaysNoMoreThanAWS: whichever signature check fails, the 403 reads
// the same; the reason is only in the server's log.
func TestForbiddenSaysNoMoreThanAWS(t *testing.T) {
	h, _ := newManagementAPI(t, newStore(), time.Now)
	body := []byte(`{"target_url":"https://example.com/"}`)
	wrongKey := creds
	wrongKey.AccessKeyID = "LNKUNKNOWNUNKNOWN001"
	wrongSecret := creds
	wrongSecret.SecretAccessKey = "another-secret-another-secret-another-00"
	unsigned := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8081/shorten", bytes.NewReader(body))
	unsigned.Header.Set("Content-Type", "application/json")
	var first []byte
	for name, req := range map[string]*http.Request{
		"unsigned":     unsigned,
		"unknown key":  signed(t, http.MethodPost, "/shorten", "application/json", body, wrongKey, time.Now()),
		"wrong secret": signed(t, http.MethodPost, "/shorten", "application/json", body, wrongSecret, time.Now()),
		"too old":      signed(t, http.MethodPost, "/shorten", "application/json", body, creds, time.Now().Add(-time.Hour)),
	} {
		res, got := do(t, h, req)
		if res.StatusCode != http.StatusForbidden {
			t.Fatalf("%s: %d %s", name, res.StatusCode, got)
		}
		if first == nil {
			first = got
		} else if !bytes.Equal(first, got) {
			t.Errorf("%s: 403 body %s differs from %s", name, got, first)
		}
	}
}

// TestShortenRefusesTheHostItWasSentTo: on AWS the management API's own domain is
// named by no configuration; the Host a request was sent to is this service's own
// host all the same.
func TestShortenRefusesTheHostItWasSentTo(t *testing.T) {
	st := newStore()
	h, _ := newManagementAPI(t, st, time.Now)
	const host = "abc123defg.execute-api.eu-west-1.amazonaws.com"
	for target, want := range map[string]int{
		"https://" + host + "/shorten":                              http.StatusBadRequest,
		"https://ABC123DEFG.execute-api.eu-west-1.amazonaws.com./x": http.StatusBadRequest,
		"https://example.com/elsewhere":                             http.StatusCreated,
	} {
		body := []byte(`{"target_url":"` + target + `"}`)
		req := httptest.NewRequest(http.MethodPost, "https://"+host+"/shorten", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if err := sigv4.SignRequest(context.Background(), req, body, creds, "us-east-1", "execute-api", time.Now()); err != nil {
			t.Fatal(err)
		}
		res, got := do(t, h, req)
		if res.StatusCode != want {
			t.Fatalf("%s: %d %s", target, res.StatusCode, got)
		}
		if want == http.StatusBadRequest {
			if p := decodeProblem(t, res, got); p.Type != httpapi.ProblemTypePrefix+string(shorturl.RuleSelf) {
				t.Fatalf("%s: %+v", target, p)
			}
		}
	}
}

// GET and HEAD /{token} answer an escaped spelling of the path (one with a RawPath)
// byte for byte as the plain one, and record a click alike, for every kind of
// outcome: a visitor's client may escape any character of the token.
func TestEscapedTokenAnswersAlike(t *testing.T) {
	rogue := shorturl.ShortURL{Token: "R0gueR0gue", Path: "https://s.example.com/R0gueR0gue", Target: "javascript:alert(1)"}
	for _, tc := range []struct{ name, token string }{
		{"known", string(known.Token)},
		{"unknown", "AAAAAAAAAA"},
		{"too short", "AAAA"},
		{"not base62", "AAAAA_AAAA"},
		{"rogue stored target", string(rogue.Token)},
		{"persist down", "Down000000"},
	} {
		for _, method := range []string{http.MethodGet, http.MethodHead} {
			t.Run(tc.name+"/"+method, func(t *testing.T) {
				answer := func(path string) (*http.Response, []byte, int) {
					st := newStore()
					st.m[known.Token], st.m[rogue.Token] = known, rogue
					st.down = tc.token == "Down000000"
					h, pub := newResolverAPI(t, st)
					req := httptest.NewRequest(method, path, nil)
					req.Header.Set("User-Agent", "test-agent/1.0")
					res, body := do(t, h, req)
					return res, body, len(pub.facts)
				}
				plain, plainBody, plainFacts := answer("/" + tc.token)
				// %41 is "A": the same path, escaped, so that it has a RawPath.
				escaped := "/%" + fmt.Sprintf("%02X", tc.token[0]) + tc.token[1:]
				esc, escBody, escFacts := answer(escaped)
				if plain.StatusCode != esc.StatusCode || !bytes.Equal(plainBody, escBody) || plainFacts != escFacts {
					t.Fatalf("plain path: %d %q, %d facts; escaped: %d %q, %d facts",
						plain.StatusCode, plainBody, plainFacts, esc.StatusCode, escBody, escFacts)
				}
				plain.Header.Del("Date")
				esc.Header.Del("Date")
				if !reflect.DeepEqual(plain.Header, esc.Header) {
					t.Fatalf("headers differ: plain path %v, escaped %v", plain.Header, esc.Header)
				}
				wantFacts := 0
				if tc.name == "known" && method == http.MethodGet {
					wantFacts = 1
				}
				if plainFacts != wantFacts {
					t.Fatalf("%d facts recorded, want %d", plainFacts, wantFacts)
				}
			})
		}
	}
}
