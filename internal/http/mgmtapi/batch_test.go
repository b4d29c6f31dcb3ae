package mgmtapi_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linoone/linoone/internal/core/shorturl"
	"github.com/linoone/linoone/internal/http/httpapi"
	"github.com/linoone/linoone/internal/http/mgmtapi"
	"github.com/linoone/linoone/internal/http/sigv4"
	"github.com/linoone/linoone/internal/local/localpersist"
	"github.com/linoone/linoone/internal/persist"
)

var creds = sigv4.Credentials{AccessKeyID: "LNKBATCHTESTBATCH001", SecretAccessKey: "batch-test-secret-batch-test-secret-0000"}

var secret = []byte("0123456789abcdef0123456789abcdef")

// env is the management API on a real local Persist over HTTP, with the calls
// Persist received counted.
type env struct {
	h                http.Handler
	pc               *persist.Client
	persist          *httptest.Server
	ingests, queries atomic.Int64
	down             atomic.Bool // Persist answers 503 to everything
}

func newEnv(t *testing.T, opts ...func(*mgmtapi.ManagementDeps)) *env {
	t.Helper()
	lp, err := localpersist.Open(context.Background(), filepath.Join(t.TempDir(), "persist.db"), localpersist.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{}
	inner := lp.Handler()
	e.persist = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if e.down.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		switch r.URL.Path {
		case "/persist/ingest":
			e.ingests.Add(1)
		case "/persist/gremlin":
			e.queries.Add(1)
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { e.persist.Close(); _ = lp.Close() })
	if e.pc, err = persist.New(persist.Config{BaseURL: e.persist.URL, Timeout: 5 * time.Second}); err != nil {
		t.Fatal(err)
	}
	is, err := shorturl.NewIssuer(shorturl.IssuerConfig{Store: e.pc, Batch: e.pc, ResolverBaseURL: "http://127.0.0.1:8080", Rand: rand.Reader,
		SelfHosts: []string{"127.0.0.1:8081"}, IdempotencySecret: secret})
	if err != nil {
		t.Fatal(err)
	}
	v, err := sigv4.New(creds, "us-east-1", "execute-api", sigv4.WithMaxBodyBytes(mgmtapi.MaxBatchBodyBytes))
	if err != nil {
		t.Fatal(err)
	}
	deps := mgmtapi.ManagementDeps{Issuer: is, Clicker: e.pc, Authenticator: v, Caller: sigv4.Caller}
	for _, o := range opts {
		o(&deps)
	}
	if e.h, err = mgmtapi.NewManagement(deps); err != nil {
		t.Fatal(err)
	}
	return e
}

type answer struct {
	status int
	header http.Header
	body   []byte
}

func (a answer) problemType() string {
	var p httpapi.Problem
	_ = json.Unmarshal(a.body, &p)
	return strings.TrimPrefix(p.Type, httpapi.ProblemTypePrefix)
}

// post signs and sends body; headers are name, value pairs set before signing.
func (e *env) post(t *testing.T, path string, body []byte, headers ...string) answer {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8081"+path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Add(headers[i], headers[i+1])
	}
	if err := sigv4.SignRequest(context.Background(), req, body, creds, "us-east-1", "execute-api", time.Now()); err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	res := rec.Result()
	b, _ := io.ReadAll(res.Body)
	return answer{res.StatusCode, res.Header, b}
}

// health is the management API's GET /healthz body.
func (e *env) health(t *testing.T) string {
	t.Helper()
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /healthz: %d %s", rec.Code, rec.Body)
	}
	return strings.TrimSpace(rec.Body.String())
}

