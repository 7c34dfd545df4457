package report

import (
	"fmt"

	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// cellNote is a cell the Errors, Unmeasurable or Saturated section lists:
// the cell, its status, and what its why is worded from (its Reason; a
// saturated cell's reasons). Its methods word it when a writer asks:
// "decode ctx=8K conc=64: HTTP 500".
type cellNote struct {
	ref     vocab.CellRef
	status  vocab.Status
	reason  string
	reasons []result.CellReason
}

// Cell names the cell as its section does: a prefill or decode cell by
// its matrix, context and concurrency ("prefill ctx=4K", "long ctx=128K
// conc=2"), a traffic cell by its name ("traffic/steady/ctx=1K/rate=60").
func (n cellNote) Cell() string {
	r := n.ref
	switch r.Phase {
	case vocab.PhasePrefill:
		return "prefill ctx=" + vocab.FormatTokens(r.Context)
	case vocab.PhaseDecode:
		return fmt.Sprintf("%s ctx=%s conc=%d", r.MatrixLabel(), vocab.FormatTokens(r.Context), r.Concurrency)
	}
	return r.Name()
}

// Why is why the cell is listed: its reason ("no reason recorded" for an
// errored cell without one); a saturated cell's evidence in words
// (CellReasonText).
func (n cellNote) Why() string {
	switch {
	case n.status == vocab.StatusSaturated:
		return CellReasonText(n.reasons, n.reason)
	case n.status == vocab.StatusError && n.reason == "":
		return "no reason recorded"
	}
	return n.reason
}

// String is the note as its section's line: "decode ctx=8K conc=64: HTTP
// 500".
func (n cellNote) String() string { return n.Cell() + ": " + n.Why() }
