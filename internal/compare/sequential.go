package compare

import (
	"fmt"
	"math"
	"sync"

	"github.com/slogate/slogate/internal/numfmt"
	"github.com/slogate/slogate/internal/stats"
)

// Sequential is measure { repeat = "auto" }'s stopping rule: a two-stage
// group-sequential design (docs/method.md#sequential-repeats). Stage one is Min
// repeats; against a baseline the comparison is looked at once there, and
// stops when it is decided. Otherwise stage two repeats up to a size
// computed from the noise of the baseline and of the candidate's first Min
// repeats, re-estimated from the noise of the repeats at that size while
// the estimate grows (an internal pilot: Wittes & Brittain 1990; never from
// the change they show, which would bias the decision), capped at Max, and
// the comparison is decided there for good: the re-estimates are no looks. Both looks are at Pocock's adjusted level for two looks
// (Pocock 1977), the same at each: the level α′ at which two correlated
// one-sided looks err at most α together, computed for the correlation of
// a second look at Max (the lowest, hence the safest). A comparison of the
// repeats the design took is decided at the same level (Level), so the
// gate's decision is the one the design made.
//
// Looking after every repeat at an unadjusted α instead would err at the
// tolerance's edge about 13 % of the time in each direction.
type Sequential struct {
	// Min is the repeats of stage one; 0 means DefaultMinRepeat.
	Min int
	// Max is the most repeats of a cell (max_repeat); 0 means
	// DefaultMaxRepeat.
	Max int
	// Alpha is the error allowed to each wrong call over both looks; 0
	// means DefaultAlpha.
	Alpha float64
	// Tolerance is the relative change the gate allows; 0 means
	// DefaultTolerance.
	Tolerance float64
}

// Defaults of measure { repeat = "auto" }.
const (
	DefaultMinRepeat = 4
	DefaultMaxRepeat = 20
)

func (s Sequential) withDefaults() Sequential {
	if s.Min == 0 {
		s.Min = DefaultMinRepeat
	}
	if s.Max == 0 {
		s.Max = DefaultMaxRepeat
	}
	if s.Max < s.Min {
		s.Max = s.Min
	}
	if s.Alpha == 0 {
		s.Alpha = DefaultAlpha
	}
	if s.Tolerance == 0 {
		s.Tolerance = DefaultTolerance
	}
	return s
}

var levelCache sync.Map // Sequential + baseline size → float64

// Level is the one-sided level of each look (and of the comparison that
// decides a cell measured with the design) against a baseline of n
// repeats; n = 0 (no baseline yet) takes an unbounded one. 0.0304 for the
// classical equally spaced two looks at α = 0.05 (Pocock's bound 1.875);
// with Min 4 and Max 20, 0.0318 against a baseline of 4, 0.0311 of 5,
// 0.0285 of 20 and 0.0272 without one. The first look can attain it with
// 4 + 4 repeats (0.0286).
func (s Sequential) Level(n int) float64 {
	s = s.withDefaults()
	type key struct {
		s Sequential
		n int
	}
	k := key{s, n}
	if v, ok := levelCache.Load(k); ok {
		return v.(float64)
	}
	// The correlation of the two looks' statistics is √(I₁ ÷ I₂), I being
	// the information 1 ÷ (1/n + 1/m) of n baseline and m candidate repeats.
	inv := 0.0
	if n > 0 {
		inv = 1 / float64(n)
	}
	rho := math.Sqrt((inv + 1/float64(s.Max)) / (inv + 1/float64(s.Min)))
	l := 1 - stats.NormalCDF(pocockBound(rho, s.Alpha))
	levelCache.Store(k, l)
	return l
}

// pocockBound is the c with P(Z₁ > c or Z₂ > c) = alpha for standard normal
// Z₁, Z₂ of correlation rho: the one bound of a two-look Pocock design.
func pocockBound(rho, alpha float64) float64 {
	lo, hi := stats.NormalQuantile(1-alpha), stats.NormalQuantile(1-alpha/2) // rho = 1, rho = 0 (nearly)
	for range 60 {
		c := (lo + hi) / 2
		if 1-bothBelow(c, rho) > alpha {
			lo = c
		} else {
			hi = c
		}
	}
	return (lo + hi) / 2
}

// bothBelow is P(Z₁ ≤ c, Z₂ ≤ c) for standard normals of correlation rho <
// 1: ∫ φ(x) Φ((c − ρx) ÷ √(1−ρ²)) dx over x ≤ c, by Simpson's rule.
func bothBelow(c, rho float64) float64 {
	const steps = 2000
	lo := -9.0
	h := (c - lo) / steps
	s := math.Sqrt(1 - rho*rho)
	f := func(x float64) float64 {
		return math.Exp(-x*x/2) / math.Sqrt(2*math.Pi) * stats.NormalCDF((c-rho*x)/s)
	}
	sum := f(lo) + f(c)
	for i := 1; i < steps; i++ {
		w := 2.0
		if i%2 == 1 {
			w = 4
		}
		sum += w * f(lo+float64(i)*h)
	}
	return sum * h / 3
}

