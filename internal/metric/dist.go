package metric

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/slogate/slogate/internal/vocab"
)

// The naming rule of latency statistics (docs/method.md#metric-names): a
// latency metric of the table whose Samples is set is a distribution; its
// value is the median, and every distribution has, under the same base
// name,
//
//	<base>_p<P>   the P-th percentile, P as written with "." spelled "_"
//	              (ttft_ms_p95, ttft_ms_p99_9); _p50 is the median itself
//	<base>_mean   the mean of the samples
//	<base>_count  the number of samples
//
// The percentiles measured are measure.percentiles (DefaultPercentiles when
// unset). p90 and p99 are fields of the cell, as they were before the rule;
// the others live in the cell's "stats" object under their names (package
// result stores them).

// DefaultPercentiles are the percentiles measured when measure.percentiles
// is unset: the median, p90 and p99, what slogate always measured.
var DefaultPercentiles = []float64{50, 90, 99}

// MinPercentileSamples is the fewest samples a percentile rests on for
// codify to gate on it: below it a p90 or p99 is one of a handful of
// values (at 2K × 1, one request made p90 = p99).
const MinPercentileSamples = 20

// Statistic kinds of a derived metric name.
const (
	statPercentile = "p"
	statMean       = "mean"
	statCount      = "count"
)

// PercentileSuffix spells percentile p as metric names end: "p95", "p99_9".
func PercentileSuffix(p float64) string {
	return "p" + strings.ReplaceAll(strconv.FormatFloat(p, 'f', -1, 64), ".", "_")
}

// PercentileName is the name of percentile p of distribution base:
// "ttft_ms_p95"; the median is base itself.
func PercentileName(base string, p float64) string {
	if p == 50 {
		return base
	}
	return base + "_" + PercentileSuffix(p)
}

// MeanName and CountName name a distribution's mean and sample count.
func MeanName(base string) string  { return base + "_" + statMean }
func CountName(base string) string { return base + "_" + statCount }

// Lookup returns the metric called name in phase: one of the table,
// or a statistic of one of its distributions by the naming rule
// ("ttft_ms_p95", "ttft_ms_mean", "ttft_ms_count"; above).
func Lookup(phase vocab.Phase, name string) (Metric, bool) {
	if m, ok := tableMetric(phase, name); ok {
		return m, true
	}
	if m, ok := turnMetric(phase, name); ok {
		return m, true
	}
	return derivedMetric(phase, name)
}

// tableMetric returns the metric of the table called name in phase.
func tableMetric(phase vocab.Phase, name string) (Metric, bool) {
	for _, m := range Table {
		if m.Phase == phase && m.Name == name {
			return m, true
		}
	}
	return Metric{}, false
}

// Must returns the metric called name in phase, for code that names
// a metric as a constant; it panics when the table has no such metric, a
// programming error the first test reaching it reports.
func Must(phase vocab.Phase, name string) Metric {
	m, ok := Lookup(phase, name)
	if !ok {
		panic(fmt.Errorf("metric: the metric table has no %s metric %q", phase, name))
	}
	return m
}

// parseDerived splits a derived name into its distribution's base name and
// its statistic: ("ttft_ms", "p", 95) for "ttft_ms_p95", ("ttft_ms",
// "mean", 0) for "ttft_ms_mean". ok is false for a name the rule does not
// make.
func parseDerived(name string) (base, kind string, p float64, ok bool) {
	for _, k := range []string{statMean, statCount} {
		if b, found := strings.CutSuffix(name, "_"+k); found && b != "" {
			return b, k, 0, true
		}
	}
	i := strings.LastIndex(name, "_p")
	for i > 0 {
		digits := name[i+2:]
		// "_p99_9": the suffix after the last "_p" may itself hold "_".
		if v, err := strconv.ParseFloat(strings.ReplaceAll(digits, "_", "."), 64); err == nil && digits != "" &&
			digits[0] >= '0' && digits[0] <= '9' && v > 0 && v < 100 && PercentileSuffix(v) == "p"+digits {
			return name[:i], statPercentile, v, true
		}
		i = strings.LastIndex(name[:i], "_p")
	}
	return "", "", 0, false
}

