package capacity

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/linoone/linoone/internal/aws/metrics"
	"github.com/linoone/linoone/internal/core/shorturl"
	"github.com/linoone/linoone/internal/ops/capacity/tfvars"
)

// TestModelArithmetic checks the model against a profile computed by hand: one vCPU
// (1,769 MB), every link cached, PutEvents 10 ms at p50, 20 ms at p99.
func TestModelArithmetic(t *testing.T) {
	d, err := DefaultDeployment("prod")
	if err != nil {
		t.Fatal(err)
	}
	d.Terraform.FunctionMemoryMB = 1769
	fs := NewFigures("us-east-1")
	for _, s := range []string{"putevents_p50_ms=10", "putevents_p99_ms=20", "apigw_overhead_p50_ms=1", "apigw_overhead_p99_ms=2",
		"lambda_invoke_overhead_p50_ms=1", "lambda_invoke_overhead_p99_ms=3"} {
		if err := fs.Set(s); err != nil {
			t.Fatal(err)
		}
	}
	p := Profile{Name: "hand", AvgRedirects: 100, PeakRedirects: 1000, Links: 10, Zipf: 1}
	r, err := Evaluate(p, d, fs, SimOptions{Requests: 10_000, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if r.HotSet.HitRate != 1 {
		t.Fatalf("hit rate %v, want 1: 10 links fit the cache", r.HotSet.HitRate)
	}
	const cpu = (2.2 + 3.6) / 1000 // ms at one vCPU
	res := r.Functions[0]
	near(t, "resolve warm ms", res.WarmMs, cpu+10)
	near(t, "resolve warm concurrency", res.WarmConcurrency, 1000*(cpu+10)/1000)
	near(t, "billed ms", res.BilledMs, 11)
	near(t, "p50 budget", r.Latency.P50, 1+1+cpu+10)
	near(t, "p99 budget", r.Latency.P99, 2+3+cpu+20)
	// $1 API Gateway + $0.20 Lambda requests + GB-s + $1 EventBridge + logs, per million.
	logBytes := 260 + 3*26 + 600 + 26 + 450 + 26.0
	want := 1 + 0.20 + 1769.0/1024*0.011*0.0000133334*1e6 + 1 + logBytes*0.50/1e9*1e6
	near(t, "per million redirects", r.Cost.PerMillionRedirects, want)
	c := component(t, r, "API Gateway account throttle")
	near(t, "api gateway headroom", c.Headroom, 0.9)
	c = component(t, r, "resolver route throttle")
	near(t, "resolver route headroom", c.Headroom, 0) // 1000 of prod's 1000
	if len(r.Raise) == 0 || r.Raise[0].Setting != "resolver_throttling_rate_limit" || r.Raise[0].Proposed != 2000 {
		t.Errorf("raise = %+v, want resolver_throttling_rate_limit → 2000 first", r.Raise)
	}
}

func near(t *testing.T, what string, got Num, want float64) {
	t.Helper()
	if !got.Known() || math.Abs(got.V-want) > 1e-9*math.Max(1, math.Abs(want)) {
		t.Errorf("%s = %+v, want %v", what, got, want)
	}
}

func component(t *testing.T, r Report, name string) Component {
	t.Helper()
	for _, c := range r.Components {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no component %q", name)
	return Component{}
}

// TestUnknownPropagates: an unknown figure makes what depends on it a lower bound.
func TestUnknownPropagates(t *testing.T) {
	d, _ := DefaultDeployment("prod")
	r, err := Evaluate(Profiles()[0], d, NewFigures("us-east-1"), SimOptions{Requests: 10_000, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if r.Latency.P99.Known() || !strings.Contains(r.Latency.P99.format(ms), "unknown") {
		t.Errorf("p99 %+v should depend on the unknown latencies", r.Latency.P99)
	}
	if !strings.Contains(strings.Join(r.Unknown, ","), "putevents_p99_ms") {
		t.Errorf("unknown figures %v miss putevents_p99_ms", r.Unknown)
	}
	if f := NewFigures("ap-south-2")["putevents_tps"]; f.Known {
		t.Errorf("PutEvents quota of ap-south-2 should be unknown, got %+v", f)
	}
}

func TestFiguresSourced(t *testing.T) {
	for _, f := range append(Measured(), AWS("us-east-1")...) {
		if f.Source == "" || f.Date == "" || f.Unit == "" {
			t.Errorf("%s: every figure needs a source, a date and a unit", f.Name)
		}
	}
	for _, f := range Measured() {
		if !strings.HasPrefix(f.Source, "make bench") && !strings.HasPrefix(f.Source, "internal/") && !strings.HasPrefix(f.Source, "estimated") {
			t.Errorf("%s: a measured figure names how it was measured: %q", f.Name, f.Source)
		}
	}
}

// TestMeasuredEMFLine keeps emf_line_bytes honest: the resolver's EMF line per redirect.
func TestMeasuredEMFLine(t *testing.T) {
	var b bytes.Buffer
	c := &shorturl.Counters{}
	emf, err := metrics.New(&b, "", "prod", metrics.ClickFacts(c)...)
	if err != nil {
		t.Fatal(err)
	}
	c.Published.Add(1)
	if err := emf.Flush(time.Unix(1_790_000_000, 0)); err != nil {
		t.Fatal(err)
	}
	got, want := float64(b.Len()), Measured()[5].Value
	if Measured()[5].Name != "emf_line_bytes" || math.Abs(got-want)/got > 0.15 {
		t.Errorf("EMF line is %v bytes; emf_line_bytes says %v", got, want)
	}
}

// TestTerraformDrift checks the generated deployment settings against the HCL.
func TestTerraformDrift(t *testing.T) {
	for _, env := range []string{"prod", "sandbox"} {
		vars, err := tfvars.Defaults(filepath.Join("..", "..", "..", "terraform", "envs", env))
		if err != nil {
			t.Fatal(err)
		}
		tf := terraformDefaults[env]
		got := map[string]string{
			"aws_region": tf.Region, "publish_timeout": tf.PublishTimeout, "metrics_namespace": tf.MetricsNamespace,
			"function_memory_mb": f(tf.FunctionMemoryMB), "api_timeout_seconds": f(tf.APITimeoutSeconds),
			"resolve_timeout_seconds":          f(tf.ResolveTimeoutSeconds),
			"log_retention_days":               f(tf.LogRetentionDays),
			"resolver_throttling_rate_limit":   f(tf.ResolverRateLimit),
			"resolver_throttling_burst_limit":  f(tf.ResolverBurstLimit),
			"management_throttling_rate_limit": f(tf.ManagementRateLimit), "management_throttling_burst_limit": f(tf.ManagementBurstLimit),
		}
		for name, g := range got {
			if vars[name] != g {
				t.Errorf("%s: %s = %q in the model, %q in variables.tf: run make generate", env, name, g, vars[name])
			}
		}
	}
	if defaultCacheSize != 100000 {
		t.Errorf("cache size %d: docs/architecture.md documents LINOONE_RESOLVER_CACHE_SIZE default 100000", defaultCacheSize)
	}
}

func f(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// TestDocGenerated: docs/capacity.md is what the model writes.
func TestDocGenerated(t *testing.T) {
	var b bytes.Buffer
	if err := WriteDoc(&b); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "capacity.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Error("docs/capacity.md is out of date with the model: run make generate")
	}
}

// TestStandardLibraryOnly keeps the model free of dependencies.
func TestStandardLibraryOnly(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	if deps := strings.Fields(string(out)); len(deps) != 1 || deps[0] != "github.com/linoone/linoone/internal/ops/capacity" {
		t.Errorf("internal/ops/capacity imports %v; it may import only the standard library", deps)
	}
}

// TestZipfRankOne compares rank 1's frequency with 1/H(n, s), the closed form.
func TestZipfRankOne(t *testing.T) {
	for _, s := range []float64{0.8, 1.0, 1.5} {
		const n, draws = 1000, 200_000
		z, err := NewZipf(rand.New(rand.NewPCG(1, 2)), s, n)
		if err != nil {
			t.Fatal(err)
		}
		ones := 0
		for range draws {
			if z.Rank() == 1 {
				ones++
			}
		}
		p := 1 / harmonic(n, s)
		sigma := math.Sqrt(p * (1 - p) / draws)
		if got := float64(ones) / draws; math.Abs(got-p) > 4*sigma {
			t.Errorf("s=%v: rank 1 drawn %.4f of the time, want %.4f ± %.4f", s, got, p, 4*sigma)
		}
	}
}

// TestZipfChiSquare compares all frequencies of a small Zipf(1) with the closed form.
func TestZipfChiSquare(t *testing.T) {
	const n, draws = 20, 100_000
	z, _ := NewZipf(rand.New(rand.NewPCG(3, 4)), 1.0, n)
	counts := make([]float64, n+1)
	for range draws {
		k := z.Rank()
		if k < 1 || k > n {
			t.Fatalf("rank %d outside 1…%d", k, n)
		}
		counts[k]++
	}
	h, chi := harmonic(n, 1), 0.0
	for k := 1; k <= n; k++ {
		e := draws / (float64(k) * h)
		chi += (counts[k] - e) * (counts[k] - e) / e
	}
	if chi > 43.8 { // 19 degrees of freedom, p = 0.001
		t.Errorf("chi-square %.1f over 19 degrees of freedom", chi)
	}
}

func TestZipfLargeN(t *testing.T) {
	z, err := NewZipf(rand.New(rand.NewPCG(5, 6)), 1.0, 50_000_000)
	if err != nil {
		t.Fatal(err)
	}
	for range 100_000 {
		if k := z.Rank(); k < 1 || k > 50_000_000 {
			t.Fatalf("rank %d out of range", k)
		}
	}
	if _, err := NewZipf(nil, 0, 10); err == nil {
		t.Error("s = 0 accepted")
	}
}

func harmonic(n int, s float64) float64 {
	h := 0.0
	for k := 1; k <= n; k++ {
		h += math.Pow(float64(k), -s)
	}
	return h
}

// TestUniformClosedForm: under uniform independent references any demand cache of C
// entries over N links hits C/N of the time, whatever the number of instances.
func TestUniformClosedForm(t *testing.T) {
	for _, policy := range []Policy{LRU, Random} {
		for _, instances := range []int{1, 4} {
			r, err := Simulate(SimConfig{Links: 10_000, S: 0, CacheSize: 1_000, Instances: instances, Requests: 400_000, Policy: policy, Seed: 7})
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(r.HitRate-0.1) > 0.005 {
				t.Errorf("%s, %d instances: hit rate %.4f, want 0.1 (C/N)", policy, instances, r.HitRate)
			}
		}
	}
}

// TestLRUKeepsTheHot: with Zipf popularity LRU beats the uniform C/N by far.
func TestLRUKeepsTheHot(t *testing.T) {
	r, err := Simulate(SimConfig{Links: 10_000, S: 1, CacheSize: 1_000, Instances: 2, Requests: 200_000, Policy: LRU, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if r.HitRate < 0.5 {
		t.Errorf("Zipf(1) hit rate %.3f; the top 10 %% of links carry ~75 %% of requests", r.HitRate)
	}
}

// TestDurationAlarmWithinTheTimeout: the Duration alarm watches the average a
// redirect may take before the concurrency quota binds; a budget at or past the
// function's timeout could never be reached, so no alarm is proposed for it, and
// one that is proposed stays under the timeout.
func TestDurationAlarmWithinTheTimeout(t *testing.T) {
	d, err := DefaultDeployment("prod")
	if err != nil {
		t.Fatal(err)
	}
	const duration = "AWS/Lambda Duration (resolve), p50 per 5 minutes, ms"
	for _, tt := range []struct {
		peak float64
		want bool
	}{{50, false}, {100_000, true}} {
		r, err := Evaluate(Profile{Name: "t", AvgRedirects: tt.peak / 5, PeakRedirects: tt.peak, Links: 1000, Zipf: 1}, d, NewFigures("us-east-1"), SimOptions{Requests: 10_000, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, a := range r.Alarms {
			if a.Metric == duration {
				found = true
				if a.Threshold >= 1000*d.Terraform.ResolveTimeoutSeconds {
					t.Errorf("peak %v: Duration alarm at %v ms, past resolve's %v s timeout", tt.peak, a.Threshold, d.Terraform.ResolveTimeoutSeconds)
				}
			}
		}
		if found != tt.want {
			t.Errorf("peak %v: Duration alarm proposed %v, want %v", tt.peak, found, tt.want)
		}
	}
}

// TestInvocationsRaiseIsInTheQuotasUnit: the invocations-per-second limit is raised
// through the concurrency quota, so its action's current and proposed values are
// concurrent executions, which a script reading setting and proposed can ask for.
func TestInvocationsRaiseIsInTheQuotasUnit(t *testing.T) {
	d, err := DefaultDeployment("prod")
	if err != nil {
		t.Fatal(err)
	}
	fs := NewFigures("us-east-1")
	r, err := Evaluate(Profile{Name: "t", AvgRedirects: 2300, PeakRedirects: 23_000, AvgIssuances: 100, PeakIssuances: 1000, Links: 1000, Zipf: 1}, d, fs, SimOptions{Requests: 10_000, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	quota, per := fs.get("lambda_concurrency"), fs.get("lambda_rps_per_concurrency")
	for _, a := range r.Raise {
		if a.Component != "Lambda invocations per second" {
			continue
		}
		if a.Current != quota.V || a.Proposed < 24_000/alarmAt/per.V || a.Proposed >= 24_000/alarmAt {
			t.Fatalf("raise %+v: want current %v (the quota) and a proposed concurrency", a, quota.V)
		}
		return
	}
	t.Fatalf("no raise of Lambda invocations per second in %+v", r.Raise)
}

// TestPerMillionAtZeroTraffic: the price of a million redirects does not lose API
// Gateway's share when the profile has no traffic to spread the month's bill over.
func TestPerMillionAtZeroTraffic(t *testing.T) {
	d, err := DefaultDeployment("prod")
	if err != nil {
		t.Fatal(err)
	}
	per := func(avg float64) float64 {
		r, err := Evaluate(Profile{Name: "t", AvgRedirects: avg, PeakRedirects: avg, Links: 10, Zipf: 1}, d, NewFigures("us-east-1"), SimOptions{Requests: 1000, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		return r.Cost.PerMillionRedirects.V
	}
	if zero, tiny := per(0), per(1e-6); math.Abs(zero-tiny) > 1e-6 {
		t.Fatalf("per million redirects: %v at no traffic, %v at almost none", zero, tiny)
	}
}

// TestDurationAlarmUsesResolveTimeout: the Duration alarm is about the resolve
// function, so its timeout (resolve_timeout_seconds) decides whether the budget is
// reachable, not the issue function's api_timeout_seconds.
func TestDurationAlarmUsesResolveTimeout(t *testing.T) {
	d, err := DefaultDeployment("prod")
	if err != nil {
		t.Fatal(err)
	}
	const duration = "AWS/Lambda Duration (resolve), p50 per 5 minutes, ms"
	evaluate := func(d Deployment) (threshold float64, found bool) {
		t.Helper()
		r, err := Evaluate(Profile{Name: "t", AvgRedirects: 20_000, PeakRedirects: 100_000, Links: 1000, Zipf: 1}, d, NewFigures("us-east-1"), SimOptions{Requests: 10_000, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range r.Alarms {
			if a.Metric == duration {
				return a.Threshold, true
			}
		}
		return 0, false
	}
	d.Terraform.ResolveTimeoutSeconds, d.Terraform.APITimeoutSeconds = 30, 30
	threshold, found := evaluate(d)
	if !found {
		t.Fatal("no Duration alarm with 30 s timeouts")
	}
	budgetS := threshold / alarmAt / 1000
	// Resolve times out before the budget; issue's timeout stays far above it.
	d.Terraform.ResolveTimeoutSeconds, d.Terraform.APITimeoutSeconds = budgetS/2, 30
	if _, found := evaluate(d); found {
		t.Errorf("Duration alarm proposed for a %.3f s budget past resolve's %.3f s timeout", budgetS, budgetS/2)
	}
	// And the other way round: a short issue timeout does not hide the alarm.
	d.Terraform.ResolveTimeoutSeconds, d.Terraform.APITimeoutSeconds = 30, budgetS/2
	if _, found := evaluate(d); !found {
		t.Errorf("no Duration alarm with resolve's 30 s timeout (issue's %.3f s must not count)", budgetS/2)
	}
}
