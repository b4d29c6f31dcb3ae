package capacity

import (
	"fmt"
	"math"
	"slices"
	"time"
)

//go:generate go run ./tfdefaults -envs ../../../terraform/envs -out terraform_gen.go
//go:generate go run ./capacitydoc -out ../../../docs/capacity.md

// TerraformDefaults are the defaults of one environment's variables that the model
// uses (terraform/envs/<env>/variables.tf; generated into terraform_gen.go).
type TerraformDefaults struct {
	Region                string  // aws_region ("" when the variable is required)
	FunctionMemoryMB      float64 // function_memory_mb
	APITimeoutSeconds     float64 // api_timeout_seconds: the issue function's timeout
	ResolveTimeoutSeconds float64 // resolve_timeout_seconds: the resolve function's timeout
	PublishTimeout        string  // publish_timeout, a Go duration
	LogRetentionDays      float64 // log_retention_days
	ResolverRateLimit     float64 // resolver_throttling_rate_limit
	ResolverBurstLimit    float64 // resolver_throttling_burst_limit
	ManagementRateLimit   float64 // management_throttling_rate_limit
	ManagementBurstLimit  float64 // management_throttling_burst_limit
	MetricsNamespace      string  // metrics_namespace
}

// Deployment is the settings of the stack being modelled.
type Deployment struct {
	Env            string            `json:"env"`
	Region         string            `json:"region"`
	Terraform      TerraformDefaults `json:"terraform"`
	PublishTimeout time.Duration     `json:"-"`
	PersistTimeout time.Duration     `json:"-"`
	CacheSize      int               `json:"cache_size"` // LINOONE_RESOLVER_CACHE_SIZE
}

// DefaultRegion is the region assumed when the environment has no default (prod).
const DefaultRegion = "us-east-1"

// Envs lists the environments whose defaults are known.
func Envs() []string {
	var out []string
	for e := range terraformDefaults {
		out = append(out, e)
	}
	slices.Sort(out)
	return out
}

// DefaultDeployment is env as its Terraform and configuration defaults deploy it.
func DefaultDeployment(env string) (Deployment, error) {
	tf, ok := terraformDefaults[env]
	if !ok {
		return Deployment{}, fmt.Errorf("unknown environment %q (want one of %v)", env, Envs())
	}
	d := Deployment{Env: env, Region: tf.Region, Terraform: tf, CacheSize: defaultCacheSize}
	if d.Region == "" {
		d.Region = DefaultRegion
	}
	var err error
	if d.PublishTimeout, err = time.ParseDuration(tf.PublishTimeout); err != nil {
		return Deployment{}, fmt.Errorf("%s publish_timeout: %w", env, err)
	}
	if d.PersistTimeout, err = time.ParseDuration(defaultPersistTimeout); err != nil {
		return Deployment{}, fmt.Errorf("persist timeout: %w", err)
	}
	return d, nil
}

// Profile is a traffic profile: rates per second, and the popularity of the links.
type Profile struct {
	Name          string  `json:"name"`
	AvgRedirects  float64 `json:"avg_redirects_per_s"`
	PeakRedirects float64 `json:"peak_redirects_per_s"`
	AvgIssuances  float64 `json:"avg_issuances_per_s"`
	PeakIssuances float64 `json:"peak_issuances_per_s"`
	Links         int64   `json:"links"`
	Zipf          float64 `json:"zipf"` // popularity skew s; 0 is uniform
	Basis         string  `json:"basis,omitempty"`
}

// Profiles are the three worked profiles of docs/capacity.md.
func Profiles() []Profile {
	return []Profile{
		{Name: "team tool", AvgRedirects: 10, PeakRedirects: 50, AvgIssuances: 0.05, PeakIssuances: 1,
			Links: 20_000, Zipf: 1.0,
			Basis: "10 redirects/s as given; peaks 5×, 0.05 issuances/s (≈ 130,000 links a month) and 20,000 links are assumptions"},
		{Name: "product launch", AvgRedirects: 1000, PeakRedirects: 10_000, AvgIssuances: 5, PeakIssuances: 50,
			Links: 2_000_000, Zipf: 1.0,
			Basis: "1,000 redirects/s average and 10× peaks as given; issuances (5/s, 10× peaks) and 2,000,000 links are assumptions"},
		{Name: "Bitly's published scale", AvgRedirects: 2300, PeakRedirects: 23_000, AvgIssuances: 100, PeakIssuances: 1000,
			Links: 50_000_000, Zipf: 1.0,
			Basis: "≈ 6 billion clicks a month ≈ 2,300/s, peaks 10×; issuances (100/s ≈ 260 million a month, 10× peaks) and a working set of 50,000,000 links are assumptions"},
	}
}

// Validate reports an unusable profile.
func (p Profile) Validate() error {
	for _, v := range []float64{p.AvgRedirects, p.PeakRedirects, p.AvgIssuances, p.PeakIssuances, p.Zipf} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("profile %q: rates and zipf must be finite numbers, got %v", p.Name, v)
		}
	}
	switch {
	case p.AvgRedirects < 0 || p.PeakRedirects < p.AvgRedirects:
		return fmt.Errorf("profile %q: need 0 ≤ average ≤ peak redirects", p.Name)
	case p.AvgIssuances < 0 || p.PeakIssuances < p.AvgIssuances:
		return fmt.Errorf("profile %q: need 0 ≤ average ≤ peak issuances", p.Name)
	case p.Links < 1 || p.Zipf < 0:
		return fmt.Errorf("profile %q: need links ≥ 1 and zipf ≥ 0", p.Name)
	}
	return nil
}
