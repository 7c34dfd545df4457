// Package judge makes the run's verdicts (result.Verdict), and is the one
// place that sets their outcomes: a spec's rules (assert and expect
// blocks, which package assert evaluates and hands over as findings) by
// the table in Decide, and the comparisons with a baseline (cells,
// traffic, capacity, correctness) by compare's decisions. Its verdicts
// carry codes and figures; a comparison's words come from a Words (the
// views implement it) and a rule's from assert's, so the judge makes no
// sentence, and the views decide no outcome
// (docs/architecture.md#one-judge).
package judge

import (
	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// ruleOutcomes is what each finding of a spec's rule does to the gate, in
// the order Pass < Skip < Inconclusive < Fail < Error; infra marks the
// Errors that are the infrastructure's (exit 3), not the spec's (exit 2).
var ruleOutcomes = map[result.Finding]struct {
	outcome vocab.Outcome
	infra   bool
}{
	result.FindingHeld:          {vocab.Pass, false},
	result.FindingNothingToRead: {vocab.Skip, false},
	result.FindingUndecided:     {vocab.Inconclusive, false},
	result.FindingUnmeasurable:  {vocab.Inconclusive, false},
	result.FindingNotHeld:       {vocab.Fail, false},
	result.FindingOverCapacity:  {vocab.Fail, false},
	result.FindingSaturated:     {vocab.Fail, false},
	result.FindingInvalidRule:   {vocab.Error, false},
	result.FindingNotReported:   {vocab.Error, false},
	result.FindingUnmeasured:    {vocab.Error, true},
}

// Decide is the outcome of a spec rule's finding f, and whether an Error
// is the infrastructure's. A finding the table does not know (a
// comparison's, or a newer file's) is an Error, never a pass.
func Decide(f result.Finding) (outcome vocab.Outcome, infra bool) {
	o, ok := ruleOutcomes[f]
	if !ok {
		return vocab.Error, false
	}
	return o.outcome, o.infra
}

// Rule records finding f on v, a verdict of a spec's rule, with the
// outcome Decide gives it.
func Rule(v *result.Verdict, f result.Finding) {
	v.Finding = f
	v.Outcome, v.Infra = Decide(f)
}

// compared records finding f on v, a verdict of a comparison with the
// baseline, with the outcome compare decided.
func compared(v *result.Verdict, f result.Finding, outcome vocab.Outcome, infra bool) {
	v.Finding, v.Outcome, v.Infra = f, outcome, infra
}

// ExitCode maps verdicts to slogate's exit code (README.md#exit-codes): 3 when any
// Error was caused by a missing measurement (an errored or absent cell), 2
// when any other Error (the spec is wrong, e.g. a condition that is not a
// bool), 1 when any test failed (a test that needs an over-capacity cell
// fails), 4 when a baseline comparison was inconclusive and nothing failed,
// 0 otherwise (exit.Worst).
func ExitCode(verdicts []result.Verdict) int {
	code := exit.OK
	for _, v := range verdicts {
		c := exit.OK
		switch {
		case v.Outcome == vocab.Error && v.Infra:
			c = exit.Infra
		case v.Outcome == vocab.Error:
			c = exit.Usage
		case v.Outcome == vocab.Fail:
			c = exit.Fail
		case v.Outcome == vocab.Inconclusive:
			c = exit.Inconclusive
		}
		code = exit.Worst(code, c)
	}
	return code
}
