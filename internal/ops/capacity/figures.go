package capacity

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Figure is one named input of the model: a measured figure from our benchmarks, or an
// AWS quota, price or latency. A figure that could not be found has Known false and the
// model reports what depends on it as unknown instead of guessing.
type Figure struct {
	Name   string  // the key of --set name=value
	Value  float64 // meaningless unless Known
	Known  bool
	Unit   string
	Source string // a `make bench …` target, or an AWS documentation or pricing URL
	Date   string // when the figure was measured or read
}

// known and unknown build table rows.
func known(name string, v float64, unit, source, date string) Figure {
	return Figure{Name: name, Value: v, Known: true, Unit: unit, Source: source, Date: date}
}

func unknown(name, unit, source string) Figure {
	return Figure{Name: name, Unit: unit, Source: source, Date: awsRead}
}

// benchDate is when the measured figures were taken (README "Performance").
const benchDate = "2026-11-29"

// initDate is when the Lambda init figures were taken (docs/performance.md).
const initDate = "2026-12-07"

// Measured is every figure that comes from our own benchmarks: the one place to refresh
// after a new `make bench` run. Where `make bench` reports a range, the upper end is used.
func Measured() []Figure {
	return []Figure{
		known("resolver_cpu_us", 2.2, "µs/request",
			"make bench: BenchmarkResolve/lookup-only (internal/http/httpapi), 1.4–2.2 µs/op, hot-set hit, no fact", benchDate),
		known("click_fact_cpu_us", 3.6, "µs/request",
			"make bench: BenchmarkBuild (internal/core/clickfact), 2.6–3.6 µs/op", benchDate),
		known("issuance_cpu_us", 660, "µs/request",
			"make bench: BenchmarkShorten (internal/http/httpapi), 295–330 µs/op with 64 producers on 2 cores = ≤ 660 µs CPU; includes local Persist's ingest, so an upper bound for the function", benchDate),
		known("resolve_init_ms", 26.4, "ms",
			"make bench: scripts/bench-lambda-init.sh 5, resolve median of 5 under the runtime interface emulator (full CPU; the bare aws-lambda-go runtime 16.3 ms in the same run), 2026-12-07", initDate),
		known("issue_init_ms", 58.7, "ms",
			"make bench: scripts/bench-lambda-init.sh 5, issue median of 5 under the runtime interface emulator (full CPU; the bare aws-lambda-go runtime 16.3 ms in the same run, crawlerdetect's package init ~16 ms of it), 2026-12-07", initDate),
		known("emf_line_bytes", 450, "bytes/invocation",
			"internal/aws/metrics: one EMF line of the five click-fact counters (TestMeasuredEMFLine keeps it within 15 %)", benchDate),
		known("access_log_line_bytes", 600, "bytes/request",
			"estimated: the 15 fields of terraform/modules/http-api access_log_settings with typical values (not measured on AWS)", benchDate),
		known("issue_log_line_bytes", 200, "bytes/issuance",
			"internal/http/httpapi: the \"short url issued\" INFO line (slog JSON), measured by hand", benchDate),
	}
}

// awsRead is the honest date of every AWS figure: the author's knowledge, not a fresh
// reading — these pages could not be reached when the table was written.
const awsRead = "2025 (author's knowledge; not re-read: no internet access)"

const (
	urlAPIGWQuotas   = "https://docs.aws.amazon.com/apigateway/latest/developerguide/limits.html"
	urlHTTPAPIQuotas = "https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-quotas.html"
	urlLambdaQuotas  = "https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html"
	urlLambdaScaling = "https://docs.aws.amazon.com/lambda/latest/dg/scaling-behavior.html"
	urlLambdaMemory  = "https://docs.aws.amazon.com/lambda/latest/dg/configuration-memory.html"
	urlEBQuotas      = "https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-quota.html"
	urlSQSQuotas     = "https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/quotas-messages.html"
	urlPutLogEvents  = "https://docs.aws.amazon.com/AmazonCloudWatchLogs/latest/APIReference/API_PutLogEvents.html"
	urlLambdaLogs    = "https://docs.aws.amazon.com/lambda/latest/dg/monitoring-cloudwatchlogs.html"
	urlAPIGWPricing  = "https://aws.amazon.com/api-gateway/pricing/"
	urlLambdaPricing = "https://aws.amazon.com/lambda/pricing/"
	urlEBPricing     = "https://aws.amazon.com/eventbridge/pricing/"
	urlSQSPricing    = "https://aws.amazon.com/sqs/pricing/"
	urlCWPricing     = "https://aws.amazon.com/cloudwatch/pricing/"
)

