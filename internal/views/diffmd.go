package views

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/engine/registry"
	"github.com/slogate/slogate/internal/numfmt"
	"github.com/slogate/slogate/internal/report"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// Verdict is the diff's outcome on one line: "FAIL (exit 1): 2 of 6
// cells regressed, 4 within tolerance" (cells, not cell metrics:
// CellCounts), then the traffic cells' and rate searches' decisions
// ("capacity: 1 regressed, 1 within"); across engines it says the
// comparison informs only.
func (d Diff) Verdict() string {
	c := d.C
	s := fmt.Sprintf("%s (exit %d)", strings.ToUpper(c.Outcome.String()), c.ExitCode())
	switch {
	case len(c.Tables) > 0:
		s += ": " + cellCountsText(cellCounts(c))
	case len(c.Traffic) == 0:
		s += ": no decode or prefill cells to compare"
	}
	if t := trafficSummary(c.Traffic); t != "" {
		s += "; " + t
	}
	if len(c.Capacity) > 0 {
		s += "; capacity: " + capacitySummary(c.Capacity)
	}
	if c.EngineChanged && c.Outcome != vocab.Error {
		s += "; the engines differ: informs only, never gates"
	}
	return s
}

// cellCount is how many compared cells one word describes.
type cellCount struct {
	word string
	n    int
}

// cellCounts counts the decode and prefill cells of c once each, however
// many metrics were compared, by the word its metrics' decisions earn,
// worst first: lost and errored (A measured it, B did not), regressed (a
// metric regressed), inconclusive (none regressed, one undecided),
// improved, within tolerance, on one side only, and measured in neither
// run (over capacity in both, say). The words read the
// decisions c holds; nothing is decided here.
func cellCounts(c *compare.Comparison) []cellCount {
	counts := []cellCount{{"lost", 0}, {"errored", 0}, {"regressed", 0}, {"inconclusive", 0}, {"improved", 0}, {"within tolerance", 0}, {"on one side only", 0}, {"measured in neither run", 0}}
	for i := range c.Cells {
		counts[cellWord(&c.Cells[i])].n++
	}
	return counts
}

// cellWord is the index in cellCounts' words of one cell.
func cellWord(cr *compare.CellResult) int {
	if cr.Lost != nil {
		if cr.Lost.Change == compare.Errored {
			return 1
		}
		return 0
	}
	has := map[compare.Change]bool{}
	for _, m := range cr.Metrics {
		has[m.Cell.Change] = true
	}
	switch {
	case has[compare.Regressed]:
		return 2
	case has[compare.Inconclusive]:
		return 3
	case has[compare.Improved]:
		return 4
	case has[compare.Unchanged]:
		return 5
	case has[compare.OnlyA] || has[compare.OnlyB]:
		return 6
	}
	return 7
}

