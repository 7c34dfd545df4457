package ratesearch

import (
	"fmt"
	"math"
	"strings"

	"github.com/slogate/slogate/internal/numfmt"
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
// (docs/method.md#paired-capacity-check) with a one-sided level alpha split
// evenly (Bonferroni) over the metrics: Fail (regressed) when some metric
// is worse with confidence — the candidate, at the baseline's answer less
// the tolerance, serves the same requests worse than the baseline did at
// its answer, so its capacity is below the baseline's by more than the
// tolerance; Pass (within tolerance) when every metric is at least as
// good with confidence; otherwise Inconclusive. Fewer than two window
// pairs bound nothing: Inconclusive. The sentence says which and why, and
// for Inconclusive how many windows would decide it.
func PairedCapacity(metrics []PairedMetric, alpha float64, r, baselineRate, tolerance float64) (vocab.Outcome, []PairedInterval, string) {
	if len(metrics) == 0 {
		return vocab.Inconclusive, nil, "the paired check read no metric"
	}
	level := alpha / float64(len(metrics))
	var ivs []PairedInterval
	worse, better := -1, 0
	for i, m := range metrics {
		iv := pairedInterval(m, level)
		ivs = append(ivs, iv)
		if iv.Windows >= 2 && iv.Upper < 0 && worse < 0 {
			worse = i
		}
		if iv.Windows >= 2 && iv.Lower >= 0 {
			better++
		}
	}
	at := fmt.Sprintf("at %s req/s (the baseline's %s req/s less %s), on the baseline's %s,", rate(r), rate(baselineRate), pct(tolerance), windowsText(ivs[0].Windows))
	switch {
	case worse >= 0:
		return vocab.Fail, ivs, fmt.Sprintf("capacity lost: %s the candidate's %s is worse than the baseline's at its answer: %s", at, metrics[worse].Metric, describe(ivs[worse], metrics[worse]))
	case better == len(metrics):
		return vocab.Pass, ivs, fmt.Sprintf("within tolerance: %s the candidate does at least as well as the baseline at its answer: %s", at, describeAll(ivs, metrics))
	}
	need := 0
	for _, iv := range ivs {
		need = max(need, iv.Need)
	}
	why := fmt.Sprintf("%s neither worse nor at least as good with confidence: %s", at, describeAll(ivs, metrics))
	if ivs[0].Windows < 2 {
		return vocab.Inconclusive, ivs, why + ": two windows a side at least would bound it (check_windows)"
	}
	if need > 0 {
		return vocab.Inconclusive, ivs, fmt.Sprintf("%s: about %d windows a side (check_windows) would decide it at this spread", why, need)
	}
	return vocab.Inconclusive, ivs, why + ": more windows a side (check_windows) would decide it"
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

func describe(iv PairedInterval, m PairedMetric) string {
	word := "better by"
	if iv.Mean < 0 {
		word = "worse by"
	}
	return fmt.Sprintf("%s %s %s (%s to %s at one-sided %s)", m.Metric, word, numfmt.Value(math.Abs(iv.Mean)),
		signed(iv.Lower), signed(iv.Upper), pct(iv.Alpha))
}

func describeAll(ivs []PairedInterval, ms []PairedMetric) string {
	var parts []string
	for i := range ivs {
		parts = append(parts, describe(ivs[i], ms[i]))
	}
	return strings.Join(parts, "; ")
}

func signed(v float64) string {
	if math.IsInf(v, 0) {
		return "unbounded"
	}
	if v >= 0 {
		return "+" + numfmt.Value(v)
	}
	return "−" + numfmt.Value(-v)
}

// windowsText is n windows in words: "1 window", "24 windows".
func windowsText(n int) string {
	if n == 1 {
		return "1 window"
	}
	return fmt.Sprintf("%d windows", n)
}
