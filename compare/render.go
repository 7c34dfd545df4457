package compare

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/slogate/slogate/internal/numfmt"
	"github.com/slogate/slogate/result"
)

// Markers printed after a cell's Δ.
const (
	markRegressed = "✗"
	markImproved  = "↑"
	markNoise     = "~"
)

// Render writes every table as text, then the lost and errored cells with
// their reasons, a legend and how the decisions were made (MethodOf):
//
//	decode total_tps (tok/s, higher is better), tolerance 5%
//	  ctx  conc        1        64
//	  8K   A       408.2    6018.4
//	       B       410.0    5421.3
//	       Δ       +0.4%  -9.9% ✗
//	       p       0.690     0.008
//
// A p row (a p column for prefill) appears where a U test decided a cell.
func Render(w io.Writer, tables []Table) error {
	var b strings.Builder
	for i, t := range tables {
		if i > 0 {
			b.WriteString("\n")
		}
		renderTable(&b, &t)
	}
	if fs := Findings(tables); len(fs) > 0 {
		b.WriteString("\nCells A measured and B did not:\n")
		for _, f := range fs {
			mark := markRegressed
			if f.Change == Errored {
				mark = "!"
			}
			fmt.Fprintf(&b, "  %s %s\n", mark, f)
		}
	}
	if len(tables) > 0 {
		tol := numfmt.Percent(tables[0].Tolerance)
		fmt.Fprintf(&b, "\nΔ = (B − A) ÷ A.  %s regression beyond %s, or lost   %s improvement beyond %s   %s not significant (U test p > α; with fewer repeats, the spreads of both runs overlap)\n",
			markRegressed, tol, markImproved, tol, markNoise)
		b.WriteString("over cap = over capacity (not run)   error = not measured   — = not in that run   n/a = metric not reported   p = U test p-value\n")
		if note := MethodOf(tables).Note(); note != "" {
			b.WriteString(note + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// tested reports whether a U test decided any cell of t.
func tested(t *Table) bool {
	for _, c := range t.Cells {
		if c.Test != nil {
			return true
		}
	}
	return false
}

// pText is the p-value of the cell's U test, "" when it had none.
func pText(c *Cell) string {
	if c.Test == nil {
		return ""
	}
	return strconv.FormatFloat(c.Test.P, 'f', 3, 64)
}

func renderTable(b *strings.Builder, t *Table) {
	unit := t.Metric.Unit
	if unit != "" {
		unit += ", "
	}
	fmt.Fprintf(b, "%s (%s%s), tolerance %s\n", t.Title(), unit, t.Metric.Direction(), numfmt.Percent(t.Tolerance))
	if len(t.Cells) == 0 {
		b.WriteString("  (no cells in either run)\n")
		return
	}
	var rows [][]string
	labels := 2 // ctx and A/B/Δ
	if t.Phase == result.PhasePrefill {
		labels = 1
		head := []string{"ctx", "A", "B", "Δ  "}
		if tested(t) {
			head = append(head, "p")
		}
		rows = append(rows, head)
		for _, ctx := range t.Contexts {
			c, ok := t.Lookup(ctx, 0)
			if !ok {
				continue
			}
			row := []string{result.FormatTokens(ctx), sideText(c.A), sideText(c.B), deltaText(c)}
			if tested(t) {
				row = append(row, pText(c))
			}
			rows = append(rows, row)
		}
	} else {
		head := []string{"ctx", "conc"}
		for _, conc := range t.Concurrency {
			head = append(head, strconv.Itoa(conc)+"  ")
		}
		rows = append(rows, head)
		for _, ctx := range t.Contexts {
			ra := []string{result.FormatTokens(ctx), "A"}
			rb := []string{"", "B"}
			rd := []string{"", "Δ"}
			rp := []string{"", "p"}
			any, anyTested := false, false
			for _, conc := range t.Concurrency {
				c, ok := t.Lookup(ctx, conc)
				if !ok {
					ra, rb, rd, rp = append(ra, ""), append(rb, ""), append(rd, ""), append(rp, "")
					continue
				}
				any = true
				ra, rb, rd = append(ra, sideText(c.A)+"  "), append(rb, sideText(c.B)+"  "), append(rd, deltaText(c))
				rp = append(rp, pText(c)+"  ")
				anyTested = anyTested || c.Test != nil
			}
			if any {
				rows = append(rows, ra, rb, rd)
				if anyTested {
					rows = append(rows, rp)
				}
			}
		}
	}
	writeColumns(b, rows, labels)
}

// writeColumns left-aligns the first labels columns and right-aligns the
// rest, two spaces apart, indented by two.
func writeColumns(b *strings.Builder, rows [][]string, labels int) {
	var width []int
	for _, r := range rows {
		for i, s := range r {
			if i >= len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], utf8.RuneCountInString(s))
		}
	}
	for _, r := range rows {
		var line strings.Builder
		line.WriteString("  ")
		for i, s := range r {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(s))
			if i > 0 {
				line.WriteString("  ")
			}
			if i < labels {
				line.WriteString(s + pad)
			} else {
				line.WriteString(pad + s)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
}

// sideText is one run's value, or why it has none.
func sideText(s Side) string {
	switch {
	case !s.Present:
		return "—"
	case s.HasValue:
		return numfmt.Value(s.Value)
	case s.Status == result.StatusOverCapacity:
		return "over cap"
	case s.Status == result.StatusError:
		return "error"
	case s.Status.Measured():
		return "n/a"
	}
	return string(s.Status)
}

// deltaText is the relative change with its marker.
func deltaText(c *Cell) string {
	switch c.Change {
	case OnlyA:
		return "A only  "
	case OnlyB:
		return "B only  "
	case Neither:
		return ""
	case Lost:
		return "lost " + markRegressed
	case Errored:
		return "error !"
	}
	d := "n/a"
	if !math.IsNaN(c.Delta) {
		d = numfmt.Delta(c.Delta)
	}
	// Every Δ ends in a two-character marker column ("" for a plain change)
	// so that the numbers line up.
	switch c.Change {
	case Regressed:
		return d + " " + markRegressed
	case Improved:
		return d + " " + markImproved
	case NotSignificant:
		return d + " " + markNoise
	}
	return d + "  "
}

// WriteHeader writes what heads `slogate diff`: the settings that differ
// (when compared anyway), one line naming each run (file, server, model,
// version, start), and the server differences.
func WriteHeader(w io.Writer, pathA string, a *result.Results, pathB string, b *result.Results, settings []Difference) {
	if len(settings) > 0 {
		fmt.Fprintf(w, "Settings differ (-allow-settings-change): %s\n", JoinDifferences(settings, "; "))
	}
	fmt.Fprintf(w, "A: %s (%s)\n", pathA, a.Describe("2006-01-02 15:04 UTC"))
	fmt.Fprintf(w, "B: %s (%s)\n", pathB, b.Describe("2006-01-02 15:04 UTC"))
	if h := ServerHeader(Server(a, b)); h != "" {
		fmt.Fprintf(w, "Server: %s\n", h)
	}
	fmt.Fprintln(w)
}

// WriteSummary writes the closing line of `slogate diff`: how many cells
// regressed, improved, stayed, were not significant, were on one side only,
// were lost and errored.
func WriteSummary(w io.Writer, tables []Table) {
	s := Summarize(tables)
	lost, errored := 0, 0
	for _, f := range Findings(tables) {
		if f.Change == Lost {
			lost++
		} else {
			errored++
		}
	}
	fmt.Fprintf(w, "\n%d regressed, %d improved, %d unchanged, %d not significant, %d on one side only; %d cell(s) lost, %d errored\n",
		s[Regressed], s[Improved], s[Unchanged], s[NotSignificant], s[OnlyA]+s[OnlyB], lost, errored)
}
