package report

import (
	"fmt"
	"strings"

	"github.com/slogate/slogate/internal/judge"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// outcome.go builds what every report opens with: the outcome, how many
// tests ended how, and a short list of what failed and why, before the
// details (docs/commands.md#output).

// maxWhatFailed is how many entries "What failed" lists before it points
// at the Verdicts table for the rest.
const maxWhatFailed = 10

// failLine is one entry of "What failed": Subject (a test's name, or a
// cell's) ended Outcome ("FAIL", "ERROR", "INCONCLUSIVE"), the rule at
// Where ("specs/demo.hcl:66", "" when none), because of Why.
type failLine struct {
	Subject, Outcome, Where, Why string
}

// verdictHead is the outcome block of a view: Tally counts the tests by
// outcome ("2 of 8 tests failed, 6 passed"), WhatFailed are the first
// maxWhatFailed entries of what failed and why, and MoreFailed how many
// more the Verdicts and Errors sections hold.
type verdictHead struct {
	Tally      string
	WhatFailed []failLine
	MoreFailed int
}

// newVerdictHead is v's outcome block, built after its verdicts and
// errors: the run's own ending first (interrupted, ended early), then
// each failed, inconclusive or errored verdict in the order the run
// printed them, with its message and, for an assert or expect, the
// value it read, then each cell that could not be measured.
func newVerdictHead(res *result.Results, v *view) verdictHead {
	h := verdictHead{Tally: Tally(res.Verdicts)}
	var all []failLine
	// An interrupted run records why in Error too: said once.
	if res.Interrupted {
		all = append(all, failLine{Subject: "the run", Outcome: outcomeWord(vocab.Error), Why: "interrupted; cells not reached are missing"})
	} else if res.Error != "" {
		all = append(all, failLine{Subject: "the run", Outcome: outcomeWord(vocab.Error), Why: "ended early: " + res.Error})
	}
	for _, vd := range res.Verdicts {
		if !vd.Outcome.Failed() {
			continue
		}
		all = append(all, failLine{Subject: vd.Test, Outcome: outcomeWord(vd.Outcome), Where: vd.Where(), Why: failReason(vd)})
	}
	for _, e := range v.Errors {
		cell, why, _ := strings.Cut(e, ": ")
		all = append(all, failLine{Subject: cell, Outcome: outcomeWord(vocab.Error), Why: "not measured: " + why})
	}
	for _, e := range v.Unmeasurable {
		cell, why, _ := strings.Cut(e, ": ")
		all = append(all, failLine{Subject: cell, Outcome: outcomeWord(vocab.Inconclusive), Why: "unmeasurable: " + why})
	}
	saturated, _ := judge.Decide(result.FindingSaturated)
	for _, e := range v.Saturated {
		cell, why, _ := strings.Cut(e, ": ")
		all = append(all, failLine{Subject: cell, Outcome: outcomeWord(saturated), Why: "saturated: " + why})
	}
	if len(all) > maxWhatFailed {
		h.MoreFailed = len(all) - maxWhatFailed
		all = all[:maxWhatFailed]
	}
	h.WhatFailed = all
	return h
}

// failReason is why a verdict failed in one line: its message (the
// author's error_message, or the comparison's summary), then for an assert
// or expect the first value it read ("decode["8K"][1].per_request_tps =
// 290, want >= 304 (-4.6% from the threshold)"), which says by how much.
func failReason(vd result.Verdict) string {
	var parts []string
	if vd.Message != "" {
		parts = append(parts, vd.Message)
	}
	if (vd.Kind == vocab.KindAssert || vd.Kind == vocab.KindExpect || vd.Message == "") && len(vd.Details) > 0 && !strings.Contains(vd.Message, vd.Details[0]) {
		parts = append(parts, vd.Details[0])
	}
	if len(parts) == 0 {
		return vd.Rule
	}
	return strings.Join(parts, " — ")
}

// Tally counts verdicts by outcome, worst first, the total with the first:
// "2 of 8 tests failed, 6 passed", "6 tests passed"; without verdicts, that
// there was nothing to check. The reports' heads and diff's SLO line say
// it alike.
func Tally(verdicts []result.Verdict) string {
	if len(verdicts) == 0 {
		return "no assert, expect or baseline to check"
	}
	var n [vocab.Error + 1]int
	for _, v := range verdicts {
		if v.Outcome >= vocab.Pass && v.Outcome <= vocab.Error {
			n[v.Outcome]++
		}
	}
	words := []struct {
		o    vocab.Outcome
		word string
	}{{vocab.Error, "errored"}, {vocab.Fail, "failed"}, {vocab.Inconclusive, "inconclusive"}, {vocab.Skip, "skipped"}, {vocab.Pass, "passed"}}
	var parts []string
	for _, w := range words {
		k := n[w.o]
		switch {
		case k == 0:
		case len(parts) > 0:
			parts = append(parts, fmt.Sprintf("%d %s", k, w.word))
		case k == len(verdicts):
			parts = append(parts, fmt.Sprintf("%d %s %s", k, plural(k, "test", "tests"), w.word))
		default:
			parts = append(parts, fmt.Sprintf("%d of %d tests %s", k, len(verdicts), w.word))
		}
	}
	return strings.Join(parts, ", ")
}

type verdictRow struct {
	Test, Outcome, Rule, Measured, Message, Where string
}

// addVerdicts fills the Verdicts table.
func (v *view) addVerdicts(verdicts []result.Verdict) {
	for _, vd := range verdicts {
		row := verdictRow{Test: vd.Test, Outcome: outcomeWord(vd.Outcome), Rule: vd.Rule,
			Measured: strings.Join(vd.Details, "; "), Message: vd.Message}
		row.Where = vd.Where()
		v.Verdicts = append(v.Verdicts, row)
	}
}

// runOutcome is the outcome the report heads with: the worst verdict's,
// Error when the run ended early, and Pass when the worst was a Skip (a
// search probe that missed its objective, a correctness block with
// nothing to compare): such a run exits 0, as go test's package whose
// tests skipped is "ok", and the tally says what skipped.
func runOutcome(res *result.Results) vocab.Outcome {
	if res.Error != "" {
		return vocab.Error
	}
	if o := res.Outcome(); o != vocab.Skip {
		return o
	}
	return vocab.Pass
}

// outcomeWord is a verdict outcome as go test prints it.
func outcomeWord(o vocab.Outcome) string { return strings.ToUpper(o.String()) }
