package smoke

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptrace"
	"slices"
	"time"
)

// Latency is the distribution of one kind of request's time, in milliseconds, as
// the client saw it (network included).
type Latency struct {
	N      int     `json:"n"`
	P50    float64 `json:"p50"`
	P90    float64 `json:"p90"`
	P99    float64 `json:"p99"`
	Max    float64 `json:"max"`
	Reused int     `json:"reused_connections,omitempty"` // requests sent on a kept-alive connection
}

// summarize is the nearest-rank percentiles of ds.
func summarize(ds []time.Duration) *Latency {
	if len(ds) == 0 {
		return nil
	}
	sorted := slices.Clone(ds)
	slices.Sort(sorted)
	rank := func(p float64) float64 {
		i := max(0, int(math.Ceil(p*float64(len(sorted))))-1)
		return float64(sorted[i].Microseconds()) / 1000
	}
	return &Latency{N: len(ds), P50: rank(0.50), P90: rank(0.90), P99: rank(0.99), Max: rank(1)}
}

// keptAlive is a transport that keeps one connection per host open.
func keptAlive() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 1
	return t
}

// runTimings times the redirects on one kept-alive connection and on fresh ones,
// the not-a-token 404 (no lookup, no fact: the platform's overhead alone) and
// issuances. A request that answers otherwise than the checks saw fails the
// "timings" check: latencies of errors measure nothing.
func (s *session) runTimings(ctx context.Context) {
	n := s.opts.Redirects
	kept := &http.Client{Timeout: s.opts.Timeout, Transport: keptAlive(), CheckRedirect: s.plain.CheckRedirect}
	fresh := keptAlive()
	fresh.DisableKeepAlives = true
	freshClient := &http.Client{Timeout: s.opts.Timeout, Transport: fresh, CheckRedirect: s.plain.CheckRedirect}
	var err error
	var connect []time.Duration
	if s.timings.RedirectKeptAlive, _, err = timeGets(ctx, kept, s.link.ShortURL, http.StatusFound, n); err == nil {
		s.timings.RedirectFresh, connect, err = timeGets(ctx, freshClient, s.link.ShortURL, http.StatusFound, n)
	}
	if err == nil {
		s.timings.Connect = summarize(connect)
		s.timings.NotAToken, _, err = timeGets(ctx, kept, s.target.Resolver+"/not-a-token", http.StatusNotFound, n)
	}
	if err == nil {
		err = s.timeIssuances(ctx)
	}
	if err != nil {
		s.fail("timings", "%v", err)
		return
	}
	s.pass("timings", "%d redirects kept alive, %d on new connections, %d not-a-token, %d issuances", n, n, n, s.opts.Issuances)
}

// timeGets times n sequential GETs of url, each of which must answer want, and
// returns the TCP connect times of the connections it opened.
func timeGets(ctx context.Context, c *http.Client, url string, want, n int) (*Latency, []time.Duration, error) {
	var ds, connects []time.Duration
	reused := 0
	for range n {
		var connStart time.Time
		trace := &httptrace.ClientTrace{
			GotConn:      func(i httptrace.GotConnInfo) { reused += b2i(i.Reused) },
			ConnectStart: func(string, string) { connStart = time.Now() },
			ConnectDone: func(_, _ string, err error) {
				if err == nil {
					connects = append(connects, time.Since(connStart))
				}
			},
		}
		start := time.Now()
		a, err := do(httptrace.WithClientTrace(ctx, trace), c, http.MethodGet, url, "", nil)
		ds = append(ds, time.Since(start))
		if err != nil {
			return nil, nil, err
		}
		if a.status != want {
			return nil, nil, fmt.Errorf("request %d of %d: want %d, got %s", len(ds), n, want, a)
		}
	}
	l := summarize(ds)
	l.Reused = reused
	return l, connects, nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// timeIssuances issues s.opts.Issuances more links, each a fresh target.
func (s *session) timeIssuances(ctx context.Context) error {
	var ds []time.Duration
	for i := 1; i <= s.opts.Issuances; i++ {
		_, d, err := s.shorten(ctx, uniqueTarget(s.run, i))
		if err != nil {
			return fmt.Errorf("issuance %d of %d: %w", i, s.opts.Issuances, err)
		}
		ds = append(ds, d)
	}
	s.timings.Issuance = summarize(ds)
	return nil
}
