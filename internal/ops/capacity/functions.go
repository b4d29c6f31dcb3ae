package capacity

import "math"

// Function is one Lambda function at the profile's peak. Durations are means, with
// each network wait taken at its p50; concurrency is rate × duration.
type Function struct {
	Name     string  `json:"name"`
	PeakRate float64 `json:"peak_per_s"`
	CPUShare float64 `json:"cpu_share"`  // vCPU at the function's memory size
	CPUms    float64 `json:"cpu_ms"`     // measured CPU per request, scaled by CPUShare
	WarmMs   Num     `json:"warm_ms"`    // a warm invocation
	ColdMs   Num     `json:"cold_ms"`    // init (scaled) + the platform's cold start + warm
	CeilMs   float64 `json:"ceiling_ms"` // every wait at its timeout (a brownout downstream)
	// Concurrency = rate × duration, warm; cold (every request on a new environment,
	// the scale-out worst case); and at the ceiling.
	WarmConcurrency Num     `json:"warm_concurrency"`
	ColdConcurrency Num     `json:"cold_concurrency"`
	CeilConcurrency float64 `json:"ceiling_concurrency"`
	BilledMs        Num     `json:"billed_ms"` // Lambda bills each invocation up to the next 1 ms
}

func resolveFunction(p Profile, d Deployment, fs Figures, share, miss float64) Function {
	cpu := (fs.get("resolver_cpu_us").V + fs.get("click_fact_cpu_us").V) / 1000 / share
	warm := add(num(cpu), fs.get("persist_lookup_p50_ms").scale(miss), fs.get("putevents_p50_ms"))
	ceil := cpu + d.PublishTimeout.Seconds()*1000
	if miss > 0 {
		ceil += miss * d.PersistTimeout.Seconds() * 1000
	}
	f := Function{Name: "resolve", PeakRate: p.PeakRedirects, CPUShare: share, CPUms: cpu, WarmMs: warm, CeilMs: ceil}
	f.concurrency(fs.get("resolve_init_ms").scale(1/share), fs)
	return f
}

func issueFunction(p Profile, d Deployment, fs Figures, share float64) Function {
	cpu := fs.get("issuance_cpu_us").V / 1000 / share
	// One existence check and one ingest per issuance (a collision is negligible).
	warm := add(num(cpu), fs.get("persist_lookup_p50_ms"), fs.get("persist_ingest_p50_ms"))
	ceil := cpu + 2*d.PersistTimeout.Seconds()*1000
	f := Function{Name: "issue", PeakRate: p.PeakIssuances, CPUShare: share, CPUms: cpu, WarmMs: warm, CeilMs: ceil}
	f.concurrency(fs.get("issue_init_ms").scale(1/share), fs)
	return f
}

func (f *Function) concurrency(init Num, fs Figures) {
	f.ColdMs = add(init, fs.get("lambda_cold_platform_ms"), f.WarmMs)
	f.WarmConcurrency = f.WarmMs.scale(f.PeakRate / 1000)
	f.ColdConcurrency = f.ColdMs.scale(f.PeakRate / 1000)
	f.CeilConcurrency = f.CeilMs * f.PeakRate / 1000
	f.BilledMs = Num{V: math.Max(1, math.Ceil(f.WarmMs.V)), Unknown: f.WarmMs.Unknown}
}

// Latency is a redirect's latency budget: each component's p50 and p99, summed. A sum
// of percentiles bounds the total's percentile from above; it is a budget, not a
// prediction. Persist counts at p50 only when most requests miss the hot set, and at
// p99 only when more than 1 % do.
type Latency struct {
	Rows []LatencyRow `json:"rows"`
	P50  Num          `json:"p50_ms"`
	P99  Num          `json:"p99_ms"`
}

// LatencyRow is one component of the budget.
type LatencyRow struct {
	Name string `json:"name"`
	P50  Num    `json:"p50_ms"`
	P99  Num    `json:"p99_ms"`
}

func redirectLatency(fs Figures, share, miss float64) Latency {
	cpu := num((fs.get("resolver_cpu_us").V + fs.get("click_fact_cpu_us").V) / 1000 / share)
	persist50, persist99 := Num{}, Num{}
	if miss > 0.5 {
		persist50 = fs.get("persist_lookup_p50_ms")
	}
	if miss > 0.01 {
		persist99 = fs.get("persist_lookup_p99_ms")
	}
	l := Latency{Rows: []LatencyRow{
		{"API Gateway HTTP API overhead", fs.get("apigw_overhead_p50_ms"), fs.get("apigw_overhead_p99_ms")},
		{"Lambda warm invocation overhead", fs.get("lambda_invoke_overhead_p50_ms"), fs.get("lambda_invoke_overhead_p99_ms")},
		{"resolver CPU (measured, at the CPU share)", cpu, cpu},
		{"Persist lookup on a hot-set miss", persist50, persist99},
		{"EventBridge PutEvents", fs.get("putevents_p50_ms"), fs.get("putevents_p99_ms")},
	}}
	for _, r := range l.Rows {
		l.P50, l.P99 = add(l.P50, r.P50), add(l.P99, r.P99)
	}
	return l
}

// Cost is what the profile costs: per million requests of each kind, and a month.
type Cost struct {
	PerMillionRedirects Num     `json:"usd_per_million_redirects"`
	PerMillionIssuances Num     `json:"usd_per_million_issuances"`
	Monthly             Num     `json:"usd_per_month"`
	RedirectsPerMonth   float64 `json:"redirects_per_month"`
	IssuancesPerMonth   float64 `json:"issuances_per_month"`
	LogGBPerMonth       float64 `json:"log_gb_per_month"`
	USDPerMillionPerMs  float64 `json:"usd_per_million_per_extra_ms"` // what each ms of function duration adds
	apigw, lambda, bus  Num
	logs                Num
	redirectLogBytes    float64
	issuanceLogBytes    float64
}
