package report

import (
	"fmt"
	"strings"

	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/warning"
)

// warnings.go builds the Warnings list.

// cellWarning is one warning of one cell, the cell named as results.json
// names it ("traffic/chat/conc=4").
type cellWarning struct{ cell, text string }

// groupCellWarnings lists each warning once, in the order first seen,
// after the cells that carry it: "decode/ctx=8K/conc=1: text" for one
// cell, "traffic/chat/conc=4, traffic/chat/conc=8 (2 cells): text" for a
// warning several cells repeat word for word (a dataset's counts, which
// every cell of its block carried).
func groupCellWarnings(ws []cellWarning) []string {
	var order []string
	cells := map[string][]string{}
	for _, w := range ws {
		if _, seen := cells[w.text]; !seen {
			order = append(order, w.text)
		}
		if cs := cells[w.text]; len(cs) == 0 || cs[len(cs)-1] != w.cell {
			cells[w.text] = append(cs, w.cell)
		}
	}
	out := make([]string, 0, len(order))
	for _, text := range order {
		cs := cells[text]
		if len(cs) == 1 {
			out = append(out, cs[0]+": "+text)
			continue
		}
		out = append(out, fmt.Sprintf("%s (%d cells): %s", strings.Join(cs, ", "), len(cs), text))
	}
	return out
}

// runWarnings is the Warnings list: why the run ended early or was
// interrupted first, then the cells' warnings, then the run's.
func runWarnings(res *result.Results, cells []string) []string {
	w := cells
	// An interrupted run records why in Error too: said once.
	if res.Interrupted {
		w = append([]string{"The run was interrupted; cells not reached are missing."}, w...)
	} else if res.Error != "" {
		w = append([]string{"The run ended early: " + res.Error}, w...)
	}
	return append(w, warning.Strings(res.Warnings)...)
}