// cellCountsText is the counts in words, the total with the first:
// "2 of 6 cells regressed, 1 inconclusive, 3 within tolerance"; words
// no cell earned are left out.
func cellCountsText(counts []cellCount) string {
	total := 0
	for _, k := range counts {
		total += k.n
	}
	var parts []string
	for _, k := range counts {
		if k.n == 0 {
			continue
		}
		if len(parts) == 0 {
			parts = append(parts, fmt.Sprintf("%d of %d %s %s", k.n, total, plural(total, "cell", "cells"), k.word))
			continue
		}
		parts = append(parts, fmt.Sprintf("%d %s", k.n, k.word))
	}
	if len(parts) == 0 {
		return "no cells compared"
	}
	return strings.Join(parts, ", ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// mdFailedCells is how many failed cells the Markdown's "What failed"
// lists before it points at the table.
const mdFailedCells = 10

// mdOpenSLOs is how many SLO rows the Markdown shows open; more are
// collapsed, the failed ones still listed open.
const mdOpenSLOs = 10

// Markdown writes the diff for a pull-request comment or the GitHub step
// summary, short enough to read there: the verdict as a heading (cells
// counted once, however many metrics), the decision rule in plain words,
// the runs and their differences, what failed and why (each failed cell
// with its metrics' changes), B's SLO results (its assert and expect
// verdicts beside A's, when the runs have them), every cell and metric
// compared in a collapsed table (report.WriteComparisonTable), the
// inconclusive cells and what would decide them, the cells whose server
// refused requests at admission, the rate searches' capacity, the
// correctness blocks, the traffic cells, and how the decisions were made
// as a footnote.
func (d Diff) Markdown(w io.Writer) error {
	c := d.C
	b := bufio.NewWriter(w)
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	p("### slogate diff: %s\n\n", md(d.Verdict()))
	if len(c.Tables) > 0 {
		p("%s\n\n", md(ruleText(c)))
	}
	p("- A (baseline): %s — %s\n", mdCode(d.PathA), md(c.A.Describe("2006-01-02 15:04 UTC", registry.Title)))
	p("- B: %s — %s\n", mdCode(d.PathB), md(c.B.Describe("2006-01-02 15:04 UTC", registry.Title)))
	if h := ServerHeader(c.Server); h != "" {
		p("- Server: %s\n", md(h))
	}
	for _, x := range c.Warnings {
		p("- Warning: %s\n", md(x.String()))
	}
	if len(c.Settings) > 0 {
		p("- Settings differ (-allow-settings-change): %s\n", md(JoinDifferences(c.Settings, "; ")))
	}
	if len(c.Tables) == 0 { // no rule line above: traffic, searches or correctness only
		p("- Tolerance %s, α = %s\n", md(numfmt.Percent(c.Policy.Tolerance)), md(numfmt.Shortest(c.Policy.Alpha)))
	}
	if c.Policy.Inconclusive == compare.InconclusivePass {
		p("- -inconclusive pass: an undecided cell passes unless its estimate is beyond the tolerance\n")
	}
	p("\n")
	if lines := failedCellLines(c); len(lines) > 0 {
		p("**What failed**\n\n")
		for i, l := range lines {
			if i == mdFailedCells {
				p("- … and %d more cells: see the table below\n", len(lines)-i)
				break
			}
			p("- %s\n", md(l))
		}
		p("\n")
	}
	writeSLOs(b, c)
	if rec := c.Record(); rec != nil && len(rec.Rows) > 0 {
		p("<details><summary>Every cell and metric compared (%d %s)</summary>\n\n", len(rec.Rows), plural(len(rec.Rows), "row", "rows"))
		b.Flush()
		if err := report.WriteComparisonTable(w, rec); err != nil {
			return err
		}
		p("\n</details>\n\n")
	}
	if lines := InconclusiveLines(c); len(lines) > 0 {
		p("Inconclusive: neither regressed nor shown within %s:\n\n", md(numfmt.Percent(c.Policy.Tolerance)))
		for _, l := range lines {
			p("- %s\n", md(l))
		}
		p("\n")
	}
	if lines := RejectedLines(c); len(lines) > 0 {
		p("%s\n\n", md(RejectedNote))
		for _, l := range lines {
			p("- %s\n", md(l))
		}
		p("\n")
	}
	if lines := CapacityLines(c); len(lines) > 0 {
		p("%s\n\n", md(CapacityNote))
		for _, l := range lines {
			p("- %s\n", md(l))
		}
		p("\n")
	}
	if lines := CorrectnessLines(c); len(lines) > 0 {
		p("Correctness (greedy outputs and accuracy):\n\n")
		for _, l := range lines {
			indent := ""
			if strings.HasPrefix(l, "  ") {
				indent = "  "
			}
			p("%s- %s\n", indent, md(strings.TrimSpace(l)))
		}
		p("\n")
	}
	if len(c.Traffic) > 0 {
		p("%s\n\n", md(strings.TrimSuffix(TrafficNote, ":")+":"))
		for _, l := range TrafficLines(c.Traffic, c.Policy.Tolerance) {
			indent := ""
			if strings.HasPrefix(l, "  ") {
				indent = "  "
			}
			p("%s- %s\n", indent, md(strings.TrimSpace(l)))
		}
		p("\n")
	}
	if c.EngineChanged {
		p("%s\n\n", md(EngineNote(c)))
	}
	if note := methodFootnote(c.Method); note != "" {
		p("<sub>¹ %s</sub>\n", md(note))
	}
	return b.Flush()
}

// ruleText is how a cell is decided, in plain words, at the comparison's
// tolerance and confidence: "A cell regressed when a metric is worse than
// the baseline by more than 5% with 95% confidence, passes when it is no
// more than 5% worse with 95% confidence, and is inconclusive in
// between.¹"; without any statistical decision, the tolerance alone.
func ruleText(c *compare.Comparison) string {
	tol := numfmt.Percent(c.Policy.Tolerance)
	if c.Method.Tested == 0 {
		return "A cell regressed when a metric is worse than the baseline by more than " + tol + ".¹"
	}
	conf := report.ConfidenceWords(c.Policy.Alpha)
	return fmt.Sprintf("A cell regressed when a metric is worse than the baseline by more than %s with %s confidence, passes when it is no more than %s worse with %s confidence, and is inconclusive in between.¹",
		tol, conf, tol, conf)
}

// methodFootnote is the footnote ruleText points at: the method and the
// confidence the repeats attain, or why the decisions are not statistical
// (MethodNote).
func methodFootnote(m compare.Method) string {
	switch {
	case m.Tested+m.Untested == 0:
		return ""
	case m.Untested > 0:
		return MethodNote(m)
	}
	return fmt.Sprintf("Each bound of a cell's change is one-sided at %s confidence or more (%s attained with %d+%d repeats, α = %s): the Hodges–Lehmann estimate of the change, its bounds distribution-free from the exact Mann–Whitney distribution (docs/method.md#comparing-runs).",
		report.ConfidenceWords(m.Alpha), confidenceText(m.Confidence), m.SizeA, m.SizeB, numfmt.Shortest(m.Alpha))
}

// failedCellLines are the cells that failed the comparison, one line
// each, in the tables' order: a lost or errored cell's finding; a
// regressed or inconclusive cell's metrics that were, each with both
// values and the change: "decode/ctx=8K/conc=1 regressed: total_tps
// 375 → 309.2 (-17.6%), ttft_ms 87.7 → 104 (+18.6%)".
func failedCellLines(c *compare.Comparison) []string {
	var out []string
	for i := range c.Cells {
		cr := &c.Cells[i]
		if !cr.Outcome.Failed() {
			continue
		}
		if cr.Lost != nil {
			out = append(out, FindingText(*cr.Lost))
			continue
		}
		var regressed, undecided []string
		for _, m := range cr.Metrics {
			x := &m.Cell
			change := fmt.Sprintf("%s %s → %s (%s)", m.Metric.Name, sideText(x.A), sideText(x.B), numfmt.Delta(x.Delta))
			switch {
			case x.Change == compare.Regressed:
				regressed = append(regressed, change)
			case x.Change == compare.Inconclusive && (c.Policy.Inconclusive == compare.InconclusiveFail || x.EstimateBeyond(c.Policy.Tolerance, m.Metric.HigherIsBetter)):
				// -inconclusive pass accepts the others
				undecided = append(undecided, change)
			}
		}
		var parts []string
		if len(regressed) > 0 {
			parts = append(parts, "regressed: "+strings.Join(regressed, ", "))
		}
		if len(undecided) > 0 {
			parts = append(parts, "inconclusive: "+strings.Join(undecided, ", "))
		}
		out = append(out, cr.Ref.Name()+" "+strings.Join(parts, "; "))
	}
	return out
}

// writeSLOs writes B's SLO results, its assert and expect verdicts, beside
// A's outcome of the same test: a count, then a table (the failed ones
// open and the rest collapsed when there are more than mdOpenSLOs).
// Nothing when B has none: a diff of runs without SLOs says nothing of
// them.
func writeSLOs(b *bufio.Writer, c *compare.Comparison) {
	var slos []result.Verdict
	for _, v := range c.B.Verdicts {
		if v.Kind == vocab.KindAssert || v.Kind == vocab.KindExpect {
			slos = append(slos, v)
		}
	}
	if len(slos) == 0 {
		return
	}
	inA := map[string]vocab.Outcome{}
	for _, v := range c.A.Verdicts {
		inA[v.Test] = v.Outcome
	}
	var failed []result.Verdict
	for _, v := range slos {
		if v.Outcome.Failed() {
			failed = append(failed, v)
		}
	}
	fmt.Fprintf(b, "**SLOs** (B's assert and expect blocks): %s\n\n", md(report.Tally(slos)))
	table := func(vs []result.Verdict) {
		b.WriteString("| SLO | Baseline | Now | Measured now |\n|---|---|---|---|\n")
		for _, v := range vs {
			was := "—"
			if o, ok := inA[v.Test]; ok {
				was = strings.ToUpper(o.String())
			}
			measured := strings.Join(v.Details, "; ")
			if v.Outcome.Failed() && v.Message != "" && !strings.Contains(measured, v.Message) {
				measured += " — " + v.Message
			}
			fmt.Fprintf(b, "| %s | %s | %s | %s |\n", md(v.Test), was, strings.ToUpper(v.Outcome.String()), md(measured))
		}
		b.WriteString("\n")
	}
	if len(slos) <= mdOpenSLOs {
		table(slos)
		return
	}
	if len(failed) > 0 {
		table(failed)
	}
	fmt.Fprintf(b, "<details><summary>Every SLO (%d)</summary>\n\n", len(slos))
	table(slos)
	b.WriteString("</details>\n\n")
}

// md escapes text for a Markdown paragraph or list item: no HTML, no
// table pipes, one line.
func md(s string) string {
	s = strings.ReplaceAll(s, "\r", "")
	s = strings.ReplaceAll(s, "\n", " ")
	return strings.NewReplacer("<", "&lt;", ">", "&gt;", "|", `\|`).Replace(s)
}

// mdCode wraps s in a code span long enough to hold any backticks in it.
func mdCode(s string) string {
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}
