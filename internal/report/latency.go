package report

import (
	"bufio"
	"fmt"
	"strconv"

	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// latencyIntro is the sentence under the Latency statistics table.
const latencyIntro = "each latency distribution of a cell: its median, the percentiles of measure.percentiles, the mean and the number of samples (docs/method.md#metric-names); a percentile of few samples is one of a handful of values"

// latencyTable is the Latency statistics table of report.md and
// report.html as figures: one row per measured cell and distribution,
// columns the median, each percentile of the run's measure.percentiles,
// the mean and the samples. Its Header and Rows word them. It is empty
// for results without the statistics (written before the naming rule).
type latencyTable struct {
	// percentiles are the columns' percentiles, 50 first.
	percentiles []float64
	rows        []latencyRow
}

// latencyRow is one distribution of one cell: its statistics in the
// table's column order (each percentile, then the mean) and its samples.
type latencyRow struct {
	cell    vocab.CellRef
	dist    string
	stats   []latencyStat
	samples float64
}

// latencyStat is one statistic of a cell's distribution: its name
// (metric.PercentileName, metric.MeanName) in the cell's phase and its
// value; has is false when the cell lacks it (a distribution without
// samples).
type latencyStat struct {
	phase vocab.Phase
	name  string
	value float64
	has   bool
}

// newLatencyTable gathers the statistics of res's measured decode and
// traffic cells.
func newLatencyTable(res *result.Results) latencyTable {
	t := latencyTable{percentiles: []float64{50}}
	for _, p := range res.Measure.PercentilesOf() {
		if p != 50 {
			t.percentiles = append(t.percentiles, p)
		}
	}
	add := func(cell vocab.CellRef, phase vocab.Phase, value func(string) (float64, bool)) {
		for _, b := range metric.Distributions(phase) {
			n, ok := value(metric.CountName(b.Name))
			if !ok {
				continue // measured before the naming rule
			}
			row := latencyRow{cell: cell, dist: b.Name, samples: n}
			for _, p := range t.percentiles {
				row.stats = append(row.stats, latencyStatOf(phase, metric.PercentileName(b.Name, p), value))
			}
			row.stats = append(row.stats, latencyStatOf(phase, metric.MeanName(b.Name), value))
			t.rows = append(t.rows, row)
		}
	}
	for i := range res.Decode {
		if c := &res.Decode[i]; c.Status.Measured() {
			add(c.Ref(), vocab.PhaseDecode, c.Metric)
		}
	}
	for i := range res.Traffic {
		if c := &res.Traffic[i]; c.Status.Measured() {
			add(c.Ref(), vocab.PhaseTraffic, c.Metric)
		}
	}
	return t
}

// latencyStatOf is statistic name of a cell whose statistics value reads.
func latencyStatOf(phase vocab.Phase, name string, value func(string) (float64, bool)) latencyStat {
	v, has := value(name)
	return latencyStat{phase: phase, name: name, value: v, has: has}
}

// String is the statistic as the table shows it: the metric's precision
// and unit, a dash when the cell lacks it.
func (s latencyStat) String() string {
	m, ok := metric.Lookup(s.phase, s.name)
	if !ok || !s.has {
		return dash
	}
	return metricText(m, s.value)
}

// Header is the table's header: the cell, the metric, each percentile,
// the mean and the samples.
func (t latencyTable) Header() []string {
	head := []string{"Cell", "Metric"}
	for _, p := range t.percentiles {
		head = append(head, "p"+strconv.FormatFloat(p, 'f', -1, 64))
	}
	return append(head, "Mean", "Samples")
}

// Rows are the table's rows, a cell's distribution each.
func (t latencyTable) Rows() [][]string {
	var rows [][]string
	for _, r := range t.rows {
		row := []string{r.cell.Name(), r.dist}
		for _, s := range r.stats {
			row = append(row, s.String())
		}
		rows = append(rows, append(row, strconv.FormatFloat(r.samples, 'f', -1, 64)))
	}
	return rows
}

// writeLatency writes report.md's Latency statistics table, when the
// results have the statistics.
func writeLatency(b *bufio.Writer, t latencyTable) {
	rows := t.Rows()
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(b, "## Latency statistics\n\n%s\n\n", latencyIntro)
	mdTable(b, t.Header(), func(row func(...string)) {
		for _, r := range rows {
			row(r...)
		}
	})
	fmt.Fprintln(b)
}
