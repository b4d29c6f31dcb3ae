package capacity

import (
	"fmt"
	"math"
)

// secondsPerMonth: a month is 30 days throughout the model.
const secondsPerMonth = 30 * 86400

// SimOptions bound the hot-set simulation.
type SimOptions struct {
	Requests int    // simulated requests per policy, e.g. 600,000
	Seed     uint64 // fixed, so that output is reproducible
}

// DefaultSim is what the CLI and docs/capacity.md use.
var DefaultSim = SimOptions{Requests: 600_000, Seed: 14}

// Report is the model's answer for one profile on one deployment.
type Report struct {
	Profile    Profile     `json:"profile"`
	Deployment Deployment  `json:"deployment"`
	HotSet     HotSet      `json:"hot_set"`
	Functions  []Function  `json:"functions"`
	Components []Component `json:"components"`
	Latency    Latency     `json:"redirect_latency"`
	Cost       Cost        `json:"cost"`
	Raise      []Action    `json:"raise_before_launch"`
	Alarms     []Alarm     `json:"alarms"`
	Unknown    []string    `json:"unknown_figures"`
}

// Component is one AWS resource or quota on a path, at the profile's peak.
type Component struct {
	Name      string `json:"name"`
	Load      Num    `json:"load"`
	Limit     Num    `json:"limit"`
	Unit      string `json:"unit"`
	Headroom  Num    `json:"headroom"` // 1 − load/limit
	P50ms     *Num   `json:"p50_ms"`   // contribution to a redirect, nil when none
	P99ms     *Num   `json:"p99_ms"`
	MonthlyUS *Num   `json:"monthly_usd"`       // nil when the component bills nothing itself
	Setting   string `json:"setting,omitempty"` // the Terraform variable or quota that sets Limit
	Note      string `json:"note,omitempty"`
}

// Evaluate runs the model.
func Evaluate(p Profile, d Deployment, fs Figures, sim SimOptions) (Report, error) {
	if err := p.Validate(); err != nil {
		return Report{}, err
	}
	if d.Terraform.FunctionMemoryMB <= 0 || d.CacheSize < 0 {
		return Report{}, fmt.Errorf("deployment %s: need positive function memory and cache size ≥ 0", d.Env)
	}
	r := Report{Profile: p, Deployment: d}
	var err error
	if r.HotSet, err = hotSet(p, d, sim); err != nil {
		return Report{}, err
	}
	share := cpuShare(d, fs)
	r.Functions = []Function{resolveFunction(p, d, fs, share, r.HotSet.MissRate), issueFunction(p, d, fs, share)}
	r.Latency = redirectLatency(fs, share, r.HotSet.MissRate)
	r.Cost = costs(p, d, fs, r.Functions)
	r.Components = components(p, d, fs, r)
	r.Raise = raises(p, d, r)
	r.Alarms = alarms(p, d, fs, r)
	r.Unknown = fs.Unknown()
	return r, nil
}

// cpuShare is the vCPU a function gets at its memory size, capped at one (a redirect
// runs on one goroutine at a time).
func cpuShare(d Deployment, fs Figures) float64 {
	perVCPU := fs.get("lambda_mb_per_vcpu")
	if !perVCPU.Known() || perVCPU.V <= 0 {
		return 1
	}
	return min(d.Terraform.FunctionMemoryMB/perVCPU.V, 1)
}

// HotSet is the resolver's in-memory cache of short URLs, simulated.
type HotSet struct {
	CacheSize          int       `json:"cache_size"`
	Links              int64     `json:"links"`
	Zipf               float64   `json:"zipf"`
	LRU                SimResult `json:"lru"`
	RandomEviction     SimResult `json:"random_eviction"`
	HitRate            float64   `json:"hit_rate"` // the deployed policy's: random eviction
	MissRate           float64   `json:"miss_rate"`
	PersistLookupsAvg  float64   `json:"persist_lookups_per_s_avg"`
	PersistLookupsPeak float64   `json:"persist_lookups_per_s_peak"`
}

// hotSet simulates each instance's cache. With random assignment every warm instance
// sees the same popularity, so the steady state per instance does not depend on how
// many there are; the simulation uses as many instances (≤ 8) as still leaves each
// four times its cache size in requests, so that the caches fill before counting.
func hotSet(p Profile, d Deployment, sim SimOptions) (HotSet, error) {
	h := HotSet{CacheSize: d.CacheSize, Links: p.Links, Zipf: p.Zipf}
	if d.CacheSize > 0 {
		cached := int(min(int64(d.CacheSize), p.Links))
		cfg := SimConfig{Links: p.Links, S: p.Zipf, CacheSize: d.CacheSize, Requests: sim.Requests, Seed: sim.Seed,
			Instances: max(1, min(8, sim.Requests/(4*cached)))}
		var err error
		cfg.Policy = LRU
		if h.LRU, err = Simulate(cfg); err != nil {
			return HotSet{}, err
		}
		cfg.Policy = Random
		if h.RandomEviction, err = Simulate(cfg); err != nil {
			return HotSet{}, err
		}
		h.HitRate = h.RandomEviction.HitRate
	}
	h.MissRate = 1 - h.HitRate
	h.PersistLookupsAvg = p.AvgRedirects * h.MissRate
	h.PersistLookupsPeak = p.PeakRedirects * h.MissRate
	return h, nil
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 0
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v*(1-1e-12) {
			return m * p
		}
	}
	return 10 * p
}
