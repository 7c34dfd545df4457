package report

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/numfmt"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// decode.go builds the Prefill table, the decode matrices and the All
// measurements table, noting each cell's status for the legend and the
// Errors and Unmeasurable lists; metric.go formats the numbers in them.

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

type prefillRow struct {
	Context, TPS, TTFT, Status string
}

// addPrefill fills the Prefill table and notes each cell's status.
func (v *view) addPrefill(cells []result.PrefillCell) {
	for _, c := range cells {
		r := prefillRow{Context: vocab.FormatTokens(c.Context), TPS: dash, TTFT: dash, Status: statusWord(c.Status)}
		if c.Status.Measured() {
			r.TPS, r.TTFT = prefillTPSText(c.TPS, 0), prefillTTFTText(&c)
		}
		v.Prefill = append(v.Prefill, r)
		v.noteStatus(c.Status, "prefill ctx="+r.Context, c.Reason)
	}
}

// matrixView is one decode matrix: rows are contexts, columns concurrency.
type matrixView struct {
	Label       string // "decode"
	Title       string // "Sustained decode"
	Contexts    []int
	Concurrency []int
	Cells       [][]*result.DecodeCell // [row][col]; nil when not recorded
	// Rows are the rows in words, built once for every rendering of the
	// matrix: the Markdown and HTML tables, the heat map and the chart.
	Rows []matrixRow
}

// matrixRow is one row of a decode matrix in words.
type matrixRow struct {
	Context string // "8K"
	Cells   []cellWords
}

// cellWords is a decode matrix cell in words (cellParts): its total
// tok/s, whether its requests queued and its TTFT, or the word that
// stands for it; Line is all of it on one line, Class its HTML class and
// Status its status as the tables word it ("" for a cell not recorded).
type cellWords struct {
	TPS, TTFT, Word, Line, Class, Status string
	Queued                               bool
}

// addMatrices lays out the decode matrices, in order of first appearance,
// and notes each recorded cell's status and warnings, row by row.
func (v *view) addMatrices(res *result.Results) {
	v.Matrices = decodeMatrices(res)
	for _, m := range v.Matrices {
		for i, row := range m.Cells {
			for j, c := range row {
				if c == nil {
					continue
				}
				v.noteStatus(c.Status, fmt.Sprintf("%s ctx=%s conc=%d", m.Label, m.Rows[i].Context, m.Concurrency[j]), c.Reason)
				for _, w := range c.Warnings {
					v.cellWarnings = append(v.cellWarnings, cellWarning{c.Ref().Name(), w.String()})
				}
			}
		}
	}
}

// decodeMatrices groups the decode cells by matrix, in order of first
// appearance: rows are the contexts in order of first appearance, columns
// the concurrency levels in increasing order.
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
		m := matrixView{Label: l, Title: "Sustained decode"}
		if l != "decode" {
			m.Title += " — " + l
		}
		var cx, cc []int
		for _, c := range byLabel[l] {
			cx, cc = append(cx, c.Context), append(cc, c.Concurrency)
		}
		m.Contexts, m.Concurrency = uniqueInts(cx), uniqueInts(cc)
		sort.Ints(m.Concurrency)
		m.Cells = make([][]*result.DecodeCell, len(m.Contexts))
		m.Rows = make([]matrixRow, len(m.Contexts))
		for i, ctx := range m.Contexts {
			m.Cells[i] = make([]*result.DecodeCell, len(m.Concurrency))
			m.Rows[i] = matrixRow{Context: vocab.FormatTokens(ctx), Cells: make([]cellWords, len(m.Concurrency))}
			for j, conc := range m.Concurrency {
				if c, ok := res.DecodeCell(l, ctx, conc); ok {
					m.Cells[i][j] = c
				}
				m.Rows[i].Cells[j] = wordsOf(m.Cells[i][j])
			}
		}
		out = append(out, m)
	}
	return out
}

// wordsOf is c in words.
func wordsOf(c *result.DecodeCell) cellWords {
	tps, queued, ttft, word := cellParts(c)
	w := cellWords{TPS: tps, Queued: queued, TTFT: ttft, Word: word, Class: "none"}
	if c != nil {
		w.Class, w.Status = string(c.Status), statusWord(c.Status)
	}
	switch {
	case word != "":
		w.Line = word
	case queued:
		w.Line = tps + " · Requests queued · " + ttft
	default:
		w.Line = tps + " · " + ttft
	}
	return w
}

// cellParts is a decode matrix cell as its pieces: total tok/s, whether the
// requests queued, and the TTFT ("6,018.4", false, "1,027 ms TTFT"); or a
// single word for cells without numbers ("Over capacity", "Error", "—").
func cellParts(c *result.DecodeCell) (tps string, queued bool, ttft string, word string) {
	switch {
	case c == nil:
		return "", false, "", dash
	case c.Status.Measured():
		return decodeText(c, metric.TotalTPS), c.Status == vocab.StatusQueued, decodeText(c, metric.TTFTMs) + " TTFT", ""
	default:
		return "", false, "", statusWord(c.Status)
	}
}

func (v *view) noteStatus(s vocab.Status, where, reason string) {
	switch s {
	case vocab.StatusQueued:
		v.AnyQueued = true
	case vocab.StatusOverCapacity:
		v.AnyOver = true
	case vocab.StatusError:
		v.AnyError = true
		if reason == "" {
			reason = "no reason recorded"
		}
		v.Errors = append(v.Errors, where+": "+reason)
	case vocab.StatusUnmeasurable:
		v.Unmeasurable = append(v.Unmeasurable, where+": "+reason)
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

// allMeasurements is the All measurements table's rows: the prefill cells,
// then every decode cell of every matrix with the metrics of allColumns
// (a dash for a cell not measured).
func allMeasurements(prefill []result.PrefillCell, rows []prefillRow, matrices []matrixView) [][]string {
	var all [][]string
	for i := range prefill {
		all = append(all, prefillAllRow(&prefill[i], rows[i]))
	}
	for _, m := range matrices {
		phase := "Sustained decode"
		if m.Label != "decode" {
			phase += " (" + m.Label + ")"
		}
		for i, row := range m.Cells {
			for j, c := range row {
				if c != nil {
					all = append(all, decodeAllRow(phase, m.Rows[i].Context, c, m.Rows[i].Cells[j].Status))
				}
			}
		}
	}
	return all
}

// prefillAllRow is a prefill cell's row of All measurements: its
// throughput under the decode throughput column, its TTFT under TTFT, one
// completed request, a dash elsewhere; w is its row of the Prefill table,
// whose words it shares.
func prefillAllRow(c *result.PrefillCell, w prefillRow) []string {
	row := []string{"Prefill", w.Context, "1", w.Status}
	tps := metric.Must(vocab.PhasePrefill, metric.TPS)
	for _, m := range allColumns() {
		text := dash
		if c.Status.Measured() {
			switch m.Name {
			case metric.TotalTPS:
				text = prefillTPSText(c.TPS, tps.Precision)
			case metric.TTFTMs:
				text = w.TTFT
			case metric.Completed:
				text = "1"
			}
		}
		row = append(row, text)
	}
	return row
}

// decodeAllRow is one decode cell's row of All measurements (at context,
// in words; status, its status's word).
func decodeAllRow(phase, context string, c *result.DecodeCell, status string) []string {
	r := []string{phase, context, strconv.Itoa(c.Concurrency), status}
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
