// Package bisection is `slogate bisect`'s rule for one step, a pure
// function over two comparisons built by package compare (the candidate
// against the good endpoint and against the bad one), and the records
// the bisection keeps of its steps (bisect.jsonl) and its answer. It adds
// no statistical rule of its own: every "regressed", "within tolerance" and
// "inconclusive" is compare's decision (docs/method.md#bisect).
package bisection

import (
	"math"

	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/vocab"
)

// Outcome is what one step says of one cell's first bad build.
type Outcome string

// Outcomes.
const (
	// AtOrBefore: the candidate regressed against good; the cell's first
	// bad build is the candidate or one before it.
	AtOrBefore Outcome = "at_or_before"
	// After: the candidate is within the tolerance of good; the first bad
	// build comes after it.
	After Outcome = "after"
	// Inconclusive: the comparisons cannot tell; more repeats are needed,
	// never a guess.
	Inconclusive Outcome = "inconclusive"
	// Skipped: the build did not start, errored or could not measure the
	// cell (as `git bisect skip`).
	Skipped Outcome = "skipped"
)

// Word is the outcome as the console writes it.
func (o Outcome) Word() string {
	switch o {
	case AtOrBefore:
		return "bad (first bad at or before)"
	case After:
		return "good (first bad after)"
	case Inconclusive:
		return "inconclusive"
	case Skipped:
		return "skipped"
	}
	return string(o)
}

// MetricStep is one metric's part of a cell's step: the changes against
// each endpoint (compare's estimates, B ÷ A − 1) and compare's decisions.
type MetricStep struct {
	Metric string `json:"metric"`
	// VsGood and VsBad are the candidate's estimated change against the
	// good and the bad endpoint; nil when a side had no value.
	VsGood *float64 `json:"vs_good,omitempty"`
	VsBad  *float64 `json:"vs_bad,omitempty"`
	// GoodChange and BadChange are compare's decisions (compare.Change.Key).
	GoodChange string  `json:"good_change"`
	BadChange  string  `json:"bad_change"`
	Outcome    Outcome `json:"outcome"`
	// Partial: regressed against both endpoints or within the tolerance
	// of both; decided by the nearer endpoint's estimate.
	Partial bool `json:"partial,omitempty"`
}

// CellStep is one cell's decision at one build.
type CellStep struct {
	Cell    string       `json:"cell"`
	Outcome Outcome      `json:"outcome"`
	Partial bool         `json:"partial,omitempty"`
	Metrics []MetricStep `json:"metrics,omitempty"`
	// Reason says why a cell was skipped.
	Reason string `json:"reason,omitempty"`
}

// Decide is the step's decision for cell ref over the metrics that
// regressed between the endpoints: vsGood is compare.Build(good,
// candidate), vsBad compare.Build(bad, candidate), both under the one
// policy. Per metric:
//
//   - regressed against good (or lost) → at or before, unless it also
//     regressed against bad: a partial step, decided by the nearer
//     endpoint's estimate;
//   - within the tolerance of good (unchanged or improved) → after, unless
//     it is also unchanged against bad: a partial step, decided by the
//     nearer estimate;
//   - inconclusive against good, or an inconclusive comparison with bad
//     that the decision depends on → inconclusive.
//
// A cell is at or before when any of its metrics is (as the gate fails a
// cell when any metric regressed), else inconclusive when any metric is,
// else after. A cell the candidate errored on, or did not record, is
// skipped.
func Decide(vsGood, vsBad *compare.Comparison, ref vocab.CellRef, metrics []string) CellStep {
	st := CellStep{Cell: ref.Name()}
	g, okG := cellOf(vsGood, ref)
	b, okB := cellOf(vsBad, ref)
	if !okG || !okB {
		st.Outcome, st.Reason = Skipped, "the candidate did not record the cell"
		return st
	}
	if g.B.Present && g.B.Status == vocab.StatusError {
		st.Outcome, st.Reason = Skipped, "the cell errored: "+g.B.Reason
		return st
	}
	anyInc, anyPartialAfter := false, false
	for _, name := range metrics {
		mg, ok1 := metricOf(g, name)
		mb, ok2 := metricOf(b, name)
		if !ok1 || !ok2 {
			continue
		}
		ms := decideMetric(name, mg, mb)
		st.Metrics = append(st.Metrics, ms)
		switch ms.Outcome {
		case AtOrBefore:
			if st.Outcome != AtOrBefore {
				st.Outcome, st.Partial = AtOrBefore, ms.Partial
			}
		case Inconclusive:
			anyInc = true
		case Skipped:
			st.Outcome, st.Reason = Skipped, "the cell was not measured"
			return st
		case After:
			anyPartialAfter = anyPartialAfter || ms.Partial
		}
	}
	switch {
	case st.Outcome == AtOrBefore:
	case len(st.Metrics) == 0:
		st.Outcome, st.Reason = Skipped, "no regressed metric to compare"
	case anyInc:
		st.Outcome = Inconclusive
	default:
		st.Outcome, st.Partial = After, anyPartialAfter
	}
	return st
}

