package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// answer is what the fake API answers one request with; drop closes the
// connection without an answer instead.
type answer struct {
	status     int
	retryAfter string
	body       string
	drop       bool
}

// fakeAPI answers the requests it gets with answers, one after the other (the
// last one again once they run out), and records them.
type fakeAPI struct {
	mu       sync.Mutex
	answers  []answer
	requests []*http.Request
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	a := f.answers[min(len(f.requests), len(f.answers)-1)]
	f.requests = append(f.requests, r)
	f.mu.Unlock()
	if a.drop {
		panic(http.ErrAbortHandler) // closes the connection, answering nothing
	}
	if a.retryAfter != "" {
		w.Header().Set("Retry-After", a.retryAfter)
	}
	ct := "application/json"
	if a.status >= 400 {
		ct = "application/problem+json"
	}
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(a.status)
	fmt.Fprint(w, a.body)
}

func (f *fakeAPI) got() []*http.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*http.Request(nil), f.requests...)
}

const created = `{"token":"7BTadEDkJ8","short_url":"https://s.example/7BTadEDkJ8"}`

func problemBody(status int, code string) string {
	return fmt.Sprintf(`{"type":"urn:linoone:problem:%s","title":%q,"status":%d,"detail":"…"}`, code, http.StatusText(status), status)
}

// newTestClient is a client of the fake API that records its waits instead of
// sleeping.
func newTestClient(t *testing.T, f *fakeAPI, opts ...Option) (*Client, *[]time.Duration) {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	opts = append([]Option{WithCredentials("AKIDCLIENTTEST", "client-test-secret"), WithRetry(4, 100*time.Millisecond, time.Second)}, opts...)
	c, err := New(srv.URL, opts...)
	if err != nil {
		t.Fatal(err)
	}
	var waits []time.Duration
	c.sleep = func(ctx context.Context, d time.Duration) error {
		waits = append(waits, d)
		return ctx.Err()
	}
	return c, &waits
}

// TestShortenRetries: what is retried (no answer, 429, 5xx) and what is not, how
// long the client waits, and that every attempt of a call carries one signed
// Idempotency-Key.
func TestShortenRetries(t *testing.T) {
	backoff := func(n int) (lo, hi time.Duration) { d := 100 * time.Millisecond << (n - 1); return d / 2, d }
	for _, tt := range []struct {
		name     string
		answers  []answer
		wantErr  error // nil: the short URL
		attempts int
		waits    []time.Duration // exact waits (Retry-After); nil: backoffs
	}{
		{"503 twice, then 201", []answer{{status: 503, body: problemBody(503, "persist-unavailable")}, {status: 503, body: problemBody(503, "persist-unavailable")}, {status: 201, body: created}}, nil, 3, nil},
		{"no answer, then 201", []answer{{drop: true}, {status: 201, body: created}}, nil, 2, nil},
		{"429 with Retry-After in seconds", []answer{{status: 429, retryAfter: "3", body: `{"message":"Too Many Requests"}`}, {status: 201, body: created}}, nil, 2, []time.Duration{3 * time.Second}},
		{"a replay is a success", []answer{{status: 502, body: `{"message":"Internal Server Error"}`}, {status: 200, body: created}}, nil, 2, nil},
		{"503 every time", []answer{{status: 503, body: problemBody(503, "token-space-busy")}}, ErrUnavailable, 4, nil},
		{"400 is not retried", []answer{{status: 400, body: problemBody(400, "target-url-scheme")}}, ErrTargetInvalid, 1, nil},
		{"422 is not retried", []answer{{status: 422, body: problemBody(422, "target-url-blocked")}}, ErrTargetBlocked, 1, nil},
		{"403 is not retried", []answer{{status: 403, body: `{"message":"Forbidden"}`}}, ErrUnauthorized, 1, nil},
		{"a Retry-After too long is the caller's", []answer{{status: 429, retryAfter: "3600"}}, ErrThrottled, 1, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeAPI{answers: tt.answers}
			c, waits := newTestClient(t, f)
			u, err := c.Shorten(context.Background(), "https://example.com/")
			if tt.wantErr == nil && (err != nil || u.Token != "7BTadEDkJ8") {
				t.Fatalf("Shorten: %+v, %v; want the short URL", u, err)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Fatalf("Shorten: %v; want %v", err, tt.wantErr)
			}
			reqs := f.got()
			if len(reqs) != tt.attempts {
				t.Fatalf("%d attempts, want %d", len(reqs), tt.attempts)
			}
			key := reqs[0].Header.Get("Idempotency-Key")
			for i, r := range reqs {
				if got := r.Header.Get("Idempotency-Key"); got == "" || got != key {
					t.Errorf("attempt %d: Idempotency-Key %q, want the call's %q", i+1, got, key)
				}
				if auth := r.Header.Get("Authorization"); !strings.Contains(auth, "idempotency-key") || !strings.Contains(auth, "/execute-api/aws4_request") {
					t.Errorf("attempt %d: Authorization %q does not sign Idempotency-Key for execute-api", i+1, auth)
				}
			}
			if len(*waits) != tt.attempts-1 {
				t.Fatalf("waits %v, want %d", *waits, tt.attempts-1)
			}
			for i, w := range *waits {
				if tt.waits != nil {
					if w != tt.waits[i] {
						t.Errorf("wait %d: %v, want %v", i+1, w, tt.waits[i])
					}
					continue
				}
				if lo, hi := backoff(i + 1); w < lo || w > hi {
					t.Errorf("wait %d: %v, want %v to %v", i+1, w, lo, hi)
				}
			}
		})
	}
}

