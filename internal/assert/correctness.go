package assert

import (
	"github.com/zclconf/go-cty/cty"

	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/stats"
)

// rootCorrectness is the variable conditions read correctness blocks by:
// correctness["NAME"].mismatch_rate (docs/spec.md#correctness).
const rootCorrectness = "correctness"

// correctnessObjectType is correctness["NAME"]'s type: a number per
// figure of metric.Correctness.
func correctnessObjectType() cty.Type {
	attrs := map[string]cty.Type{}
	for _, f := range metric.Correctness {
		attrs[f.Name] = cty.Number
	}
	return cty.Object(attrs)
}

// unknownCorrectness is correctness["NAME"] with every figure unknown,
// marked m (none when m is nil: the static scope).
func unknownCorrectness(m *searchRead) cty.Value {
	attrs := map[string]cty.Value{}
	for _, f := range metric.Correctness {
		v := cty.UnknownVal(cty.Number)
		if m != nil {
			v = v.Mark(*m)
		}
		attrs[f.Name] = v
	}
	return cty.ObjectVal(attrs)
}

// correctnessValue is correctness["NAME"] as res recorded it: the run's
// figures, and the comparison's when res was compared with a baseline
// (res.Comparison, which gate fills before the conditions are read). A
// figure the run cannot give (a comparison's without -baseline, an
// accuracy without a scorer, a block not measured) is unknown with a
// mark that says why; a test reading it is an Error, but a Skip when it
// reads a comparison's figure and there is no baseline block to compare
// with (the run on main that makes the first baseline). words say why
// blocks were not compared.
func correctnessValue(c *spec.Correctness, res *result.Results, words Words) cty.Value {
	b := res.CorrectnessBlock(c.Name)
	if b == nil {
		return unknownCorrectness(&searchRead{why: result.UnknownRead{Rule: result.CorrectnessNotMeasured, Name: c.Name}, infra: true})
	}
	var cc *result.CorrectnessComparison
	// Why the comparison's figures are not there: a Skip when there is
	// no baseline to compare with (no -baseline, or a baseline without the
	// block: the run that makes the first baseline), an Error when there is
	// one and the blocks could not be compared.
	why, skip := result.UnknownRead{Rule: result.CorrectnessNoBaseline, Name: c.Name}, true
	if res.Comparison != nil {
		for i := range res.Comparison.Correctness {
			x := &res.Comparison.Correctness[i]
			switch {
			case x.Name != c.Name:
			case x.Missing:
				why.Rule = result.CorrectnessBaselineMissing
			case x.WasRefused():
				why, skip = result.UnknownRead{Rule: result.CorrectnessNotCompared, Name: c.Name, Text: words.CorrectnessRefused(x)}, false
			default:
				cc = x
			}
		}
	}
	lo, hi := stats.Wilson(b.Correct, b.Scored, 0.025)
	run := map[string]float64{
		metric.CorrectnessPrompts: float64(b.Prompts), metric.CorrectnessErrors: float64(b.Errors),
		metric.CorrectnessAccuracy: b.Accuracy(), metric.CorrectnessAccuracyLower: lo, metric.CorrectnessAccuracyUpper: hi,
		metric.CorrectnessElapsedS: b.ElapsedS, metric.CorrectnessGPUSeconds: b.GPUSeconds,
	}
	if cc != nil {
		run[metric.AgreementRate], run[metric.NearTieRate], run[metric.MismatchRate] = cc.AgreementRate, cc.NearTieRate, cc.MismatchRate
		run[metric.Mismatches] = float64(cc.Mismatches)
		if cc.Accuracy != nil {
			run[metric.AccuracyChange] = cc.Accuracy.Change
		}
	}
	attrs := map[string]cty.Value{}
	for _, f := range metric.Correctness {
		v, ok := run[f.Name]
		switch {
		case f.Scored && b.Scored == 0:
			attrs[f.Name] = cty.UnknownVal(cty.Number).Mark(searchRead{why: result.UnknownRead{Rule: result.CorrectnessUnscored, Name: c.Name, Field: f.Name}, infra: true})
		case !ok && cc != nil: // accuracy_change: a side has no scorer
			attrs[f.Name] = cty.UnknownVal(cty.Number).Mark(searchRead{why: result.UnknownRead{Rule: result.CorrectnessBaselineUnscored, Name: c.Name, Field: f.Name}, infra: true})
		case !ok:
			read := why
			read.Field = f.Name
			attrs[f.Name] = cty.UnknownVal(cty.Number).Mark(searchRead{why: read, skip: skip, infra: !skip})
		default:
			attrs[f.Name] = cty.NumberFloatVal(v)
		}
	}
	return cty.ObjectVal(attrs)
}

// addCorrectness adds the `correctness` variable to sc: one object per
// correctness block of sp, built by value.
func (sc *scope) addCorrectness(value func(*spec.Correctness) cty.Value) {
	v := cty.MapValEmpty(correctnessObjectType())
	if len(sc.sp.Correctness) > 0 {
		m := map[string]cty.Value{}
		for _, c := range sc.sp.Correctness {
			m[c.Name] = value(c)
		}
		v = cty.MapVal(m)
	}
	sc.ctx.Variables[rootCorrectness] = v
	sc.roots[rootCorrectness] = true
}
