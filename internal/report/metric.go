package report

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/numfmt"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// Numbers read as in the seed reports: thousands separated by commas, each
// metric with its precision from the metric table (throughputs "1,496.1",
// latencies "1,027 ms", time between tokens "2.5 ms"), prefill throughputs
// in thousands from 10,000 up ("46.7K", "12K", and "9,819" below).

// dash is shown where a metric does not apply or was not measured.
const dash = numfmt.NotANumber

// metricText renders v as reports show metric m: m's precision with
// thousands separators, followed by the unit for times ("1,027 ms",
// "29.9 s"); throughputs and counts are bare, their column says the unit.
func metricText(m metric.Metric, v float64) string {
	s := numfmt.Fixed(v, m.Precision)
	if m.Unit == "ms" || m.Unit == "s" {
		s += " " + m.Unit
	}
	return s
}

// PrefillLine is the console's one-line summary of a measured prefill
// cell, each number as the metric table shows it: "46,712.3 tok/s prefill ·
// TTFT 175 ms (cold)".
func PrefillLine(c *result.PrefillCell) string {
	return prefillText(c, metric.TPS) + " tok/s prefill · TTFT " + prefillText(c, metric.TTFTMs) + " (cold)"
}

// DecodeLine is the console's one-line summary of a measured decode cell,
// each number as the metric table shows it, then the status: "6,018.4
// tok/s total · 95.9 tok/s/request · TTFT 1,027 ms · TBT 10.4 ms · valid",
// with the requests the server refused at admission before the status
// ("· 57 rejected · queued") and the reason of a queued cell after it.
func DecodeLine(c *result.DecodeCell) string {
	line := decodeText(c, metric.TotalTPS) + " tok/s total · " + decodeText(c, metric.PerRequestTPS) + " tok/s/request · TTFT " +
		decodeText(c, metric.TTFTMs) + " · TBT " + decodeText(c, metric.TBTMs) + " · "
	if c.Rejected > 0 {
		line += decodeText(c, metric.Rejected) + " rejected · "
	}
	line += string(c.Status)
	if c.Status == vocab.StatusQueued && c.Reason != "" {
		line += " (" + c.Reason + ")"
	}
	return line
}

// rawValue is v as metric lines print it: the shortest exact form, counts
// without an exponent ("12247", not "1.2247e+04").
func rawValue(m metric.Metric, v float64) string {
	if m.Integer() {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// DecodeMetrics is the full metric line of a decode cell (go test -v
// detail): every metric of the table that the cell has (a quiet one where
// it is not 0: "rejected=57"), a percentile beside
// its median ("ttft_ms=1027/1300/1400"), the token source after the
// metrics every cell has and before the server-reported optional ones, the
// other statistics of the naming rule ("ttft_ms[p95=1150 mean=1030 n=64]")
// and the repeat count.
func DecodeMetrics(c *result.DecodeCell) string {
	var parts []string
	index := map[string]int{} // metric name → its part
	sourceDone := false
	for _, m := range metric.OfPhase(vocab.PhaseDecode) {
		v, ok := c.Value(m)
		if !ok || m.Quiet() && v == 0 {
			continue
		}
		if m.Optional() && m.Samples == "" && !sourceDone { // a server-reported metric (a distribution is always the client's)
			parts, sourceDone = append(parts, "token_source="+string(c.TokenSource)), true
		}
		if i, ok := index[m.PercentileOf]; ok {
			parts[i] += "/" + rawValue(m, v)
			continue
		}
		index[m.Name] = len(parts)
		parts = append(parts, m.Name+"="+rawValue(m, v))
	}
	if !sourceDone {
		parts = append(parts, "token_source="+string(c.TokenSource))
	}
	parts = append(parts, statsParts(vocab.PhaseDecode, c.Stats)...)
	if c.Repeats > 1 {
		parts = append(parts, fmt.Sprintf("repeats=%d (median; spread in results.json)", c.Repeats))
	}
	return strings.Join(parts, " ")
}

// PrefillMetrics is the full metric line of a prefill cell (go test -v
// detail): "tps=46700 ttft_ms=175".
func PrefillMetrics(c *result.PrefillCell) string {
	var parts []string
	for _, m := range metric.OfPhase(vocab.PhasePrefill) {
		if v, ok := c.Value(m); ok {
			parts = append(parts, m.Name+"="+rawValue(m, v))
		}
	}
	return strings.Join(parts, " ")
}

// statsParts are a cell's statistics of the naming rule that are not
// fields (docs/method.md#metric-names), one group per distribution in the
// table's order: "ttft_ms[p95=27 p99.9=32.7 mean=25.1 n=100]", percentiles
// ascending, then the mean and the count.
func statsParts(phase vocab.Phase, stats map[string]float64) []string {
	if len(stats) == 0 {
		return nil
	}
	var out []string
	for _, b := range metric.Distributions(phase) {
		type stat struct {
			order float64 // the percentile; 200 the mean, 300 the count
			text  string
		}
		var group []stat
		for name, v := range stats {
			m, ok := metric.Lookup(phase, name)
			switch {
			case !ok:
			case m.Percentile != 0 && m.PercentileOf == b.Name:
				group = append(group, stat{m.Percentile, "p" + strconv.FormatFloat(m.Percentile, 'f', -1, 64) + "=" + rawValue(m, v)})
			case name == metric.MeanName(b.Name):
				group = append(group, stat{200, "mean=" + rawValue(m, v)})
			case name == metric.CountName(b.Name):
				group = append(group, stat{300, "n=" + rawValue(m, v)})
			}
		}
		if len(group) == 0 {
			continue
		}
		slices.SortFunc(group, func(a, b stat) int { return cmp.Compare(a.order, b.order) })
		texts := make([]string, len(group))
		for i, g := range group {
			texts[i] = g.text
		}
		out = append(out, b.Name+"["+strings.Join(texts, " ")+"]")
	}
	return out
}

// plural is the noun of a count of n: one, or many.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