// TestHealthNamesPersistAfterABatchOrKeyedIssuance: a batch and a keyed issuance
// that found Persist unavailable make GET /healthz name persist; a batch whose items
// were all refused before any call leaves it so; one that issued clears it.
func TestHealthNamesPersistAfterABatchOrKeyedIssuance(t *testing.T) {
	const ok, degraded = `{"status":"ok"}`, `{"degraded":["persist"],"status":"degraded"}`
	e := newEnv(t)
	e.down.Store(true)
	if a := e.post(t, "/shorten/batch", []byte(`{"items":[{"target_url":"https://example.com/a"}]}`)); a.status != http.StatusServiceUnavailable {
		t.Fatalf("batch with Persist down: %d %s", a.status, a.body)
	}
	if h := e.health(t); h != degraded {
		t.Fatalf("after the batch: %s, want %s", h, degraded)
	}
	e.down.Store(false)
	if a := e.post(t, "/shorten/batch", []byte(`{"items":[{"target_url":"ftp://example.com/a"}]}`)); a.status != http.StatusOK {
		t.Fatalf("batch of an invalid item: %d %s", a.status, a.body)
	}
	if h := e.health(t); h != degraded {
		t.Fatalf("after a batch that called nothing: %s, want %s", h, degraded)
	}
	if a := e.post(t, "/shorten/batch", []byte(`{"items":[{"target_url":"ftp://example.com/a"},{"target_url":"https://example.com/a"}]}`)); a.status != http.StatusOK {
		t.Fatalf("batch: %d %s", a.status, a.body)
	}
	if h := e.health(t); h != ok {
		t.Fatalf("after a batch that issued: %s, want %s", h, ok)
	}
	e.down.Store(true)
	if a := e.post(t, "/shorten", targetBody("https://example.com/k"), "Idempotency-Key", "k-1"); a.status != http.StatusServiceUnavailable {
		t.Fatalf("keyed issuance with Persist down: %d %s", a.status, a.body)
	}
	if h := e.health(t); h != degraded {
		t.Fatalf("after the keyed issuance: %s, want %s", h, degraded)
	}
	e.down.Store(false)
	if a := e.post(t, "/shorten", targetBody("https://example.com/k"), "Idempotency-Key", "k-1"); a.status != http.StatusCreated {
		t.Fatalf("keyed issuance: %d %s", a.status, a.body)
	}
	if h := e.health(t); h != ok {
		t.Fatalf("after the keyed issuance: %s, want %s", h, ok)
	}
}

func targetBody(target string) []byte {
	b, _ := json.Marshal(map[string]string{"target_url": target})
	return b
}

func TestShortenIdempotencyKey(t *testing.T) {
	e := newEnv(t)
	first := e.post(t, "/shorten", targetBody("https://example.com/a"), "Idempotency-Key", "order-4711")
	if first.status != http.StatusCreated || first.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("first: %d %v %s", first.status, first.header, first.body)
	}
	want := string(shorturl.DeriveToken(secret, creds.AccessKeyID, "order-4711"))
	if !bytes.Contains(first.body, []byte(`"token":"`+want+`"`)) {
		t.Errorf("token is not derived from the caller's access key id and the key: %s (want %s)", first.body, want)
	}
	retry := e.post(t, "/shorten", targetBody("https://example.com/a"), "Idempotency-Key", "order-4711")
	if retry.status != http.StatusOK || retry.header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(retry.body, first.body) {
		t.Fatalf("retry: %d %v %s, want 200, Idempotent-Replayed: true and %s", retry.status, retry.header, retry.body, first.body)
	}
	ingests := e.ingests.Load()
	reused := e.post(t, "/shorten", targetBody("https://example.com/b"), "Idempotency-Key", "order-4711")
	if reused.status != http.StatusUnprocessableEntity || reused.problemType() != httpapi.CodeIdempotencyKeyReused {
		t.Fatalf("reused: %d %s", reused.status, reused.body)
	}
	if e.ingests.Load() != ingests {
		t.Error("a reused key wrote something")
	}
	if u, err := e.pc.Lookup(context.Background(), shorturl.Token(want)); err != nil || u.Target != "https://example.com/a" {
		t.Errorf("stored %+v %v", u, err)
	}
	// Without the header tokens stay random.
	a, b := e.post(t, "/shorten", targetBody("https://example.com/a")), e.post(t, "/shorten", targetBody("https://example.com/a"))
	if a.status != http.StatusCreated || b.status != http.StatusCreated || bytes.Equal(a.body, b.body) {
		t.Errorf("without a key: %d %s, %d %s", a.status, a.body, b.status, b.body)
	}
}

