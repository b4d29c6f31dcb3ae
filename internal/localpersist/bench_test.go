package localpersist

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/linoone/linoone/internal/graphson"
)

// BenchmarkLookup is the resolver's hot path: one HTTP round trip for the token
// query, against a store holding many short URLs.
func BenchmarkLookup(b *testing.B) {
	e := newEnv(b, Options{})
	const n = 2000
	var doc graphson.Document
	for i := range n {
		doc.Vertices = append(doc.Vertices, shortURL(b, fmt.Sprintf("tok%07d", i)))
	}
	for i := 0; i < n; i += 500 {
		e.mustIngest(b, graphson.Document{Vertices: doc.Vertices[i : i+500]})
	}
	body, err := json.Marshal(map[string]any{"gremlin": lookupQuery, "bindings": map[string]any{"token": "tok0001234"}})
	if err != nil {
		b.Fatal(err)
	}
	client := e.srv.Client()
	url := e.srv.URL + "/persist/gremlin"
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", gremlinContentType)
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		out, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || !bytes.Contains(out, []byte("tok0001234")) {
			b.Fatalf("status %d: %s (%v)", resp.StatusCode, out, err)
		}
	}
}

// BenchmarkIngestParallel ingests click facts (a short URL and a new visit edge,
// as the local consumer does) from concurrent clients.
func BenchmarkIngestParallel(b *testing.B) {
	e := newEnv(b, Options{})
	v := shortURL(b, "7BTadEDkJ8")
	e.mustIngest(b, graphson.Document{Vertices: []graphson.Vertex{v}})
	client := e.srv.Client()
	client.Transport.(*http.Transport).MaxIdleConnsPerHost = 256
	url := e.srv.URL + "/persist/ingest"
	var seq atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			body := docJSON(b, graphson.Document{Vertices: []graphson.Vertex{v}, Edges: []graphson.Edge{click(b, v, fmt.Sprintf("ev_%d", seq.Add(1)))}})
			resp, err := client.Post(url, "application/json", bytes.NewReader(body))
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b.Errorf("status %d", resp.StatusCode)
				return
			}
		}
	})
	b.StopTimer()
	st := e.store.Stats()
	b.ReportMetric(float64(st.Documents)/float64(max(st.Transactions, 1)), "docs/txn")
}

// BenchmarkLookupEval is BenchmarkLookup without HTTP: parse (cached), compile,
// evaluate and encode.
func BenchmarkLookupEval(b *testing.B) {
	e := newEnv(b, Options{})
	var doc graphson.Document
	for i := range 500 {
		doc.Vertices = append(doc.Vertices, shortURL(b, fmt.Sprintf("tok%07d", i)))
	}
	e.mustIngest(b, doc)
	ctx := b.Context()
	bindings := map[string]any{"token": "tok0000123"}
	b.ReportAllocs()
	for b.Loop() {
		out, err := e.store.run(ctx, lookupQuery, bindings)
		if err != nil || !bytes.Contains(out, []byte("tok0000123")) {
			b.Fatalf("%s (%v)", out, err)
		}
	}
}