// derivedMetric is the metric called name in phase by the naming rule,
// for a distribution of the table; ok is false otherwise.
func derivedMetric(phase vocab.Phase, name string) (Metric, bool) {
	base, kind, p, ok := parseDerived(name)
	if !ok {
		return Metric{}, false
	}
	b, ok := tableMetric(phase, base)
	if !ok || b.Samples == "" {
		return Metric{}, false
	}
	m := Metric{Name: name, Phase: phase, Unit: b.Unit, Precision: b.Precision, Combine: b.Combine,
		optional: true}
	switch kind {
	case statMean:
		m.Label, m.Doc = b.Label+" mean", "mean of "+b.Doc
	case statCount:
		m.Label, m.Doc, m.Unit, m.Precision, m.HigherIsBetter = b.Label+" samples", "number of "+b.Samples+" behind "+b.Name, "samples", 0, true
		m.integer = true
	default:
		if p == 50 {
			m = b
			m.Name, m.stored = name, b.Name
			return m, true
		}
		m.PercentileOf, m.Percentile = base, p
		m.Label = b.Label + " " + PercentileSuffix(p)
		m.Doc = PercentileSuffix(p) + " of " + b.Doc
	}
	return m, true
}

// Distributions are the distributions of phase: the metrics whose
// samples give percentiles, means and counts.
func Distributions(phase vocab.Phase) []Metric {
	var out []Metric
	for _, m := range Table {
		if m.Phase == phase && m.Samples != "" {
			out = append(out, m)
		}
	}
	return out
}

// Stats are the metrics the naming rule adds to phase for the
// percentiles ps: for every distribution, each percentile the table does
// not already have, its mean and its count, in the table's order.
func Stats(phase vocab.Phase, ps []float64) []Metric {
	var out []Metric
	for _, b := range Distributions(phase) {
		for _, p := range ps {
			if _, inTable := tableMetric(phase, PercentileName(b.Name, p)); !inTable {
				m, _ := derivedMetric(phase, PercentileName(b.Name, p))
				out = append(out, m)
			}
		}
		for _, name := range []string{MeanName(b.Name), CountName(b.Name)} {
			if _, inTable := tableMetric(phase, name); !inTable {
				m, _ := derivedMetric(phase, name)
				out = append(out, m)
			}
		}
	}
	return out
}

// ForCells is every metric of a phase's cells measured with percentiles
// ps: the table's and Stats (conditions, reports and exports list them
// so).
func ForCells(phase vocab.Phase, ps []float64) []Metric {
	return append(OfPhase(phase), Stats(phase, ps)...)
}

// MaxTurnMetrics is how many per-turn TTFTs a traffic cell's conditions can
// read (ttft_ms_turn1 … ttft_ms_turn8): later turns are measured and kept
// in results.json, under the same rule, but not offered to conditions.
const MaxTurnMetrics = 8

// TurnName is the name of the TTFT of conversation turn n (1-based):
// "ttft_ms_turn3".
func TurnName(n int) string { return TTFTMsTurn + strconv.Itoa(n) }

// turnMetric is the per-turn TTFT called name ("ttft_ms_turn<N>", N ≥ 1,
// written without leading zeros); ok is false for any other name.
func turnMetric(phase vocab.Phase, name string) (Metric, bool) {
	digits, found := strings.CutPrefix(name, TTFTMsTurn)
	n, err := strconv.Atoi(digits)
	if !found || err != nil || n < 1 || TurnName(n) != name {
		return Metric{}, false
	}
	if phase != vocab.PhaseTraffic {
		return Metric{}, false
	}
	return Metric{Name: name, Phase: phase, Label: "TTFT turn " + digits, Unit: "ms", Precision: 0,
		Doc:      "median time to first token of the window's requests at conversation turn " + digits + " (docs/method.md#conversations)",
		optional: true}, true
}

// TurnMetrics are the per-turn TTFTs conditions can read on a traffic
// cell: turns 1 to MaxTurnMetrics.
func TurnMetrics() []Metric {
	out := make([]Metric, 0, MaxTurnMetrics)
	for n := 1; n <= MaxTurnMetrics; n++ {
		m, _ := turnMetric(vocab.PhaseTraffic, TurnName(n))
		out = append(out, m)
	}
	return out
}
