package capacity

import (
	"math"
	"strings"
	"testing"
)

func TestSetFromSmoke(t *testing.T) {
	s, err := ParseSmoke([]byte(`{"at":"2026-12-06T18:00:00Z","target":{"resolver_url":"https://go.example.com"},"latency_ms":{
		"redirect_kept_alive":{"n":200,"p50":31.5,"p99":70},
		"not_a_token_kept_alive":{"n":200,"p50":24,"p99":75},
		"tcp_connect":{"n":200,"p50":3,"p99":12}}}`))
	if err != nil {
		t.Fatal(err)
	}
	fs := NewFigures("us-east-1")
	names := fs.SetFromSmoke(s)
	want := map[string]float64{
		"apigw_overhead_p50_ms": 21, "apigw_overhead_p99_ms": 72,
		"lambda_invoke_overhead_p50_ms": 0, "lambda_invoke_overhead_p99_ms": 0,
		"putevents_p50_ms": 7.5, "putevents_p99_ms": 0, // 70 − 75 is noise: 0, not negative
	}
	if len(names) != len(want) {
		t.Fatalf("set %v, want %d figures", names, len(want))
	}
	for name, v := range want {
		f := fs[name]
		if !f.Known || math.Abs(f.Value-v) > 1e-9 || !strings.Contains(f.Source, "linoone smoke of https://go.example.com") || f.Date != s.At {
			t.Errorf("%s = %+v, want %g from the smoke", name, f, v)
		}
	}
	d, err := DefaultDeployment("prod")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Evaluate(Profile{Name: "t", AvgRedirects: 10, PeakRedirects: 100, AvgIssuances: 1, PeakIssuances: 10, Links: 1000, Zipf: 1}, d, fs, SimOptions{Requests: 20_000, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range r.Unknown {
		if _, ok := want[u]; ok {
			t.Errorf("%s still unknown", u)
		}
	}
	if lat := r.Latency.P50; lat.V < 21+7.5 {
		t.Errorf("redirect budget p50 %v: lacks the smoke's 28.5 ms", lat)
	}
}

func TestParseSmokeRefuses(t *testing.T) {
	for name, tt := range map[string]struct{ in, err string }{
		"not JSON":     {`p50 3 ms`, "not the JSON of linoone smoke --json"},
		"timed nought": {`{"latency_ms":{}}`, "latency_ms.redirect_kept_alive is missing"},
		"p99 < p50": {`{"latency_ms":{"redirect_kept_alive":{"n":1,"p50":5,"p99":4},"not_a_token_kept_alive":{"n":1,"p50":1,"p99":1},"tcp_connect":{"n":1,"p50":1,"p99":1}}}`,
			"latency_ms.redirect_kept_alive"},
		"no samples": {`{"latency_ms":{"redirect_kept_alive":{"n":0},"not_a_token_kept_alive":{"n":1,"p50":1,"p99":1},"tcp_connect":{"n":1,"p50":1,"p99":1}}}`,
			"want n ≥ 1"},
	} {
		if _, err := ParseSmoke([]byte(tt.in)); err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%s: err %v, want one saying %q", name, err, tt.err)
		}
	}
}
