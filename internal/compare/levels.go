package compare

import (
	"math"
	"time"

	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/stats"
)

// BootLevels is the variance components of one metric measured over
// boots, after Kalibera and Jones, "Rigorous Benchmarking in Reasonable
// Time" (ISMM 2013, §3), with a boot for their VM invocation and a repeat
// for their iteration; on log values, so that the components are squared
// relative spreads. xs are the samples and boots the boot of each; a
// boot's cost c₂ is bootCost (its start-up), a repeat's c₁ perRepeat.
// ok is false with fewer than two boots of two repeats each.
//
// Written here: the estimators are three lines of arithmetic that no
// library at hand (benchmath, gonum's stat) provides for a two-level
// design.
func BootLevels(xs []float64, boots []int, bootCost, perRepeat time.Duration, tolerance, alpha float64) (result.Levels, bool) {
	if len(xs) != len(boots) {
		return result.Levels{}, false
	}
	byBoot := map[int][]float64{}
	var order []int
	for i, x := range xs {
		if x <= 0 || math.IsInf(x, 0) || math.IsNaN(x) {
			return result.Levels{}, false
		}
		if _, seen := byBoot[boots[i]]; !seen {
			order = append(order, boots[i])
		}
		byBoot[boots[i]] = append(byBoot[boots[i]], math.Log(x))
	}
	n := len(xs)
	for _, b := range order {
		n = min(n, len(byBoot[b]))
	}
	if len(order) < 2 || n < 2 {
		return result.Levels{}, false
	}
	// S₁²: the mean of the boots' own variances; S₂²: the variance of the
	// boots' means. KJ's T₂² = S₂² − S₁²/n estimates the boot-level
	// variance unbiasedly (n repeats a boot; the smallest when unequal).
	var within float64
	means := make([]float64, 0, len(order))
	for _, b := range order {
		m, v := meanVar(byBoot[b])
		within += v
		means = append(means, m)
	}
	within /= float64(len(order))
	_, s2 := meanVar(means)
	between := max(s2-within/float64(n), 0)
	lv := result.Levels{Within: within, Between: between}
	if between > 0 && perRepeat > 0 {
		// KJ's optimal repeats a boot: n = ⌈√(c₂ ÷ c₁ × T₁² ÷ T₂²)⌉.
		lv.RepeatsPerBoot = int(math.Ceil(math.Sqrt(bootCost.Seconds() / perRepeat.Seconds() * within / between)))
		lv.RepeatsPerBoot = max(lv.RepeatsPerBoot, 1)
		// The boots a side for a change of the tolerance with per-boot
		// means as the unit: their variance is T₂² + T₁² ÷ n; a one-sided
		// test at α with power 0.9 by the normal approximation needs
		// r = 2 (z₁₋α + z₀.₉)² V ÷ d², d = ln(1 + tolerance).
		v := between + within/float64(lv.RepeatsPerBoot)
		z := stats.NormalQuantile(1-alpha) + stats.NormalQuantile(0.9)
		d := math.Log1p(tolerance)
		lv.BootsFor = max(int(math.Ceil(2*z*z*v/(d*d))), 2)
	}
	lv.Within, lv.Between = roundSig(lv.Within), roundSig(lv.Between)
	return lv, true
}

// meanVar is the mean and the sample variance (n − 1) of xs.
func meanVar(xs []float64) (mean, variance float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	if len(xs) < 2 {
		return mean, 0
	}
	for _, x := range xs {
		variance += (x - mean) * (x - mean)
	}
	return mean, variance / float64(len(xs)-1)
}

// roundSig rounds x to 4 significant digits, for results.json.
func roundSig(x float64) float64 {
	if x == 0 {
		return 0
	}
	e := math.Pow(10, 3-math.Floor(math.Log10(math.Abs(x))))
	return math.Round(x*e) / e
}
