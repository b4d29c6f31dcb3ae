package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linoone/linoone/client"
	"github.com/linoone/linoone/internal/http/sigv4"
)

// exchange is one request a proxy forwarded to serve, and serve's answer.
type exchange struct {
	method, path, key string
	status            int
	body              string
	dropped           bool
}

// proxy forwards every request to serve's management API as it is (its Host
// header too, which the signature covers) and answers with serve's answer, unless
// drop says to close the connection instead, after serve has answered: the client
// then sees a network error for a request serve carried out.
type proxy struct {
	URL  string
	drop func(n int, r *http.Request) bool
	mu   sync.Mutex
	log  []exchange
}

func newProxy(t *testing.T, drop func(n int, r *http.Request) bool) *proxy {
	t.Helper()
	p := &proxy{drop: drop}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	p.URL = srv.URL
	return p
}

func (p *proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	out, err := http.NewRequestWithContext(r.Context(), r.Method, endpoint+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		panic(err)
	}
	out.Header, out.Host = r.Header.Clone(), r.Host
	res, err := http.DefaultTransport.RoundTrip(out)
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	answer, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	p.mu.Lock()
	drop := p.drop != nil && p.drop(len(p.log), r)
	p.log = append(p.log, exchange{r.Method, r.URL.Path, r.Header.Get("Idempotency-Key"), res.StatusCode, string(answer), drop})
	p.mu.Unlock()
	if drop {
		panic(http.ErrAbortHandler) // closes the connection without an answer
	}
	for k, v := range res.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(res.StatusCode)
	_, _ = w.Write(answer)
}

func (p *proxy) exchanges() []exchange {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]exchange(nil), p.log...)
}

