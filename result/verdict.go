package result

import (
	"fmt"
	"strconv"
	"strings"
)

// Outcome is a test's result. Outcomes are ordered Pass < Skip <
// Inconclusive < Fail < Error and merge by the worst (Worst): a regression
// anywhere outweighs a comparison that could not decide, and an
// infrastructure error both.
type Outcome int

// Outcomes, in order.
const (
	Pass Outcome = iota
	Skip
	// Inconclusive is a baseline comparison whose data neither show a
	// regression nor rule one out (docs/method.md#comparing-runs): it fails
	// the gate unless -inconclusive pass, with exit code 4 when nothing
	// regressed, so that CI can tell "measure more" from "regressed".
	Inconclusive
	Fail
	Error
)

var outcomeNames = [...]string{"pass", "skip", "inconclusive", "fail", "error"}

// Failed reports whether the outcome fails the gate: Inconclusive, Fail or
// Error.
func (o Outcome) Failed() bool { return o >= Inconclusive }

// String is the outcome's name as results.json stores it: "pass", "skip",
// "inconclusive", "fail" or "error".
func (o Outcome) String() string {
	if o < 0 || int(o) >= len(outcomeNames) {
		return fmt.Sprintf("outcome(%d)", int(o))
	}
	return outcomeNames[o]
}

// MarshalText encodes the outcome as its name.
func (o Outcome) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// UnmarshalText decodes an outcome name.
func (o *Outcome) UnmarshalText(b []byte) error {
	for i, n := range outcomeNames {
		if strings.EqualFold(string(b), n) {
			*o = Outcome(i)
			return nil
		}
	}
	return fmt.Errorf("unknown outcome %q", b)
}

// Worst merges two outcomes.
func Worst(a, b Outcome) Outcome {
	if b > a {
		return b
	}
	return a
}

// Verdict kinds.
const (
	KindAssert   = "assert"
	KindExpect   = "expect"
	KindBaseline = "baseline"
)

// Verdict is the outcome of one test derived from the spec or a baseline:
// an assert block, one cell of an expect block, or one baseline comparison.
type Verdict struct {
	// Test is the full test name, e.g. "qwen/assert/decode_8k_64" or
	// "qwen/expect/decode_total_tps/ctx=8K/conc=64".
	Test    string  `json:"test"`
	Kind    string  `json:"kind"` // KindAssert, KindExpect or KindBaseline
	Outcome Outcome `json:"outcome"`
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
	Cells []CellRef `json:"cells,omitempty"`
	// Infra is set on an Error caused by a missing measurement (a cell over
	// capacity, errored or not measured); it maps to exit code 3.
	Infra bool `json:"infra,omitempty"`
}

// Where is where the rule is written, as "file:line" ("file" without a
// line, "" when the verdict has no file).
func (v Verdict) Where() string {
	if v.File != "" && v.Line > 0 {
		return v.File + ":" + strconv.Itoa(v.Line)
	}
	return v.File
}
