package capacity

// gb is the byte count of a GB in CloudWatch Logs pricing (taken as 10⁹).
const gb = 1e9

// costs prices the profile. Free tiers are left out: they do not matter at the scales
// that need this model.
func costs(p Profile, d Deployment, fs Figures, fns []Function) Cost {
	c := Cost{RedirectsPerMonth: p.AvgRedirects * secondsPerMonth, IssuancesPerMonth: p.AvgIssuances * secondsPerMonth}
	memGB := d.Terraform.FunctionMemoryMB / 1024
	gbs := fs.get("price_lambda_arm_gb_s")
	perInvocation := func(f Function) Num {
		return add(fs.get("price_lambda_per_m").scale(1e-6), mul(gbs, f.BilledMs).scale(memGB/1000))
	}
	overhead := fs.get("logs_event_overhead_bytes").V
	platform := fs.get("lambda_platform_log_bytes").V + overhead*3 // START, END, REPORT
	access := fs.get("access_log_line_bytes").V + overhead
	c.redirectLogBytes = platform + access + fs.get("emf_line_bytes").V + overhead
	c.issuanceLogBytes = platform + access + fs.get("issue_log_line_bytes").V + overhead
	logPrice := fs.get("price_logs_ingest_per_gb").scale(1 / gb)

	requests := c.RedirectsPerMonth + c.IssuancesPerMonth
	c.apigw = apigwMonthly(fs, requests)
	// With no traffic, a request would be the first tier's.
	apigwPerRequest := fs.get("price_apigw_http_per_m").scale(1e-6)
	if requests > 0 {
		apigwPerRequest = c.apigw.scale(1 / requests)
	}
	redirect := add(apigwPerRequest, perInvocation(fns[0]), fs.get("price_eventbridge_per_m").scale(1e-6),
		logPrice.scale(c.redirectLogBytes))
	issuance := add(apigwPerRequest, perInvocation(fns[1]), logPrice.scale(c.issuanceLogBytes))
	c.PerMillionRedirects = redirect.scale(1e6)
	c.PerMillionIssuances = issuance.scale(1e6)
	c.lambda = add(perInvocation(fns[0]).scale(c.RedirectsPerMonth), perInvocation(fns[1]).scale(c.IssuancesPerMonth))
	c.bus = fs.get("price_eventbridge_per_m").scale(c.RedirectsPerMonth / 1e6)
	c.LogGBPerMonth = (c.redirectLogBytes*c.RedirectsPerMonth + c.issuanceLogBytes*c.IssuancesPerMonth) / gb
	c.logs = fs.get("price_logs_ingest_per_gb").scale(c.LogGBPerMonth)
	c.Monthly = add(c.apigw, c.lambda, c.bus, c.logs)
	c.USDPerMillionPerMs = gbs.V * memGB / 1000 * 1e6
	return c
}

// apigwMonthly prices a month's HTTP API requests over the 300-million tier.
func apigwMonthly(fs Figures, requests float64) Num {
	const tier = 300e6
	first, over := min(requests, tier), max(requests-tier, 0)
	return add(fs.get("price_apigw_http_per_m").scale(first/1e6), fs.get("price_apigw_http_over_300m_per_m").scale(over/1e6))
}
