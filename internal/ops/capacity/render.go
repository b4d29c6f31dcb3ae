package capacity

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteJSON writes r for machines.
func WriteJSON(w io.Writer, r Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteText writes r as the CLI's table, in one write, so that a writer that fails
// part-way is an error rather than a report cut short.
func WriteText(w io.Writer, r Report) error {
	var b bytes.Buffer
	if err := writeText(&b, r); err != nil {
		return err
	}
	_, err := w.Write(b.Bytes())
	return err
}

func writeText(w io.Writer, r Report) error {
	p, d := r.Profile, r.Deployment
	fmt.Fprintf(w, "profile %q: %s redirects/s average, %s peak; %s issuances/s average, %s peak; %s links, zipf %g\n",
		p.Name, count(p.AvgRedirects), count(p.PeakRedirects), count(p.AvgIssuances), count(p.PeakIssuances), commas(float64(p.Links)), p.Zipf)
	fmt.Fprintf(w, "deployment: %s defaults (terraform/envs/%s/variables.tf), %s, %s MB functions, hot set %s\n\n",
		d.Env, d.Env, d.Region, count(d.Terraform.FunctionMemoryMB), commas(float64(d.CacheSize)))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "COMPONENT\tPEAK LOAD\tLIMIT\tHEADROOM\tP50\tP99\tMONTHLY")
	for _, c := range r.Components {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.Name, c.Load.format(count)+" "+c.Unit, c.Limit.format(count),
			c.Headroom.formatUpper(pct), optional(c.P50ms, ms), optional(c.P99ms, ms), optional(c.MonthlyUS, usd))
	}
	fmt.Fprintf(tw, "redirect latency budget\t\t\t\t%s\t%s\t%s\n", r.Latency.P50.format(ms), r.Latency.P99.format(ms), r.Cost.Monthly.format(usd))
	if err := tw.Flush(); err != nil {
		return err
	}
	writeTextDetails(w, r)
	return nil
}

func writeTextDetails(w io.Writer, r Report) {
	h := r.HotSet
	fmt.Fprintf(w, "\nhot set: hit rate %.1f %% (random eviction, as internal/persist/hotset; LRU %.1f %%); Persist lookups %s/s average, %s/s peak\n",
		100*h.HitRate, 100*h.LRU.HitRate, count(h.PersistLookupsAvg), count(h.PersistLookupsPeak))
	for _, f := range r.Functions {
		fmt.Fprintf(w, "lambda %s: %s/s peak, CPU %s at %.3f vCPU, warm %s, cold %s; concurrency warm %s, cold %s, at timeouts %s\n",
			f.Name, count(f.PeakRate), ms(f.CPUms), f.CPUShare, f.WarmMs.format(ms), f.ColdMs.format(ms),
			f.WarmConcurrency.format(count), f.ColdConcurrency.format(count), count(f.CeilConcurrency))
	}
	fmt.Fprintf(w, "cost: %s per million redirects, %s per million issuances (each ms of function duration adds %s per million)\n",
		r.Cost.PerMillionRedirects.format(usd), r.Cost.PerMillionIssuances.format(usd), usd(r.Cost.USDPerMillionPerMs))
	fmt.Fprintln(w, "\nraise before launch:")
	if len(r.Raise) == 0 {
		fmt.Fprintln(w, "  nothing: every known limit has 20 % headroom at peak")
	}
	for _, a := range r.Raise {
		fmt.Fprintf(w, "  %s: %s %s → %s (%s)\n", a.Component, a.Setting, count(a.Current), count(a.Proposed), a.Why)
	}
	fmt.Fprintf(w, "\nunknown (set with --set name=value): %s\n", strings.Join(r.Unknown, ", "))
}

func optional(n *Num, f func(float64) string) string {
	if n == nil {
		return "—"
	}
	return n.format(f)
}
