package report

import (
	"encoding/csv"
	"io"
	"strconv"

	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// CSVHeader is the first row of `slogate report -format csv`
// (docs/ci.md#exports): one row follows per cell and metric.
var CSVHeader = []string{"server", "kind", "label", "context", "concurrency", "rate", "metric", "value", "unit", "status", "samples", "repeats"}

// WriteCSV writes res as CSV (docs/ci.md#exports): after CSVHeader, one
// row per measured cell and metric, in the order of results.json (prefill,
// decode, search probes, traffic, then each search's answer, then each
// correctness block's figures: kind "correctness", its name as the label,
// with its status the comparison's outcome, "measured" without one); a cell
// without numbers (over capacity, error) is one row with its status and no
// metric. Every metric of the cell is there, the statistics of the naming
// rule included (docs/method.md#metric-names); samples is the count of the
// distribution a latency statistic comes from.
func WriteCSV(w io.Writer, res *result.Results) error {
	cw := csv.NewWriter(w)
	cw.Write(CSVHeader)
	ps := res.Measure.PercentilesOf()
	server := res.Server.Name
	num := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	integer := func(n int) string {
		if n == 0 {
			return ""
		}
		return strconv.Itoa(n)
	}
	// cell writes the rows of one cell: where (kind, label, context,
	// concurrency, rate), its status and repeats, and its metrics read by
	// value.
	cell := func(where []string, st vocab.Status, repeats int, metrics []metric.Metric, value func(string) (float64, bool)) {
		rep := strconv.Itoa(max(repeats, 1))
		head := append([]string{server}, where...)
		if !st.Measured() {
			cw.Write(append(head, "", "", "", string(st), "", rep))
			return
		}
		for _, m := range metrics {
			v, ok := value(m.Name)
			if !ok || m.Quiet() && v == 0 {
				continue
			}
			samples := ""
			if base := distributionOf(m); base != "" {
				if n, ok := value(metric.CountName(base)); ok {
					samples = num(n)
				}
			}
			cw.Write(append(head, m.Name, num(v), m.Unit, string(st), samples, rep))
		}
	}
	prefill := metric.ForCells(vocab.PhasePrefill, ps)
	for i := range res.Prefill {
		c := &res.Prefill[i]
		cell([]string{"prefill", "", strconv.Itoa(c.Context), "", ""}, c.Status, c.Repeats, prefill, c.Metric)
	}
	decode := metric.ForCells(vocab.PhaseDecode, ps)
	for i := range res.Decode {
		c := &res.Decode[i]
		cell([]string{"decode", c.Ref().MatrixLabel(), strconv.Itoa(c.Context), strconv.Itoa(c.Concurrency), ""}, c.Status, c.Repeats, decode, c.Metric)
	}
	for _, s := range res.Search {
		for i := range s.Probes {
			if s.IsRate() {
				continue // a rate probe is a traffic cell: written with them
			}
			c := &s.Probes[i].Cell
			cell([]string{"probe", s.Name, strconv.Itoa(s.Context), strconv.Itoa(s.Probes[i].Concurrency), ""}, c.Status, c.Repeats, decode, c.Metric)
		}
	}
	traffic := metric.ForCells(vocab.PhaseTraffic, ps)
	for i := range res.Traffic {
		c := &res.Traffic[i]
		// A closed loop's cell is its concurrency (no rate); a cell without
		// context (its workload sets the lengths) has an empty context.
		rate := vocab.FormatRate(c.Rate)
		if c.Concurrency > 0 {
			rate = ""
		}
		cell([]string{"traffic", c.Traffic, integer(c.Context), integer(c.Concurrency), rate}, c.Status, 1, traffic, c.Metric)
	}
	for _, s := range res.Search {
		for i := range s.Probes {
			if c := s.Probes[i].Traffic; c != nil {
				cell([]string{"probe", s.Name, integer(c.Context), "", vocab.FormatRate(c.Rate)}, c.Status, s.Probes[i].Windows, traffic, c.Metric)
			}
		}
	}
	for _, s := range res.Search {
		status := "found"
		switch {
		case s.Error != "":
			status = string(vocab.StatusError)
		case !s.Found:
			status = "not_found"
		}
		value := integer(s.Concurrency)
		if s.Error != "" {
			value = ""
		}
		if s.IsRate() {
			if s.Error == "" {
				value = strconv.FormatFloat(s.Rate, 'f', -1, 64)
			}
			cw.Write([]string{server, "search", s.Name, integer(s.Context), "", "", "rate", value, "req/s", status, strconv.Itoa(len(s.Probes)), "1"})
			continue
		}
		cw.Write([]string{server, "search", s.Name, strconv.Itoa(s.Context), "", "", "concurrency", value, "requests", status, strconv.Itoa(len(s.Probes)), "1"})
	}
	writeCorrectnessCSV(cw, res)
	cw.Flush()
	return cw.Error()
}

// distributionOf is the distribution a latency metric or statistic belongs
// to ("ttft_ms" for ttft_ms, ttft_ms_p95 and ttft_ms_count); "" for a
// metric that is not one.
func distributionOf(m metric.Metric) string {
	for _, b := range metric.Distributions(m.Phase) {
		if m.Name == b.Name || m.PercentileOf == b.Name || m.Name == metric.MeanName(b.Name) || m.Name == metric.CountName(b.Name) {
			return b.Name
		}
	}
	return ""
}
