package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linoone/linoone/internal/http/sigv4"
)

func TestPercentile(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = time.Duration(i+1) * time.Millisecond // 1..100 ms
	}
	tests := []struct {
		name   string
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{"no samples", nil, 99, 0},
		{"one sample", ms(7), 50, 7 * time.Millisecond},
		{"one sample p99", ms(7), 99, 7 * time.Millisecond},
		{"median of odd count", ms(1, 2, 3, 4, 5), 50, 3 * time.Millisecond},
		{"median of even count is the lower middle", ms(1, 2, 3, 4), 50, 2 * time.Millisecond},
		{"p99 of 100 is the 99th", hundred, 99, 99 * time.Millisecond},
		{"p50 of 100 is the 50th", hundred, 50, 50 * time.Millisecond},
		{"p100 is the maximum", hundred, 100, 100 * time.Millisecond},
		{"p99 of 10 is the maximum", ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 99, 10 * time.Millisecond},
		{"tiny p is the minimum", hundred, 0.001, 1 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := percentile(tt.sorted, tt.p); got != tt.want {
				t.Errorf("percentile(%d samples, %v) = %v, want %v", len(tt.sorted), tt.p, got, tt.want)
			}
		})
	}
}

func TestResultLine(t *testing.T) {
	r := result{created: 4, all: 6, errors: 1, latencies: []time.Duration{4 * time.Millisecond, 1 * time.Millisecond, 3 * time.Millisecond, 2 * time.Millisecond}}
	got := r.line(2 * time.Second)
	want := "created=4 all=6 errors=1 rps=2.0 p50_ms=2.00 p99_ms=4.00"
	if got != want {
		t.Errorf("line = %q, want %q", got, want)
	}
}

// TestLoadCounts runs the producers against a server that answers every third signed
// request 503: every 201 the server sent is in all, the window's in created, every
// other answer in errors.
func TestLoadCounts(t *testing.T) {
	var served, createdByServer, refused atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if r.Method != http.MethodPost || r.URL.Path != "/shorten" || r.Header.Get("Authorization") == "" {
			t.Errorf("unexpected request %s %s (Authorization %q)", r.Method, r.URL.Path, r.Header.Get("Authorization"))
		}
		if served.Add(1)%3 == 0 {
			refused.Add(1)
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		createdByServer.Add(1)
		w.WriteHeader(http.StatusCreated)
	}))
	defer srv.Close()
	creds := sigv4.Credentials{AccessKeyID: "AKIDLOADSHORTEN1", SecretAccessKey: "secret-of-the-load-test"}
	o := options{url: srv.URL, region: "us-east-1", conns: 4, warmup: 500 * time.Millisecond, duration: 300 * time.Millisecond}
	r := load(t.Context(), o, creds, io.Discard)
	if r.all != int(createdByServer.Load()) || r.errors != int(refused.Load()) {
		t.Errorf("all %d, errors %d; the server created %d and refused %d", r.all, r.errors, createdByServer.Load(), refused.Load())
	}
	if r.created == 0 || r.created >= r.all || len(r.latencies) != r.created {
		t.Errorf("created %d (latencies %d) of all %d: want some, but not the warm-up's", r.created, len(r.latencies), r.all)
	}
}
