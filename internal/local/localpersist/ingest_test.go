package localpersist

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/linoone/linoone/internal/core/graphson"
	"github.com/linoone/linoone/internal/testutil/syncbuf"
)

type identityVector struct {
	Name       string                     `json:"name"`
	Kind       string                     `json:"kind"`
	Label      string                     `json:"label"`
	OutV       string                     `json:"out_v"`
	InV        string                     `json:"in_v"`
	Properties map[string]json.RawMessage `json:"properties"`
	ID         string                     `json:"id"`
}

func loadIdentityVectors(t *testing.T) []identityVector {
	t.Helper()
	b, err := os.ReadFile("../../../schemas/testdata/identity-vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Vectors []identityVector `json:"vectors"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Vectors) == 0 {
		t.Fatal("no identity vectors")
	}
	return f.Vectors
}

// wireVertex writes a typed GraphSON v3 vertex by hand from raw property values, so
// that the test does not lean on graphson's encoder. propID derives each
// g:VertexProperty id.
func wireVertex(id, label string, props map[string]json.RawMessage, propID func(key string) string) map[string]any {
	p := map[string]any{}
	for k, raw := range props {
		p[k] = []any{map[string]any{"@type": "g:VertexProperty", "@value": map[string]any{"id": propID(k), "label": k, "value": raw}}}
	}
	return map[string]any{"@type": "g:Vertex", "@value": map[string]any{"id": id, "label": label, "properties": p}}
}

func wireEdge(id, label, outV, outLabel, inV, inLabel string, props map[string]json.RawMessage) map[string]any {
	p := map[string]any{}
	for k, raw := range props {
		p[k] = map[string]any{"@type": "g:Property", "@value": map[string]any{"key": k, "value": raw}}
	}
	return map[string]any{"@type": "g:Edge", "@value": map[string]any{
		"id": id, "label": label, "outV": outV, "outVLabel": outLabel, "inV": inV, "inVLabel": inLabel, "properties": p,
	}}
}

