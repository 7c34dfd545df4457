package compare

import (
	"math"

	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/stats"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/warning"
)

// Estimates of what a comparison can decide, from the measured noise: the
// standard deviation of a repeat's log value (LogNoise, ≈ the coefficient of
// variation). They use the normal approximation of the Hodges–Lehmann
// shift: its standard error is noise × √((1/n + 1/m) · π/3), π/3 being the
// inverse of its efficiency relative to the mean difference under normal
// noise (Hodges & Lehmann 1963), at the level the exact U distribution
// attains for the sizes (attainable). docs/method.md#sizing-repeats.

// DecisionPower is the power the estimates aim at: a comparison is sized so
// that it decides with probability 0.9.
const DecisionPower = 0.9

// MaxRepeatsEstimate is the most repeats a side the estimates consider; a
// need beyond it is reported as 0 ("more than 100").
const MaxRepeatsEstimate = 100

// shiftSE is the standard error of the log shift between n and m samples.
func shiftSE(noise float64, n, m int) float64 {
	return noise * math.Sqrt((1/float64(n)+1/float64(m))*math.Pi/3)
}

// powerToDecide is the probability that a comparison of n and m samples at
// one-sided level alpha decides a true log shift lying distance from the
// tolerance's edge (within tolerance when on its inner side, regressed when
// beyond it). 0 when the sizes cannot attain alpha.
func powerToDecide(n, m int, noise, distance, alpha float64) float64 {
	_, level, ok := attainable(n, m, alpha)
	if !ok {
		return 0
	}
	if noise <= 0 {
		if distance > 0 {
			return 1
		}
		return 0
	}
	return stats.NormalCDF(distance/shiftSE(noise, n, m) - stats.NormalQuantile(1-level))
}

// decisionDistance is the log distance to the tolerance's edge that the
// estimates size a comparison for: the nearer of no change (deciding an
// unchanged server within the tolerance) and a change of twice the
// tolerance (calling a server 1 + 2·tolerance times slower regressed), for
// a throughput or a latency: log((1 − t)(1 + 2t)) ≈ 0.044 at t = 5%.
func decisionDistance(tolerance float64) float64 {
	t := tolerance
	return min(math.Log1p(t), math.Log((1-t)*(1+2*t)), math.Log((1+2*t)/(1+t)))
}

// SmallestChange is the smallest relative change that n repeats a side
// would catch at level alpha with power 0.9 at the measured noise (the
// standard deviation of a repeat's log value, LogNoise): exp((z(1−α′) +
// z(0.9)) · SE) − 1, where α′ is the level n + n samples attain at α. NaN
// when n + n cannot attain alpha (fewer than 4 a side at 0.05).
func SmallestChange(noise float64, n int, alpha float64) float64 {
	_, level, ok := attainable(n, n, alpha)
	if !ok {
		return math.NaN()
	}
	z := stats.NormalQuantile(1-level) + stats.NormalQuantile(DecisionPower)
	return math.Expm1(z * shiftSE(noise, n, n))
}

// RepeatsFor is the repeats a side that a tolerance needs at the measured
// noise: the fewest n with which an unchanged server is decided within the
// tolerance, and a server slower by twice the tolerance regressed, each
// with power 0.9 at level alpha. 0 when more than MaxRepeatsEstimate would
// be needed.
func RepeatsFor(noise, tolerance, alpha float64) int {
	return repeatsToDecide(noise, decisionDistance(tolerance), alpha)
}

// repeatsToDecide is the fewest repeats a side that decide, with power 0.9
// at level alpha, a shift lying distance (log) from the tolerance's edge; 0
// beyond MaxRepeatsEstimate.
func repeatsToDecide(noise, distance, alpha float64) int {
	for n := 1; n <= MaxRepeatsEstimate; n++ {
		if powerToDecide(n, n, noise, distance, alpha) >= DecisionPower {
			return n
		}
	}
	return 0
}

// BaselinePower is what comparisons against a baseline can decide, for the
// pre-run check of -baseline: "the baseline caps the power", because the
// candidate's repeats cannot shrink the baseline's share of the error.
type BaselinePower struct {
	// Power is the probability that a candidate identical to the baseline
	// is decided within the tolerance (and one twice the tolerance slower
	// regressed) with the candidate's repeats.
	Power float64
	// Enough is Power ≥ 0.9.
	Enough bool
	// Need is the fewest baseline repeats with which Power would reach
	// 0.9 against the same candidate repeats; 0 when more than
	// MaxRepeatsEstimate.
	Need int
}

// PowerOfBaseline judges a baseline of n repeats at the measured noise
// against a candidate of m repeats (its repeat, or max_repeat with repeat =
// "auto") at one-sided level alpha (the design's level for "auto",
// Sequential.Level), at the distance RepeatsFor sizes for.
func PowerOfBaseline(n int, noise, tolerance, alpha float64, m int) BaselinePower {
	d := decisionDistance(tolerance)
	p := BaselinePower{Power: powerToDecide(n, m, noise, d, alpha)}
	p.Enough = p.Power >= DecisionPower
	for k := 1; k <= MaxRepeatsEstimate; k++ {
		if powerToDecide(k, m, noise, d, alpha) >= DecisionPower {
			p.Need = k
			break
		}
	}
	return p
}

