// Package views renders what the commands show, apart from the domain
// packages that decide it (terraform's internal/command/views: one view per
// command, human and machine). compare builds one value per comparison
// (compare.Comparison); the diff view writes it as text, Markdown or JSON,
// the judge makes -baseline's verdicts of it (package judge), which
// JudgeWords words, and the baseline view writes its console notes. The run view's live lines (RunObserver) render the runner's
// events as they come; the plan view is internal/views/planview. No view
// decides: each reads the decisions the value holds.
package views

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/engine/registry"
	"github.com/slogate/slogate/internal/numfmt"
	"github.com/slogate/slogate/internal/vocab"
)

// Markers printed after a cell's Δ.
const (
	markRegressed    = "✗"
	markImproved     = "↑"
	markInconclusive = "?"
)

// writeTables writes every table of c as text, then the lost and errored
// cells with their reasons, a legend and how the decisions were made
// (MethodNote):
//
//	decode total_tps (tok/s, higher is better), tolerance 5%
//	  ctx  conc        1        64
//	  8K   A       408.2    6018.4
//	       B       410.0    5421.3
//	       Δ        +0.4%           -9.9% ✗
//	       CI  -2.1…+2.9%     -12.3…-7.4%
//
// A CI row (a CI column for prefill) appears where an interval decided a
// cell: its bounds of the change, each one-sided at the confidence the note
// gives. The inconclusive cells are listed after the tables with what
// would decide them (InconclusiveLines), then the cells whose server
// refused requests at admission in either run (RejectedLines).
func writeTables(w io.Writer, c *compare.Comparison) error {
	var b strings.Builder
	tol := numfmt.Percent(c.Policy.Tolerance)
	for i := range c.Tables {
		if i > 0 {
			b.WriteString("\n")
		}
		renderTable(&b, &c.Tables[i], c.Policy.Tolerance)
	}
	if len(c.Lost) > 0 {
		b.WriteString("\nCells A measured and B did not:\n")
		for _, f := range c.Lost {
			mark := markRegressed
			if f.Change == compare.Errored {
				mark = "!"
			}
			fmt.Fprintf(&b, "  %s %s\n", mark, FindingText(f))
		}
	}
	if lines := InconclusiveLines(c); len(lines) > 0 {
		fmt.Fprintf(&b, "\nInconclusive: neither regressed nor shown within %s:\n", tol)
		for _, l := range lines {
			fmt.Fprintf(&b, "  %s %s\n", markInconclusive, l)
		}
	}
	if lines := RejectedLines(c); len(lines) > 0 {
		fmt.Fprintf(&b, "\n%s\n", RejectedNote)
		for _, l := range lines {
			fmt.Fprintf(&b, "  %s\n", l)
		}
	}
	if len(c.Tables) > 0 {
		fmt.Fprintf(&b, "\nΔ = (B − A) ÷ A, with samples on both sides the Hodges–Lehmann estimate.  %s regression beyond %s, or lost   %s improvement beyond %s   %s inconclusive\n",
			markRegressed, tol, markImproved, tol, markInconclusive)
		b.WriteString("over cap = over capacity (not run)   error = not measured   — = not in that run   n/a = metric not reported   CI = bounds of the change\n")
		if note := MethodNote(c.Method); note != "" {
			b.WriteString(note + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// tested reports whether an interval decided any cell of t.
func tested(t *compare.Table) bool {
	for _, c := range t.Cells {
		if c.Test != nil {
			return true
		}
	}
	return false
}

// BoundsText is the bounds of the cell's change, "-12.3…-7.4%"; "" when no
// interval decided it.
func BoundsText(c *compare.Cell) string {
	if c.Test == nil {
		return ""
	}
	return bound(c.Test.Lower-1) + "…" + bound(c.Test.Upper-1) + "%"
}

// bound is a relative change in percent with a sign and one decimal, without
// the percent sign: "-12.3", "+2.9".
func bound(frac float64) string {
	return strings.TrimSuffix(numfmt.Delta(frac), "%")
}

// InconclusiveLines describes every inconclusive cell of the tables, one
// line each: the metric and cell, the estimated change, its bounds with
// their confidence and the sizes, the measured noise and the repeats a side
// that would decide it; with -inconclusive pass, whether it is accepted or
// fails for an estimate beyond the tolerance.
//
//	total_tps at decode/ctx=8K/conc=64: -8.2% (bounds -14.9…+0.3%, each at 95.2% confidence, 5+5 repeats); noise 4.1%: 14 repeats a side would decide it
func InconclusiveLines(cmp *compare.Comparison) []string {
	var out []string
	for _, t := range cmp.Tables {
		for i := range t.Cells {
			c := &t.Cells[i]
			if c.Change != compare.Inconclusive || c.Test == nil {
				continue
			}
			out = append(out, t.Metric.Name+" at "+c.Ref.Name()+": "+InconclusiveText(c, t.Metric.HigherIsBetter, cmp.Policy.Tolerance, cmp.Policy.Inconclusive))
		}
	}
	return out
}

// InconclusiveText is what InconclusiveLines says of one cell, after its
// name, for a metric whose direction is higherIsBetter, at the tolerance
// and under the policy the cell was decided with.
func InconclusiveText(c *compare.Cell, higherIsBetter bool, tolerance float64, policy compare.InconclusivePolicy) string {
	x := c.Test
	s := fmt.Sprintf("%s (bounds %s, each at %s confidence, %d+%d repeats)", numfmt.Delta(c.Delta), BoundsText(c), confidenceText(x.Confidence()), x.NA, x.NB)
	switch {
	case math.IsNaN(x.Noise):
	case x.Needed > 0:
		s += fmt.Sprintf("; noise %s: %d repeats a side would decide it", noiseText(x.Noise), x.Needed)
	default:
		s += fmt.Sprintf("; noise %s: more than %d repeats a side would be needed to decide it", noiseText(x.Noise), compare.MaxRepeatsEstimate)
	}
	if policy == compare.InconclusivePass {
		if c.EstimateBeyond(tolerance, higherIsBetter) {
			s += fmt.Sprintf("; the estimate is beyond %s: fails even with -inconclusive pass", numfmt.Percent(tolerance))
		} else {
			s += "; accepted (-inconclusive pass)"
		}
	}
	return s
}

// confidenceText is a confidence as a percentage with one decimal: "95.2%".
func confidenceText(c float64) string { return strconv.FormatFloat(c*100, 'f', 1, 64) + "%" }

// noiseText is a measured noise as a percentage with one decimal: "4.1%".
func noiseText(noise float64) string { return fmt.Sprintf("%.1f%%", noise*100) }

func renderTable(b *strings.Builder, t *compare.Table, tolerance float64) {
	unit := t.Metric.Unit
	if unit != "" {
		unit += ", "
	}
	fmt.Fprintf(b, "%s (%s%s), tolerance %s\n", t.Title(), unit, t.Metric.Direction(), numfmt.Percent(tolerance))
	if len(t.Cells) == 0 {
		b.WriteString("  (no cells in either run)\n")
		return
	}
	var rows [][]string
	labels := 2 // ctx and A/B/Δ
	if t.Phase == vocab.PhasePrefill {
		labels = 1
		head := []string{"ctx", "A", "B", "Δ  "}
		if tested(t) {
			head = append(head, "CI")
		}
		rows = append(rows, head)
		for _, ctx := range t.Contexts {
			c, ok := t.Lookup(ctx, 0)
			if !ok {
				continue
			}
			row := []string{vocab.FormatTokens(ctx), sideText(c.A), sideText(c.B), deltaText(c)}
			if tested(t) {
				row = append(row, BoundsText(c))
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
			ra := []string{vocab.FormatTokens(ctx), "A"}
			rb := []string{"", "B"}
			rd := []string{"", "Δ"}
			rp := []string{"", "CI"}
			any, anyTested := false, false
			for _, conc := range t.Concurrency {
				c, ok := t.Lookup(ctx, conc)
				if !ok {
					ra, rb, rd, rp = append(ra, ""), append(rb, ""), append(rd, ""), append(rp, "")
					continue
				}
				any = true
				ra, rb, rd = append(ra, sideText(c.A)+"  "), append(rb, sideText(c.B)+"  "), append(rd, deltaText(c))
				rp = append(rp, BoundsText(c)+"  ")
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
func sideText(s compare.Side) string {
	switch {
	case !s.Present:
		return "—"
	case s.HasValue:
		return numfmt.Value(s.Value)
	case s.Status == vocab.StatusOverCapacity:
		return "over cap"
	case s.Status == vocab.StatusError:
		return "error"
	case s.Status.Measured():
		return "n/a"
	}
	return string(s.Status)
}

// deltaText is the relative change with its marker.
func deltaText(c *compare.Cell) string {
	switch c.Change {
	case compare.OnlyA:
		return "A only  "
	case compare.OnlyB:
		return "B only  "
	case compare.Neither:
		return ""
	case compare.Lost:
		return "lost " + markRegressed
	case compare.Errored:
		return "error !"
	}
	d := "n/a"
	if !math.IsNaN(c.Delta) {
		d = numfmt.Delta(c.Delta)
	}
	// Every Δ ends in a two-character marker column ("" for a plain change)
	// so that the numbers line up.
	switch c.Change {
	case compare.Regressed:
		return d + " " + markRegressed
	case compare.Improved:
		return d + " " + markImproved
	case compare.Inconclusive:
		return d + " " + markInconclusive
	}
	return d + "  "
}

// writeHeader writes what heads `slogate diff`: the settings that differ
// (when compared anyway), one line naming each run (file, server, model,
// version, start), and the server differences.
func writeHeader(w io.Writer, pathA, pathB string, c *compare.Comparison) {
	if len(c.Settings) > 0 {
		fmt.Fprintf(w, "Settings differ (-allow-settings-change): %s\n", JoinDifferences(c.Settings, "; "))
	}
	fmt.Fprintf(w, "A: %s (%s)\n", pathA, c.A.Describe("2006-01-02 15:04 UTC", registry.Title))
	fmt.Fprintf(w, "B: %s (%s)\n", pathB, c.B.Describe("2006-01-02 15:04 UTC", registry.Title))
	if h := ServerHeader(c.Server); h != "" {
		fmt.Fprintf(w, "Server: %s\n", h)
	}
	for _, x := range c.Warnings {
		fmt.Fprintf(w, "Warning: %s\n", x)
	}
	fmt.Fprintln(w)
}

// writeSummary writes the closing line of `slogate diff`: the cells
// counted once each by their worst decision (cellCounts), then by cell
// metric how many regressed, improved, stayed, were inconclusive, were on
// one side only, were lost and errored; inconclusive cells are counted
// apart from the regressions, with how many -inconclusive pass accepted
// (those estimated beyond the tolerance still fail).
func writeSummary(w io.Writer, c *compare.Comparison) {
	fmt.Fprintln(w, "\n"+cellCountsText(cellCounts(c))+"; by cell metric: "+summaryText(c))
}

// summaryText is the cell metrics' counts of writeSummary on one line.
func summaryText(c *compare.Comparison) string {
	s := c.Summary()
	lost, errored := 0, 0
	for _, f := range c.Lost {
		if f.Change == compare.Lost {
			lost++
		} else {
			errored++
		}
	}
	accepted := ""
	if s[compare.Inconclusive] > 0 && c.Policy.Inconclusive == compare.InconclusivePass {
		accepted = fmt.Sprintf(" (%d accepted: -inconclusive pass)", c.Accepted())
	}
	return fmt.Sprintf("%d regressed, %d improved, %d unchanged, %d inconclusive%s, %d on one side only; %d cell(s) lost, %d errored",
		s[compare.Regressed], s[compare.Improved], s[compare.Unchanged], s[compare.Inconclusive], accepted, s[compare.OnlyA]+s[compare.OnlyB], lost, errored)
}