// decideMetric is Decide for one metric: g is the cell against good, b
// against bad.
func decideMetric(name string, g, b compare.Cell) MetricStep {
	ms := MetricStep{Metric: name, GoodChange: g.Change.Key(), BadChange: b.Change.Key(),
		VsGood: estimate(g), VsBad: estimate(b)}
	worseThanGood := g.Change == compare.Regressed || g.Change == compare.Lost
	withinGood := g.Change == compare.Unchanged || g.Change == compare.Improved
	worseThanBad := b.Change == compare.Regressed || b.Change == compare.Lost
	nearBad := b.Change == compare.Unchanged
	decidedBad := b.Change == compare.Regressed || b.Change == compare.Lost || b.Change == compare.Unchanged || b.Change == compare.Improved
	nearer := nearerEndpoint(ms) // After, AtOrBefore or Inconclusive (a tie or no estimate)
	switch {
	case g.Change == compare.Inconclusive:
		ms.Outcome = Inconclusive
	case !worseThanGood && !withinGood:
		ms.Outcome = Skipped // errored, or a side without a value
	case worseThanGood && worseThanBad, withinGood && nearBad:
		ms.Outcome, ms.Partial = nearer, true
	case worseThanGood && decidedBad:
		ms.Outcome = AtOrBefore
	case withinGood && decidedBad:
		ms.Outcome = After
	case worseThanGood:
		// Against bad undecided: regressed against both (partial) or
		// not; either way at or before if the nearer estimate says so.
		ms.Outcome = AtOrBefore
		if nearer != AtOrBefore {
			ms.Outcome = Inconclusive
		}
	default: // within good, against bad undecided: after, or partial
		ms.Outcome = After
		if nearer != After {
			ms.Outcome = Inconclusive
		}
	}
	return ms
}

// nearerEndpoint decides a partial step: After when the candidate's
// estimate is nearer good's (the smaller |log ratio|), AtOrBefore when
// nearer bad's, Inconclusive on a tie or without both estimates.
func nearerEndpoint(ms MetricStep) Outcome {
	if ms.VsGood == nil || ms.VsBad == nil {
		return Inconclusive
	}
	dg, db := math.Abs(math.Log1p(*ms.VsGood)), math.Abs(math.Log1p(*ms.VsBad))
	switch {
	case math.IsNaN(dg) || math.IsNaN(db) || dg == db:
		return Inconclusive
	case dg < db:
		return After
	}
	return AtOrBefore
}

// estimate is the cell's estimated change, nil without one.
func estimate(c compare.Cell) *float64 {
	if math.IsNaN(c.Delta) || math.IsInf(c.Delta, 0) {
		return nil
	}
	d := c.Delta
	return &d
}

// cellOf is the comparison's cell ref.
func cellOf(c *compare.Comparison, ref vocab.CellRef) (*compare.CellResult, bool) {
	if c == nil || c.Refused {
		return nil, false
	}
	for i := range c.Cells {
		if c.Cells[i].Ref == ref {
			return &c.Cells[i], true
		}
	}
	return nil, false
}

// metricOf is the cell's comparison of metric name.
func metricOf(cr *compare.CellResult, name string) (compare.Cell, bool) {
	for _, m := range cr.Metrics {
		if m.Metric.Name == name {
			return m.Cell, true
		}
	}
	return compare.Cell{}, false
}

// Regressed are the cells the bad endpoint regressed or lost against the
// good one (compare.Build(good, bad)), each with its regressed metrics:
// the cells a bisection measures. Inconclusive cells are not among them.
func Regressed(goodVsBad *compare.Comparison) []RegressedCell {
	var out []RegressedCell
	if goodVsBad == nil || goodVsBad.Refused {
		return nil
	}
	for _, cr := range goodVsBad.Cells {
		if cr.Decided != vocab.Fail {
			continue
		}
		rc := RegressedCell{Ref: cr.Ref}
		for _, m := range cr.Metrics {
			if m.Cell.Change == compare.Regressed || m.Cell.Change == compare.Lost {
				rc.Metrics = append(rc.Metrics, m.Metric.Name)
				if !math.IsNaN(m.Cell.Delta) {
					rc.Changes = append(rc.Changes, m.Cell.Delta)
				} else {
					rc.Changes = append(rc.Changes, math.NaN())
				}
			}
		}
		if len(rc.Metrics) > 0 {
			out = append(out, rc)
		}
	}
	return out
}

// RegressedCell is one cell that regressed between the endpoints and the
// metrics that did, with the changes (bad against good) of each.
type RegressedCell struct {
	Ref     vocab.CellRef
	Metrics []string
	Changes []float64
}