// AWS returns the quotas, prices and latencies of region (prices: US East (N.
// Virginia); other regions differ and are not in the table). Latencies are not
// published by AWS and stay unknown until set from your own CloudWatch metrics.
func AWS(region string) []Figure {
	figs := []Figure{
		known("apigw_account_rps", 10000, "requests/s", urlAPIGWQuotas+" (throttle quota per account and region across HTTP, REST and WebSocket APIs; adjustable)", awsRead),
		known("apigw_account_burst", 5000, "requests", urlAPIGWQuotas+" (account burst; adjustable)", awsRead),
		known("apigw_integration_timeout_s", 30, "s", urlHTTPAPIQuotas+" (maximum integration timeout of an HTTP API)", awsRead),
		known("lambda_concurrency", 1000, "executions", urlLambdaQuotas+" (concurrent executions per region; adjustable)", awsRead),
		known("lambda_rps_per_concurrency", 10, "requests/s per execution", urlLambdaQuotas+" (invocation requests per second = 10 × the concurrency quota)", awsRead),
		known("lambda_scale_per_10s", 1000, "environments per 10 s", urlLambdaScaling+" (each function scales by 1,000 execution environments every 10 s)", awsRead),
		known("lambda_mb_per_vcpu", 1769, "MB", urlLambdaMemory+" (CPU is allocated in proportion to memory; 1,769 MB has one vCPU)", awsRead),
		putEventsTPS(region),
		known("sqs_standard_tps", math.Inf(1), "requests/s", urlSQSQuotas+" (standard queues: nearly unlimited API calls per second)", awsRead),
		unknown("persist_rps_limit", "requests/s", "Persist is a separate service: its capacity is its owners' figure, not AWS's"),
		unknown("logs_lambda_ingest_limit_mbps", "MB/s", urlLambdaLogs+" (no published per-account ceiling on what Lambda delivers to CloudWatch Logs was found)"),
		known("logs_event_overhead_bytes", 26, "bytes/event", urlPutLogEvents+" (each log event counts its UTF-8 message plus 26 bytes)", awsRead),
		known("lambda_platform_log_bytes", 260, "bytes/invocation", urlLambdaLogs+" (Text format START, END and REPORT lines of the documented example)", awsRead),

		known("price_apigw_http_per_m", 1.00, "USD/million requests", urlAPIGWPricing+" (HTTP API, first 300 million a month, us-east-1)", awsRead),
		known("price_apigw_http_over_300m_per_m", 0.90, "USD/million requests", urlAPIGWPricing+" (HTTP API, above 300 million a month, us-east-1)", awsRead),
		known("price_lambda_arm_gb_s", 0.0000133334, "USD/GB-s", urlLambdaPricing+" (arm64, first 7.5 billion GB-s a month, us-east-1)", awsRead),
		known("price_lambda_per_m", 0.20, "USD/million requests", urlLambdaPricing, awsRead),
		known("price_eventbridge_per_m", 1.00, "USD/million events", urlEBPricing+" (custom events, 64 KB chunks)", awsRead),
		known("price_sqs_per_m", 0.40, "USD/million requests", urlSQSPricing+" (standard queue, after the first million)", awsRead),
		known("price_logs_ingest_per_gb", 0.50, "USD/GB", urlCWPricing+" (Logs standard ingestion, us-east-1)", awsRead),
	}
	for _, c := range []string{"apigw_overhead", "lambda_invoke_overhead", "putevents", "persist_lookup", "persist_ingest"} {
		for _, q := range []string{"p50", "p99"} {
			figs = append(figs, unknown(c+"_"+q+"_ms", "ms", latencySource[c]))
		}
	}
	return append(figs, unknown("lambda_cold_platform_ms", "ms", urlLambdaScaling+" (sandbox creation and code download before init: not published)"))
}

var latencySource = map[string]string{
	"apigw_overhead":         "not published by AWS; measure: API Gateway Latency − IntegrationLatency (access log response_latency_ms − integration_latency)",
	"lambda_invoke_overhead": "not published by AWS; measure: IntegrationLatency − the function's Duration",
	"putevents":              "not published by AWS; measure: time PutEvents in the resolver (the publish_timeout caps it)",
	"persist_lookup":         "Persist is a separate service with its own SLO; measure its /persist/gremlin latency (LINOONE_PERSIST_TIMEOUT caps it)",
	"persist_ingest":         "Persist is a separate service with its own SLO; measure its /persist/ingest latency (LINOONE_PERSIST_TIMEOUT caps it)",
}

// putEventsTPS is the PutEvents quota of region. Only the regions with the largest
// quota are certain in the author's knowledge; the others are left unknown.
func putEventsTPS(region string) Figure {
	switch region {
	case "us-east-1", "us-west-2", "eu-west-1":
		return known("putevents_tps", 10000, "requests/s", urlEBQuotas+" (PutEvents transactions per second in "+region+"; adjustable)", awsRead)
	}
	return unknown("putevents_tps", "requests/s", urlEBQuotas+" (PutEvents quota of "+region+": smaller than 10,000 TPS, exact figure not known)")
}

// Figures is a set of figures by name.
type Figures map[string]Figure

// NewFigures is the default figures for region: Measured and AWS.
func NewFigures(region string) Figures {
	fs := Figures{}
	for _, f := range append(Measured(), AWS(region)...) {
		fs[f.Name] = f
	}
	return fs
}

// Set overrides one figure from a "name=value" flag; value "unknown" forgets it.
func (fs Figures) Set(arg string) error {
	name, val, ok := strings.Cut(arg, "=")
	f, exists := fs[name]
	if !ok || !exists {
		return fmt.Errorf("--set %q: want name=value with one of: %s", arg, strings.Join(fs.Names(), ", "))
	}
	if val == "unknown" {
		f.Known = false
	} else {
		v, err := strconv.ParseFloat(val, 64)
		if err != nil || v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("--set %s: %q is not a finite non-negative number", name, val)
		}
		f.Value, f.Known = v, true
	}
	f.Source, f.Date = "--set on the command line", "now"
	fs[name] = f
	return nil
}

// Names lists the figures' names in order.
func (fs Figures) Names() []string {
	names := make([]string, 0, len(fs))
	for n := range fs {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Unknown lists the names of the figures without a value.
func (fs Figures) Unknown() []string {
	var out []string
	for _, n := range fs.Names() {
		if !fs[n].Known {
			out = append(out, n)
		}
	}
	return out
}

// get returns a figure as a Num: a value, or unknown carrying its name.
func (fs Figures) get(name string) Num {
	f, ok := fs[name]
	if !ok { // a misspelt name: TestFiguresUsedExist keeps this from happening
		return Num{Unknown: []string{name + " (no such figure)"}}
	}
	if !f.Known {
		return Num{Unknown: []string{name}}
	}
	return Num{V: f.Value}
}
