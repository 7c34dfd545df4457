package judge

import (
	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// Words are the words of the verdicts the judge makes of a comparison with
// the baseline: each method words one verdict from its finding and the
// comparison it came from (views.JudgeWords).
type Words interface {
	// BaselineCell words a decode or prefill cell's comparison.
	BaselineCell(f result.Finding, cr *compare.CellResult, p compare.Policy, m *compare.MachineChange) Worded
	// TrafficPair words a traffic cell's comparison.
	TrafficPair(f result.Finding, tp *compare.TrafficPair, p compare.Policy, m *compare.MachineChange) Worded
	// Capacity words a rate search's capacity compared.
	Capacity(r *compare.CapacityResult, p compare.Policy) Worded
	// Correctness words one check of correctness block b (its agreement,
	// losslessness or accuracy; "" for the block as a whole when it was
	// not compared) whose outcome is ch, cr its comparison (nil when the
	// baseline lacks it), c the comparison of the runs (nil without
	// -baseline).
	Correctness(f result.Finding, check string, ch compare.Check, b *result.Correctness, cr *compare.CorrectnessResult, c *compare.Comparison) Worded
}

// Worded is a verdict's words: its rule, its one-line message and its
// detail lines.
type Worded struct {
	Rule    string
	Message string
	Details []string
}

// word puts w's words on v.
func word(v *result.Verdict, w Worded) {
	v.Rule, v.Message, v.Details = w.Rule, w.Message, w.Details
}

// Baseline is the comparison's verdicts, one per decode, prefill and
// traffic cell either run recorded, named
// "<server>/baseline/decode/ctx=8K/conc=64", each with the outcome compare
// decided (its Check: a cross-engine comparison's Fail or Inconclusive
// cell passes, docs/method.md#comparing-engines); then one per rate
// search both runs have, "<server>/baseline/search/<name>": capacity lost
// (docs/method.md#capacity-lost). None when the comparison was refused.
func Baseline(c *compare.Comparison, w Words) []result.Verdict {
	if c.Refused {
		return nil
	}
	server := c.B.Server.Name
	var out []result.Verdict
	for i := range c.Cells {
		cr := &c.Cells[i]
		f := cellFinding(cr)
		v := baselineVerdict(server, cr.Ref, f, cr.Check())
		word(&v, w.BaselineCell(f, cr, c.Policy, c.Machine))
		out = append(out, v)
	}
	for i := range c.Traffic {
		tp := &c.Traffic[i]
		f := trafficFinding(tp)
		v := baselineVerdict(server, tp.Ref, f, tp.Check())
		word(&v, w.TrafficPair(f, tp, c.Policy, c.Machine))
		out = append(out, v)
	}
	for i := range c.Capacity {
		r := &c.Capacity[i]
		v := result.Verdict{
			Test: vocab.TestID{Server: server, Kind: vocab.KindBaseline, Block: vocab.KindSearch + "/" + r.Name}.Name(),
			Kind: vocab.KindBaseline,
		}
		check := r.Check()
		compared(&v, capacityFinding(r), check.Outcome, check.Infra)
		word(&v, w.Capacity(r, c.Policy))
		out = append(out, v)
	}
	return out
}

// baselineVerdict is a cell's verdict against the baseline, before its
// words.
func baselineVerdict(server string, ref vocab.CellRef, f result.Finding, check compare.Check) result.Verdict {
	v := result.Verdict{
		Test:  vocab.TestID{Server: server, Kind: vocab.KindBaseline, Cell: &ref}.Name(),
		Kind:  vocab.KindBaseline,
		Cells: []vocab.CellRef{ref},
	}
	compared(&v, f, check.Outcome, check.Infra)
	return v
}

// cellFinding is which case a cell's comparison was: a side
// unmeasurable, absent from or not measured in the baseline, errored in
// this run, lost to capacity, or compared.
func cellFinding(cr *compare.CellResult) result.Finding {
	a, b := cr.A, cr.B
	switch {
	case a.Status == vocab.StatusUnmeasurable || b.Status == vocab.StatusUnmeasurable:
		return result.FindingUnmeasurable
	case cr.Decided == vocab.Skip && !a.Present:
		return result.FindingNotInBaseline
	case cr.Decided == vocab.Skip:
		return result.FindingBaselineUnmeasured
	case cr.Decided == vocab.Error && b.Present && b.Status == vocab.StatusError:
		return result.FindingNotMeasured
	case cr.Lost != nil && cr.Lost.Change == compare.Lost:
		return result.FindingLost
	}
	return result.FindingCompared
}

// trafficFinding is which case a traffic cell's comparison was.
func trafficFinding(tp *compare.TrafficPair) result.Finding {
	switch {
	case tp.Decided == vocab.Skip && tp.A == nil:
		return result.FindingNotInBaseline
	case tp.Decided == vocab.Skip:
		return result.FindingBaselineUnmeasured
	case tp.Decided == vocab.Error:
		return result.FindingNotMeasured
	case tp.B == nil || !tp.B.Status.Measured():
		return result.FindingLost
	}
	return result.FindingCompared
}

// capacityFinding is which case a rate search's comparison was: this
// run's search stopped, the baseline's did, the two searches differ, or
// compared.
func capacityFinding(r *compare.CapacityResult) result.Finding {
	switch r.Reason.Rule {
	case compare.SearchStopped:
		return result.FindingNotMeasured
	case compare.BaselineStopped:
		return result.FindingBaselineUnmeasured
	case compare.SearchesDiffer:
		return result.FindingRefused
	}
	return result.FindingCompared
}
