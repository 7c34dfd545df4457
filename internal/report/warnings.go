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

// warningGroup is one warning text and the cells that carry it, in the
// order first seen.
type warningGroup struct {
	cells []string
	text  string
}

// String is "decode/ctx=8K/conc=1: text" for one cell,
// "traffic/chat/conc=4, traffic/chat/conc=8 (2 cells): text" for several.
func (g warningGroup) String() string {
	if len(g.cells) == 1 {
		return g.cells[0] + ": " + g.text
	}
	return fmt.Sprintf("%s (%d cells): %s", strings.Join(g.cells, ", "), len(g.cells), g.text)
}

// groupCellWarnings lists each warning once, in the order first seen,
// with the cells that carry it: a warning several cells repeat word for
// word (a dataset's counts, which every cell of its block carried) is one
// group.
func groupCellWarnings(ws []cellWarning) []warningGroup {
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
	out := make([]warningGroup, 0, len(order))
	for _, text := range order {
		out = append(out, warningGroup{cells: cells[text], text: text})
	}
	return out
}

// warningList is the Warnings section as the run left it: whether the
// run was interrupted or ended early (runError), the cells' warnings
// grouped, and the run's own warnings. Lines words them.
type warningList struct {
	interrupted bool
	runError    string
	cells       []warningGroup
	run         []warning.Warning
}

// newWarningList is res's Warnings section, with the cells' warnings
// cells.
func newWarningList(res *result.Results, cells []cellWarning) warningList {
	return warningList{interrupted: res.Interrupted, runError: res.Error, cells: groupCellWarnings(cells), run: res.Warnings}
}

// Lines is the Warnings list: why the run ended early or was
// interrupted first, then the cells' warnings, then the run's.
func (l warningList) Lines() []string {
	var w []string
	// An interrupted run records why in Error too: said once.
	if l.interrupted {
		w = append(w, "The run was interrupted; cells not reached are missing.")
	} else if l.runError != "" {
		w = append(w, "The run ended early: "+l.runError)
	}
	for _, g := range l.cells {
		w = append(w, g.String())
	}
	return append(w, warning.Strings(l.run)...)
}

// Warnings is the view's Warnings list (warningList.Lines).
func (v *view) Warnings() []string { return v.warnings.Lines() }
