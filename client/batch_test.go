package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/linoone/linoone/api/management"
	"github.com/linoone/linoone/internal/core/shorturl"
	"github.com/linoone/linoone/internal/http/mgmtapi"
)

// TestBatchBoundsAreTheServers: the client cuts batches by the bounds the server
// enforces (it cannot import them: other modules cannot import internal/).
func TestBatchBoundsAreTheServers(t *testing.T) {
	if maxBatchItems != shorturl.MaxBatchItems || maxBatchBodyBytes != mgmtapi.MaxBatchBodyBytes {
		t.Errorf("client bounds %d items, %d bytes; the server's %d, %d", maxBatchItems, maxBatchBodyBytes, shorturl.MaxBatchItems, mgmtapi.MaxBatchBodyBytes)
	}
}

// TestSplit: batches of at most maxItems targets whose body, as the generated
// client encodes it, fits maxBytes; the cut is as late as the bounds allow. The
// API's own bounds are small here, so that the bodies are; TestShortenBatchKeepsUnderTheBodyLimit
// sends a batch past the real 4 MiB to serve.
func TestSplit(t *testing.T) {
	urls := func(n int, f func(i int) string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = f(i)
		}
		return out
	}
	short := func(i int) string { return fmt.Sprintf("https://example.com/%d", i) }
	// 20 three-byte characters: about 100 bytes an item, 9 of them to 1,000 bytes.
	long := func(i int) string { return fmt.Sprintf("https://example.com/%d/", i) + strings.Repeat("€", 20) }
	// json.Marshal escapes < > & as \u0026: six bytes each: about 137 bytes an item, 7 to 1,000 bytes.
	escaped := func(i int) string { return fmt.Sprintf("https://example.com/%d?", i) + strings.Repeat("&", 16) }
	for _, tt := range []struct {
		name              string
		targets           []string
		maxItems, maxBody int
		sizes             []int
	}{
		{"none", nil, 1000, maxBatchBodyBytes, nil},
		{"one", urls(1, short), 1000, maxBatchBodyBytes, []int{1}},
		{"a full batch", urls(1000, short), 1000, maxBatchBodyBytes, []int{1000}},
		{"one more", urls(1001, short), 1000, maxBatchBodyBytes, []int{1000, 1}},
		{"2,500", urls(2500, short), 1000, maxBatchBodyBytes, []int{1000, 1000, 500}},
		{"long non-ASCII targets", urls(30, long), 1000, 1000, []int{9, 9, 9, 3}},
		{"escaped characters", urls(20, escaped), 1000, 1000, []int{7, 7, 6}},
		{"one too long for any body, alone", []string{"https://a.example/", strings.Repeat("x", 2000), "https://b.example/"}, 1000, 1000, []int{1, 1, 1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			parts := split(tt.targets, tt.maxItems, tt.maxBody)
			var sizes []int
			next := 0
			for _, p := range parts {
				if p.start != next || p.end <= p.start {
					t.Fatalf("parts %v do not cover the targets in order", parts)
				}
				next = p.end
				sizes = append(sizes, p.end-p.start)
				// itemBytes counts what the generated client sends, to the byte.
				n := bodyBytes(t, tt.targets[p.start:p.end])
				if want := len(`{"items":[]}`) + p.end - p.start - 1 + sumItemBytes(tt.targets[p.start:p.end]); n != want {
					t.Fatalf("batch %v: body of %d bytes, itemBytes sums to %d", p, n, want)
				}
				if n > tt.maxBody && p.end-p.start > 1 {
					t.Errorf("batch %v: body of %d bytes, over %d", p, n, tt.maxBody)
				}
				// Tight: the next target would not have fit.
				if p.end < len(tt.targets) && p.end-p.start < tt.maxItems && n+1+itemBytes(tt.targets[p.end]) <= tt.maxBody {
					t.Errorf("batch %v was cut early", p)
				}
			}
			if next != len(tt.targets) {
				t.Fatalf("parts %v end at %d of %d", parts, next, len(tt.targets))
			}
			if fmt.Sprint(sizes) != fmt.Sprint(tt.sizes) {
				t.Errorf("batch sizes %v, want %v", sizes, tt.sizes)
			}
		})
	}
}

func sumItemBytes(targets []string) int {
	n := 0
	for _, t := range targets {
		n += itemBytes(t)
	}
	return n
}

// bodyBytes is the size of the body the generated client sends for targets.
func bodyBytes(t *testing.T, targets []string) int {
	t.Helper()
	body := management.ShortenBatchJSONRequestBody{Items: make([]management.BatchItem, len(targets))}
	for i := range targets {
		body.Items[i].TargetURL = &targets[i]
	}
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	return len(b)
}

// fakeBatchAPI answers POST /shorten/batch as the API does, an item per target
// ("bad" in a target makes it a problem), and refuses whole the batches whose
// Idempotency-Key is in refuse.
type fakeBatchAPI struct {
	refuse map[string]int // Idempotency-Key → status
	mu     sync.Mutex
	keys   []string
}