func wireDoc(t *testing.T, vertices, edges []any) []byte {
	t.Helper()
	if vertices == nil {
		vertices = []any{}
	}
	if edges == nil {
		edges = []any{}
	}
	b, err := json.Marshal(map[string]any{"vertices": vertices, "edges": edges})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// otherID changes the last hex digit of an id.
func otherID(id string) string {
	last := id[len(id)-1]
	repl := byte('0')
	if last == '0' {
		repl = '1'
	}
	return id[:len(id)-1] + string(repl)
}

func TestIdentityVectors(t *testing.T) {
	vectors := loadIdentityVectors(t)
	e := newEnv(t, Options{})
	byID := map[string]identityVector{}
	for _, v := range vectors {
		if v.Kind == "vertex" {
			byID[v.ID] = v
		}
	}
	derived := func(vid string) func(string) string {
		return func(k string) string { return vid + "/" + k }
	}
	for _, v := range vectors {
		t.Run(v.Name, func(t *testing.T) {
			var good []byte
			mutants := map[string][]byte{}
			var stored func() []any
			switch v.Kind {
			case "vertex":
				good = wireDoc(t, []any{wireVertex(v.ID, v.Label, v.Properties, derived(v.ID))}, nil)
				mutants["vertex id"] = wireDoc(t, []any{wireVertex(otherID(v.ID), v.Label, v.Properties, derived(otherID(v.ID)))}, nil)
				mutants["vertex id, property ids as sent"] = wireDoc(t, []any{wireVertex(otherID(v.ID), v.Label, v.Properties, derived(v.ID))}, nil)
				mutants["id not a hash"] = wireDoc(t, []any{wireVertex("x", v.Label, v.Properties, derived("x"))}, nil)
				if len(v.Properties) > 0 {
					mutants["vertex property id"] = wireDoc(t, []any{wireVertex(v.ID, v.Label, v.Properties, derived(otherID(v.ID)))}, nil)
				}
				stored = func() []any { return e.query(t, "g.V().hasLabel(l).id()", map[string]any{"l": v.Label}) }
			case "edge":
				out, in := byID[v.OutV], byID[v.InV]
				if out.ID == "" || in.ID == "" {
					t.Fatalf("edge vector %s: endpoints are not vertex vectors", v.Name)
				}
				vertices := []any{wireVertex(out.ID, out.Label, out.Properties, derived(out.ID))}
				if in.ID != out.ID {
					vertices = append(vertices, wireVertex(in.ID, in.Label, in.Properties, derived(in.ID)))
				}
				good = wireDoc(t, vertices, []any{wireEdge(v.ID, v.Label, v.OutV, out.Label, v.InV, in.Label, v.Properties)})
				mutants["edge id"] = wireDoc(t, vertices, []any{wireEdge(otherID(v.ID), v.Label, v.OutV, out.Label, v.InV, in.Label, v.Properties)})
				mutants["out_v"] = wireDoc(t, vertices, []any{wireEdge(v.ID, v.Label, otherID(v.OutV), out.Label, v.InV, in.Label, v.Properties)})
				mutants["in_v"] = wireDoc(t, vertices, []any{wireEdge(v.ID, v.Label, v.OutV, out.Label, otherID(v.InV), in.Label, v.Properties)})
				mutants["endpoint vertex id"] = wireDoc(t, []any{wireVertex(otherID(out.ID), out.Label, out.Properties, derived(otherID(out.ID)))},
					[]any{wireEdge(v.ID, v.Label, v.OutV, out.Label, v.InV, in.Label, v.Properties)})
				stored = func() []any {
					return e.query(t, "g.V().hasLabel(l).outE(el).id()", map[string]any{"l": out.Label, "el": v.Label})
				}
			default:
				t.Fatalf("unknown vector kind %q", v.Kind)
			}
			for name, body := range mutants {
				t.Run("changed "+name, func(t *testing.T) {
					status, r := e.ingest(t, body)
					if status != http.StatusBadRequest || r.Error == "" {
						t.Fatalf("status %d, error %q; want 400 with a message", status, r.Error)
					}
				})
			}
			status, r := e.ingest(t, good)
			if status != http.StatusOK {
				t.Fatalf("status %d: %s", status, r.Error)
			}
			if got := stored(); !slices.Contains(got, any(v.ID)) {
				t.Errorf("stored ids %v do not include %s", got, v.ID)
			}
		})
	}
}

func TestIngestIsIdempotent(t *testing.T) {
	var mu sync.Mutex
	clock := time.Date(2026, 11, 29, 17, 13, 58, 123456789, time.FixedZone("CET", 3600))
	now := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return clock
	}
	e := newEnv(t, Options{Now: now})
	v := shortURL(t, "7BTadEDkJ8")
	doc := graphson.Document{Vertices: []graphson.Vertex{v}, Edges: []graphson.Edge{click(t, v, "ev_1"), click(t, v, "ev_2")}}
	createdAt := func() []any {
		return e.query(t, "g.V().has('short_url_token', '7BTadEDkJ8').project('v', 'e').by('created_at').by(__.outE('short_url_visited').values('created_at'))", nil)
	}

	first := e.mustIngest(t, doc)
	want := ingestReply{Vertices: ingestCount{Received: 1, Created: 1}, Edges: ingestCount{Received: 2, Created: 2}}
	if diff := cmp.Diff(want, first); diff != "" {
		t.Errorf("first ingest (-want +got):\n%s", diff)
	}
	wantAt := []any{map[string]any{"v": "2026-11-29T16:13:58.123Z", "e": "2026-11-29T16:13:58.123Z"}}
	if diff := cmp.Diff(wantAt, createdAt()); diff != "" {
		t.Errorf("created_at after first ingest (-want +got):\n%s", diff)
	}

	mu.Lock()
	clock = clock.Add(time.Hour)
	mu.Unlock()
	second := e.mustIngest(t, doc)
	want = ingestReply{Vertices: ingestCount{Received: 1, Created: 0}, Edges: ingestCount{Received: 2, Created: 0}}
	if diff := cmp.Diff(want, second); diff != "" {
		t.Errorf("re-ingest (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantAt, createdAt()); diff != "" {
		t.Errorf("created_at changed by re-ingest (-want +got):\n%s", diff)
	}
	// A document repeating an element counts it as received twice, created once.
	v2 := shortURL(t, "aaaaaaaaaa")
	dup := e.mustIngest(t, graphson.Document{Vertices: []graphson.Vertex{v2, v2}})
	want = ingestReply{Vertices: ingestCount{Received: 2, Created: 1}}
	if diff := cmp.Diff(want, dup); diff != "" {
		t.Errorf("duplicate vertex (-want +got):\n%s", diff)
	}
	if got := e.query(t, "g.V().hasLabel('short_url').count()", nil); !cmp.Equal(got, []any{int64(2)}) {
		t.Errorf("short_url count = %v, want 2", got)
	}
}

func TestDurableAcrossReopen(t *testing.T) {
	e := newEnv(t, Options{})
	v := shortURL(t, "7BTadEDkJ8")
	e.mustIngest(t, graphson.Document{Vertices: []graphson.Vertex{v}, Edges: []graphson.Edge{click(t, v, "ev_1")}})
	e.close()

	again := openEnv(t, e.path, Options{})
	got := again.query(t, "g.V().hasLabel('short_url').has('short_url_token', 't').limit(1).project('target_url', 'clicks').by('target_url').by(__.outE('short_url_visited').count())", map[string]any{})
	if len(got) != 0 {
		t.Fatalf("unexpected match for token 't': %v", got)
	}
	got = again.query(t, "g.V().hasLabel('short_url').has('short_url_token', token).limit(1).project('target_url', 'clicks').by('target_url').by(__.outE('short_url_visited').count())", map[string]any{"token": "7BTadEDkJ8"})
	want := []any{map[string]any{"target_url": v.Properties["target_url"], "clicks": int64(1)}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("after reopen (-want +got):\n%s", diff)
	}
	if r := again.mustIngest(t, graphson.Document{Vertices: []graphson.Vertex{v}}); r.Vertices.Created != 0 {
		t.Errorf("re-ingest after reopen created %d vertices", r.Vertices.Created)
	}
}

func TestConcurrentIngestGroupCommits(t *testing.T) {
	e := newEnv(t, Options{})
	const clients, perClient = 16, 10
	// Hold the write lock (as another process could) while the writer works on a
	// first document, so that the clients' documents pile up behind it: the next
	// transaction must then commit many at once.
	release := writeLock(t, e.path)
	var wg sync.WaitGroup
	errs := make(chan error, clients*perClient+1)
	first := docJSON(t, graphson.Document{Vertices: []graphson.Vertex{shortURL(t, "first00000")}})
	wg.Add(1)
	go func() {
		defer wg.Done()
		if status, r := e.ingest(t, first); status != http.StatusOK {
			errs <- fmt.Errorf("first document: status %d: %s", status, r.Error)
		}
	}()
	waitFor(t, "the writer to hold its connection", func() bool { return e.store.wdb.Stats().InUse == 1 })
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perClient {
				v := shortURL(t, fmt.Sprintf("c%02di%03d", c, i))
				body := docJSON(t, graphson.Document{Vertices: []graphson.Vertex{v}, Edges: []graphson.Edge{click(t, v, "ev")}})
				resp, err := e.srv.Client().Post(e.srv.URL+"/persist/ingest", "application/json", strings.NewReader(string(body)))
				if err != nil {
					errs <- err
					return
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					errs <- fmt.Errorf("client %d doc %d: status %d", c, i, resp.StatusCode)
				}
			}
		}()
	}
	waitFor(t, "documents queued behind the writer", func() bool { return len(e.store.queue) >= clients/2 })
	release()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	st := e.store.Stats()
	if st.LargestBatch < 2 {
		t.Errorf("largest batch %d: group commit never committed two documents together", st.LargestBatch)
	}
	if st.Documents != clients*perClient+1 || st.Transactions >= st.Documents {
		t.Errorf("stats %+v: want %d documents in fewer transactions", st, clients*perClient+1)
	}
	got := e.query(t, "g.V().hasLabel('short_url').count()", nil)
	clicks := e.query(t, "g.V().hasLabel('short_url').outE('short_url_visited').count()", nil)
	if want := []any{int64(clients*perClient + 1)}; !cmp.Equal(got, want) {
		t.Errorf("stored %v vertices, want %v", got, want)
	}
	if want := []any{int64(clients * perClient)}; !cmp.Equal(clicks, want) {
		t.Errorf("stored %v edges, want %v", clicks, want)
	}
}

