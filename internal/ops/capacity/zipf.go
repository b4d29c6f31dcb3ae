package capacity

import (
	"errors"
	"math"
	"math/rand/v2"
)

// Zipf draws ranks 1…n with P(k) ∝ k^-s by rejection-inversion (W. Hörmann and
// G. Derflinger, "Rejection-inversion to generate variates from monotone discrete
// distributions", ACM TOMACS 6(3), 1996), the method of math/rand's Zipf and of
// Apache Commons RNG. Unlike math/rand.NewZipf it accepts any s > 0, s = 1 included,
// and it allocates nothing per rank, so n can be 50,000,000 or more.
type Zipf struct {
	rng       *rand.Rand
	s         float64
	n         float64
	hX1       float64 // hIntegral(1.5) − 1
	hN        float64 // hIntegral(n + 0.5)
	threshold float64 // the squeeze: accept at once when k − x ≤ threshold
}

// ErrZipf reports unusable Zipf parameters.
var ErrZipf = errors.New("zipf needs s > 0 and n ≥ 1")

// NewZipf returns a sampler of ranks 1…n with exponent s drawing from rng.
func NewZipf(rng *rand.Rand, s float64, n int64) (*Zipf, error) {
	if !(s > 0) || n < 1 || math.IsInf(s, 0) {
		return nil, ErrZipf
	}
	z := &Zipf{rng: rng, s: s, n: float64(n)}
	z.hX1 = z.hIntegral(1.5) - 1
	z.hN = z.hIntegral(z.n + 0.5)
	z.threshold = 2 - z.hIntegralInverse(z.hIntegral(2.5)-z.h(2))
	return z, nil
}

// Rank draws one rank in 1…n.
func (z *Zipf) Rank() int64 {
	for {
		u := z.hN + z.rng.Float64()*(z.hX1-z.hN)
		x := z.hIntegralInverse(u)
		k := math.Floor(x + 0.5)
		k = min(max(k, 1), z.n)
		if k-x <= z.threshold || u >= z.hIntegral(k+0.5)-z.h(k) {
			return int64(k)
		}
	}
}

// h is the unnormalised density x^-s.
func (z *Zipf) h(x float64) float64 { return math.Exp(-z.s * math.Log(x)) }

// hIntegral is ∫ h = (x^(1−s) − 1)/(1 − s), which is log x at s = 1.
func (z *Zipf) hIntegral(x float64) float64 {
	logX := math.Log(x)
	return expm1Over((1-z.s)*logX) * logX
}

// hIntegralInverse inverts hIntegral.
func (z *Zipf) hIntegralInverse(x float64) float64 {
	t := max(x*(1-z.s), -1) // t < −1 only by rounding
	return math.Exp(log1pOver(t) * x)
}

// log1pOver is log(1+x)/x, continuous at 0.
func log1pOver(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Log1p(x) / x
	}
	return 1 - x*(0.5-x*(1.0/3-0.25*x))
}

// expm1Over is (e^x − 1)/x, continuous at 0.
func expm1Over(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Expm1(x) / x
	}
	return 1 + x*0.5*(1+x/3*(1+0.25*x))
}