// TestRetryNeverSleepsPastTheDeadline: a wait that would outlast the context's
// deadline is not started; the call returns the last answer's problem at once.
func TestRetryNeverSleepsPastTheDeadline(t *testing.T) {
	f := &fakeAPI{answers: []answer{{status: 503, retryAfter: "30", body: problemBody(503, "persist-unavailable")}}}
	c, waits := newTestClient(t, f)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := c.Shorten(ctx, "https://example.com/")
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "no time left") {
		t.Errorf("Shorten: %v; want the 503, with no time left for another attempt", err)
	}
	if n := len(f.got()); n != 1 || len(*waits) != 0 {
		t.Errorf("%d attempts and waits %v; want 1 attempt, no wait", n, *waits)
	}
}

// TestCanceledContextStopsRetries: a wait cut short by the caller ends the call
// with both the cancellation and the last error.
func TestCanceledContextStopsRetries(t *testing.T) {
	f := &fakeAPI{answers: []answer{{status: 503, body: problemBody(503, "persist-unavailable")}}}
	c, _ := newTestClient(t, f)
	ctx, cancel := context.WithCancel(context.Background())
	c.sleep = func(context.Context, time.Duration) error { cancel(); return context.Canceled }
	_, err := c.Shorten(ctx, "https://example.com/")
	if !errors.Is(err, context.Canceled) || !errors.Is(err, ErrUnavailable) {
		t.Errorf("Shorten: %v; want context.Canceled and ErrUnavailable", err)
	}
	if n := len(f.got()); n != 1 {
		t.Errorf("%d attempts, want 1", n)
	}
}

// TestIdempotencyUnavailable: on a deployment without an idempotency secret a call
// with a key of its own making is sent once without one (and not retried: that
// could issue twice); a caller's key is the caller's to drop.
func TestIdempotencyUnavailable(t *testing.T) {
	unavailable := answer{status: 503, body: problemBody(503, codeIdempotencyUnavailable)}
	for _, tt := range []struct {
		name     string
		opts     []ShortenOption
		answers  []answer
		wantErr  error
		attempts int
	}{
		{"the call's own key: sent again without it", nil, []answer{unavailable, {status: 201, body: created}}, nil, 2},
		{"without a key, a 503 is not retried", nil, []answer{unavailable, {status: 503, body: problemBody(503, "persist-unavailable")}}, ErrUnavailable, 2},
		{"the caller's key is kept", []ShortenOption{WithIdempotencyKey("order-4711")}, []answer{unavailable, {status: 201, body: created}}, ErrUnavailable, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeAPI{answers: tt.answers}
			c, _ := newTestClient(t, f)
			_, err := c.Shorten(context.Background(), "https://example.com/", tt.opts...)
			if tt.wantErr == nil && err != nil || tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Fatalf("Shorten: %v; want %v", err, tt.wantErr)
			}
			reqs := f.got()
			if len(reqs) != tt.attempts {
				t.Fatalf("%d attempts, want %d", len(reqs), tt.attempts)
			}
			if len(reqs) == 2 && reqs[1].Header.Get("Idempotency-Key") != "" {
				t.Errorf("the second attempt carries Idempotency-Key %q, want none", reqs[1].Header.Get("Idempotency-Key"))
			}
		})
	}
}

// TestGeneratedKeysDiffer: without WithIdempotencyKey each call has a key of its
// own, so two calls are two short URLs.
func TestGeneratedKeysDiffer(t *testing.T) {
	f := &fakeAPI{answers: []answer{{status: 201, body: created}}}
	c, _ := newTestClient(t, f)
	for range 2 {
		if _, err := c.Shorten(context.Background(), "https://example.com/"); err != nil {
			t.Fatal(err)
		}
	}
	reqs := f.got()
	a, b := reqs[0].Header.Get("Idempotency-Key"), reqs[1].Header.Get("Idempotency-Key")
	if a == b || !strings.HasPrefix(a, "linoone-go-") {
		t.Errorf("keys %q and %q: want two random keys", a, b)
	}
}

func TestBackoffStaysWithinItsBounds(t *testing.T) {
	p := retryPolicy{attempts: 10, base: 100 * time.Millisecond, max: 2 * time.Second}
	for n := 1; n <= 40; n++ {
		d := min(p.max, p.base<<min(n-1, 20))
		for range 50 {
			if w := p.backoff(n); w < d/2 || w > d {
				t.Fatalf("backoff(%d) = %v, want %v to %v", n, w, d/2, d)
			}
		}
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		value string
		want  time.Duration
	}{
		{"", 0},
		{"3", 3 * time.Second},
		{" 120 ", 2 * time.Minute},
		{"-1", 0},
		{"soon", 0},
		{"Tue, 01 Dec 2026 10:00:10 GMT", 10 * time.Second},
		{"Tue, 01 Dec 2026 09:59:00 GMT", 0},
	} {
		h := http.Header{}
		if tt.value != "" {
			h.Set("Retry-After", tt.value)
		}
		if got := retryAfter(h, now); got != tt.want {
			t.Errorf("Retry-After %q: %v, want %v", tt.value, got, tt.want)
		}
	}
}
