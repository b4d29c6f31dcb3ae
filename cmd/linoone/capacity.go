package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"github.com/linoone/linoone/internal/app/config"
	"github.com/linoone/linoone/internal/foundation/tty"
	"github.com/linoone/linoone/internal/ops/capacity"
)

const capacityUsage = `usage: linoone capacity [flags]

Models the AWS deployment at a traffic profile: each component's load, limit and
headroom at peak, a redirect's p50/p99 budget, Lambda concurrency, the hot set's hit
rate, the monthly cost and the quotas to raise before launch. Deployment settings are
the Terraform defaults of --env; figures AWS does not publish print as "unknown"
until given with --set, or measured: --from-smoke FILE reads the JSON of
'linoone smoke --json' and sets API Gateway's overhead and PutEvents' latency from
it (--set still wins). docs/capacity.md explains the output.

example:
  linoone capacity --peak 25000 --avg 2300 --links 50000000 --zipf 1.0
  linoone capacity --avg 1000 --set putevents_p50_ms=20 --set putevents_p99_ms=60 --json
  linoone capacity --avg 1000 --from-smoke smoke.json
`

// setFlags collects repeated --set name=value.
type setFlags []string

func (s *setFlags) String() string     { return strings.Join(*s, ",") }
func (s *setFlags) Set(v string) error { *s = append(*s, v); return nil }

// capacityCmd runs `linoone capacity` and returns the exit code: 0, 1 on a model
// error, 2 on bad flags.
func capacityCmd(args []string, stdout, stderr io.Writer) int {
	fl := newFlags("capacity")
	p := capacity.Profile{Name: "command line"}
	fl.Float64Var(&p.AvgRedirects, "avg", 2300, "average redirects per second")
	fl.Float64Var(&p.PeakRedirects, "peak", 0, "peak redirects per second (default 10 × --avg)")
	fl.Float64Var(&p.AvgIssuances, "issue-avg", 1, "average issuances per second")
	fl.Float64Var(&p.PeakIssuances, "issue-peak", 0, "peak issuances per second (default 10 × --issue-avg)")
	fl.Int64Var(&p.Links, "links", 1_000_000, "number of short URLs being visited")
	fl.Float64Var(&p.Zipf, "zipf", 1.0, "popularity skew s of Zipf(s) over the links; 0 is uniform")
	env := fl.String("env", "prod", "Terraform environment whose defaults are the deployment: "+strings.Join(capacity.Envs(), ", "))
	region := fl.String("region", "", "AWS region (default: the environment's aws_region, else "+capacity.DefaultRegion+")")
	memory := fl.Float64("memory", 0, "function memory in MB (default: function_memory_mb)")
	resolverRate := fl.Float64("resolver-rate", 0, "resolver route rate limit (default: resolver_throttling_rate_limit)")
	managementRate := fl.Float64("management-rate", 0, "management route rate limit (default: management_throttling_rate_limit)")
	publish := fl.Duration("publish-timeout", 0, "publish timeout (default: publish_timeout)")
	cache := fl.Int("cache-size", -1, "resolver hot-set size (default: LINOONE_RESOLVER_CACHE_SIZE's default)")
	jsonOut := fl.Bool("json", false, "write JSON")
	var sets setFlags
	fl.Var(&sets, "set", "override a figure, name=value or name=unknown (repeatable; see docs/capacity.md)")
	fromSmoke := fl.String("from-smoke", "", "set the latencies that `FILE`, the output of linoone smoke --json, holds")
	if _, err := parse(fl, args, 0, 0); err != nil {
		return commandResult("capacity", err, stdout, stderr)
	}
	if p.PeakRedirects == 0 {
		p.PeakRedirects = 10 * p.AvgRedirects
	}
	if p.PeakIssuances == 0 {
		p.PeakIssuances = 10 * p.AvgIssuances
	}
	d, err := capacity.DefaultDeployment(*env)
	if err == nil {
		err = checkOverrides(*memory, *resolverRate, *managementRate, *publish, *cache)
	}
	if err != nil {
		fmt.Fprintf(stderr, "linoone capacity: %v\n", err)
		return 2
	}
	overrideDeployment(&d, *region, *memory, *resolverRate, *managementRate, *publish, *cache)
	fs := capacity.NewFigures(d.Region)
	if *fromSmoke != "" {
		if err := setFromSmoke(fs, *fromSmoke, stderr); err != nil {
			fmt.Fprintf(stderr, "linoone capacity: %v\n", err)
			return 2
		}
	}
	for _, s := range sets {
		if err := fs.Set(s); err != nil {
			fmt.Fprintf(stderr, "linoone capacity: %v\n", err)
			return 2
		}
	}
	return writeCapacity(p, d, fs, *jsonOut, stdout, stderr)
}

