package localpersist

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linoone/linoone/internal/core/graphson"
	"github.com/linoone/linoone/internal/http/sigv4"
	"github.com/linoone/linoone/internal/testutil/cputime"
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

// clickBody is an ingest body as the local consumer sends it: the batch's distinct
// short_url vertices once each, then one short_url_visited edge per click (batch
// seq, click i on urls[i%len(urls)]).
func clickBody(b testing.TB, urls []graphson.Vertex, seq, clicks int) []byte {
	b.Helper()
	doc := graphson.Document{Vertices: urls}
	if clicks < len(urls) {
		doc.Vertices = urls[:clicks]
	}
	for i := range clicks {
		v := urls[i%len(urls)]
		e, err := graphson.NewEdge("short_url_visited", v, v, graphson.Properties{
			"event_identifier":   fmt.Sprintf("01JDX%09dB%06dQ7R2M", seq, i),
			"visitor_ip_address": fmt.Sprintf("203.0.%d.%d", (seq+i)%256, i%256),
			"user_agent":         "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
			"effective_at":       fmt.Sprintf("2026-11-29T17:%02d:%02d.%03dZ", seq%60, i%60, i%1000),
		})
		if err != nil {
			b.Fatal(err)
		}
		doc.Edges = append(doc.Edges, e)
	}
	return docJSON(b, doc)
}

// BenchmarkIngestClickFacts posts realistic consumer batches (500 click facts over
// 20 short URLs, every click new) through the HTTP handler over loopback with a
// client configured like Persist's, one call at a time as the consumer does.
func BenchmarkIngestClickFacts(b *testing.B) {
	transport := &http.Transport{MaxIdleConns: 16, MaxIdleConnsPerHost: 16}
	b.Cleanup(transport.CloseIdleConnections)
	benchIngestClicks(b, newEnv(b, Options{}), &http.Client{Transport: transport})
}

// BenchmarkIngestSignedClickFacts is BenchmarkIngestClickFacts as `serve` runs local
// Persist: every call SigV4-signed by the client and verified by the store.
func BenchmarkIngestSignedClickFacts(b *testing.B) {
	v, err := sigv4.New(authCreds, authRegion, authService, sigv4.WithMaxBodyBytes(DefaultMaxBodyBytes))
	if err != nil {
		b.Fatal(err)
	}
	transport := &http.Transport{MaxIdleConns: 16, MaxIdleConnsPerHost: 16}
	b.Cleanup(transport.CloseIdleConnections)
	benchIngestClicks(b, newEnv(b, Options{Authenticator: v}),
		&http.Client{Transport: authCreds.Transport(transport, authRegion, authService)})
}

func benchIngestClicks(b *testing.B, e *testEnv, client *http.Client) {
	const facts, nurls = 500, 20
	urls := make([]graphson.Vertex, nurls)
	for i := range urls {
		urls[i] = shortURL(b, fmt.Sprintf("tok%07d", i))
	}
	url := e.srv.URL + "/persist/ingest"
	post := func(body []byte) {
		req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		out, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("status %d: %s (%v)", resp.StatusCode, out, err)
		}
	}
	post(clickBody(b, urls, 0, facts)) // the short URLs exist, as they would
	var cpu time.Duration              // process CPU (user+system, client included) while posting
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		body := clickBody(b, urls, i+1, facts)
		b.SetBytes(int64(len(body)))
		b.StartTimer()
		before := cputime.Process(b)
		post(body)
		cpu += cputime.Process(b) - before
	}
	b.StopTimer()
	perFact := b.Elapsed().Seconds() / float64(b.N*facts)
	b.ReportMetric(1/perFact, "facts/s")
	b.ReportMetric(perFact*1e6, "µs/fact")
	b.ReportMetric(cpu.Seconds()*1e6/float64(b.N*facts), "cpu-µs/fact")
}
