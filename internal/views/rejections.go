package views

import (
	"fmt"

	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/numfmt"
)

// RejectedNote heads the decode cells whose server refused requests at
// admission in either run (docs/method.md#rejections); traffic cells show
// theirs among their values.
const RejectedNote = "Requests the server refused at admission in the window (shown, not decided; docs/method.md#rejections):"

// RejectedLines are the decode cells of c whose server refused requests
// of the window at admission in either run, one line each:
// "decode/ctx=8K/conc=6: 0 → 57 requests".
func RejectedLines(c *compare.Comparison) []string {
	var out []string
	for i := range c.Cells {
		if cr := &c.Cells[i]; cr.Rejected() {
			out = append(out, fmt.Sprintf("%s: %s", cr.Ref.Name(), rejectedChange(cr)))
		}
	}
	return out
}

// rejectedChange is a cell's refused requests in both runs: "0 → 57
// requests".
func rejectedChange(cr *compare.CellResult) string {
	return numfmt.Int(int64(cr.RejectedA)) + " → " + numfmt.Int(int64(cr.RejectedB)) + " requests"
}

// rejectedDetail is a -baseline verdict's line of a decode cell whose
// server refused requests in either run; "" when neither did.
func rejectedDetail(cr *compare.CellResult) string {
	if !cr.Rejected() {
		return ""
	}
	return fmt.Sprintf("rejected: baseline %s, now %s requests refused at admission in the window (shown, not decided)",
		numfmt.Int(int64(cr.RejectedA)), numfmt.Int(int64(cr.RejectedB)))
}
