package report

import (
	"bufio"
	"fmt"
	"strconv"

	"github.com/slogate/slogate/internal/engine/registry"
	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// sideBySide is the comparison of the runs of one model in a merged set:
// the same cells of each server in one row, a column per server, so a
// vLLM-vs-SGLang spec (docs/method.md#comparing-engines) reads across.
type sideBySide struct {
	model string
	runs  []result.MergedRun
	rows  []sideRow
}

// sideRow is one cell of the comparison and its text on each server ("—"
// where a server has no such cell).
type sideRow struct {
	cell  string
	texts []string
}

// sideBySides are the comparisons of a merged set: one per model that more
// than one run measured, in the order the models first appear.
func sideBySides(m *result.Merged) []sideBySide {
	var out []sideBySide
	at := map[string]int{}
	for _, r := range m.Runs {
		model := r.Results.Server.Model
		i, ok := at[model]
		if !ok {
			i = len(out)
			at[model] = i
			out = append(out, sideBySide{model: model})
		}
		out[i].runs = append(out[i].runs, r)
	}
	var shared []sideBySide
	for _, s := range out {
		if len(s.runs) > 1 {
			s.rows = sideRows(s.runs)
			shared = append(shared, s)
		}
	}
	return shared
}

// sideRows lines up the runs' prefill and decode cells by reference, in the
// order each cell is first measured (a decode cell repeated is one cell,
// its median).
func sideRows(runs []result.MergedRun) []sideRow {
	var rows []sideRow
	index := map[string]int{}
	put := func(key, label string, run int, text string) {
		i, ok := index[key]
		if !ok {
			i = len(rows)
			index[key] = i
			rows = append(rows, sideRow{cell: label, texts: make([]string, len(runs))})
			for j := range rows[i].texts {
				rows[i].texts[j] = dash
			}
		}
		rows[i].texts[run] = text
	}
	for j, r := range runs {
		for k := range r.Results.Prefill {
			c := &r.Results.Prefill[k]
			label := "prefill " + vocab.FormatTokens(c.Context)
			put("p/"+strconv.Itoa(c.Context), label, j, prefillSideText(c))
		}
	}
	for j, r := range runs {
		for k := range r.Results.Decode {
			c := &r.Results.Decode[k]
			if c.Search != "" {
				continue // a search's probes differ by server: its own section says them
			}
			ref := c.Ref()
			label := fmt.Sprintf("%s %s × %d", ref.MatrixLabel(), vocab.FormatTokens(c.Context), c.Concurrency)
			put(fmt.Sprintf("d/%s/%d/%d", ref.MatrixLabel(), c.Context, c.Concurrency), label, j, decodeSideText(c))
		}
	}
	return rows
}

// prefillSideText is a prefill cell in the comparison: "46.7K tok/s · TTFT
// 175 ms", or its status when it has no numbers.
func prefillSideText(c *result.PrefillCell) string {
	if !c.Status.Measured() {
		return statusWord(c.Status)
	}
	return prefillTPSText(c.TPS, metric.Must(vocab.PhasePrefill, metric.TPS).Precision) + " tok/s · TTFT " + prefillTTFTText(c)
}

// decodeSideText is a decode cell in the comparison: "6,018.4 tok/s · TTFT
// 1,027 ms · TBT 10.4 ms", "Requests queued" after the numbers of a queued
// cell, or the status of a cell without numbers ("Over capacity").
func decodeSideText(c *result.DecodeCell) string {
	if !c.Status.Measured() {
		return statusWord(c.Status)
	}
	s := decodeText(c, metric.TotalTPS) + " tok/s · TTFT " + decodeText(c, metric.TTFTMs) + " · TBT " + decodeText(c, metric.TBTMs)
	if c.Status == vocab.StatusQueued {
		s += " · Requests queued"
	}
	return s
}

// sideHeader names a run's column: the server and its engine with its
// version ("vllm (vLLM 0.26.1)").
func sideHeader(r result.MergedRun) string {
	engine := registry.Title(engineName(&r.Results.Server))
	if v := r.Results.Server.Version; v != "" {
		engine += " " + v
	}
	return r.Dir + " (" + engine + ")"
}

// writeSideBySide writes each comparison as a Markdown table after the
// merged report's index.
func writeSideBySide(b *bufio.Writer, m *result.Merged) {
	for _, s := range sideBySides(m) {
		fmt.Fprintf(b, "## Side by side: %s\n\n", mdText(s.model))
		head := []string{"Cell"}
		for _, r := range s.runs {
			head = append(head, sideHeader(r))
		}
		mdTable(b, head, func(row func(...string)) {
			for _, r := range s.rows {
				row(append([]string{r.cell}, r.texts...)...)
			}
		})
		fmt.Fprintf(b, "\n%s\n\n", legendSideBySide)
	}
}

// legendSideBySide says what the comparison is and is not.
const legendSideBySide = "Each server's median of the same cell: decode total tok/s, TTFT and TBT; prefill tok/s and cold TTFT. " +
	"Servers measured one after the other; a difference between engines informs, it gates only against a baseline of the same engine (`slogate diff -allow-settings-change` gives each change with its interval)."