func TestBadIdempotencyKeys(t *testing.T) {
	e := newEnv(t)
	for name, headers := range map[string][]string{
		"empty":          {"Idempotency-Key", ""},
		"256 characters": {"Idempotency-Key", strings.Repeat("k", 256)},
		"control":        {"Idempotency-Key", "a\x01b"},
		"non-ASCII":      {"Idempotency-Key", "clé"},
		"twice":          {"Idempotency-Key", "a", "Idempotency-Key", "b"},
		"a comma":        {"Idempotency-Key", "order,4711"},
		"two spaces":     {"Idempotency-Key", "order  4711"},
	} {
		for _, path := range []string{"/shorten", "/shorten/batch"} {
			body := targetBody("https://example.com/a")
			if path == "/shorten/batch" {
				body = []byte(`{"items":[{"target_url":"https://example.com/a"}]}`)
			}
			got := e.post(t, path, body, headers...)
			if got.status != http.StatusBadRequest || got.problemType() != httpapi.CodeIdempotencyKeyInvalid {
				t.Errorf("%s %s: %d %s", name, path, got.status, got.body)
			}
		}
	}
	if e.ingests.Load() != 0 || e.queries.Load() != 0 {
		t.Errorf("refused keys reached Persist: %d ingests, %d queries", e.ingests.Load(), e.queries.Load())
	}
	for _, key := range []string{strings.Repeat("~", 255), "order 4711 ~!+-"} {
		if got := e.post(t, "/shorten", targetBody("https://example.com/a"), "Idempotency-Key", key); got.status != http.StatusCreated {
			t.Errorf("%q: %d %s", key, got.status, got.body)
		}
	}
}

type batchAnswer struct {
	Results []struct {
		Token    string           `json:"token"`
		ShortURL string           `json:"short_url"`
		Replayed bool             `json:"replayed"`
		Problem  *httpapi.Problem `json:"problem"`
	} `json:"results"`
}

func decodeBatch(t *testing.T, a answer) batchAnswer {
	t.Helper()
	if a.status != http.StatusOK {
		t.Fatalf("batch: %d %s", a.status, a.body)
	}
	var out batchAnswer
	dec := json.NewDecoder(bytes.NewReader(a.body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		t.Fatalf("batch answer %s: %v", a.body, err)
	}
	return out
}

func TestBatchItemsFailAlone(t *testing.T) {
	e := newEnv(t)
	body := []byte(`{"items":[
		{"target_url":"https://example.com/0"},
		{"target_url":"https://example.com/1","created_by":"me"},
		{"target_url":"ftp://example.com/2"},
		{},
		{"target_url":"http://127.0.0.1:8080/7BTadEDkJ8"},
		{"target_url":"https://example.com/` + strings.Repeat("x", 2049) + `"},
		{"target_url":"https://example.com/6"}]}`)
	got := decodeBatch(t, e.post(t, "/shorten/batch", body))
	want := []string{"", httpapi.CodeUnknownField, string(shorturl.RuleScheme), string(shorturl.RuleRequired), string(shorturl.RuleSelf), string(shorturl.RuleLength), ""}
	if len(got.Results) != len(want) {
		t.Fatalf("%d results, want %d", len(got.Results), len(want))
	}
	for i, r := range got.Results {
		switch {
		case want[i] == "" && (r.Problem != nil || !shorturl.IsToken(r.Token) || r.ShortURL != "http://127.0.0.1:8080/"+r.Token):
			t.Errorf("item %d: %+v", i, r)
		case want[i] != "" && (r.Problem == nil || r.Problem.Type != httpapi.ProblemTypePrefix+want[i] || r.Problem.Status != 400 || r.Token != ""):
			t.Errorf("item %d: %+v, want problem %s", i, r, want[i])
		}
	}
	if e.ingests.Load() != 1 || e.queries.Load() != 1 {
		t.Errorf("Persist calls: %d ingests, %d queries; want 1 and 1", e.ingests.Load(), e.queries.Load())
	}
	for _, i := range []int{0, 6} {
		if u, err := e.pc.Lookup(context.Background(), shorturl.Token(got.Results[i].Token)); err != nil || u.Target != fmt.Sprintf("https://example.com/%d", i) {
			t.Errorf("item %d stored as %+v, %v", i, u, err)
		}
	}
}

func TestBatchRefusedWhole(t *testing.T) {
	e := newEnv(t)
	items := func(n int) []byte {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = fmt.Sprintf(`{"target_url":"https://example.com/%d"}`, i)
		}
		return []byte(`{"items":[` + strings.Join(parts, ",") + `]}`)
	}
	for name, tc := range map[string]struct {
		body   []byte
		status int
		code   string // the problem's type, after its prefix
	}{
		"no items":       {items(0), 400, httpapi.CodeInvalidRequest},
		"1,001 items":    {items(1001), 400, httpapi.CodeInvalidRequest},
		"items a string": {[]byte(`{"items":"https://example.com/"}`), 400, httpapi.CodeInvalidRequest},
		"items missing":  {[]byte(`{}`), 400, httpapi.CodeInvalidRequest},
		"other member":   {[]byte(`{"items":[{"target_url":"https://example.com/"}],"x":1}`), 400, httpapi.CodeUnknownField},
		"item a string":  {[]byte(`{"items":["https://example.com/"]}`), 400, httpapi.CodeInvalidRequest},
		"trailing data":  {[]byte(`{"items":[{"target_url":"https://example.com/"}]} {}`), 400, httpapi.CodeInvalidRequest},
		"over 4 MiB":     {append(items(1), bytes.Repeat([]byte(" "), mgmtapi.MaxBatchBodyBytes)...), 413, httpapi.CodeTooLarge},
	} {
		got := e.post(t, "/shorten/batch", tc.body)
		var p struct{ Type string }
		if err := json.Unmarshal(got.body, &p); err != nil || got.status != tc.status || p.Type != httpapi.ProblemTypePrefix+tc.code {
			t.Errorf("%s: %d %s, want %d …%s", name, got.status, got.body, tc.status, tc.code)
		}
	}
	if e.ingests.Load() != 0 {
		t.Errorf("refused batches wrote %d times", e.ingests.Load())
	}
	if got := decodeBatch(t, e.post(t, "/shorten/batch", items(1000))); len(got.Results) != 1000 {
		t.Errorf("1,000 items: %d results", len(got.Results))
	}
}

