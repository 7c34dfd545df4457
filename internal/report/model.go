package report

import (
	"io"

	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// Model is a run's report, decided once from its Results: which sections
// report.md, report.html, JUnit, the CI summary and the rate searches'
// chart files show, and each section's figures (the Results' cells it
// points at, what its charts plot), which its writers word and lay out.
// Build it after the verdicts are in the Results, and write it before
// they change.
type Model struct{ v *view }

// NewModel builds the report of res.
func NewModel(res *result.Results) *Model { return &Model{v: newView(res)} }

// WriteMarkdown writes the report as report.md.
func (m *Model) WriteMarkdown(w io.Writer) error { return writeMarkdown(w, m.v) }

// WriteHTML writes the report as the self-contained report.html.
func (m *Model) WriteHTML(w io.Writer) error { return writeHTML(w, m.v) }

// WriteSummary writes the report's short Markdown summary for a CI job
// page ($GITHUB_STEP_SUMMARY).
func (m *Model) WriteSummary(w io.Writer) error { return writeSummary(w, m.v) }

// WriteJUnit writes the report's run as a JUnit document (WriteJUnit of
// this run alone).
func (m *Model) WriteJUnit(w io.Writer) error { return writeJUnit(w, []*view{m.v}) }

// SearchCharts are the rate searches' charts as standalone SVG files,
// which report.md links to.
func (m *Model) SearchCharts() []SearchChart { return searchCharts(m.v.searches) }

// view is the presentation model shared by the Markdown and HTML reports,
// the CI summary and JUnit, computed once from Results: which sections
// there are and what each shows, decided (cells grouped, selected and
// ordered, statuses noted for the legends, the searches' costs and the
// correctness blocks' intervals computed), as figures that the sections'
// methods word when a writer asks.
type view struct {
	Res *result.Results
	// header is the report's head (header.go): its methods word the
	// Title, Summary, Measured line, the Hardware, Engine and Run tables
	// and the Launch command.
	header
	// Prefill, Matrices and All are the Prefill table's rows, the
	// decode matrices and All measurements' rows: cells, grouped and
	// ordered, which their methods word.
	Prefill  []prefillRow
	Matrices []matrixView
	All      []allRow
	// Legend flags: which statuses occur anywhere.
	AnyQueued, AnyOver, AnyError bool
	Errors                       []cellNote // "decode ctx=8K conc=64: reason"
	// Unmeasurable are the cells the client could not measure, as Errors
	// ("decode ctx=1K conc=1: reason"; docs/method.md#unmeasurable).
	Unmeasurable []cellNote
	// Saturated are the traffic cells stopped early past the server's
	// capacity, with their evidence ("traffic/steady/ctx=1K/rate=60:
	// past the server's capacity …"; docs/method.md#saturation).
	Saturated []cellNote
	Verdicts  []verdictRow
	// warnings is the Warnings section (Warnings words it); cellWarnings
	// the cells' warnings, which it groups.
	warnings     warningList
	cellWarnings []cellWarning
	// outcome is the run's outcome (runOutcome); Outcome words it.
	outcome vocab.Outcome
	// Head is what the reports open with: the tests by outcome and what
	// failed and why (outcome.go).
	Head verdictHead
	// Noise is the Noise section (docs/method.md#noise); nil when no cell
	// was repeated.
	Noise *noiseView
	// Traffic are the traffic blocks' tables, each with the columns it
	// shows; blocks the blocks' cells, which report.html's charts draw.
	Traffic []trafficTable
	blocks  []trafficBlock
	// searches are the searches' sections as figures: what each table
	// and chart shows, its checks' means and its cost, which their
	// methods word (searchView.chart draws the chart).
	searches []searchView
	// Correctness are the correctness blocks' sections.
	Correctness []correctnessView
	// Latency is the Latency statistics table (no rows without the
	// statistics).
	Latency latencyTable
	// Comparison is the -baseline comparison's table; nil without a
	// baseline.
	Comparison *comparisonTable
	// Rejections are the Rejected requests section's lines
	// (rejectionLines), RejectionsLegend its heading text.
	Rejections       []string
	RejectionsLegend string
}

// AnyCells reports whether a view has any decode cells.
func (v *view) AnyCells() bool { return len(v.Matrices) > 0 }

// newView computes everything the Markdown and HTML reports, the CI
// summary and the rate searches' chart files show, section by section in
// the order they appear: which sections there are and what goes where,
// as figures, so that their writers only word them and lay them out.
func newView(res *result.Results) *view {
	v := &view{Res: res, header: newHeader(res)}
	v.addPrefill(res.Prefill)
	v.addMatrices(res)
	for i := range res.Traffic { // a dataset's counts, its reuse in order, …
		c := &res.Traffic[i]
		if c.Status == vocab.StatusUnmeasurable { // the client fell behind
			v.Unmeasurable = append(v.Unmeasurable, cellNote{ref: c.Ref(), status: c.Status, reason: c.Reason})
		}
		if c.Status == vocab.StatusSaturated { // past the server's capacity
			v.Saturated = append(v.Saturated, cellNote{ref: c.Ref(), status: c.Status, reason: c.Reason, reasons: c.Reasons})
		}
		for _, w := range c.Warnings {
			v.cellWarnings = append(v.cellWarnings, cellWarning{c.Ref().Name(), w.String()})
		}
	}
	v.All = allMeasurements(v.Prefill, v.Matrices)
	if v.Rejections = rejectionLines(res); len(v.Rejections) > 0 {
		v.RejectionsLegend = legendRejections
	}
	v.addVerdicts(res.Verdicts)
	v.Head = newVerdictHead(res, v)
	v.outcome = runOutcome(res)
	v.warnings = newWarningList(res, v.cellWarnings)
	v.Noise = noiseSection(res)
	v.blocks = newTrafficBlocks(res)
	v.Traffic = trafficTables(v.blocks)
	v.searches = newSearchViews(res)
	v.Correctness = newCorrectnessViews(res)
	v.Latency = newLatencyTable(res)
	v.Comparison = newComparisonTable(res.Comparison)
	return v
}