func TestFailingDocumentDoesNotFailItsBatch(t *testing.T) {
	logs := &syncbuf.Buffer{}
	e := newEnv(t, Options{Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	// A real database failure for one kind of document: a trigger, as a schema
	// change or a constraint in another process could cause.
	db, err := sql.Open("sqlite", dsn(e.path, true))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TRIGGER poison BEFORE INSERT ON vertices WHEN NEW.label = 'poison'
		BEGIN SELECT RAISE(ABORT, 'poisoned vertex'); END`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	poison, err := graphson.NewVertex("poison", graphson.Properties{"n": int64(1)})
	if err != nil {
		t.Fatal(err)
	}

	type outcome struct {
		name   string
		status int
		reply  ingestReply
	}
	results := make(chan outcome, 16)
	send := func(name string, doc graphson.Document) {
		status, r := e.ingest(t, docJSON(t, doc))
		results <- outcome{name, status, r}
	}
	release := writeLock(t, e.path)
	// The first document occupies the writer, blocked on the lock; the others queue
	// up and must then be committed as one batch that includes the poison.
	go send("first", graphson.Document{Vertices: []graphson.Vertex{shortURL(t, "first00000")}})
	waitFor(t, "the writer to hold its connection", func() bool { return e.store.wdb.Stats().InUse == 1 })
	const good = 8
	for i := range good {
		go send(fmt.Sprintf("good%d", i), graphson.Document{Vertices: []graphson.Vertex{shortURL(t, fmt.Sprintf("good%06d", i))}})
	}
	go send("poison", graphson.Document{Vertices: []graphson.Vertex{poison}})
	waitFor(t, "the batch to queue", func() bool { return len(e.store.queue) == good+1 })
	release()

	for range good + 2 {
		o := <-results
		switch {
		case o.name == "poison":
			if o.status != http.StatusInternalServerError || o.reply.Error == "" {
				t.Errorf("poison: status %d %q, want 500 with a message", o.status, o.reply.Error)
			}
		case o.status != http.StatusOK || o.reply.Vertices.Created != 1:
			t.Errorf("%s: status %d %+v, want 200 and one vertex created", o.name, o.status, o.reply)
		}
	}
	if got := e.query(t, "g.V().hasLabel('short_url').count()", nil); !cmp.Equal(got, []any{int64(good + 1)}) {
		t.Errorf("stored %v short URLs, want %d", got, good+1)
	}
	if got := e.query(t, "g.V().hasLabel('poison').count()", nil); !cmp.Equal(got, []any{int64(0)}) {
		t.Errorf("poison stored: %v", got)
	}
	if !strings.Contains(logs.String(), "group commit failed, retrying documents one by one") {
		t.Errorf("the batch with the poison was never retried document by document; logs:\n%s", logs)
	}
}

func TestIngestRejects(t *testing.T) {
	e := newEnv(t, Options{})
	stored := shortURL(t, "stored0000")
	e.mustIngest(t, graphson.Document{Vertices: []graphson.Vertex{stored}})

	v := shortURL(t, "7BTadEDkJ8")
	withCreatedAt, err := graphson.NewVertex("short_url", graphson.Properties{"short_url_token": "x", "created_at": "2026-01-01T00:00:00.000Z"})
	if err != nil {
		t.Fatal(err)
	}
	edgeCreatedAt, err := graphson.NewEdge("short_url_visited", v, v, graphson.Properties{"created_at": "2026-01-01T00:00:00.000Z"})
	if err != nil {
		t.Fatal(err)
	}
	forged := v
	forged.Properties = graphson.Properties{"short_url_token": "other"}
	dangling := click(t, v, "ev_1") // v is not stored and not in the document
	mislabelled := click(t, v, "ev_1")
	mislabelled.OutVLabel = "visitor"
	storedMislabelled := click(t, stored, "ev_1")
	storedMislabelled.InVLabel = "visitor"

	tests := []struct {
		name string
		body []byte
		want string
	}{
		{"not json", []byte(`{"vertices":`), "invalid graphson document"},
		{"not an object", []byte(`[]`), "invalid graphson document"},
		{"empty document", []byte(`{"vertices":[],"edges":[]}`), "no vertices and no edges"},
		{"null", []byte(`null`), "no vertices and no edges"},
		{"unknown member", []byte(`{"vertices":[],"edges":[],"metadata":{}}`), "unknown field"},
		{"untyped vertex", []byte(`{"vertices":[{"id":"x"}],"edges":[]}`), "invalid graphson"},
		{"created_at on a vertex", docJSON(t, graphson.Document{Vertices: []graphson.Vertex{withCreatedAt}}), "created_at is server-managed"},
		{"created_at on an edge", docJSON(t, graphson.Document{Vertices: []graphson.Vertex{v}, Edges: []graphson.Edge{edgeCreatedAt}}), "created_at is server-managed"},
		{"forged vertex id", docJSON(t, graphson.Document{Vertices: []graphson.Vertex{forged}}), "identity check failed"},
		{"edge to an unknown vertex", docJSON(t, graphson.Document{Edges: []graphson.Edge{dangling}}), "neither a vertex of the document nor a stored vertex"},
		{"endpoint label differs from the document", docJSON(t, graphson.Document{Vertices: []graphson.Vertex{v}, Edges: []graphson.Edge{mislabelled}}), `outVLabel "visitor" does not match`},
		{"endpoint label differs from the store", docJSON(t, graphson.Document{Edges: []graphson.Edge{storedMislabelled}}), `inVLabel "visitor" does not match stored vertex`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, r := e.ingest(t, tt.body)
			if status != http.StatusBadRequest || !strings.Contains(r.Error, tt.want) {
				t.Fatalf("status %d, error %q; want 400 containing %q", status, r.Error, tt.want)
			}
		})
	}
	if got := e.query(t, "g.V().count()", nil); !cmp.Equal(got, []any{int64(1)}) {
		t.Errorf("rejected documents left vertices behind: count %v", got)
	}
	// Nor did the writer take their vertices for stored ones.
	if status, r := e.ingest(t, docJSON(t, graphson.Document{Edges: []graphson.Edge{dangling}})); status != http.StatusBadRequest {
		t.Errorf("edge to a vertex only rejected documents carried: status %d %+v", status, r)
	}

	// An edge may point at vertices stored by an earlier ingest.
	r := e.mustIngest(t, graphson.Document{Edges: []graphson.Edge{click(t, stored, "ev_1")}})
	if r.Edges.Created != 1 {
		t.Errorf("edge to a stored vertex: %+v", r)
	}
}

func TestIngestAfterClose(t *testing.T) {
	e := newEnv(t, Options{})
	if err := e.store.Close(); err != nil {
		t.Fatal(err)
	}
	status, r := e.ingest(t, docJSON(t, graphson.Document{Vertices: []graphson.Vertex{shortURL(t, "7BTadEDkJ8")}}))
	if status != http.StatusServiceUnavailable || r.Error == "" {
		t.Errorf("ingest after close: status %d %q, want 503", status, r.Error)
	}
	if status, b := e.do(t, http.MethodGet, "/healthz", "", nil); status != http.StatusServiceUnavailable {
		t.Errorf("healthz after close: %d %s", status, b)
	}
	if err := e.store.Close(); err != nil {
		t.Errorf("second close: %v", err)
	}
}

func TestOpenRejects(t *testing.T) {
	ctx := context.Background()
	if _, err := Open(ctx, "", Options{}); err == nil {
		t.Error("empty path accepted")
	}
	if _, err := Open(ctx, t.TempDir()+"/x.db", Options{MaxBatch: -1}); err == nil {
		t.Error("negative batch accepted")
	}
	if _, err := Open(ctx, t.TempDir()+"/x.db", Options{MaxAnswerBytes: -1}); err == nil {
		t.Error("negative answer bound accepted")
	}
	if _, err := Open(ctx, t.TempDir()+"/missing/dir/x.db", Options{}); err == nil {
		t.Error("path in a missing directory accepted")
	}
}

func TestTwoStoresShareAFile(t *testing.T) {
	a := newEnv(t, Options{})
	b := openEnv(t, a.path, Options{})
	var wg sync.WaitGroup
	for i, e := range []*testEnv{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 25 {
				v := shortURL(t, fmt.Sprintf("s%dd%08d", i, j))
				status, r := e.ingest(t, docJSON(t, graphson.Document{Vertices: []graphson.Vertex{v}}))
				if status != http.StatusOK {
					t.Errorf("store %d: status %d: %s", i, status, r.Error)
				}
			}
		}()
	}
	wg.Wait()
	for i, e := range []*testEnv{a, b} {
		if got := e.query(t, "g.V().hasLabel('short_url').count()", nil); !cmp.Equal(got, []any{int64(50)}) {
			t.Errorf("store %d sees %v short URLs, want 50", i, got)
		}
	}
}