// TestBatchOfManyValuesRefusedBeforeDecoding: a body within the size limit that holds
// a vast number of JSON values is refused before the validator decodes them into Go
// values (a 4 MiB body of "{}," × 1.4 million cost ~150 MB and over a second).
func TestBatchOfManyValuesRefusedBeforeDecoding(t *testing.T) {
	e := newEnv(t)
	n := (mgmtapi.MaxBatchBodyBytes - 20) / 3
	body := []byte(`{"items":[` + strings.Repeat(`{},`, n-1) + `{}]}`)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got := e.post(t, "/shorten/batch", body)
	runtime.ReadMemStats(&after)
	if got.status != http.StatusBadRequest || !strings.Contains(string(got.body), "JSON values") {
		t.Errorf("%d items: %d %s, want 400 naming the JSON values", n, got.status, got.body)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 80<<20 { // 253 MiB before; the body is copied a few times on its way
		t.Errorf("refusing a %d KiB body allocated %d MiB", len(body)>>10, alloc>>20)
	}
}

func TestBatchIdempotencyKey(t *testing.T) {
	e := newEnv(t)
	body := []byte(`{"items":[{"target_url":"https://example.com/0"},{"target_url":"ftp://bad"},{"target_url":"https://example.com/2"}]}`)
	first := decodeBatch(t, e.post(t, "/shorten/batch", body, "Idempotency-Key", "import-1"))
	if first.Results[0].Token != string(shorturl.DeriveToken(secret, creds.AccessKeyID, "import-1#0")) ||
		first.Results[2].Token != string(shorturl.DeriveToken(secret, creds.AccessKeyID, "import-1#2")) {
		t.Errorf("item tokens are not derived from <key>#<i>: %+v", first.Results)
	}
	ingests := e.ingests.Load()
	again := decodeBatch(t, e.post(t, "/shorten/batch", body, "Idempotency-Key", "import-1"))
	for _, i := range []int{0, 2} {
		if !again.Results[i].Replayed || again.Results[i].Token != first.Results[i].Token {
			t.Errorf("item %d: retry %+v, first %+v", i, again.Results[i], first.Results[i])
		}
	}
	if e.ingests.Load() != ingests {
		t.Error("a retried batch wrote again")
	}
	// The single-item route with key "import-1#0" finds the batch's item 0.
	single := e.post(t, "/shorten", targetBody("https://example.com/0"), "Idempotency-Key", "import-1#0")
	if single.status != http.StatusOK || !bytes.Contains(single.body, []byte(first.Results[0].Token)) {
		t.Errorf("single replay of a batch item: %d %s", single.status, single.body)
	}
	changed := decodeBatch(t, e.post(t, "/shorten/batch", bytes.Replace(body, []byte("example.com/2"), []byte("example.com/other"), 1), "Idempotency-Key", "import-1"))
	if p := changed.Results[2].Problem; p == nil || p.Status != 422 || p.Type != httpapi.ProblemTypePrefix+httpapi.CodeIdempotencyKeyReused || !changed.Results[0].Replayed {
		t.Errorf("changed item: %+v", changed.Results)
	}
}

func TestBatchPersistDown(t *testing.T) {
	e := newEnv(t)
	e.persist.Close()
	got := e.post(t, "/shorten/batch", []byte(`{"items":[{"target_url":"https://example.com/0"},{"target_url":"ftp://bad"}]}`))
	if got.status != http.StatusServiceUnavailable || got.problemType() != httpapi.CodeUnavailable || bytes.Contains(got.body, []byte("token")) {
		t.Fatalf("%d %s, want a 503 problem and no result", got.status, got.body)
	}
}

func TestNewRoutesRefuseBadSignatures(t *testing.T) {
	e := newEnv(t)
	body := []byte(`{"items":[{"target_url":"https://example.com/0"}]}`)
	for _, path := range []string{"/shorten/batch", "/shorten"} {
		unsigned := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8081"+path, bytes.NewReader(body))
		unsigned.Header.Set("Content-Type", "application/json")
		unsigned.Header.Set("Idempotency-Key", "k")
		wrong := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8081"+path, bytes.NewReader(body))
		wrong.Header.Set("Content-Type", "application/json")
		wrong.Header.Set("Idempotency-Key", "k")
		other := sigv4.Credentials{AccessKeyID: creds.AccessKeyID, SecretAccessKey: strings.Repeat("x", 40)}
		if err := sigv4.SignRequest(context.Background(), wrong, body, other, "us-east-1", "execute-api", time.Now()); err != nil {
			t.Fatal(err)
		}
		for name, req := range map[string]*http.Request{"unsigned": unsigned, "mis-signed": wrong} {
			rec := httptest.NewRecorder()
			e.h.ServeHTTP(rec, req)
			if rec.Code != http.StatusForbidden {
				t.Errorf("%s %s: %d %s", name, path, rec.Code, rec.Body)
			}
		}
	}
	if e.ingests.Load() != 0 || e.queries.Load() != 0 {
		t.Errorf("refused requests reached Persist")
	}
}

// TestBatchOfThousandLongTargets: the largest batch (1,000 targets of 2,048
// characters) fits the body limit and takes one query and one ingest; its latency
// is logged (go test -v).
func TestBatchOfThousandLongTargets(t *testing.T) {
	e := newEnv(t)
	parts := make([]string, 1000)
	for i := range parts {
		prefix := fmt.Sprintf("https://example.com/%04d/", i)
		parts[i] = `{"target_url":"` + prefix + strings.Repeat("a", 2048-len(prefix)) + `"}`
	}
	body := []byte(`{"items":[` + strings.Join(parts, ",") + `]}`)
	start := time.Now()
	got := decodeBatch(t, e.post(t, "/shorten/batch", body, "Idempotency-Key", "big"))
	t.Logf("1,000 × 2,048-character targets (%d bytes): %s", len(body), time.Since(start))
	for i, r := range got.Results {
		if r.Problem != nil {
			t.Fatalf("item %d: %+v", i, r.Problem)
		}
	}
	if e.ingests.Load() != 1 || e.queries.Load() != 1 {
		t.Errorf("Persist calls: %d ingests, %d queries; want 1 and 1", e.ingests.Load(), e.queries.Load())
	}
}
