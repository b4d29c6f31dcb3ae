package capacity

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
)

// Num is a quantity the model computed. V is the sum of its known parts; Unknown names
// the figures it also depends on that have no value. Every quantity in the model is
// non-negative, so with unknown parts V is a lower bound.
type Num struct {
	V       float64
	Unknown []string
}

// Known reports whether n depends on no unknown figure.
func (n Num) Known() bool { return len(n.Unknown) == 0 }

func num(v float64) Num { return Num{V: v} }

func union(a, b []string) []string {
	out := slices.Concat(a, b)
	slices.Sort(out)
	return slices.Compact(out)
}

// add sums quantities.
func add(ns ...Num) Num {
	var out Num
	for _, n := range ns {
		out.V += n.V
		out.Unknown = union(out.Unknown, n.Unknown)
	}
	return out
}

// mul multiplies two quantities (a lower bound times a lower bound is a lower bound).
func mul(a, b Num) Num { return Num{V: a.V * b.V, Unknown: union(a.Unknown, b.Unknown)} }

// scale multiplies by a known factor.
// Zero times anything, unknown included, is exactly zero.
func (n Num) scale(k float64) Num {
	if k == 0 {
		return Num{}
	}
	return Num{V: n.V * k, Unknown: n.Unknown}
}

// headroom is 1 − load/limit: the fraction of limit left at load (negative: over the
// limit). An unknown limit makes it unknown; an unknown load makes it an upper bound,
// which Unknown also flags.
func headroom(load, limit Num) Num {
	if !limit.Known() { // NaN: no bound at all
		return Num{V: math.NaN(), Unknown: union(load.Unknown, limit.Unknown)}
	}
	if math.IsInf(limit.V, 1) {
		return Num{V: 1, Unknown: load.Unknown}
	}
	if limit.V == 0 {
		return Num{V: math.Inf(-1), Unknown: load.Unknown}
	}
	return Num{V: 1 - load.V/limit.V, Unknown: load.Unknown}
}

// format prints n with f, as "≥ …" when parts are unknown and "unknown" when no part is.
func (n Num) format(f func(float64) string) string {
	switch {
	case n.Known():
		return f(n.V)
	case n.V == 0:
		return "unknown"
	default:
		return "≥ " + f(n.V) + " + unknown"
	}
}

// formatUpper is format for a quantity where unknown parts make V an upper bound
// (headroom with an unknown load).
func (n Num) formatUpper(f func(float64) string) string {
	switch {
	case math.IsNaN(n.V):
		return "unknown"
	case n.Known():
		return f(n.V)
	default:
		return "≤ " + f(n.V)
	}
}

// MarshalJSON writes a known quantity as a number, and otherwise as
// {"bound": V, "unknown": [figure names]} — V is a lower bound, or an upper bound for
// headroom — with no bound when nothing is known; +∞ is "unlimited".
func (n Num) MarshalJSON() ([]byte, error) {
	if math.IsInf(n.V, 1) {
		return []byte(`"unlimited"`), nil
	}
	if math.IsInf(n.V, -1) {
		return []byte(`"over"`), nil
	}
	if n.Known() {
		return []byte(strconv.FormatFloat(round(n.V), 'g', -1, 64)), nil
	}
	var bound *float64
	if !math.IsNaN(n.V) {
		v := round(n.V)
		bound = &v
	}
	return json.Marshal(struct {
		Bound   *float64 `json:"bound,omitempty"`
		Unknown []string `json:"unknown"`
	}{bound, n.Unknown})
}

// round keeps six significant digits so that output is stable across platforms.
func round(v float64) float64 {
	if v == 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return v
	}
	f, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 6, 64), 64)
	return f
}