// checkOverrides refuses a deployment no environment could have. A flag at its
// default (0, or -1 for the cache) keeps the environment's value.
func checkOverrides(memory, resolverRate, managementRate float64, publish time.Duration, cache int) error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"--memory", memory}, {"--resolver-rate", resolverRate}, {"--management-rate", managementRate}} {
		if f.v < 0 || math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return fmt.Errorf("%s %v: want a finite positive number (0: the environment's)", f.name, f.v)
		}
	}
	if publish < 0 {
		return fmt.Errorf("--publish-timeout %v: want a positive duration (0: the environment's)", publish)
	}
	if cache < -1 || cache > config.MaxCacheSize {
		return fmt.Errorf("--cache-size %d: want 0 to %d, as LINOONE_RESOLVER_CACHE_SIZE (-1: its default)", cache, config.MaxCacheSize)
	}
	return nil
}

func overrideDeployment(d *capacity.Deployment, region string, memory, resolverRate, managementRate float64, publish time.Duration, cache int) {
	if region != "" {
		d.Region = region
	}
	if memory > 0 {
		d.Terraform.FunctionMemoryMB = memory
	}
	if resolverRate > 0 {
		d.Terraform.ResolverRateLimit = resolverRate
	}
	if managementRate > 0 {
		d.Terraform.ManagementRateLimit = managementRate
	}
	if publish > 0 {
		d.PublishTimeout = publish
	}
	if cache >= 0 {
		d.CacheSize = cache
	}
}

func writeCapacity(p capacity.Profile, d capacity.Deployment, fs capacity.Figures, jsonOut bool, stdout, stderr io.Writer) int {
	r, err := capacity.Evaluate(p, d, fs, capacity.DefaultSim)
	if err != nil {
		fmt.Fprintf(stderr, "linoone capacity: %v\n", err)
		return 2
	}
	if jsonOut {
		err = capacity.WriteJSON(stdout, r)
	} else {
		err = capacity.WriteText(stdout, r)
	}
	if err != nil {
		fmt.Fprintf(stderr, "linoone capacity: %v\n", err)
		return 1
	}
	return 0
}

// setFromSmoke sets the figures a smoke report in file measured, and says which on
// stderr (stdout is the report, perhaps JSON).
func setFromSmoke(fs capacity.Figures, file string, stderr io.Writer) error {
	f, err := os.Open(file)
	if err != nil {
		return fmt.Errorf("--from-smoke: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 1<<20)) // a report is a few kB
	if err != nil {
		return fmt.Errorf("--from-smoke %s: %w", file, err)
	}
	s, err := capacity.ParseSmoke(b)
	if err != nil {
		return fmt.Errorf("--from-smoke %s: %w", file, err)
	}
	var set []string
	for _, name := range fs.SetFromSmoke(s) {
		set = append(set, fmt.Sprintf("%s=%.2f", name, fs[name].Value))
	}
	fmt.Fprintf(stderr, "linoone capacity: from the smoke of %s at %s: %s\n", tty.Printable(s.Target.Resolver), tty.Printable(s.At), strings.Join(set, " "))
	return nil
}
