package ratesearch

import (
	"math"

	"github.com/slogate/slogate/internal/vocab"
)

// PairedMetric is one metric of a rate search's objective in a paired
// check of capacity lost (docs/method.md#paired-capacity-check): the
// candidate's windows at the baseline's answer R × (1 − tolerance) paired,
// seed for seed, with the baseline's windows at R.
type PairedMetric struct {
	Metric string
	// HigherIsBetter is the metric's direction (goodput_share: true;
	// ttft_ms_p99: false).
	HigherIsBetter bool
	// Diffs are the candidate's value less the baseline's, one a window
	// pair, in the metric's units.
	Diffs []float64
}

// PairedInterval is a metric's paired difference with its bounds, in the
// direction of improvement: positive when the candidate at the lower rate
// did better on the same requests than the baseline at its answer.
type PairedInterval struct {
	Metric string
	// Mean is the mean improvement over Windows pairs; Lower and Upper its
	// one-sided bounds, each at Alpha (Student's t over the windows).
	Mean, Lower, Upper float64
	Windows            int
	Alpha              float64
	// Need is the number of window pairs at which the interval's observed
	// spread would exclude 0 on the mean's side (0 when it already does,
	// or the mean is 0).
	Need int
}

// PairedCapacity decides capacity lost from a paired check
// (docs/method.md#paired-capacity-check) of the candidate's windows at r,
// the baseline's answer baselineRate less the tolerance, with a one-sided
// level alpha split evenly (Bonferroni) over the metrics: Fail
// (regressed, PairedWorse) when some metric is worse with confidence —
// the candidate, at the baseline's answer less the tolerance, serves the
// same requests worse than the baseline did at its answer, so its
// capacity is below the baseline's by more than the tolerance; Pass
// (within tolerance, PairedAsGood) when every metric is at least as good
// with confidence; otherwise Inconclusive (PairedUndecided), with the
// windows that would decide it. Fewer than two window pairs bound
// nothing: Inconclusive.
func PairedCapacity(metrics []PairedMetric, alpha float64, r, baselineRate float64) (CapacityDecision, []PairedInterval) {
	d := CapacityDecision{Outcome: vocab.Inconclusive, Rule: PairedNoMetric, Rate: r, BaselineRate: baselineRate, Worse: -1}
	if len(metrics) == 0 {
		return d, nil
	}
	level := alpha / float64(len(metrics))
	var ivs []PairedInterval
	better, need := 0, 0
	for i, m := range metrics {
		iv := pairedInterval(m, level)
		ivs = append(ivs, iv)
		if iv.Windows >= 2 && iv.Upper < 0 && d.Worse < 0 {
			d.Worse = i
		}
		if iv.Windows >= 2 && iv.Lower >= 0 {
			better++
		}
		need = max(need, iv.Need)
	}
	switch {
	case d.Worse >= 0:
		d.Outcome, d.Rule = vocab.Fail, PairedWorse
	case better == len(metrics):
		d.Outcome, d.Rule = vocab.Pass, PairedAsGood
	default:
		d.Rule, d.NeedWindows = PairedUndecided, need
	}
	return d, ivs
}

// pairedInterval is m's mean improvement with its one-sided bounds at
// level, by Student's t over the window pairs.
func pairedInterval(m PairedMetric, level float64) PairedInterval {
	sign := 1.0
	if !m.HigherIsBetter {
		sign = -1
	}
	n := len(m.Diffs)
	iv := PairedInterval{Metric: m.Metric, Windows: n, Alpha: level}
	if n == 0 {
		return iv
	}
	for _, d := range m.Diffs {
		iv.Mean += sign * d
	}
	iv.Mean /= float64(n)
	if n < 2 {
		iv.Lower, iv.Upper = math.Inf(-1), math.Inf(1)
		return iv
	}
	ss := 0.0
	for _, d := range m.Diffs {
		ss += (sign*d - iv.Mean) * (sign*d - iv.Mean)
	}
	sd := math.Sqrt(ss / float64(n-1))
	half := tQuantile(1-level, float64(n-1)) * sd / math.Sqrt(float64(n))
	iv.Lower, iv.Upper = iv.Mean-half, iv.Mean+half
	if iv.Mean != 0 && iv.Lower < 0 && iv.Upper > 0 {
		// The fewest pairs, more than measured, at which t·sd/√n would
		// fall below |mean| at this spread (a planning figure; 0 when not
		// within 100,000). t·sd/√n falls as n grows: by bisection.
		below := func(k int) bool {
			return tQuantile(1-level, float64(k-1))*sd/math.Sqrt(float64(k)) < math.Abs(iv.Mean)
		}
		if lo, hi := n, 100000; below(hi) {
			for hi-lo > 1 { // !below(lo) (undecided at n), below(hi)
				if mid := (lo + hi) / 2; below(mid) {
					hi = mid
				} else {
					lo = mid
				}
			}
			iv.Need = hi
		}
	}
	return iv
}
