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

// failKind is what an entry of "What failed" is about, which its Why
// words.
type failKind int

const (
	failInterrupted  failKind = iota // the run was interrupted
	failEnded                        // the run ended early; detail is its error
	failVerdict                      // a verdict failed, was inconclusive or errored
	failNotMeasured                  // a cell errored; its note says why
	failUnmeasurable                 // the client could not measure a cell; its note says why
	failSaturated                    // a cell stopped past the server's capacity; its note gives the evidence
)

// failLine is one entry of "What failed": subject (a test's name or "the
// run") or cell ended outcome, for what kind says with detail, or as
// verdict (failVerdict) did. Its methods word it.
type failLine struct {
	subject string
	outcome vocab.Outcome
	kind    failKind
	detail  string
	verdict *result.Verdict
	cell    cellNote // the cell of failNotMeasured, failUnmeasurable and failSaturated
}

// Subject is what failed: a test's name, a cell's ("decode ctx=8K
// conc=64") or "the run".
func (f failLine) Subject() string {
	switch f.kind {
	case failNotMeasured, failUnmeasurable, failSaturated:
		return f.cell.Cell()
	}
	return f.subject
}

// Outcome is the entry's outcome as go test prints it: "FAIL", "ERROR",
// "INCONCLUSIVE".
func (f failLine) Outcome() string { return outcomeWord(f.outcome) }

// Where is where the failed verdict's rule is written
// ("specs/demo.hcl:66"); "" for none.
func (f failLine) Where() string {
	if f.verdict == nil {
		return ""
	}
	return f.verdict.Where()
}

// Why is why the entry failed, in one line: for a verdict its message
// and, for an assert or expect, the value it read (failReason).
func (f failLine) Why() string {
	switch f.kind {
	case failInterrupted:
		return "interrupted; cells not reached are missing"
	case failEnded:
		return "ended early: " + f.detail
	case failVerdict:
		return failReason(*f.verdict)
	case failNotMeasured:
		return "not measured: " + f.cell.Why()
	case failUnmeasurable:
		return "unmeasurable: " + f.cell.Why()
	}
	return "saturated: " + f.cell.Why()
}

// verdictHead is the outcome block of a view: tally counts the tests by
// outcome (Tally words it: "2 of 8 tests failed, 6 passed"), WhatFailed
// are the first maxWhatFailed entries of what failed and why, and
// MoreFailed how many more the Verdicts and Errors sections hold.
type verdictHead struct {
	tally      outcomeTally
	WhatFailed []failLine
	MoreFailed int
}

// Tally is the tests by outcome in words (outcomeTally.String).
func (h verdictHead) Tally() string { return h.tally.String() }

// newVerdictHead is v's outcome block, built after its verdicts and
// errors: the run's own ending first (interrupted, ended early), then
// each failed, inconclusive or errored verdict in the order the run
// printed them, then each cell that could not be measured.
func newVerdictHead(res *result.Results, v *view) verdictHead {
	h := verdictHead{tally: tallyOf(res.Verdicts)}
	var all []failLine
	// An interrupted run records why in Error too: said once.
	if res.Interrupted {
		all = append(all, failLine{subject: "the run", outcome: vocab.Error, kind: failInterrupted})
	} else if res.Error != "" {
		all = append(all, failLine{subject: "the run", outcome: vocab.Error, kind: failEnded, detail: res.Error})
	}
	for i := range res.Verdicts {
		vd := &res.Verdicts[i]
		if !vd.Outcome.Failed() {
			continue
		}
		all = append(all, failLine{subject: vd.Test, outcome: vd.Outcome, kind: failVerdict, verdict: vd})
	}
	saturated, _ := judge.Decide(result.FindingSaturated)
	for _, cells := range []struct {
		notes   []cellNote
		outcome vocab.Outcome
		kind    failKind
	}{{v.Errors, vocab.Error, failNotMeasured}, {v.Unmeasurable, vocab.Inconclusive, failUnmeasurable}, {v.Saturated, saturated, failSaturated}} {
		for _, n := range cells.notes {
			all = append(all, failLine{outcome: cells.outcome, kind: cells.kind, cell: n})
		}
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
func Tally(verdicts []result.Verdict) string { return tallyOf(verdicts).String() }

// outcomeTally is how many of total verdicts ended each outcome.
type outcomeTally struct {
	n     [vocab.Error + 1]int
	total int
}

// tallyOf counts verdicts by outcome.
func tallyOf(verdicts []result.Verdict) outcomeTally {
	t := outcomeTally{total: len(verdicts)}
	for _, v := range verdicts {
		if v.Outcome >= vocab.Pass && v.Outcome <= vocab.Error {
			t.n[v.Outcome]++
		}
	}
	return t
}

// String words the tally as Tally does.
func (t outcomeTally) String() string {
	if t.total == 0 {
		return "no assert, expect or baseline to check"
	}
	words := []struct {
		o    vocab.Outcome
		word string
	}{{vocab.Error, "errored"}, {vocab.Fail, "failed"}, {vocab.Inconclusive, "inconclusive"}, {vocab.Skip, "skipped"}, {vocab.Pass, "passed"}}
	var parts []string
	for _, w := range words {
		k := t.n[w.o]
		switch {
		case k == 0:
		case len(parts) > 0:
			parts = append(parts, fmt.Sprintf("%d %s", k, w.word))
		case k == t.total:
			parts = append(parts, fmt.Sprintf("%d %s %s", k, plural(k, "test", "tests"), w.word))
		default:
			parts = append(parts, fmt.Sprintf("%d of %d tests %s", k, t.total, w.word))
		}
	}
	return strings.Join(parts, ", ")
}

// verdictRow is one row of the Verdicts table: a verdict of the
// Results, which its methods word.
type verdictRow struct{ vd *result.Verdict }

// Test is the verdict's test name.
func (r verdictRow) Test() string { return r.vd.Test }

// Outcome is the verdict's outcome as go test prints it.
func (r verdictRow) Outcome() string { return outcomeWord(r.vd.Outcome) }

// Rule is the verdict's rule as the spec writes it.
func (r verdictRow) Rule() string { return r.vd.Rule }

// Where is where the rule is written ("specs/demo.hcl:66").
func (r verdictRow) Where() string { return r.vd.Where() }

// Measured is the values the verdict read, joined by "; ".
func (r verdictRow) Measured() string { return strings.Join(r.vd.Details, "; ") }

// Message is the verdict's message (the author's error_message, or the
// comparison's summary).
func (r verdictRow) Message() string { return r.vd.Message }

// addVerdicts fills the Verdicts table, a row per verdict in the order
// the run printed them.
func (v *view) addVerdicts(verdicts []result.Verdict) {
	for i := range verdicts {
		v.Verdicts = append(v.Verdicts, verdictRow{&verdicts[i]})
	}
}

// Outcome is the run's outcome (runOutcome) as the reports head with it:
// PASS, FAIL, ERROR.
func (v *view) Outcome() string { return outcomeWord(v.outcome) }

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
