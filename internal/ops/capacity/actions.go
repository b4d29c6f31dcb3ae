package capacity

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// Action is a limit to raise before launch: the component's peak load is over 80 % of
// it (or over it), or a downstream brownout would exceed it.
type Action struct {
	Component string  `json:"component"`
	Setting   string  `json:"setting"`
	Current   float64 `json:"current"`
	Proposed  float64 `json:"proposed"`
	Why       string  `json:"why"`
	ratio     float64 // load/limit: the worst is hit first
}

// Alarm is a CloudWatch alarm threshold derived from a limit (80 % of it).
type Alarm struct {
	Metric    string  `json:"metric"`
	Threshold float64 `json:"threshold"`
	Why       string  `json:"why"`
}

// alarmAt is the share of a limit at which alarms fire and raises are proposed.
const alarmAt = 0.8

func raises(p Profile, d Deployment, r Report) []Action {
	var out []Action
	for _, c := range r.Components {
		if !c.Limit.Known() || math.IsInf(c.Limit.V, 1) || c.Load.V <= alarmAt*c.Limit.V {
			continue
		}
		current, proposed := c.Limit.V, niceCeil(c.Load.V/alarmAt)
		why := fmt.Sprintf("peak %s %s is %s of %s", count(c.Load.V), c.Unit, pct(c.Load.V/c.Limit.V), count(c.Limit.V))
		if quota := concurrencyQuota(r); c.Name == "Lambda invocations per second" && quota.Known() && quota.V > 0 {
			// The setting is the concurrency quota: current and proposed are in its
			// unit, not in invocations a second.
			perExecution := c.Limit.V / quota.V
			current, proposed = quota.V, niceCeil(c.Load.V/alarmAt/perExecution)
			why += fmt.Sprintf(" (%s invocations a second per concurrent execution)", count(perExecution))
		}
		if c.Setting == "resolver_throttling_rate_limit" || c.Setting == "management_throttling_rate_limit" {
			why += fmt.Sprintf("; set its burst limit to %s too", count(2*proposed))
		}
		out = append(out, Action{Component: c.Name, Setting: c.Setting, Current: current, Proposed: proposed, Why: why, ratio: c.Load.V / c.Limit.V})
	}
	slices.SortStableFunc(out, func(a, b Action) int { return cmp.Compare(b.ratio, a.ratio) })
	return append(out, brownout(p, d, r)...)
}

// concurrencyQuota is the account's Lambda concurrency quota, as the report's
// component has it.
func concurrencyQuota(r Report) Num {
	for _, c := range r.Components {
		if c.Name == "Lambda concurrent executions" {
			return c.Limit
		}
	}
	return Num{}
}

// brownout is the concurrency a downstream at its timeout needs: every redirect then
// waits publish_timeout for PutEvents (and the Persist timeout on a miss).
func brownout(p Profile, d Deployment, r Report) []Action {
	resolve, issue := r.Functions[0], r.Functions[1]
	quota := concurrencyQuota(r)
	need := resolve.CeilConcurrency + issue.CeilConcurrency
	if !quota.Known() || need <= alarmAt*quota.V {
		return nil
	}
	why := fmt.Sprintf("if PutEvents or Persist answers only at its timeout, %s redirects/s × %s need %s concurrent executions",
		count(p.PeakRedirects), ms(resolve.CeilMs), count(need))
	fit := (alarmAt*quota.V-issue.CeilConcurrency)/p.PeakRedirects*1000 - (resolve.CeilMs - d.PublishTimeout.Seconds()*1000)
	if fit > 0 {
		why += fmt.Sprintf("; or shorten publish_timeout (%s) to about %s, so that more facts go to the click DLQ instead", d.PublishTimeout, ms(fit))
	}
	return []Action{{Component: "Lambda concurrent executions (brownout)", Setting: "Service Quotas: Lambda concurrent executions",
		Current: quota.V, Proposed: niceCeil(need / alarmAt), Why: why}}
}

func alarms(p Profile, d Deployment, fs Figures, r Report) []Alarm {
	var out []Alarm
	route := d.Terraform.ResolverRateLimit
	if acct := fs.get("apigw_account_rps"); acct.Known() {
		route = min(route, acct.V)
	}
	out = append(out, Alarm{Metric: "AWS/ApiGateway Count (resolver API), Sum per minute", Threshold: math.Round(alarmAt * route * 60),
		Why: fmt.Sprintf("80 %% of %s requests/s, the lower of the route throttle and the account throttle", count(route))})
	quota := fs.get("lambda_concurrency")
	if quota.Known() {
		out = append(out, Alarm{Metric: "AWS/Lambda ConcurrentExecutions (account), Maximum per minute", Threshold: math.Round(alarmAt * quota.V),
			Why: "80 % of the account's concurrency quota"})
		// A budget at or past the resolve function's timeout is never the limit: a
		// redirect is cut off before it could spend it, and the alarm could not fire.
		if budget := maxResolveMs(r.Functions[0], r.Functions[1], quota); !math.IsNaN(budget.V) && budget.V < 1000*d.Terraform.ResolveTimeoutSeconds {
			out = append(out, Alarm{Metric: "AWS/Lambda Duration (resolve), p50 per 5 minutes, ms", Threshold: math.Round(alarmAt*budget.V*10) / 10,
				Why: fmt.Sprintf("at %s redirects/s the concurrency quota holds while a redirect averages ≤ %s", count(p.PeakRedirects), ms(budget.V))})
		}
	}
	if tps := fs.get("putevents_tps"); tps.Known() {
		out = append(out, Alarm{Metric: d.Terraform.MetricsNamespace + " FactsPublished + FactsDeadLettered, Sum per minute", Threshold: math.Round(alarmAt * tps.V * 60),
			Why: "one PutEvents call per redirect: 80 % of the region's PutEvents quota (shared with every other publisher of the account)"})
	}
	return out
}
