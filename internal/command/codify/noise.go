package codify

import (
	"math"

	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/views/codifyview"
	"github.com/slogate/slogate/internal/vocab"
)

// Noise is what a run's repeats say about the repeats and tolerances a gate
// on this server can use (docs/method.md#noise), the figures
// codifyview.Noise holds; its Comment and Warning word them.
type Noise = codifyview.Noise

// minRepeat is the fewest repeats codify advises: a noise is sized from
// four or more.
const minRepeat = 4

// MeasuredNoise is the Noise of res for a tolerance margin at one-sided
// level alpha (0: compare.DefaultAlpha).
func MeasuredNoise(res *result.Results, margin, alpha float64) Noise {
	if alpha <= 0 {
		alpha = compare.DefaultAlpha
	}
	n := Noise{Noise: math.NaN(), Supported: math.NaN(), Tightest: math.NaN(), Repeat: minRepeat, MaxRepeats: compare.MaxRepeatsEstimate}
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
				n.Noise, n.Cell, n.Metric = v, ref, m.Name
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
		n.Tightest = math.Ceil(n.Supported*100) / 100
		n.RepeatFor = compare.RepeatsFor(n.Noise, margin, alpha)
		n.Repeat = 0
		if n.RepeatFor > 0 {
			n.Repeat = max(n.RepeatFor, minRepeat)
		}
	}
	return n
}
