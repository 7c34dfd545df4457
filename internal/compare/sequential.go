package compare

import (
	"math"
	"sync"

	"github.com/slogate/slogate/internal/result"
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

// LookRule names what a look of the sequential design found: a stable
// code that results.json keeps with the figures behind it
// (result.MetricLook); the words are made in views.
type LookRule string

// The rules of Look.
const (
	// BelowMin: fewer than Min repeats; go on.
	BelowMin LookRule = "below_min"
	// Undecidable: against a baseline of BaselineRepeats no decision is
	// possible within Max repeats; stop.
	Undecidable LookRule = "undecidable"
	// FirstLook: decided (Change) at the first look; stop.
	FirstLook LookRule = "first_look"
	// SecondStage: repeating to Target, the second stage sized from the
	// noise of the first Sized repeats (Noise); go on.
	SecondStage LookRule = "second_stage"
	// SecondLook: decided (Change) at the second look; stop.
	SecondLook LookRule = "second_look"
	// SecondLookInconclusive: inconclusive at the second look, the
	// design's last; stop.
	SecondLookInconclusive LookRule = "second_look_inconclusive"
	// NoNoise: no noise can be measured from the values; stop.
	NoNoise LookRule = "no_noise"
	// AloneMax: without a baseline, stopped at Max: the noise of the first
	// Sized repeats (Noise) needs Target or more to decide a change of
	// Tolerance.
	AloneMax LookRule = "alone_max"
	// AlonePrecise: without a baseline, precise enough: the noise of the
	// first Sized repeats decides a change of Tolerance with Target.
	AlonePrecise LookRule = "alone_precise"
	// AloneRepeating: without a baseline, repeating to Target, which the
	// noise of the first Sized repeats needs; go on.
	AloneRepeating LookRule = "alone_repeating"
)

// Look is one look of the sequential design at a gated metric of a cell:
// whether it stops, the rule, and the figures the rule read.
type Look struct {
	Stop bool
	Rule LookRule
	// Repeats is the candidate's repeats looked at; Min and Max the
	// design's; BaselineRepeats the baseline's (0 without one).
	Repeats, Min, Max, BaselineRepeats int
	// Target is the repeats the cell is sized to, Sized the repeats whose
	// noise sized it, Noise that noise (the spread of the logs) and
	// Tolerance the change the size must decide.
	Target, Sized    int
	Noise, Tolerance float64
	// Change is the comparison's decision at a look that decided
	// (FirstLook, SecondLook).
	Change Change
}

// Record is l as results.json keeps it, for gated metric name.
func (l Look) Record(name string) result.MetricLook {
	r := result.MetricLook{Metric: name, Rule: string(l.Rule), Repeats: l.Repeats, Min: l.Min, Max: l.Max,
		BaselineRepeats: l.BaselineRepeats, Target: l.Target, Sized: l.Sized, Noise: l.Noise, Tolerance: l.Tolerance}
	if math.IsNaN(r.Noise) { // a value ≤ 0 among the sizing repeats: no noise to record (JSON holds no NaN)
		r.Noise = 0
	}
	if l.Rule == FirstLook || l.Rule == SecondLook {
		r.Change = l.Change.Key()
	}
	return r
}

// Look reports, after a repeat, whether a gated metric of a cell is
// decided. With a baseline (baseline != nil), whether its comparison
// reached regressed or within tolerance at the design's level: looked at
// after Min repeats, then only once the second stage's size is reached.
// Without one, whether the cell's own estimate is precise enough to decide
// a change of the tolerance (RepeatsFor at its noise so far). It always
// stops at Max. The rule and its figures say why, for the cell's record.
func (s Sequential) Look(baseline, candidate []float64, higherIsBetter bool) Look {
	s = s.withDefaults()
	n := len(candidate)
	l := Look{Repeats: n, Min: s.Min, Max: s.Max, BaselineRepeats: len(baseline), Tolerance: s.Tolerance}
	if n < s.Min {
		l.Rule = BelowMin
		return l
	}
	if baseline == nil {
		return s.lookAlone(l, candidate)
	}
	level := s.Level(len(baseline))
	if _, _, ok := attainable(len(baseline), s.Max, level); !ok {
		l.Stop, l.Rule = true, Undecidable
		return l
	}
	if n == s.Min {
		if c, ok := s.decided(baseline, candidate, higherIsBetter, level); ok {
			l.Stop, l.Rule, l.Change = true, FirstLook, c
			return l
		}
	}
	l.Target, l.Sized = s.stageSize(n, func(k int) int {
		var m int
		m, l.Noise = s.secondStage(baseline, candidate[:k], higherIsBetter, level)
		return m
	})
	if n < l.Target {
		l.Rule = SecondStage
		return l
	}
	l.Stop = true
	if c, ok := s.decided(baseline, candidate, higherIsBetter, level); ok {
		l.Rule, l.Change = SecondLook, c
		return l
	}
	l.Rule = SecondLookInconclusive
	return l
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
func (s Sequential) lookAlone(l Look, samples []float64) Look {
	n := len(samples)
	if math.IsNaN(LogNoise(samples[:s.Min])) {
		l.Stop, l.Rule = true, NoNoise
		return l
	}
	l.Target, l.Sized = s.stageSize(n, func(k int) int {
		l.Noise = LogNoise(samples[:k])
		for m := s.Min; m <= s.Max; m++ {
			if powerToDecide(m, m, l.Noise, decisionDistance(s.Tolerance), s.Level(m)) >= DecisionPower {
				return m
			}
		}
		return s.Max + 1 // more than Max
	})
	switch {
	case n >= s.Max:
		l.Stop, l.Rule = true, AloneMax
	case n >= l.Target:
		l.Stop, l.Rule = true, AlonePrecise
	default:
		l.Rule = AloneRepeating
	}
	return l
}