// Look reports, after a repeat, whether a gated metric of a cell is
// decided. With a baseline (baseline != nil), whether its comparison
// reached regressed or within tolerance at the design's level: looked at
// after Min repeats, then only once the second stage's size is reached.
// Without one, whether the cell's own estimate is precise enough to decide
// a change of the tolerance (RepeatsFor at its noise so far). It always
// stops at Max. Reason says why, for the cell's note.
func (s Sequential) Look(baseline, candidate []float64, higherIsBetter bool) (stop bool, reason string) {
	s = s.withDefaults()
	n := len(candidate)
	if n < s.Min {
		return false, fmt.Sprintf("%d of at least %d repeats", n, s.Min)
	}
	if baseline == nil {
		return s.lookAlone(candidate)
	}
	level := s.Level(len(baseline))
	if _, _, ok := attainable(len(baseline), s.Max, level); !ok {
		return true, fmt.Sprintf("no decision is possible against a baseline of %d repeats (at most %d here); stopped at %d", len(baseline), s.Max, n)
	}
	if n == s.Min {
		if c, ok := s.decided(baseline, candidate, higherIsBetter, level); ok {
			return true, fmt.Sprintf("%s at the first look (%d repeats)", c, n)
		}
	}
	var noise float64
	target, sized := s.stageSize(n, func(k int) int {
		var m int
		m, noise = s.secondStage(baseline, candidate[:k], higherIsBetter, level)
		return m
	})
	if n < target {
		return false, fmt.Sprintf("repeating to %d: the second stage, sized from the noise of the first %d (%s)", target, sized, noiseText(noise))
	}
	if c, ok := s.decided(baseline, candidate, higherIsBetter, level); ok {
		return true, fmt.Sprintf("%s at the second look (%d repeats)", c, n)
	}
	return true, fmt.Sprintf("inconclusive at the second look (%d repeats, the design's last)", n)
}

// decided is the comparison of candidate with baseline at level: its
// change, and whether it is regressed, unchanged or improved.
func (s Sequential) decided(baseline, candidate []float64, higherIsBetter bool, level float64) (Change, bool) {
	sh, ok := shiftOf(baseline, candidate, level)
	if !ok {
		return Inconclusive, false
	}
	c := sh.Decide(s.Tolerance, higherIsBetter)
	return c, c != Inconclusive
}

// stageSize is the size stage two repeats to, after n repeats: need(Min),
// the size the noise of the first Min repeats asks for, re-estimated as
// need(size) once the repeats reach it, while it grows; never above Max.
// sized is the repeats whose noise set it.
func (s Sequential) stageSize(n int, need func(k int) int) (target, sized int) {
	target, sized = min(need(s.Min), s.Max), s.Min
	for target > s.Min && target < s.Max && n >= target {
		next := min(need(target), s.Max)
		if next <= target {
			break
		}
		target, sized = next, target
	}
	return target, sized
}

// secondStage is the candidate repeats of stage two: the fewest above Min
// with which, at the noise pooled from the baseline and the first Min
// candidate repeats, an unchanged server would be decided within the
// tolerance and one twice the tolerance slower regressed, with power 0.9
// (decisionDistance); Max when none up to it would be.
func (s Sequential) secondStage(baseline, first []float64, higherIsBetter bool, level float64) (target int, noise float64) {
	noise = 0
	if positive(baseline) && positive(first) {
		noise = pooledSD(logs(baseline), logs(first))
	}
	d := decisionDistance(s.Tolerance)
	for m := s.Min + 1; m < s.Max; m++ {
		if powerToDecide(len(baseline), m, noise, d, level) >= DecisionPower {
			return m, noise
		}
	}
	return s.Max, noise
}

// lookAlone is Look without a baseline, two stages too (Stein 1945): the
// first Min repeats' noise sizes the cell, to as many repeats as RepeatsFor
// says the tolerance needs at the level a comparison against them will be
// decided at, re-estimated at that size while the estimate grows
// (stageSize), capped at Max. Sizing at stage ends only, not after every
// repeat, keeps the baseline free of the selection that stopping when the
// noise so far happens to look small would make (a baseline too tight:
// 5.6% instead of 5% wrong calls at the tolerance's edge in the
// simulation).
func (s Sequential) lookAlone(samples []float64) (bool, string) {
	n := len(samples)
	if math.IsNaN(LogNoise(samples[:s.Min])) {
		return true, fmt.Sprintf("no noise can be measured from these values; stopped at %d", n)
	}
	var noise float64
	target, sized := s.stageSize(n, func(k int) int {
		noise = LogNoise(samples[:k])
		for m := s.Min; m <= s.Max; m++ {
			if powerToDecide(m, m, noise, decisionDistance(s.Tolerance), s.Level(m)) >= DecisionPower {
				return m
			}
		}
		return s.Max + 1 // more than Max
	})
	tol := numfmt.Percent(s.Tolerance)
	switch {
	case n >= s.Max:
		return true, fmt.Sprintf("stopped at max_repeat = %d: the noise of the first %d (%s) needs %d or more to decide a change of %s", s.Max, sized, noiseText(noise), target, tol)
	case n >= target:
		return true, fmt.Sprintf("precise enough after %d repeats: the noise of the first %d (%s) decides a change of %s with %d", n, sized, noiseText(noise), tol, target)
	}
	return false, fmt.Sprintf("repeating to %d: the noise of the first %d (%s) needs them to decide a change of %s", target, sized, noiseText(noise), tol)
}

// noiseText is a measured noise as a percentage with one decimal: "2.1%".
func noiseText(noise float64) string { return fmt.Sprintf("%.1f%%", noise*100) }
