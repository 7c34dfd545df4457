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
// report.html: one row per measured cell and distribution, columns the
// median, each percentile of the run's measure.percentiles, the mean and
// the samples. It is empty for results without the statistics (written
// before the naming rule).
type latencyTable struct {
	Header []string
	Rows   [][]string
}

func newLatencyTable(res *result.Results) latencyTable {
	ps := res.Measure.PercentilesOf()
	var t latencyTable
	t.Header = []string{"Cell", "Metric", "p50"}
	for _, p := range ps {
		if p != 50 {
			t.Header = append(t.Header, "p"+strconv.FormatFloat(p, 'f', -1, 64))
		}
	}
	t.Header = append(t.Header, "Mean", "Samples")
	add := func(cell string, phase vocab.Phase, value func(string) (float64, bool)) {
		for _, b := range metric.Distributions(phase) {
			n, ok := value(metric.CountName(b.Name))
			if !ok {
				continue // measured before the naming rule
			}
			row := []string{cell, b.Name}
			for _, p := range append([]float64{50}, ps...) {
				if p == 50 && len(row) > 2 {
					continue
				}
				row = append(row, statText(phase, metric.PercentileName(b.Name, p), value))
			}
			row = append(row, statText(phase, metric.MeanName(b.Name), value), strconv.FormatFloat(n, 'f', -1, 64))
			t.Rows = append(t.Rows, row)
		}
	}
	for i := range res.Decode {
		if c := &res.Decode[i]; c.Status.Measured() {
			add(c.Ref().Name(), vocab.PhaseDecode, c.Metric)
		}
	}
	for i := range res.Traffic {
		if c := &res.Traffic[i]; c.Status.Measured() {
			add(c.Ref().Name(), vocab.PhaseTraffic, c.Metric)
		}
	}
	return t
}

// statText is statistic name as the table shows it: the metric's precision
// and unit, a dash when the cell lacks it (a distribution without samples).
func statText(phase vocab.Phase, name string, value func(string) (float64, bool)) string {
	m, ok := metric.Lookup(phase, name)
	v, has := value(name)
	if !ok || !has {
		return dash
	}
	return metricText(m, v)
}

// writeLatency writes report.md's Latency statistics table, when the
// results have the statistics.
func writeLatency(b *bufio.Writer, t latencyTable) {
	if len(t.Rows) == 0 {
		return
	}
	fmt.Fprintf(b, "## Latency statistics\n\n%s\n\n", latencyIntro)
	mdTable(b, t.Header, func(row func(...string)) {
		for _, r := range t.Rows {
			row(r...)
		}
	})
	fmt.Fprintln(b)
}