func newClient(t *testing.T, url string, opts ...client.Option) *client.Client {
	t.Helper()
	c, err := client.New(url, append([]client.Option{client.WithCredentials(accessKeyID, secretAccessKey)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestShortenRetriedAfterADroppedAnswer: serve stores the short URL, the
// connection drops before its answer reaches the client, the client retries under
// the same Idempotency-Key and gets that short URL back. Persist holds one short
// URL for the target, under the one token.
func TestShortenRetriedAfterADroppedAnswer(t *testing.T) {
	needServe(t)
	p := newProxy(t, func(n int, r *http.Request) bool { return n == 0 })
	target := fmt.Sprintf("https://example.com/dropped/%d", time.Now().UnixNano())
	u, err := newClient(t, p.URL).Shorten(context.Background(), target)
	if err != nil {
		t.Fatalf("Shorten through a dropped answer: %v", err)
	}
	ex := p.exchanges()
	if len(ex) != 2 || !ex[0].dropped || ex[0].status != http.StatusCreated {
		t.Fatalf("exchanges %+v; want a 201 dropped, then a retry", ex)
	}
	if ex[0].key == "" || ex[1].key != ex[0].key {
		t.Errorf("Idempotency-Keys %q then %q; want one key, sent again", ex[0].key, ex[1].key)
	}
	var stored struct {
		Token string `json:"token"`
	}
	if err := json.Unmarshal([]byte(ex[0].body), &stored); err != nil {
		t.Fatal(err)
	}
	if u.Token != stored.Token || !u.Replayed || ex[1].status != http.StatusOK {
		t.Errorf("after the retry: %+v (answer %d); want the dropped answer's token %s, replayed", u, ex[1].status, stored.Token)
	}
	if n := persistCount(t, target); n != 1 {
		t.Errorf("Persist holds %d short URLs of %s, want 1", n, target)
	}
}

// TestShortenBatchAgainstServe: 2,500 URLs go in three batches, two in flight; the
// results are in input order, a refused URL fails alone, and the same call made
// again under its key replays every short URL and issues none.
func TestShortenBatchAgainstServe(t *testing.T) {
	needServe(t)
	p := newProxy(t, nil)
	c := newClient(t, p.URL, client.WithBatchConcurrency(2))
	run := time.Now().UnixNano()
	targets := make([]string, 2500)
	for i := range targets {
		targets[i] = fmt.Sprintf("https://example.com/batch/%d/%d", run, i)
	}
	targets[1700] = "ftp://example.com/refused"
	key := fmt.Sprintf("batch-%d", run)
	first, err := c.ShortenBatch(context.Background(), targets, client.WithIdempotencyKey(key))
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.ShortenBatch(context.Background(), targets, client.WithIdempotencyKey(key))
	if err != nil {
		t.Fatal(err)
	}
	for i := range targets {
		switch a, b := first[i], again[i]; {
		case i == 1700:
			if !errors.Is(a.Err, client.ErrTargetInvalid) || !errors.Is(b.Err, client.ErrTargetInvalid) {
				t.Errorf("result %d: %v then %v, want ErrTargetInvalid", i, a.Err, b.Err)
			}
		case a.Err != nil || a.Replayed || b.Token != a.Token || !b.Replayed || a.TargetURL != targets[i]:
			t.Fatalf("result %d: %+v then %+v; want issued, then replayed", i, a, b)
		}
	}
	for _, i := range []int{0, 999, 1000, 2499} {
		link, err := c.Inspect(context.Background(), first[i].Token)
		if err != nil || link.TargetURL != targets[i] {
			t.Errorf("token of result %d goes to %q (%v), want %s", i, link.TargetURL, err, targets[i])
		}
	}
	var keys []string
	for _, e := range p.exchanges() {
		if e.path == "/shorten/batch" {
			keys = append(keys, e.key)
		}
	}
	want := []string{key, key + "@1000", key + "@2000"}
	if len(keys) != 6 || !slices.Equal(sorted(keys[:3]), want) || !slices.Equal(sorted(keys[3:]), want) {
		t.Errorf("batch requests with keys %q; want %q twice", keys, want)
	}
}

// TestShortenBatchKeepsUnderTheBodyLimit: 720 long non-ASCII URLs (4.35 MB of
// JSON, over the API's 4 MiB) go in two requests, and every one is issued.
func TestShortenBatchKeepsUnderTheBodyLimit(t *testing.T) {
	needServe(t)
	t.Parallel() // its time is serve's, checking 4 MB of targets: let it overlap the other tests
	p := newProxy(t, nil)
	targets := make([]string, 720)
	for i := range targets {
		targets[i] = fmt.Sprintf("https://example.com/%d/", i) + strings.Repeat("€", 2000)
	}
	results, err := newClient(t, p.URL).ShortenBatch(context.Background(), targets)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range results {
		if r.Err != nil || r.Token == "" {
			t.Fatalf("result %d: %v", i, r.Err)
		}
	}
	if ex := p.exchanges(); len(ex) != 2 || ex[0].status != http.StatusOK || ex[1].status != http.StatusOK {
		t.Errorf("%d batch requests; want 2, each answered 200", len(ex))
	}
}

// TestRefusalsFromServe: what serve refuses arrives as the sentinel a producer
// branches on.
func TestRefusalsFromServe(t *testing.T) {
	needServe(t)
	ctx := context.Background()
	c := newClient(t, endpoint)
	key := fmt.Sprintf("order-%d", time.Now().UnixNano())
	if _, err := c.Shorten(ctx, "https://example.com/first", client.WithIdempotencyKey(key)); err != nil {
		t.Fatal(err)
	}
	u, err := c.Shorten(ctx, "https://example.com/stats")
	if err != nil {
		t.Fatal(err)
	}
	day := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	wrongSecret := newClient(t, endpoint, client.WithCredentials(accessKeyID, "not-the-secret"))
	wrongRegion := newClient(t, endpoint, client.WithRegion("eu-west-1"))
	for _, tt := range []struct {
		name string
		call func() error
		want error
		code string
	}{
		{"wrong secret", func() error { _, err := wrongSecret.Shorten(ctx, "https://example.com/"); return err }, client.ErrUnauthorized, "signature-invalid"},
		{"wrong region", func() error { _, err := wrongRegion.Inspect(ctx, u.Token); return err }, client.ErrUnauthorized, "signature-invalid"},
		{"key reused with another target", func() error {
			_, err := c.Shorten(ctx, "https://example.com/second", client.WithIdempotencyKey(key))
			return err
		}, client.ErrIdempotencyKeyReused, "idempotency-key-reused"},
		{"invalid key", func() error {
			_, err := c.Shorten(ctx, "https://example.com/", client.WithIdempotencyKey("a,b"))
			return err
		}, client.ErrInvalidRequest, "idempotency-key-invalid"},
		{"unknown token", func() error { _, err := c.Stats(ctx, "AAAAAAAAAA"); return err }, client.ErrNotFound, "not-found"},
		{"window in the wrong order", func() error {
			_, err := c.Stats(ctx, u.Token, client.WithWindow(day, day.AddDate(0, 0, -1)))
			return err
		}, client.ErrInvalidRequest, "stats-window-order"},
		{"target too long", func() error {
			_, err := c.Shorten(ctx, "https://example.com/"+strings.Repeat("a", 2048))
			return err
		}, client.ErrTargetInvalid, "target-url-too-long"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			var p *client.Problem
			if !errors.Is(err, tt.want) || !errors.As(err, &p) || p.Code() != tt.code {
				t.Errorf("%v; want %v with problem type %s", err, tt.want, tt.code)
			}
		})
	}
}

// TestStatsCountsAClick: a visit through the resolver reaches Stats once the
// local bus delivered it into Persist.
func TestStatsCountsAClick(t *testing.T) {
	needServe(t)
	ctx := context.Background()
	c := newClient(t, endpoint)
	u, err := c.Shorten(ctx, "https://example.com/clicked")
	if err != nil {
		t.Fatal(err)
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := noRedirect.Get(u.ShortURL)
	if err != nil || res.StatusCode != http.StatusFound {
		t.Fatalf("GET %s: %v %v", u.ShortURL, res, err)
	}
	res.Body.Close()
	var s client.Stats
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if s, err = c.Stats(ctx, u.Token); err != nil || s.Clicks == 1 {
			break
		}
	}
	today := time.Now().UTC().Truncate(24 * time.Hour)
	if err != nil || s.Clicks != 1 || len(s.ByDay) != 30 || !s.ByDay[29].Date.Equal(today) || s.ByDay[29].Clicks != 1 {
		t.Errorf("Stats: %+v, %v; want 1 click, today's", s, err)
	}
}

// persistCount counts the short_url vertices of target in serve's local Persist,
// asked directly with its own credential pair.
func persistCount(t *testing.T, target string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dataDir, sigv4.PersistCredentialsFile))
	if err != nil {
		t.Fatal(err)
	}
	var creds struct {
		AccessKeyID     string `json:"access_key_id"`
		SecretAccessKey string `json:"secret_access_key"`
	}
	if err := json.Unmarshal(b, &creds); err != nil {
		t.Fatal(err)
	}
	query, _ := json.Marshal(map[string]any{
		"gremlin":  "g.V().hasLabel('short_url').has('target_url', target).count()",
		"bindings": map[string]string{"target": target},
	})
	rt := sigv4.Credentials{AccessKeyID: creds.AccessKeyID, SecretAccessKey: creds.SecretAccessKey}.Transport(nil, "us-east-1", "execute-api")
	req, err := http.NewRequest(http.MethodPost, "http://"+persistAddr+"/persist/gremlin", bytes.NewReader(query))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/vnd.gremlin-v3.0+json")
	res, err := (&http.Client{Transport: rt, Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var answer struct {
		Result struct {
			Data struct {
				Value []struct {
					Value int `json:"@value"`
				} `json:"@value"`
			} `json:"data"`
		} `json:"result"`
	}
	body, _ := io.ReadAll(res.Body)
	if err := json.Unmarshal(body, &answer); err != nil || res.StatusCode != http.StatusOK || len(answer.Result.Data.Value) != 1 {
		t.Fatalf("count in Persist: %d %s (%v)", res.StatusCode, body, err)
	}
	return answer.Result.Data.Value[0].Value
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
