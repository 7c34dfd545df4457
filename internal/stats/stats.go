// Package stats holds the small statistics every decision shares, once:
// the standard normal's quantile and distribution function, the
// percentile of a sample as slogate reports it, and the Wilson interval
// of a proportion. Each has one answer for
// every input, an empty sample included (NaN: no value), so that no two
// packages can read the same data two ways.
package stats

import (
	"math"
	"slices"
)

// NormalQuantile is Φ⁻¹(p), the standard normal's p-quantile, for p in
// (0, 1); ±Inf at 0 and 1, NaN outside: the standard library's
// math.Erfinv, which the three copies this replaced used, so that no
// decision's figures move.
func NormalQuantile(p float64) float64 { return math.Sqrt2 * math.Erfinv(2*p-1) }

// NormalCDF is Φ(x), the standard normal's distribution function.
func NormalCDF(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }

// Number is a sample's element type: float32 keeps a stream's many gaps
// in half the memory.
type Number interface{ ~float32 | ~float64 }

// PercentileSorted is the q-quantile (q in [0, 1]) of sorted, by linear
// interpolation between the closest ranks: numpy's default
// (np.percentile's "linear"), which vLLM's and SGLang's benchmark scripts
// report, so a p99 here reads as theirs. gonum's stat.Quantile offers no
// such rule (its LinInterp interpolates the empirical distribution
// function, R's type 4), hence this. NaN for an empty sample; +Inf when
// the interpolation reaches an infinite sample.
func PercentileSorted[T Number](sorted []T, q float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	pos := q * float64(n-1)
	i := int(math.Floor(pos))
	if i >= n-1 {
		return float64(sorted[n-1])
	}
	if i < 0 {
		return float64(sorted[0])
	}
	lo, hi := float64(sorted[i]), float64(sorted[i+1])
	switch frac := pos - float64(i); {
	case frac == 0:
		return lo // at a rank: its value, even beside an infinite one
	case math.IsInf(hi, 1):
		return hi // past a rank towards an infinite one (a request never answered)
	default:
		return lo + (hi-lo)*frac
	}
}

// Percentile is PercentileSorted of a sorted copy of xs; xs is left as
// it is. NaN for an empty sample.
func Percentile(xs []float64, q float64) float64 {
	if slices.IsSorted(xs) {
		return PercentileSorted(xs, q)
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return PercentileSorted(s, q)
}

// Median is Percentile(xs, 0.5): the mean of the two middle values of an
// even sample. NaN for an empty sample.
func Median(xs []float64) float64 { return Percentile(xs, 0.5) }

// Wilson is the Wilson score interval (Wilson 1927) of a proportion of k successes in n
// trials, each bound at one-sided level alpha (a 1 − 2·alpha interval);
// [0, 1] when n is 0.
func Wilson(k, n int, alpha float64) (lo, hi float64) {
	if n == 0 {
		return 0, 1
	}
	z := NormalQuantile(1 - alpha)
	nf, p := float64(n), float64(k)/float64(n)
	centre := (p + z*z/(2*nf)) / (1 + z*z/nf)
	half := z / (1 + z*z/nf) * math.Sqrt(p*(1-p)/nf+z*z/(4*nf*nf))
	return max(0, centre-half), min(1, centre+half)
}
