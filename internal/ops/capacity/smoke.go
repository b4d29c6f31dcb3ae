package capacity

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
)

// Smoke is what `linoone smoke --json` measured from outside, as the model reads
// it: the members of internal/app/smoke's report that carry latencies (its tests
// keep the two in step).
type Smoke struct {
	At     string `json:"at"`
	Target struct {
		Resolver string `json:"resolver_url"`
	} `json:"target"`
	Latency struct {
		RedirectKeptAlive *SmokeLatency `json:"redirect_kept_alive"`
		NotAToken         *SmokeLatency `json:"not_a_token_kept_alive"`
		Connect           *SmokeLatency `json:"tcp_connect"`
	} `json:"latency_ms"`
}

// SmokeLatency is one distribution of the smoke's, in milliseconds.
type SmokeLatency struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
}

// ParseSmoke reads a smoke's JSON report; one without the three timings the model
// uses (its checks of the redirect failed, so it timed nothing) is an error.
func ParseSmoke(b []byte) (Smoke, error) {
	var s Smoke
	if err := json.Unmarshal(b, &s); err != nil {
		return Smoke{}, fmt.Errorf("not the JSON of linoone smoke --json: %w", err)
	}
	l := s.Latency
	var errs []error
	for _, m := range []struct {
		name string
		d    *SmokeLatency
	}{{"redirect_kept_alive", l.RedirectKeptAlive}, {"not_a_token_kept_alive", l.NotAToken}, {"tcp_connect", l.Connect}} {
		name, d := m.name, m.d
		switch {
		case d == nil:
			errs = append(errs, fmt.Errorf("latency_ms.%s is missing: the smoke timed nothing (did its redirect check fail?)", name))
		case d.N < 1 || !finite(d.P50) || !finite(d.P99) || d.P50 < 0 || d.P99 < d.P50:
			errs = append(errs, fmt.Errorf("latency_ms.%s %+v: want n ≥ 1 and 0 ≤ p50 ≤ p99", name, *d))
		}
	}
	return s, errors.Join(errs...)
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// SetFromSmoke sets the latencies a smoke measured, and returns their names.
// From outside, a request's time is the network's round trip, API Gateway's and
// Lambda's overhead, and the function; the smoke times three requests that differ
// in one part each:
//   - a TCP connect: the round trip alone;
//   - GET /not-a-token, a 404 before any lookup: round trip + overhead, so
//     apigw_overhead = it − the round trip, which holds Lambda's invocation
//     overhead too (lambda_invoke_overhead is set to 0: the two are one from
//     outside);
//   - a redirect of a token in the hot set: that + the click's publish, so
//     putevents = it − the not-a-token 404 (the lookup and the fact are µs of CPU).
//
// p99s are differences of p99s: an estimate of each part's tail, not a
// measurement of it alone; differences below zero (noise) count as 0.
func (fs Figures) SetFromSmoke(s Smoke) []string {
	l := s.Latency
	rtt := l.Connect.P50
	src := fmt.Sprintf("linoone smoke of %s at %s: ", s.Target.Resolver, s.At)
	set := func(name string, v float64, how string) {
		f := fs[name]
		f.Value, f.Known, f.Source, f.Date = math.Max(0, v), true, src+how, s.At
		fs[name] = f
	}
	set("apigw_overhead_p50_ms", l.NotAToken.P50-rtt, "not-a-token 404 p50 − TCP connect p50; includes Lambda's invocation overhead")
	set("apigw_overhead_p99_ms", l.NotAToken.P99-rtt, "not-a-token 404 p99 − TCP connect p50; includes Lambda's invocation overhead")
	set("lambda_invoke_overhead_p50_ms", 0, "counted in apigw_overhead_p50_ms (from outside the two are one)")
	set("lambda_invoke_overhead_p99_ms", 0, "counted in apigw_overhead_p99_ms (from outside the two are one)")
	set("putevents_p50_ms", l.RedirectKeptAlive.P50-l.NotAToken.P50, "redirect p50 − not-a-token 404 p50, kept alive")
	set("putevents_p99_ms", l.RedirectKeptAlive.P99-l.NotAToken.P99, "redirect p99 − not-a-token 404 p99, kept alive")
	return []string{"apigw_overhead_p50_ms", "apigw_overhead_p99_ms", "lambda_invoke_overhead_p50_ms", "lambda_invoke_overhead_p99_ms", "putevents_p50_ms", "putevents_p99_ms"}
}
