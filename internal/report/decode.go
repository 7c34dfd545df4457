package report

import (
	"sort"
	"strconv"
	"strings"

	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/numfmt"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// decode.go builds the Prefill table, the decode matrices and the All
// measurements table as figures: the cells, grouped into matrices and
// ordered, each cell's status noted for the legend and the Errors and
// Unmeasurable lists. Their methods word them when a writer asks;
// metric.go formats the numbers in them.

// Legend lines, worded as in the seed reports.
const (
	legendQueued       = "Requests queued: the server could not run all requests at once, so some waited in a queue."
	legendRefused      = "Some it refused instead: see Rejected requests."
	legendOverCapacity = "Over capacity: not run because this many requests at this context would exceed the server's KV cache."
	legendError        = "Error: the cell could not be measured; the reason is listed under Errors."
	legendUnmeasurable = "Unmeasurable: the client could not measure the cell (docs/method.md#unmeasurable); the reason is listed under Unmeasurable, and it is never gated."
	legendTTFT         = "TTFT is measured after the benchmark warms the server's prompt cache, so it mostly excludes prefill."
	legendMedians      = "Latencies are medians. Total tok/s is output across all simultaneous requests."
	legendMatrix       = "total tok/s · rows are context length, columns are simultaneous requests"
)

// prefillRow is a prefill cell's row of the Prefill table; its methods
// word it for report.md, report.html, its chart and JUnit.
type prefillRow struct{ cell *result.PrefillCell }

// Context is the row's context length: "8K".
func (r prefillRow) Context() string { return vocab.FormatTokens(r.cell.Context) }

// TPS is the cell's prompt tok/s as the Prefill table shows it ("46.7K",
// "9,819"); a dash for a cell not measured.
func (r prefillRow) TPS() string {
	if !r.cell.Status.Measured() {
		return dash
	}
	return prefillTPSText(r.cell.TPS, 0)
}

// TTFT is the cell's time to first token ("175 ms"); a dash for a cell
// not measured.
func (r prefillRow) TTFT() string {
	if !r.cell.Status.Measured() {
		return dash
	}
	return prefillTTFTText(r.cell)
}

// Status is the cell's status as the tables word it: "Valid".
func (r prefillRow) Status() string { return statusWord(r.cell.Status) }

// addPrefill fills the Prefill table and notes each cell's status.
func (v *view) addPrefill(cells []result.PrefillCell) {
	for i := range cells {
		c := &cells[i]
		v.Prefill = append(v.Prefill, prefillRow{c})
		v.noteStatus(c.Ref(), c.Status, c.Reason)
	}
}

// matrixView is one decode matrix: rows are contexts, columns concurrency.
// Its Title and Rows word it for the Markdown and HTML tables and the
// chart; the heat map reads the cells' figures.
type matrixView struct {
	Label       string // "decode"
	Contexts    []int
	Concurrency []int
	Cells       [][]*result.DecodeCell // [row][col]; nil when not recorded
}

// Title is the matrix's heading: "Sustained decode", with its label
// after a dash when it is not the default matrix's ("Sustained decode —
// long").
func (m matrixView) Title() string {
	if m.Label == "decode" {
		return "Sustained decode"
	}
	return "Sustained decode — " + m.Label
}

// Rows are the matrix's rows for its writers to word: each context with
// its cells.
func (m matrixView) Rows() []matrixRow {
	rows := make([]matrixRow, len(m.Contexts))
	for i, ctx := range m.Contexts {
		rows[i] = matrixRow{context: ctx, Cells: make([]matrixCell, len(m.Cells[i]))}
		for j, c := range m.Cells[i] {
			rows[i].Cells[j] = matrixCell{c}
		}
	}
	return rows
}

// matrixRow is one row of a decode matrix: its context and its cells,
// column by column.
type matrixRow struct {
	context int
	Cells   []matrixCell
}

// Context is the row's context length: "8K".
func (r matrixRow) Context() string { return vocab.FormatTokens(r.context) }

// matrixCell is a decode matrix cell (nil where not recorded); its
// methods word it: its total tok/s, whether its requests queued and its
// TTFT, or the word that stands for a cell without numbers.
type matrixCell struct{ cell *result.DecodeCell }

// measured reports whether the cell has numbers to show.
func (c matrixCell) measured() bool { return c.cell != nil && c.cell.Status.Measured() }

// TPS is the cell's total tok/s ("6,018.4"); "" for a cell without
// numbers.
func (c matrixCell) TPS() string {
	if !c.measured() {
		return ""
	}
	return decodeText(c.cell, metric.TotalTPS)
}

// Queued reports whether the cell's requests queued.
func (c matrixCell) Queued() bool { return c.measured() && c.cell.Status == vocab.StatusQueued }

// TTFT is the cell's TTFT ("1,027 ms TTFT"); "" for a cell without
// numbers.
func (c matrixCell) TTFT() string {
	if !c.measured() {
		return ""
	}
	return decodeText(c.cell, metric.TTFTMs) + " TTFT"
}

// Word is what stands for a cell without numbers ("Over capacity",
// "Error", "—" where not recorded); "" for a measured cell.
func (c matrixCell) Word() string {
	switch {
	case c.cell == nil:
		return dash
	case c.measured():
		return ""
	}
	return statusWord(c.cell.Status)
}

// Line is all of the cell on one line: "6,018.4 · Requests queued ·
// 1,027 ms TTFT".
func (c matrixCell) Line() string {
	switch {
	case !c.measured():
		return c.Word()
	case c.Queued():
		return c.TPS() + " · Requests queued · " + c.TTFT()
	default:
		return c.TPS() + " · " + c.TTFT()
	}
}

// Class is the cell's HTML class: its status, "none" where not recorded.
func (c matrixCell) Class() string {
	if c.cell == nil {
		return "none"
	}
	return string(c.cell.Status)
}

// Status is the cell's status as the tables word it; "" where not
// recorded.
func (c matrixCell) Status() string {
	if c.cell == nil {
		return ""
	}
	return statusWord(c.cell.Status)
}

// addMatrices lays out the decode matrices, in order of first appearance,
// and notes each recorded cell's status and warnings, row by row.
func (v *view) addMatrices(res *result.Results) {
	v.Matrices = decodeMatrices(res)
	for _, m := range v.Matrices {
		for _, row := range m.Cells {
			for _, c := range row {
				if c == nil {
					continue
				}
				v.noteStatus(c.Ref(), c.Status, c.Reason)
				for _, w := range c.Warnings {
					v.cellWarnings = append(v.cellWarnings, cellWarning{c.Ref().Name(), w.String()})
				}
			}
		}
	}
}

// decodeMatrices groups the decode cells by matrix, in order of first
// appearance: rows are the contexts in order of first appearance, columns
// the concurrency levels in increasing order; a matrix's first cell at a
// context and concurrency is the one it shows.
func decodeMatrices(res *result.Results) []matrixView {
	var labels []string
	byLabel := map[string][]*result.DecodeCell{}
	for i := range res.Decode {
		c := &res.Decode[i]
		l := c.Ref().MatrixLabel()
		if _, ok := byLabel[l]; !ok {
			labels = append(labels, l)
		}
		byLabel[l] = append(byLabel[l], c)
	}
	var out []matrixView
	for _, l := range labels {
		m := matrixView{Label: l}
		var cx, cc []int
		at := map[[2]int]*result.DecodeCell{} // context, concurrency → cell
		for _, c := range byLabel[l] {
			cx, cc = append(cx, c.Context), append(cc, c.Concurrency)
			if k := [2]int{c.Context, c.Concurrency}; at[k] == nil {
				at[k] = c
			}
		}
		m.Contexts, m.Concurrency = uniqueInts(cx), uniqueInts(cc)
		sort.Ints(m.Concurrency)
		m.Cells = make([][]*result.DecodeCell, len(m.Contexts))
		for i, ctx := range m.Contexts {
			m.Cells[i] = make([]*result.DecodeCell, len(m.Concurrency))
			for j, conc := range m.Concurrency {
				m.Cells[i][j] = at[[2]int{ctx, conc}]
			}
		}
		out = append(out, m)
	}
	return out
}

// noteStatus notes the status of the cell ref names for the legend, and
// an errored or unmeasurable cell, with its reason, for its section.
func (v *view) noteStatus(ref vocab.CellRef, s vocab.Status, reason string) {
	switch s {
	case vocab.StatusQueued:
		v.AnyQueued = true
	case vocab.StatusOverCapacity:
		v.AnyOver = true
	case vocab.StatusError:
		v.AnyError = true
		v.Errors = append(v.Errors, cellNote{ref: ref, status: s, reason: reason})
	case vocab.StatusUnmeasurable:
		v.Unmeasurable = append(v.Unmeasurable, cellNote{ref: ref, status: s, reason: reason})
	}
}

// StatusLegend is the legend line for the statuses that occur, worded as
// the seeds word it (queued first, then over capacity).
func (v *view) StatusLegend() string {
	var parts []string
	if v.AnyQueued {
		parts = append(parts, legendQueued)
		if len(v.Rejections) > 0 {
			parts = append(parts, legendRefused)
		}
	}
	if v.AnyOver {
		parts = append(parts, legendOverCapacity)
	}
	if v.AnyError {
		parts = append(parts, legendError)
	}
	if len(v.Unmeasurable) > 0 {
		parts = append(parts, legendUnmeasurable)
	}
	return strings.Join(parts, " ")
}

// allRow is one cell's row of All measurements, a prefill cell's or a
// decode cell's (the other nil); Texts words it.
type allRow struct {
	prefill *result.PrefillCell
	decode  *result.DecodeCell
}

// Texts are the row's columns in words (allHeader's).
func (r allRow) Texts() []string {
	if r.prefill != nil {
		return prefillAllRow(r.prefill)
	}
	return decodeAllRow(r.decode)
}

// allMeasurements is the All measurements table's rows: the prefill cells,
// then every decode cell of every matrix, row by row.
func allMeasurements(prefill []prefillRow, matrices []matrixView) []allRow {
	var all []allRow
	for _, p := range prefill {
		all = append(all, allRow{prefill: p.cell})
	}
	for _, m := range matrices {
		for _, row := range m.Cells {
			for _, c := range row {
				if c != nil {
					all = append(all, allRow{decode: c})
				}
			}
		}
	}
	return all
}

// prefillAllRow is a prefill cell's row of All measurements: its
// throughput under the decode throughput column, its TTFT under TTFT, one
// completed request, a dash elsewhere (with all of the metrics of
// allColumns).
func prefillAllRow(c *result.PrefillCell) []string {
	r := prefillRow{c}
	row := []string{"Prefill", r.Context(), "1", r.Status()}
	tps := metric.Must(vocab.PhasePrefill, metric.TPS)
	for _, m := range allColumns() {
		text := dash
		if c.Status.Measured() {
			switch m.Name {
			case metric.TotalTPS:
				text = prefillTPSText(c.TPS, tps.Precision)
			case metric.TTFTMs:
				text = r.TTFT()
			case metric.Completed:
				text = "1"
			}
		}
		row = append(row, text)
	}
	return row
}

// decodeAllRow is one decode cell's row of All measurements: its matrix's
// phase, its context, concurrency and status, then the metrics of
// allColumns (a dash for a cell not measured).
func decodeAllRow(c *result.DecodeCell) []string {
	phase := "Sustained decode"
	if l := c.Ref().MatrixLabel(); l != "decode" {
		phase += " (" + l + ")"
	}
	r := []string{phase, vocab.FormatTokens(c.Context), strconv.Itoa(c.Concurrency), statusWord(c.Status)}
	for _, m := range allColumns() {
		if c.Status.Measured() {
			r = append(r, decodeText(c, m.Name))
		} else {
			r = append(r, dash)
		}
	}
	return r
}

// prefillText is metric name of prefill cell c as reports show it: the
// TTFT "175 ms", the throughput "46,712.3" (the Prefill table and the
// summaries show it in thousands instead: prefillTPSText).
func prefillText(c *result.PrefillCell, name string) string {
	m := metric.Must(vocab.PhasePrefill, name)
	v, _ := c.Value(m)
	return metricText(m, v)
}

// prefillTTFTText is the TTFT of a prefill cell: "175 ms".
func prefillTTFTText(c *result.PrefillCell) string { return prefillText(c, metric.TTFTMs) }

// prefillTPSText is a prefill throughput: in thousands from 10,000 up
// ("46.7K"), else with prec decimals ("9,819" in the Prefill table and
// summaries, "9,819.0" with the metric's precision in All measurements).
func prefillTPSText(v float64, prec int) string {
	if v >= 10000 {
		return numfmt.Thousands(v)
	}
	return numfmt.Fixed(v, prec)
}

// decodeText is metric name of decode cell c as reports show it; a dash
// when the cell does not have it.
func decodeText(c *result.DecodeCell, name string) string {
	m := metric.Must(vocab.PhaseDecode, name)
	v, ok := c.Value(m)
	if !ok {
		return dash
	}
	return metricText(m, v)
}

// allColumns are the decode metrics of the All measurements table, in
// order: every metric a decode cell always has, percentiles and quiet
// metrics (rejected: shown where it is not 0, below the table) left out.
func allColumns() []metric.Metric {
	var out []metric.Metric
	for _, m := range metric.OfPhase(vocab.PhaseDecode) {
		if m.PercentileOf == "" && !m.Optional() && !m.Quiet() {
			out = append(out, m)
		}
	}
	return out
}

// statusWord is a cell status as the seeds word it.
func statusWord(s vocab.Status) string {
	switch s {
	case vocab.StatusValid:
		return "Valid"
	case vocab.StatusQueued:
		return "Requests queued"
	case vocab.StatusOverCapacity:
		return "Over capacity"
	case vocab.StatusError:
		return "Error"
	case vocab.StatusUnmeasurable:
		return "Unmeasurable"
	case vocab.StatusSaturated:
		return "Saturated"
	}
	if s == "" {
		return "Not measured"
	}
	return string(s)
}

// allHeader is the All measurements table header, as in the seed reports.
func allHeader() []string {
	h := []string{"Phase", "Context", "Requests at once", "Status"}
	for _, m := range allColumns() {
		h = append(h, m.Label)
	}
	return h
}
