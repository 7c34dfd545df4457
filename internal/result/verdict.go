package result

import (
	"strconv"

	"github.com/slogate/slogate/internal/vocab"
)

// Verdict is the outcome of one test derived from the spec or a baseline:
// an assert block, one cell of an expect block, or one baseline comparison.
type Verdict struct {
	// Test is the full test name, e.g. "qwen/assert/decode_8k_64" or
	// "qwen/expect/decode_total_tps/ctx=8K/conc=64".
	Test    string        `json:"test"`
	Kind    string        `json:"kind"` // KindAssert, KindExpect or KindBaseline
	Outcome vocab.Outcome `json:"outcome"`
	// Rule is the condition as written in the spec (assert), or the rule
	// derived from an expect/baseline ("total_tps >= 5800 (6018.4 - 5%)").
	Rule string `json:"rule,omitempty"`
	File string `json:"file,omitempty"` // the spec file the rule is written in
	Line int    `json:"line,omitempty"` // its line in File; 0 when unknown
	// Message is the author's error_message, or a one-line summary.
	Message string `json:"message,omitempty"`
	// Details are the values read, one per line, e.g.
	// `decode["8K"][64].total_tps = 5421.3, want >= 6000 (-9.6%)`.
	Details []string `json:"details,omitempty"`
	// Cells are the cells the test read.
	Cells []vocab.CellRef `json:"cells,omitempty"`
	// Infra is set on an Error caused by a missing measurement (a cell over
	// capacity, errored or not measured); it maps to exit code 3.
	Infra bool `json:"infra,omitempty"`
	// Finding is what the judge found, the code its Outcome follows from
	// (package judge); "" in results written before it was kept.
	Finding Finding `json:"finding,omitempty"`
}

// Finding is what the judge found of one test, as a code: for a spec's
// rule (assert, expect) the finding decides the outcome (judge.Decide);
// for a comparison with the baseline it says which case the comparison
// was, whose outcome compare decided.
type Finding string

// The findings of a spec's rule (assert and expect blocks).
const (
	// FindingHeld: the condition held, or the cell met its expected value.
	FindingHeld Finding = "held"
	// FindingNotHeld: the condition is false, or the cell missed its
	// expected value beyond the tolerance.
	FindingNotHeld Finding = "not_held"
	// FindingInvalidRule: the rule cannot be evaluated as written (no
	// condition, an error, null, unknown or not a bool; an expect of an
	// unknown metric or matrix, or a row longer than its matrix).
	FindingInvalidRule Finding = "invalid_rule"
	// FindingNotReported: the cell was measured, but the server did not
	// report the optional metric the rule reads.
	FindingNotReported Finding = "not_reported"
	// FindingOverCapacity: every read without a number is of a cell over
	// the server's capacity, a measured property of the server.
	FindingOverCapacity Finding = "over_capacity"
	// FindingUnmeasured: a read has no number because a cell errored or is
	// absent, a server fact is unknown or a search did not run: the
	// infrastructure's, not the server's.
	FindingUnmeasured Finding = "unmeasured"
	// FindingNothingToRead: the rule reads only searches that were left
	// out of the run (-run), so there was nothing to judge.
	FindingNothingToRead Finding = "nothing_to_read"
	// FindingUndecided: the rule rests on what a rate search or a cell's
	// percentile could not decide (docs/method.md#undecided-searches).
	FindingUndecided Finding = "undecided"
	// FindingUnmeasurable: the rule reads cells the client could not
	// measure alone (docs/method.md#unmeasurable); also a comparison of
	// such a cell.
	FindingUnmeasurable Finding = "unmeasurable"
	// FindingSaturated: a read without a number is of a traffic cell
	// stopped as saturated (docs/method.md#saturation), the others of
	// cells over capacity: past the server's capacity, a measured
	// property of the server.
	FindingSaturated Finding = "saturated"
)

// The findings of a comparison with the baseline (-baseline): which case
// the comparison was; compare decided its outcome.
const (
	// FindingCompared: both runs measured it and the comparison decided.
	FindingCompared Finding = "compared"
	// FindingNotInBaseline: the baseline has no such cell or block.
	FindingNotInBaseline Finding = "not_in_baseline"
	// FindingBaselineUnmeasured: the baseline has the cell, not measured;
	// for a rate search, the baseline's search stopped on an error.
	FindingBaselineUnmeasured Finding = "baseline_unmeasured"
	// FindingNotMeasured: this run's cell errored where the baseline
	// measured it; for a rate search, this run's search stopped on an
	// error.
	FindingNotMeasured Finding = "not_measured"
	// FindingLost: the baseline measured it, this run did not (a cell
	// over capacity now, a traffic cell not measured).
	FindingLost Finding = "lost"
	// FindingRefused: the comparison was refused: a correctness block's
	// settings differ, or a rate search is not the baseline's.
	FindingRefused Finding = "refused"
	// FindingUncompared: a correctness block with nothing to compare with
	// (no -baseline, or the baseline lacks it): informational.
	FindingUncompared Finding = "uncompared"
)

// Where is where the rule is written, as "file:line" ("file" without a
// line, "" when the verdict has no file).
func (v Verdict) Where() string {
	if v.File != "" && v.Line > 0 {
		return v.File + ":" + strconv.Itoa(v.Line)
	}
	return v.File
}

// Reading is one value an assert's condition read (package assert reads
// them), with the comparison it was read in when it was one: the figures
// of one line of a verdict's details, which a view writes k6-style
// (views.ReadingLines):
//
//	decode["8K"][64].total_tps = 5421.3, want >= 6000 (-9.6% from the threshold)
type Reading struct {
	// Subject is what was read, as written in the spec; in a comparison,
	// the side that reads measured data.
	Subject string
	// Value is its value as a detail shows one (numbers by numfmt.Value,
	// strings quoted, others as JSON).
	Value string
	// Op is the comparison's operator with the subject on its left (">=",
	// "<", "==", …); "" for a value read outside a comparison.
	Op string
	// Threshold is the other side's value, Against the other side as
	// written when it is not a literal ("" when it is).
	Threshold, Against string
	// Held reports whether the comparison held.
	Held bool
	// Gap is (value − threshold) / |threshold| of a comparison that failed
	// on two numbers, the threshold not 0; HasGap says that it is set.
	Gap    float64
	HasGap bool
	// FromExpected marks an expect's reading: Gap is then (value −
	// expected) / expected, shown whether or not the comparison held.
	FromExpected bool
}
