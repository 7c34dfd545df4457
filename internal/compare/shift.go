package compare

import (
	"math"
	"slices"
)

// Shift is the Hodges–Lehmann estimate of how much B moved from A, and its
// distribution-free confidence bounds (Hodges & Lehmann 1963; Lehmann,
// Nonparametrics, 1975, §2.6): on log values, so that a shift is a ratio
// B ÷ A and the bounds are bounds of the ratio. With the n·m pairwise
// differences log b − log a sorted, d(1) ≤ … ≤ d(nm), the estimate is their
// median and d(k) and d(nm+1−k) are one-sided (1 − Level) bounds of the true
// shift, where k is read from the exact null distribution of the
// Mann–Whitney U statistic (exact.go): P(U ≤ k−1) = Level ≤ α. Exact for any
// continuous distribution when B is A shifted on the log scale.
type Shift struct {
	// Ratio is the estimated B ÷ A: exp(median of the log differences).
	Ratio float64
	// Lower and Upper are the one-sided bounds of B ÷ A, each at confidence
	// 1 − Level; together a (1 − 2·Level) interval.
	Lower, Upper float64
	// Level is the one-sided error level attained (≤ Alpha): 0.0286 with
	// 4 + 4 samples at α = 0.05, 0.0476 with 5 + 5.
	Level float64
	// Alpha is the level asked for.
	Alpha float64
	// NA and NB are the sample sizes.
	NA, NB int
	// Noise is the pooled standard deviation of the log samples (≈ the
	// coefficient of variation of a repeat); NaN with fewer than 3 samples.
	Noise float64
}

// Change is Ratio − 1: the estimated relative change of B from A.
func (s Shift) Change() float64 { return s.Ratio - 1 }

// Confidence is the one-sided confidence of each bound, 1 − Level.
func (s Shift) Confidence() float64 { return 1 - s.Level }

// shiftOf computes the shift of b from a at one-sided level alpha. ok is false
// when the sizes cannot attain alpha (attainable) or a sample is not a
// positive finite number (a log is needed); the tolerance rule then decides.
func shiftOf(a, b []float64, alpha float64) (Shift, bool) {
	k, level, ok := attainable(len(a), len(b), alpha)
	if !ok || !positive(a) || !positive(b) {
		return Shift{}, false
	}
	la, lb := logs(a), logs(b)
	d := make([]float64, 0, len(a)*len(b))
	for _, x := range la {
		for _, y := range lb {
			d = append(d, y-x)
		}
	}
	slices.Sort(d)
	n := len(d)
	med := d[n/2]
	if n%2 == 0 {
		med = (d[n/2-1] + d[n/2]) / 2
	}
	return Shift{
		Ratio: math.Exp(med), Lower: math.Exp(d[k-1]), Upper: math.Exp(d[n-k]),
		Level: level, Alpha: alpha, NA: len(a), NB: len(b),
		Noise: pooledSD(la, lb),
	}, true
}

// positive reports whether every x is a positive finite number.
func positive(xs []float64) bool {
	for _, x := range xs {
		if !(x > 0) || math.IsInf(x, 1) {
			return false
		}
	}
	return true
}

func logs(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = math.Log(x)
	}
	return out
}

// pooledSD is the pooled standard deviation of two samples around their own
// means; NaN without a degree of freedom.
func pooledSD(a, b []float64) float64 {
	ss, df := 0.0, 0
	for _, xs := range [][]float64{a, b} {
		if len(xs) < 2 {
			continue
		}
		mean := 0.0
		for _, x := range xs {
			mean += x
		}
		mean /= float64(len(xs))
		for _, x := range xs {
			ss += (x - mean) * (x - mean)
		}
		df += len(xs) - 1
	}
	if df == 0 {
		return math.NaN()
	}
	return math.Sqrt(ss / float64(df))
}

// LogNoise is the standard deviation of the log values of samples: the
// coefficient of variation of a repeat for small spreads, the "noise" that
// slogate noise reports and the repeat estimates take. NaN with fewer than
// 2 samples or a sample that is not positive.
func LogNoise(samples []float64) float64 {
	if len(samples) < 2 || !positive(samples) {
		return math.NaN()
	}
	return pooledSD(logs(samples), nil)
}

// boundary is the ratio B ÷ A at the edge of the tolerance on the worse side
// (1 − tol for a throughput, 1 + tol for a latency) and on the better side.
func boundary(tolerance float64, higherIsBetter bool) (worse, better float64) {
	if higherIsBetter {
		return 1 - tolerance, 1 + tolerance
	}
	return 1 + tolerance, 1 - tolerance
}

// Decide judges the shift against a relative tolerance
// (docs/method.md#comparing-runs): Regressed when even the better-side bound
// is beyond the tolerance on the worse side; Unchanged (within tolerance, a
// non-inferiority decision) when the worse-side bound is inside it, the edge
// counting as inside as in the tolerance rule (a change of exactly −5 % is
// within 5 %), and Improved when that bound is beyond the tolerance on the
// better side; Inconclusive otherwise: the interval straddles the edge.
func (s Shift) Decide(tolerance float64, higherIsBetter bool) Change {
	worse, better := boundary(tolerance, higherIsBetter)
	// lo and hi are the bounds on the worse and the better side.
	lo, hi := s.Lower, s.Upper
	beyond := func(x, edge float64) bool { return x < edge } // x is on the worse side of edge
	if !higherIsBetter {
		lo, hi = s.Upper, s.Lower
		beyond = func(x, edge float64) bool { return x > edge }
	}
	switch {
	case beyond(hi, worse):
		return Regressed
	case beyond(lo, worse):
		return Inconclusive
	case beyond(better, lo):
		return Improved
	}
	return Unchanged
}