func (f *fakeBatchAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	key := r.Header.Get("Idempotency-Key")
	f.mu.Lock()
	f.keys = append(f.keys, key)
	f.mu.Unlock()
	if status := f.refuse[key]; status != 0 {
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(status)
		fmt.Fprint(w, problemBody(status, "signature-invalid"))
		return
	}
	var req management.BatchRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var res management.BatchResponse
	for i, it := range req.Items {
		if strings.Contains(*it.TargetURL, "bad") {
			res.Results = append(res.Results, management.BatchResult{Problem: &management.Problem{Type: problemTypePrefix + "target-url-scheme", Status: 400, Title: "Bad Request"}})
			continue
		}
		tok, u := fmt.Sprintf("%s#%d", key, i), "https://s.example/"+*it.TargetURL
		res.Results = append(res.Results, management.BatchResult{Token: &tok, ShortURL: &u})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(res)
}

// TestShortenBatchKeysAndOrder: each batch carries the call's key (the first) or
// the key and its first index; the results come back in input order, a refused
// item failing alone.
func TestShortenBatchKeysAndOrder(t *testing.T) {
	f := &fakeBatchAPI{}
	c := newTestBatchClient(t, f, WithBatchConcurrency(3))
	targets := make([]string, 2500)
	for i := range targets {
		targets[i] = fmt.Sprint(i)
	}
	targets[1234] = "bad"
	results, err := c.ShortenBatch(context.Background(), targets, WithIdempotencyKey("import-7"))
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range results {
		batch, item := i/1000, i%1000
		key := "import-7"
		if batch > 0 {
			key = fmt.Sprintf("import-7@%d", batch*1000)
		}
		switch {
		case i == 1234:
			if !errors.Is(r.Err, ErrTargetInvalid) || r.Token != "" {
				t.Errorf("result %d: %+v, want ErrTargetInvalid", i, r)
			}
		case r.Err != nil || r.TargetURL != targets[i] || r.ShortURL != "https://s.example/"+targets[i] || r.Token != fmt.Sprintf("%s#%d", key, item):
			t.Fatalf("result %d: %+v, want %s's under key %s", i, r, targets[i], key)
		}
	}
	if len(f.keys) != 3 {
		t.Errorf("%d requests, want 3", len(f.keys))
	}
}

// TestShortenBatchStopsAfterAFailedBatch: a batch refused whole fails its URLs;
// the batches after it are not sent, and their URLs say why.
func TestShortenBatchStopsAfterAFailedBatch(t *testing.T) {
	f := &fakeBatchAPI{refuse: map[string]int{"k@1000": http.StatusForbidden}}
	c := newTestBatchClient(t, f, WithBatchConcurrency(1))
	targets := make([]string, 3000)
	for i := range targets {
		targets[i] = fmt.Sprint(i)
	}
	results, err := c.ShortenBatch(context.Background(), targets, WithIdempotencyKey("k"))
	if !errors.Is(err, ErrUnauthorized) || !strings.Contains(err.Error(), "2000 of 3000 target URLs not issued") {
		t.Fatalf("ShortenBatch: %v; want ErrUnauthorized for 2000 of 3000", err)
	}
	for i, r := range results {
		switch {
		case i < 1000 && (r.Err != nil || r.Token == ""):
			t.Fatalf("result %d: %+v, want issued", i, r)
		case i >= 1000 && (!errors.Is(r.Err, ErrUnauthorized) || r.Token != ""):
			t.Fatalf("result %d: %+v, want ErrUnauthorized", i, r)
		case i >= 2000 && !strings.Contains(r.Err.Error(), "not sent"):
			t.Fatalf("result %d: %v, want not sent", i, r.Err)
		}
	}
	if fmt.Sprint(f.keys) != "[k k@1000]" {
		t.Errorf("requests with keys %v, want [k k@1000]", f.keys)
	}
}

// TestShortenBatchKeyTooLongForItsBatches: a key that leaves no room for the
// suffix of the last batch is refused before anything is sent.
func TestShortenBatchKeyTooLongForItsBatches(t *testing.T) {
	f := &fakeBatchAPI{}
	c := newTestBatchClient(t, f)
	targets := make([]string, 1001)
	for i := range targets {
		targets[i] = fmt.Sprint(i)
	}
	if _, err := c.ShortenBatch(context.Background(), targets, WithIdempotencyKey(strings.Repeat("k", 251))); err == nil {
		t.Error("ShortenBatch with a 251-character key for two batches (k…k@1000 is 256): no error")
	}
	if _, err := c.ShortenBatch(context.Background(), targets[:1000], WithIdempotencyKey(strings.Repeat("k", 255))); err != nil {
		t.Errorf("one batch with a 255-character key: %v", err)
	}
	if len(f.keys) != 1 {
		t.Errorf("%d requests, want the one batch's", len(f.keys))
	}
}

func newTestBatchClient(t *testing.T, h http.Handler, opts ...Option) *Client {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c, err := New(srv.URL, append([]Option{WithCredentials("AKIDCLIENTTEST", "client-test-secret")}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
