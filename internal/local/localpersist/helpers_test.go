package localpersist

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/linoone/linoone/internal/core/graphson"
)

// testEnv is a store on a fresh file, served over real HTTP.
type testEnv struct {
	store *Store
	srv   *httptest.Server
	path  string
}

func newEnv(t testing.TB, opts Options) *testEnv {
	t.Helper()
	path := filepath.Join(t.TempDir(), "persist.db")
	return openEnv(t, path, opts)
}

func openEnv(t testing.TB, path string, opts Options) *testEnv {
	t.Helper()
	st, err := Open(context.Background(), path, opts)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	srv := httptest.NewServer(st.Handler())
	e := &testEnv{store: st, srv: srv, path: path}
	t.Cleanup(e.close)
	return e
}

func (e *testEnv) close() {
	e.srv.Close()
	_ = e.store.Close()
}

// post sends body to path with a JSON content type and returns status and body.
func (e *testEnv) post(t testing.TB, path string, body []byte) (int, []byte) {
	t.Helper()
	return e.do(t, http.MethodPost, path, "application/json", body)
}

func (e *testEnv) do(t testing.TB, method, path, contentType string, body []byte) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", gremlinContentType)
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

type ingestReply struct {
	Vertices ingestCount `json:"vertices"`
	Edges    ingestCount `json:"edges"`
	Error    string      `json:"error"`
}

// ingest posts a document and decodes the answer.
func (e *testEnv) ingest(t testing.TB, body []byte) (int, ingestReply) {
	t.Helper()
	status, b := e.post(t, "/persist/ingest", body)
	var r ingestReply
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("ingest reply %q: %v", b, err)
	}
	return status, r
}

// mustIngest ingests a document that must be accepted.
func (e *testEnv) mustIngest(t testing.TB, doc graphson.Document) ingestReply {
	t.Helper()
	status, r := e.ingest(t, docJSON(t, doc))
	if status != http.StatusOK {
		t.Fatalf("ingest: status %d: %s", status, r.Error)
	}
	return r
}

type gremlinReply struct {
	RequestID string `json:"requestId"`
	Status    struct {
		Message    string          `json:"message"`
		Code       int             `json:"code"`
		Attributes json.RawMessage `json:"attributes"`
	} `json:"status"`
	Result struct {
		Data json.RawMessage `json:"data"`
		Meta json.RawMessage `json:"meta"`
	} `json:"result"`
}

// gremlin posts a script and decodes the envelope.
func (e *testEnv) gremlin(t testing.TB, script string, bindings map[string]any) (int, gremlinReply) {
	t.Helper()
	body, err := json.Marshal(map[string]any{"gremlin": script, "bindings": bindings})
	if err != nil {
		t.Fatal(err)
	}
	status, b := e.post(t, "/persist/gremlin", body)
	return status, decodeGremlinReply(t, b)
}

func decodeGremlinReply(t testing.TB, b []byte) gremlinReply {
	t.Helper()
	var r gremlinReply
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("gremlin reply %s: %v", b, err)
	}
	return r
}

// query runs a script that must succeed and returns the decoded result list.
func (e *testEnv) query(t testing.TB, script string, bindings map[string]any) []any {
	t.Helper()
	status, r := e.gremlin(t, script, bindings)
	if status != http.StatusOK || r.Status.Code != codeSuccess {
		t.Fatalf("%s: HTTP %d, code %d: %s", script, status, r.Status.Code, r.Status.Message)
	}
	v, err := graphson.DecodeValue(r.Result.Data)
	if err != nil {
		t.Fatalf("decode %s: %v", r.Result.Data, err)
	}
	list, ok := v.([]any)
	if !ok {
		t.Fatalf("result data is %T, want a g:List: %s", v, r.Result.Data)
	}
	return list
}

func docJSON(t testing.TB, doc graphson.Document) []byte {
	t.Helper()
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func shortURL(t testing.TB, token string) graphson.Vertex {
	t.Helper()
	v, err := graphson.NewVertex("short_url", graphson.Properties{
		"short_url_token": token,
		"short_url_path":  "https://s.example/" + token,
		"target_url":      "https://example.com/" + token + "?q=1",
	})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// click is a short_url_visited self-loop on v.
func click(t testing.TB, v graphson.Vertex, event string) graphson.Edge {
	t.Helper()
	e, err := graphson.NewEdge("short_url_visited", v, v, graphson.Properties{
		"event_identifier":   event,
		"visitor_ip_address": "203.0.113.7",
		"user_agent":         "test",
		"effective_at":       "2026-11-29T17:13:58.123Z",
	})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// writeLock holds SQLite's write lock on the file from another connection, as
// another process would, until release is called.
func writeLock(t testing.TB, path string) (release func()) {
	t.Helper()
	db, err := sql.Open("sqlite", dsn(path, true))
	if err != nil {
		t.Fatal(err)
	}
	tx, err := db.BeginTx(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			_ = tx.Rollback()
			_ = db.Close()
		})
	}
	t.Cleanup(release)
	return release
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(4 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
