package report

import (
	"bufio"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/numfmt"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// comparisonTable is a -baseline comparison (result.Comparison) as a table:
// a row per cell and metric with the baseline's value, this run's, the
// change, its bounds and the outcome; report.md, report.html and diff
// -format md show it. It holds the comparison and its rows, the decode
// and prefill cells' before the traffic cells'; its Intro, Header and
// Rows word them.
type comparisonTable struct {
	c    *result.Comparison
	rows []result.ComparisonRow
}

// newComparisonTable is c's table; nil without a comparison.
func newComparisonTable(c *result.Comparison) *comparisonTable {
	if c == nil {
		return nil
	}
	return &comparisonTable{c: c, rows: slices.Concat(c.Rows, c.Traffic)}
}

// Intro is the paragraph above the table: the baseline, the tolerance
// and level, what Change and Bounds mean, and what the comparison warns
// of.
func (t *comparisonTable) Intro() string {
	c := t.c
	intro := "Against the baseline " + c.Baseline + ", tolerance " + numfmt.Percent(c.Tolerance) + ", α = " + numfmt.Shortest(c.Alpha) +
		". Change = (now − baseline) ÷ baseline, with repeats on both sides the Hodges–Lehmann estimate; each bound of the change is one-sided at " +
		ConfidenceWords(c.Alpha) + " confidence or more (results.json keeps the level each attained)."
	if len(c.Traffic) > 0 {
		intro += " A traffic cell's rows are statistics of its window's requests, paired request for request when both runs sent one schedule, their bounds a bootstrap of the requests (docs/method.md#comparing-traffic)."
	}
	if c.InformsOnly {
		intro += " The engines differ: the comparison informs and never gates (docs/method.md#comparing-engines)."
	}
	for _, w := range c.Warnings {
		// The machines differ (warning.MachineDiffers): the rows it left
		// undecided read "inconclusive: regressed" or "inconclusive: unchanged".
		intro += " Warning: " + w.String() + " (docs/method.md#machine-against-the-baseline)."
	}
	return intro
}

// Header is the table's header, the bounds' column headed with their
// confidence.
func (t *comparisonTable) Header() []string {
	return []string{"Cell", "Metric", "Baseline", "Now", "Change", "Bounds (" + ConfidenceWords(t.c.Alpha) + " confidence)", "Outcome"}
}

// Rows are the table's rows, a cell's metric each.
func (t *comparisonTable) Rows() [][]string {
	var rows [][]string
	for _, r := range t.rows {
		metric := r.Metric
		if r.Unit != "" {
			metric += " (" + r.Unit + ")"
		}
		rows = append(rows, []string{r.Cell, metric, rowValue(r.Baseline, r.BaselineStatus, r.BaselineRepeats), rowValue(r.Now, r.NowStatus, r.NowRepeats),
			rowChange(r.Change), rowBounds(r), rowOutcome(r)})
	}
	return rows
}

// ConfidenceWords is the confidence 1 − α as a percentage to a tenth,
// "95%", as the comparison's tables and diff -format md head their
// bounds; a comparison recorded without its α was decided at
// compare.DefaultAlpha.
func ConfidenceWords(alpha float64) string {
	if alpha <= 0 {
		alpha = compare.DefaultAlpha
	}
	return numfmt.Percent(math.Round((1-alpha)*1000) / 1000)
}

// rowValue is one side's value, or why it has none: "—" when that run has
// no such cell, "over cap", "error", "n/a" (measured without the metric).
func rowValue(v *float64, st vocab.Status, repeats int) string {
	switch {
	case v != nil:
		return numfmt.Value(*v)
	case repeats == 0:
		return dash
	case st == vocab.StatusOverCapacity:
		return "over cap"
	case st == vocab.StatusError:
		return "error"
	case st == vocab.StatusUnmeasurable:
		return "unmeasurable"
	case st.Measured():
		return "n/a"
	}
	return strings.ReplaceAll(string(st), "_", " ")
}

func rowChange(c *float64) string {
	if c == nil {
		return dash
	}
	return numfmt.Delta(*c)
}

// rowBounds is "-18.6…-18.0%", or "—" without an interval: the
// confidence, at least 1 − α, heads the column (the level each row
// attained stays in results.json and diff -format json).
func rowBounds(r result.ComparisonRow) string {
	if r.Lower == nil || r.Upper == nil {
		return dash
	}
	return strings.TrimSuffix(numfmt.Delta(*r.Lower), "%") + "…" + numfmt.Delta(*r.Upper)
}

// rowOutcome is the outcome and the decision: "FAIL: regressed", "pass:
// unchanged", "skip: now only", "INCONCLUSIVE".
func rowOutcome(r result.ComparisonRow) string {
	o, decision := r.Outcome.String(), strings.ReplaceAll(r.Decision, "_", " ")
	if r.Outcome.Failed() {
		o = strings.ToUpper(o)
	}
	if decision == r.Outcome.String() {
		return o // INCONCLUSIVE, not INCONCLUSIVE: inconclusive
	}
	return o + ": " + decision
}

// writeComparison is report.md's comparison section.
func writeComparison(b *bufio.Writer, t *comparisonTable) {
	if t == nil {
		return
	}
	b.WriteString("## Baseline comparison\n\n" + mdText(t.Intro()) + "\n\n")
	writeComparisonRows(b, t)
	b.WriteString("\n")
}

func writeComparisonRows(b *bufio.Writer, t *comparisonTable) {
	mdTable(b, t.Header(), func(row func(...string)) {
		for _, r := range t.Rows() {
			row(r...)
		}
	})
}

// WriteComparisonTable writes c's table as Markdown, a row per cell and
// metric (baseline, now, change, bounds, outcome), without a heading: the
// table report.md shows under "Baseline comparison", for diff -format md.
func WriteComparisonTable(w io.Writer, c *result.Comparison) error {
	t := newComparisonTable(c)
	if t == nil {
		return nil
	}
	b := bufio.NewWriter(w)
	writeComparisonRows(b, t)
	return b.Flush()
}

// baselineValue is the baseline's value of metric at a decode cell (phase
// decode, matrix label) or a prefill cell, for the charts; ok is false
// without a comparison or a baseline value there.
func baselineValue(c *result.Comparison, phase vocab.Phase, label string, ctx, conc int, metric string) (float64, bool) {
	if c == nil {
		return 0, false
	}
	for _, r := range c.Rows {
		if r.Phase != phase || r.Metric != metric || r.Context != ctx || r.Baseline == nil {
			continue
		}
		if phase == vocab.PhaseDecode && (r.Concurrency != conc || vocab.CellRef{Phase: phase, Matrix: r.Matrix}.MatrixLabel() != label) {
			continue
		}
		return *r.Baseline, true
	}
	return 0, false
}
