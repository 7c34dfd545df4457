package compare

import (
	"sync"

	"golang.org/x/perf/benchmath"
)

// DefaultAlpha is the significance level of the Mann–Whitney U test when
// Options.Alpha is 0: a change is significant when p ≤ α.
const DefaultAlpha = 0.05

// minSamples is the fewest samples per side a test is run with, whatever α:
// below it the runs' [min, max] spreads decide (docs/method.md#comparing-runs).
const minSamples = 3

// Test is the outcome of the Mann–Whitney U test of one compared cell, as
// benchstat runs it (golang.org/x/perf/benchmath, AssumeNothing).
type Test struct {
	// P is the p-value of "A and B come from the same distribution".
	P float64
	// Alpha is the significance level: the change is significant when P ≤ Alpha.
	Alpha float64
	// NA and NB are the numbers of samples of each side.
	NA, NB int
}

// Significant reports whether the test tells the runs apart.
func (t Test) Significant() bool { return t.P <= t.Alpha }

// uTest runs the Mann–Whitney U test on the samples of both sides, when both
// have enough of them for the test to be able to reach alpha; ok is false
// otherwise and the caller falls back to the tolerance rule.
func uTest(a, b []float64, alpha float64) (t Test, ok bool) {
	if len(a) < minSamples || len(b) < minSamples || minP(len(a), len(b)) > alpha {
		return Test{}, false
	}
	th := benchmath.DefaultThresholds
	th.CompareAlpha = alpha
	c := benchmath.AssumeNothing.Compare(benchmath.NewSample(a, &th), benchmath.NewSample(b, &th))
	return Test{P: c.P, Alpha: alpha, NA: len(a), NB: len(b)}, true
}

var minPCache sync.Map // [2]int → float64

// minP is the smallest p-value the U test can give with na and nb samples:
// that of two samples entirely apart. Below it the test can never tell two
// runs apart (three samples a side give p ≥ 0.1), so a gate using it at a
// smaller α could never fail.
func minP(na, nb int) float64 {
	key := [2]int{na, nb}
	if p, ok := minPCache.Load(key); ok {
		return p.(float64)
	}
	a := make([]float64, na)
	b := make([]float64, nb)
	for i := range a {
		a[i] = float64(i)
	}
	for i := range b {
		b[i] = float64(na + i)
	}
	th := benchmath.DefaultThresholds
	p := benchmath.AssumeNothing.Compare(benchmath.NewSample(a, &th), benchmath.NewSample(b, &th)).P
	minPCache.Store(key, p)
	return p
}

// repeatsNeeded is the smallest measure.repeat, the same on both runs, with
// which the U test can find a change significant at alpha (4 at α = 0.05,
// 5 at 0.01); 0 beyond 50 repeats.
func repeatsNeeded(alpha float64) int {
	for n := minSamples; n <= 50; n++ {
		if minP(n, n) <= alpha {
			return n
		}
	}
	return 0
}
