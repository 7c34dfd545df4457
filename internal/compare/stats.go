package compare

import "math"

// DefaultAlpha is the one-sided error level of each bound of a comparison
// when Policy.Alpha is 0: a regression is called, or a cell shown within
// the tolerance, with at most this chance of being wrong (at the level the
// sizes attain, at or below it).
const DefaultAlpha = 0.05

// Test is the statistical comparison that decided a cell: the
// Hodges–Lehmann shift of B from A with its distribution-free bounds
// (Shift, docs/method.md#comparing-runs) and, for an inconclusive cell, the
// repeats that would decide it.
type Test struct {
	Shift
	// Needed is, for an inconclusive cell, the repeats a side with which
	// the measured noise would decide it with power 0.9, were the change
	// what is estimated; 0 when more than MaxRepeatsEstimate.
	Needed int
}

// testCell compares the samples of both sides at alpha and judges the
// shift against the tolerance; ok is false when the sizes cannot attain
// alpha (one sample a side, 2 + 2, 3 + 3 below 0.05) or a sample is not
// positive, and the tolerance rule decides instead.
func testCell(a, b []float64, higherIsBetter bool, tolerance, alpha float64) (t Test, c Change, ok bool) {
	sh, ok := shiftOf(a, b, alpha)
	if !ok {
		return Test{}, 0, false
	}
	t.Shift = sh
	c = sh.Decide(tolerance, higherIsBetter)
	if c == Inconclusive && !math.IsNaN(sh.Noise) {
		worse, _ := boundary(tolerance, higherIsBetter)
		t.Needed = repeatsToDecide(sh.Noise, math.Abs(math.Log(sh.Ratio)-math.Log(worse)), alpha)
	}
	return t, c, true
}
