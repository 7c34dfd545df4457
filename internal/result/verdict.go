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
}

// Where is where the rule is written, as "file:line" ("file" without a
// line, "" when the verdict has no file).
func (v Verdict) Where() string {
	if v.File != "" && v.Line > 0 {
		return v.File + ":" + strconv.Itoa(v.Line)
	}
	return v.File
}
