package report

import (
	"io"

	"github.com/slogate/slogate/internal/result"
)

// Model is a run's report, built once from its Results: every section
// that report.md, report.html, the CI summary and the rate searches'
// chart files show, its text and charts. Its writers lay it out; none
// goes back to the Results for a piece. Build it after the verdicts are
// in the Results: it does not see later changes.
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
