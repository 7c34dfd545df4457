package ratesearch

import (
	"math"

	"github.com/slogate/slogate/internal/vocab"
)

// Bounds are one side's answer of a rate search, as Capacity compares them.
type Bounds struct {
	// Found is false when none met the objective at lo.
	Found bool
	// Rate is the answer; Lower and Upper its confidence bounds (0: not
	// bounded, Upper when hi met and Lower when no rate was met with
	// confidence).
	Rate, Lower, Upper float64
	// Precision is the search's relative precision.
	Precision float64
}

// CapacityRule names the rule that decided a comparison of capacity
// (docs/method.md#capacity-lost): a stable code, kept in results.json
// with the figures behind it. The words are made in views.
type CapacityRule string

// The rules of Capacity (the two searches' bounds) and PairedCapacity
// (the paired check); package compare adds those it decides before
// either (a search stopped, searches that differ).
const (
	// NoBaselineAnswer: the baseline's search met its objective at no
	// rate: no capacity to lose (Skip).
	NoBaselineAnswer CapacityRule = "no_baseline_answer"
	// BoundsBelow: the candidate's upper bound is below the baseline's
	// lower bound by more than the tolerance (Fail).
	BoundsBelow CapacityRule = "bounds_below"
	// BoundsWithin: the candidate's lower bound is within the tolerance
	// of the baseline's answer (Pass).
	BoundsWithin CapacityRule = "bounds_within"
	// BoundsStraddle: the candidate's bounds reach both sides of the
	// tolerance line, Line (Inconclusive).
	BoundsStraddle CapacityRule = "bounds_straddle"
	// NoRateMet: the candidate met its objective at no rate, but not with
	// confidence below the baseline's lower bound less the tolerance
	// (Inconclusive).
	NoRateMet CapacityRule = "no_rate_met"
	// PairedWorse: a metric of the paired check, Worse, is worse with
	// confidence (Fail).
	PairedWorse CapacityRule = "paired_worse"
	// PairedAsGood: every metric of the paired check is at least as good
	// with confidence (Pass).
	PairedAsGood CapacityRule = "paired_as_good"
	// PairedUndecided: the paired check's metrics are neither worse nor
	// at least as good with confidence (Inconclusive; NeedWindows says
	// how many windows would decide it).
	PairedUndecided CapacityRule = "paired_undecided"
	// PairedNoMetric: the paired check read no metric (Inconclusive).
	PairedNoMetric CapacityRule = "paired_no_metric"
)

// CapacityDecision is a comparison of capacity decided: its outcome, the
// rule that decided it and the figures the rule read that the two
// searches do not hold already.
type CapacityDecision struct {
	Outcome vocab.Outcome
	Rule    CapacityRule
	// Line is the tolerance line of the bounds rules, in req/s: the
	// baseline's answer less the tolerance.
	Line float64
	// DecidingPrecision is, for an inconclusive decision on bounds, the
	// relative precision of the searches that would decide it, and
	// SearchPrecision the searches' own (the coarser); 0 when a finer
	// search would not decide it and only longer windows would.
	DecidingPrecision, SearchPrecision float64
	// Rate and BaselineRate are the paired check's rates: the candidate's
	// windows at Rate, the baseline's answer BaselineRate less the
	// tolerance, paired with the baseline's at BaselineRate.
	Rate, BaselineRate float64
	// Worse is the index of the metric that is worse (PairedWorse);
	// NeedWindows the windows a side that would decide an undecided
	// paired check at this spread (0: unknown, or fewer than two
	// measured).
	Worse, NeedWindows int
}

// Capacity decides whether the candidate b lost capacity against the
// baseline a (docs/method.md#capacity-lost), with a relative tolerance:
// Fail (regressed, BoundsBelow) when b's upper bound is below a's lower
// bound by more than the tolerance, b.Upper < a.Lower·(1 − tolerance);
// Pass (within tolerance, BoundsWithin) when b's lower bound is within
// the tolerance of a's answer, b.Lower ≥ a.Rate·(1 − tolerance); else
// Inconclusive, with the precision that would decide it. A baseline with
// no answer is a Skip.
func Capacity(a, b Bounds, tolerance float64) CapacityDecision {
	if !a.Found {
		return CapacityDecision{Outcome: vocab.Skip, Rule: NoBaselineAnswer}
	}
	line := a.Rate * (1 - tolerance)
	d := CapacityDecision{Line: line}
	if b.Upper > 0 && a.Lower > 0 && b.Upper < a.Lower*(1-tolerance) {
		d.Outcome, d.Rule = vocab.Fail, BoundsBelow
		return d
	}
	if b.Found && b.Lower > 0 && b.Lower >= line {
		d.Outcome, d.Rule = vocab.Pass, BoundsWithin
		return d
	}
	// Neither: say what would decide it. The bounds are as wide as a
	// probe's windows leave them; the answers' gap from the tolerance line
	// is what a finer search must resolve.
	gap := 0.0
	if a.Rate > 0 {
		gap = math.Abs(b.Rate-line) / a.Rate
	}
	d.Outcome, d.Rule = vocab.Inconclusive, BoundsStraddle
	if !b.Found {
		d.Rule = NoRateMet
	}
	if prec := max(a.Precision, b.Precision); gap > 0 && gap/2 < prec {
		d.DecidingPrecision, d.SearchPrecision = gap/2, prec
	}
	return d
}
