package assert

import (
	"fmt"

	"github.com/slogate/slogate/compare"
	"github.com/slogate/slogate/internal/numfmt"
	"github.com/slogate/slogate/result"
)

// CompareBaseline compares every decode and prefill cell of res with the same
// cell of base and returns one verdict per cell, named
// "<server>/baseline/decode/ctx=8K/conc=64", over the default metrics
// (total_tps, ttft_ms and tbt_ms for decode; tps for prefill). tolerance is
// a fraction (0.05). A cell fails when any metric regressed beyond the
// tolerance; a cell the baseline measured but this run did not is an
// infrastructure Error; a cell the baseline did not measure is a Skip.
func CompareBaseline(base, res *result.Results, tolerance float64) []result.Verdict {
	tables, err := compare.Compare(base, res, compare.Options{Tolerance: tolerance})
	if err != nil { // only for unknown metric names; the defaults are known
		panic(err)
	}
	server := res.Server.Name
	type entry struct {
		ref   result.CellRef
		cells []compare.Cell
		mets  []result.Metric
	}
	var order []result.CellRef
	byRef := map[result.CellRef]*entry{}
	for _, t := range tables {
		for _, c := range t.Cells {
			e := byRef[c.Ref]
			if e == nil {
				e = &entry{ref: c.Ref}
				byRef[c.Ref] = e
				order = append(order, c.Ref)
			}
			e.cells = append(e.cells, c)
			e.mets = append(e.mets, t.Metric)
		}
	}
	// order is already prefill first, then each decode matrix row by row:
	// the order of compare's tables and of their cells.
	var out []result.Verdict
	for _, ref := range order {
		e := byRef[ref]
		out = append(out, baselineVerdict(server, e.ref, e.cells, e.mets, tolerance))
	}
	return out
}

// baselineVerdict merges the per-metric comparisons of one cell.
func baselineVerdict(server string, ref result.CellRef, cells []compare.Cell, mets []result.Metric, tol float64) result.Verdict {
	v := result.Verdict{
		Test:  result.TestID{Server: server, Kind: result.KindBaseline, Cell: &ref}.Name(),
		Kind:  result.KindBaseline,
		Rule:  "within " + numfmt.Percent(tol) + " of the baseline",
		Cells: []result.CellRef{ref},
	}
	a, b := cells[0].A, cells[0].B // the cell's presence and status are the same for every metric
	switch {
	case !a.Present || !a.Status.Measured():
		v.Outcome = result.Skip
		if !a.Present {
			v.Message = "not in the baseline"
		} else {
			v.Message = "baseline cell not measured: " + reasonFor(a.Status, a.Reason)
		}
		return v
	case !b.Present || !b.Status.Measured():
		v.Outcome, v.Infra = result.Error, true
		v.Message = unmeasured{ref: ref, reason: reasonFor(b.Status, b.Reason)}.message() // an absent cell has no status: "not measured"
		v.Details = []string{refExpr(ref) + ": " + v.Message + " (the baseline measured it)"}
		return v
	}
	var regressed []string
	for i, c := range cells {
		m := mets[i]
		line := fmt.Sprintf("%s: baseline %s, now %s", m.Name, sideValue(c.A), sideValue(c.B))
		if c.A.HasValue && c.B.HasValue {
			line += " (" + deltaOrNA(c.Delta) + ")"
		}
		switch c.Change {
		case compare.Regressed:
			line += fmt.Sprintf(", regressed beyond %s (%s)", numfmt.Percent(tol), m.Direction())
			regressed = append(regressed, m.Name)
		case compare.NotSignificant:
			line += ", within the spread of both runs"
		case compare.Improved:
			line += ", improved"
		}
		v.Details = append(v.Details, line)
	}
	if len(regressed) > 0 {
		v.Outcome = result.Fail
		v.Message = fmt.Sprintf("%s regressed beyond %s against the baseline", joinAnd(regressed), numfmt.Percent(tol))
	}
	return v
}

func sideValue(s compare.Side) string {
	if !s.HasValue {
		return "n/a"
	}
	return numfmt.Value(s.Value)
}

func deltaOrNA(d float64) string {
	if d != d { // NaN: the baseline value was 0
		return "n/a"
	}
	return numfmt.Delta(d)
}

// joinAnd joins names as "a", "a and b", "a, b and c".
func joinAnd(names []string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	s := names[0]
	for _, n := range names[1 : len(names)-1] {
		s += ", " + n
	}
	return s + " and " + names[len(names)-1]
}
