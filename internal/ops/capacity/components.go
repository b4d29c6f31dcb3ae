package capacity

import (
	"fmt"
	"math"
)

func ptr(n Num) *Num { return &n }

// components lists every limit on the paths at the profile's peak, in path order.
func components(p Profile, d Deployment, fs Figures, r Report) []Component {
	tf, resolve, issue := d.Terraform, r.Functions[0], r.Functions[1]
	lat := func(i int) (*Num, *Num) { return ptr(r.Latency.Rows[i].P50), ptr(r.Latency.Rows[i].P99) }
	var cs []Component
	addC := func(c Component) {
		c.Headroom = headroom(c.Load, c.Limit)
		cs = append(cs, c)
	}
	p50, p99 := lat(0)
	addC(Component{Name: "API Gateway account throttle", Load: num(p.PeakRedirects + p.PeakIssuances),
		Limit: fs.get("apigw_account_rps"), Unit: "requests/s", P50ms: p50, P99ms: p99, MonthlyUS: ptr(r.Cost.apigw),
		Setting: "Service Quotas: API Gateway throttle per account and region",
		Note:    fmt.Sprintf("shared by both APIs and every other API of the account; burst %s", fs.get("apigw_account_burst").format(count))})
	addC(Component{Name: "resolver route throttle", Load: num(p.PeakRedirects), Limit: num(tf.ResolverRateLimit),
		Unit: "requests/s", Setting: "resolver_throttling_rate_limit",
		Note: fmt.Sprintf("burst %s (resolver_throttling_burst_limit)", count(tf.ResolverBurstLimit))})
	addC(Component{Name: "management route throttle", Load: num(p.PeakIssuances), Limit: num(tf.ManagementRateLimit),
		Unit: "requests/s", Setting: "management_throttling_rate_limit",
		Note: fmt.Sprintf("burst %s (management_throttling_burst_limit)", count(tf.ManagementBurstLimit))})
	p50, p99 = lat(1)
	quota := fs.get("lambda_concurrency")
	addC(Component{Name: "Lambda concurrent executions", Load: add(resolve.WarmConcurrency, issue.WarmConcurrency),
		Limit: quota, Unit: "executions", P50ms: p50, P99ms: p99, MonthlyUS: ptr(r.Cost.lambda),
		Setting: "Service Quotas: Lambda concurrent executions", Note: concurrencyNote(resolve, issue, quota)})
	addC(Component{Name: "Lambda invocations per second", Load: num(p.PeakRedirects + p.PeakIssuances),
		Limit: mul(fs.get("lambda_rps_per_concurrency"), quota), Unit: "requests/s",
		Setting: "Service Quotas: Lambda concurrent executions (this limit is 10 × that quota)"})
	p50, p99 = lat(4)
	addC(Component{Name: "EventBridge PutEvents", Load: num(p.PeakRedirects), Limit: fs.get("putevents_tps"),
		Unit: "requests/s", P50ms: p50, P99ms: p99, MonthlyUS: ptr(r.Cost.bus),
		Setting: "Service Quotas: EventBridge PutEvents transactions per second", Note: "one PutEvents call (one entry) per redirect"})
	addC(Component{Name: "SQS click DLQ", Load: num(p.PeakRedirects), Limit: fs.get("sqs_standard_tps"), Unit: "requests/s",
		MonthlyUS: ptr(num(0)), Note: "load while the bus is down (every fact is dead-lettered); $0 while it works, $0.40 per million dead-lettered facts"})
	p50, p99 = lat(3)
	addC(Component{Name: "Persist", Load: num(r.HotSet.PersistLookupsPeak + 2*p.PeakIssuances), Limit: fs.get("persist_rps_limit"),
		Unit: "requests/s", P50ms: p50, P99ms: p99,
		Note: fmt.Sprintf("hot-set misses (hit rate %.1f %%) plus an existence check and an ingest per issuance; billed to Persist's owners", 100*r.HotSet.HitRate)})
	addC(Component{Name: "CloudWatch Logs", Load: num((r.Cost.redirectLogBytes*p.PeakRedirects + r.Cost.issuanceLogBytes*p.PeakIssuances) / 1e6),
		Limit: fs.get("logs_lambda_ingest_limit_mbps"), Unit: "MB/s", MonthlyUS: ptr(r.Cost.logs),
		Note: fmt.Sprintf("%.0f bytes per redirect (EMF, START/END/REPORT, access log), %.0f GB a month", r.Cost.redirectLogBytes, r.Cost.LogGBPerMonth)})
	return cs
}

// maxResolveMs is the resolver's mean duration at which the account's concurrency
// quota is used up at peak (what is left after issuance).
func maxResolveMs(resolve, issue Function, quota Num) Num {
	if !quota.Known() || resolve.PeakRate == 0 {
		return Num{V: math.NaN(), Unknown: quota.Unknown}
	}
	return Num{V: (quota.V - issue.WarmConcurrency.V) / resolve.PeakRate * 1000, Unknown: issue.WarmConcurrency.Unknown}
}

func concurrencyNote(resolve, issue Function, quota Num) string {
	return fmt.Sprintf("the quota holds while a redirect averages ≤ %s; scale-out (all cold) %s; a downstream at its timeout %s",
		maxResolveMs(resolve, issue, quota).formatUpper(ms), add(resolve.ColdConcurrency, issue.ColdConcurrency).format(count),
		count(resolve.CeilConcurrency+issue.CeilConcurrency))
}

// count and ms format numbers for people.
func count(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "unlimited"
	case v >= 100 || v == math.Trunc(v):
		return commas(math.Ceil(v-1e-9) + 0) // + 0: a zero load is 0, not -0
	case v >= 1:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.3g", v)
	}
}

func ms(v float64) string {
	if v >= 1000 {
		return commas(math.Round(v)) + " ms"
	}
	if v >= 10 {
		return fmt.Sprintf("%.0f ms", v)
	}
	return fmt.Sprintf("%.3g ms", v)
}

func usd(v float64) string {
	switch {
	case v >= 100:
		return "$" + commas(math.Round(v))
	case v > 0 && v < 0.1:
		return fmt.Sprintf("$%.4f", v)
	}
	return fmt.Sprintf("$%.2f", v)
}

func pct(v float64) string {
	if math.IsInf(v, -1) {
		return "over"
	}
	if math.Abs(v) < 0.1 || v > 0.99 && v < 1 {
		return fmt.Sprintf("%.1f %%", 100*v)
	}
	return fmt.Sprintf("%.0f %%", 100*v)
}

// commas writes a whole number with thousands separators.
func commas(v float64) string {
	s := fmt.Sprintf("%.0f", v)
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		return "-" + s
	}
	return s
}
