package codify

import (
	"fmt"
	"math"

	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/numfmt"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// Noise is what a run's repeats say about the repeats and tolerances a gate
// on this server can use (docs/method.md#noise): the largest measured noise
// over the repeated cells' gated metrics, where it was measured, and what
// it supports.
type Noise struct {
	// Measured is false when no cell was repeated: no noise to size from.
	Measured bool
	// Noise is the largest noise (compare.LogNoise) over the cells' gated
	// metrics; Where names the cell and metric.
	Noise float64
	Where string
	// Repeats is the run's repeats a cell (its smallest over those cells).
	Repeats int
	// Supported is the smallest change Repeats a side would catch at α
	// with power 0.9: the tightest tolerance the noise supports with as
	// many repeats; NaN when Repeats cannot attain α.
	Supported float64
	// RepeatFor is the repeats a side the margin needs at this noise (0:
	// more than compare.MaxRepeatsEstimate).
	RepeatFor int
}

// MeasuredNoise is the Noise of res for a tolerance margin at one-sided
// level alpha (0: compare.DefaultAlpha).
func MeasuredNoise(res *result.Results, margin, alpha float64) Noise {
	if alpha <= 0 {
		alpha = compare.DefaultAlpha
	}
	n := Noise{Noise: math.NaN(), Supported: math.NaN()}
	consider := func(ref vocab.CellRef, phase vocab.Phase, samples map[string][]float64) {
		for _, m := range compare.DefaultMetrics(phase) {
			xs := samples[m.Name]
			if len(xs) < 2 {
				continue
			}
			v := compare.LogNoise(xs)
			if math.IsNaN(v) {
				continue
			}
			if !n.Measured || len(xs) < n.Repeats {
				n.Repeats = len(xs)
			}
			if !n.Measured || v > n.Noise {
				n.Noise, n.Where = v, ref.Name()+" "+m.Name
			}
			n.Measured = true
		}
	}
	for i := range res.Prefill {
		if c := &res.Prefill[i]; c.Status.Measured() {
			consider(c.Ref(), vocab.PhasePrefill, c.Samples)
		}
	}
	for i := range res.Decode {
		if c := &res.Decode[i]; c.Status.Measured() && c.Search == "" {
			consider(c.Ref(), vocab.PhaseDecode, c.Samples)
		}
	}
	if n.Measured {
		n.Supported = compare.SmallestChange(n.Noise, n.Repeats, alpha)
		n.RepeatFor = compare.RepeatsFor(n.Noise, margin, alpha)
	}
	return n
}

// Comment is the advice codify writes above the blocks: the measured noise,
// the repeat the margin needs, and the tightest tolerance the run's
// repeats support, with a measure block to copy.
func (n Noise) Comment(margin float64) string {
	if !n.Measured {
		return "# No cell was repeated, so no noise was measured: measure with repeat = 4 or more (or \"auto\")\n# to size repeat and tolerance from it.\n"
	}
	s := fmt.Sprintf("# Measured noise (the largest CV over the repeated cells): %.2f%% (%s).\n", n.Noise*100, n.Where)
	if n.RepeatFor > 0 {
		s += fmt.Sprintf("# A %s tolerance needs %d repeats a side at that noise; copy into the spec's measure block:\n#   repeat = %d\n",
			numfmt.Percent(margin), n.RepeatFor, max(n.RepeatFor, 4))
	} else {
		s += fmt.Sprintf("# A %s tolerance needs more than %d repeats a side at that noise: widen it.\n", numfmt.Percent(margin), compare.MaxRepeatsEstimate)
	}
	if !math.IsNaN(n.Supported) {
		s += fmt.Sprintf("# With %d repeats a side the smallest change a gate can tell from this noise is %.1f%%.\n", n.Repeats, n.Supported*100)
	}
	return s
}

// Warning says that margin is below what the noise allows with the run's
// repeats ("" when it is not): such a tolerance fails on noise alone, or
// cannot be decided, without more repeats.
func (n Noise) Warning(margin float64) string {
	if !n.Measured || math.IsNaN(n.Supported) || margin >= n.Supported {
		return ""
	}
	more := fmt.Sprintf("more than %d repeats a side", compare.MaxRepeatsEstimate)
	if n.RepeatFor > 0 {
		more = fmt.Sprintf("repeat = %d", max(n.RepeatFor, 4))
	}
	return fmt.Sprintf("-margin %s is below what the measured noise allows: at %.2f%% noise (%s) %d repeats a side tell a change from noise only from %.1f%%; use -margin %s or more, or measure with %s",
		numfmt.Percent(margin), n.Noise*100, n.Where, n.Repeats, n.Supported*100, numfmt.Percent(math.Ceil(n.Supported*100)/100), more)
}