// PowerShortfall is one metric whose baseline cells cannot all be decided
// against the candidate's repeats (BaselineWarnings): the decision behind
// a warning.PowerShortfall, which views.PowerShortfallWords words.
type PowerShortfall struct {
	Phase  vocab.Phase
	Metric string
	// Cells of Of baseline cells (with samples) fall short.
	Cells, Of int
	// Candidate is the candidate's repeats checked against.
	Candidate int
	// Noisiest is the noisiest cell short, its Noise over Repeats
	// repeats; Need the baseline repeats it would need (0: more than
	// MaxRepeatsEstimate); Capped that no number of candidate repeats
	// would do (the baseline caps the power); Power its power.
	Noisiest      vocab.CellRef
	Noise         float64
	Repeats, Need int
	Capped        bool
	Power         float64
	// Tolerance is the comparison's; Distance the change beyond its edge
	// the check sizes for, and Detectable the one these repeats decide
	// with power 0.9 (both relative; NaN when the repeats cannot reach
	// the level at all).
	Tolerance, Distance, Detectable float64
}

// detectableDistance is the log distance from the tolerance's edge that n
// and m samples decide with power 0.9 at one-sided level alpha (where
// powerToDecide reaches DecisionPower); NaN when the sizes cannot attain
// alpha.
func detectableDistance(n, m int, noise, alpha float64) float64 {
	_, level, ok := attainable(n, m, alpha)
	if !ok {
		return math.NaN()
	}
	return (stats.NormalQuantile(1-level) + stats.NormalQuantile(DecisionPower)) * shiftSE(noise, n, m)
}

// BaselineWarnings is the pre-run check of a -baseline's power
// (docs/method.md#sequential-repeats): for each metric compared by
// default, the cells whose baseline samples (their count and measured
// noise) cannot reach a decision with power 0.9 against a candidate of
// candidateRepeats repeats at level alpha: one PowerShortfall per metric,
// with how many cells, the noisiest of them, and how many baseline
// repeats it would need (views words it). Nothing when every cell can be
// decided or the baseline has no samples.
func BaselineWarnings(base *result.Results, candidateRepeats int, tolerance, alpha float64) []PowerShortfall {
	var order []string
	by := map[string]*PowerShortfall{}
	asserted := assertedMetrics(base) // the metrics the comparison will read
	check := func(ref vocab.CellRef, phase vocab.Phase, samples map[string][]float64) {
		for _, m := range metricsFor(phase, nil, asserted) {
			xs := samples[m.Name]
			noise := LogNoise(xs)
			if math.IsNaN(noise) {
				continue
			}
			key := string(phase) + " " + m.Name
			w := by[key]
			if w == nil {
				w = &PowerShortfall{Phase: phase, Metric: m.Name, Candidate: candidateRepeats, Tolerance: tolerance, Distance: math.Expm1(decisionDistance(tolerance))}
				by[key] = w
				order = append(order, key)
			}
			w.Of++
			p := PowerOfBaseline(len(xs), noise, tolerance, alpha, candidateRepeats)
			if p.Enough {
				continue
			}
			w.Cells++
			if w.Cells == 1 || noise > w.Noise {
				w.Noisiest, w.Noise, w.Repeats, w.Need, w.Power = ref, noise, len(xs), p.Need, p.Power
				w.Capped = !PowerOfBaseline(len(xs), noise, tolerance, alpha, MaxRepeatsEstimate).Enough
				w.Detectable = math.Expm1(detectableDistance(len(xs), candidateRepeats, noise, alpha))
			}
		}
	}
	for _, c := range base.Prefill {
		if c.Status.Measured() {
			check(c.Ref(), vocab.PhasePrefill, c.Samples)
		}
	}
	for _, c := range base.Decode {
		if c.Status.Measured() {
			check(c.Ref(), vocab.PhaseDecode, c.Samples)
		}
	}
	var out []PowerShortfall
	for _, key := range order {
		if w := by[key]; w.Cells > 0 {
			out = append(out, *w)
		}
	}
	return out
}

// Warning is s as a warning.PowerShortfall about its metric, with the
// words given (views.PowerShortfallWords) and the figures behind them.
func (s PowerShortfall) Warning(summary, detail string) warning.Warning {
	capped := 0.0
	if s.Capped {
		capped = 1
	}
	figures := map[string]float64{
		warning.FigShortCells: float64(s.Cells), warning.FigCells: float64(s.Of),
		warning.FigCandidateRepeats: float64(s.Candidate), warning.FigBaselineRepeats: float64(s.Repeats),
		warning.FigContext: float64(s.Noisiest.Context), warning.FigConcurrency: float64(s.Noisiest.Concurrency),
		warning.FigNoise: s.Noise, warning.FigNeedRepeats: float64(s.Need), warning.FigCapped: capped,
		warning.FigTolerance: s.Tolerance, warning.FigPower: s.Power, warning.FigDistance: s.Distance,
	}
	if !math.IsNaN(s.Detectable) {
		figures[warning.FigDetectable] = s.Detectable
	}
	return warning.New(warning.PowerShortfall, summary, detail, figures).About(s.Metric)
}
