// Package metric is the table of the metrics slogate measures (their names
// in specs and results.json, units, directions, precision, how repeats
// combine) and the naming rule of their statistics (docs/method.md#metrics,
// docs/method.md#metric-names). It holds no measured data: package result
// stores each metric's value in a cell.
package metric

import (
	"math"
	"slices"
	"sort"

	"github.com/slogate/slogate/internal/vocab"
)

// Metric describes one measured metric: its name in specs and results.json,
// how it reads, combines over repeats and shows (package result keeps where
// it lives in a cell). Table is the one table of them; code that handles every metric
// iterates it instead of naming fields (docs/method.md#metrics).
type Metric struct {
	// Name is the metric's name in specs (assert/expect), in results.json
	// and on the command line ("total_tps").
	Name  string
	Phase vocab.Phase
	// Label heads the metric's column in reports ("Total tok/s").
	Label string
	// Unit is "tok/s", "ms", "s", "requests", "tokens" or "" (a ratio).
	Unit string
	// HigherIsBetter gives the metric's direction: true for throughputs and
	// counts, false for latencies. Expect tolerances and diffs follow it.
	HigherIsBetter bool
	// Doc is a one-line definition (docs/method.md#metrics has the full one).
	Doc string
	// Combine says how repeated runs of a cell combine into the value
	// reported (measure.repeat > 1).
	Combine Combine
	// Precision is the number of decimals reports show.
	Precision int
	// PercentileOf names the metric whose distribution this one is a higher
	// percentile of ("ttft_ms" for "ttft_ms_p90"); "" for the others. Metric
	// lines show them together: "ttft_ms=a/p90/p99".
	PercentileOf string
	// Samples says what one sample of a distribution is ("requests",
	// "token gaps"): the metric is then the median of its samples and has
	// percentiles, a mean and a count by the naming rule (dist.go); ""
	// for a metric that is not a distribution.
	Samples string
	// Percentile is the percentile a statistic of the naming rule is
	// (95 for ttft_ms_p95); 0 for the metrics of the table, whose p90 and
	// p99 are always measured.
	Percentile float64

	// integer: a count stored as a whole number; optional: a server may not
	// report it; stored: the name its value is stored under in a cell when
	// not Name (a median spelled "_p50"). Package result keeps the storage
	// and checks it agrees (result.TestMetricStorage).
	integer, optional bool
	stored            string
	// quiet: a figure that is 0 on most servers (Quiet).
	quiet bool
	// tail, on a distribution's median in the table's literal, defines its
	// p90 and p99 ("90th percentile <tail>"): withTails adds their rows.
	tail string
}

// Combine is how the values of one metric over repeated runs of a cell
// become the value reported; the cell's Spread keeps [min, max] either way.
type Combine int

// Ways to combine repeats.
const (
	// Median is the median over the runs (counts are rounded to the nearest
	// whole number when stored).
	Median Combine = iota
)

// String names the combination: "median".
func (c Combine) String() string {
	if c == Median {
		return "median"
	}
	return "combine(?)"
}

// Of combines the values of the runs; NaN when there are none. xs is not
// modified.
func (c Combine) Of(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	// Written as lo + (hi−lo)/2, the interpolation of the runner's
	// percentile, so that a combined value is bit-identical to it.
	lo, hi := s[n/2-1], s[n/2]
	return lo + (hi-lo)/2
}

// withTails is the table's rows with, after each median that has a tail,
// the rows of its p90 and p99: the same phase, unit, precision and
// direction, labelled "<label> p90" and defined as "90th percentile <tail>".
func withTails(rows []Metric) []Metric {
	var out []Metric
	for _, m := range rows {
		tail := m.tail
		m.tail = ""
		out = append(out, m)
		if tail == "" {
			continue
		}
		for _, p := range []struct {
			at      float64
			ordinal string
		}{{90, "90th"}, {99, "99th"}} {
			out = append(out, Metric{Name: PercentileName(m.Name, p.at), Phase: m.Phase,
				Label: m.Label + " " + PercentileSuffix(p.at), Unit: m.Unit, HigherIsBetter: m.HigherIsBetter,
				Precision: m.Precision, PercentileOf: m.Name, Doc: p.ordinal + " percentile " + tail, optional: m.optional})
		}
	}
	return out
}

// Table lists every metric by phase, in display order: the one table of
// them (docs/method.md#metrics).
var Table = withTails(append([]Metric{
	{Name: TPS, Phase: vocab.PhasePrefill, Label: "Prompt tok/s",
		Unit: "tok/s", HigherIsBetter: true, Precision: 1,
		Doc: "context ÷ TTFT of one cold request"},
	{Name: TTFTMs, Phase: vocab.PhasePrefill, Label: "TTFT",
		Unit: "ms", Precision: 0,
		Doc: "time to the first chunk of one cold request"},

	{Name: TotalTPS, Phase: vocab.PhaseDecode, Label: "Total tok/s",
		Unit: "tok/s", HigherIsBetter: true, Precision: 1,
		Doc: "output tokens generated inside the window by all streams ÷ window seconds"},
	{Name: PerRequestTPS, Phase: vocab.PhaseDecode, Label: "Per request tok/s",
		Unit: "tok/s", HigherIsBetter: true, Precision: 1,
		Doc: "median over streams of tokens ÷ time spent decoding inside the window"},
	{Name: TTFTMs, Phase: vocab.PhaseDecode, Label: "TTFT",
		Unit: "ms", Precision: 0,
		Doc: "median time to first token of the requests started during the cell", Samples: "requests",
		tail: "time to first token"},
	{Name: TBTMs, Phase: vocab.PhaseDecode, Label: "Time between tokens",
		Unit: "ms", Precision: 1,
		Doc: "median time between tokens (each inter-chunk gap inside the window ÷ tokens in the chunk, pooled over requests)", Samples: "token gaps",
		tail: "time between tokens"},
	{Name: ITLMs, Phase: vocab.PhaseDecode, Label: "ITL",
		Unit: "ms", Precision: 1, Samples: "chunk gaps",
		Doc:      "median inter-token latency as vLLM defines it: the time between consecutive chunks of a request inside the window, one per chunk whatever its tokens",
		optional: true},
	{Name: TPOTMs, Phase: vocab.PhaseDecode, Label: "TPOT",
		Unit: "ms", Precision: 1, Samples: "completed requests",
		Doc:      "median TPOT as vLLM defines it, (last token chunk − first chunk) ÷ (output tokens − 1), of the requests completed inside the window",
		optional: true},
	{Name: ActiveAvg, Phase: vocab.PhaseDecode, Label: "Average active requests",
		Unit: "requests", HigherIsBetter: true, Precision: 1,
		Doc: "time-averaged number of streams past their first token"},
	{Name: Completed, Phase: vocab.PhaseDecode, Label: "Completed requests",
		Unit: "requests", HigherIsBetter: true, Precision: 0,
		Doc:     "requests that finished inside the window",
		integer: true},
	{Name: Rejected, Phase: vocab.PhaseDecode, Label: "Rejected requests",
		Unit: "requests", Precision: 0,
		Doc:     "requests the server refused at admission, its queue full, whose refusal came inside the window (docs/method.md#rejections)",
		integer: true, quiet: true},
	{Name: OutputTokens, Phase: vocab.PhaseDecode, Label: "Output tokens",
		Unit: "tokens", HigherIsBetter: true, Precision: 0,
		Doc:     "tokens counted in the window",
		integer: true},
	{Name: MeasuredS, Phase: vocab.PhaseDecode, Label: "Measured for",
		Unit: "s", HigherIsBetter: true, Precision: 1,
		Doc: "window length actually measured"},
	{Name: ServerTotalTPS, Phase: vocab.PhaseDecode, Label: "Server total tok/s",
		Unit: "tok/s", HigherIsBetter: true, Precision: 1,
		Doc:      "Δvllm:generation_tokens_total ÷ window",
		optional: true},
	{Name: SpecAcceptRate, Phase: vocab.PhaseDecode, Label: "Speculative acceptance rate",
		Unit: "", HigherIsBetter: true, Precision: 2,
		Doc:      "accepted ÷ drafted speculative tokens",
		optional: true},
	{Name: SpecAcceptLen, Phase: vocab.PhaseDecode, Label: "Speculative acceptance length",
		Unit: "tokens", HigherIsBetter: true, Precision: 2,
		Doc:      "mean tokens emitted per speculative step (1 + accepted ÷ drafts)",
		optional: true},
	{Name: ServerTTFTMsMean, Phase: vocab.PhaseDecode, Label: "Server mean TTFT",
		Unit: "ms", Precision: 1,
		Doc:      "Δsum ÷ Δcount of the server's time-to-first-token histogram over the window",
		optional: true},
	{Name: ServerITLMsMean, Phase: vocab.PhaseDecode, Label: "Server mean ITL",
		Unit: "ms", Precision: 2,
		Doc:      "Δsum ÷ Δcount of the server's inter-token latency histogram over the window",
		optional: true},
	{Name: ServerE2EMsMean, Phase: vocab.PhaseDecode, Label: "Server mean e2e",
		Unit: "ms", Precision: 0,
		Doc:      "Δsum ÷ Δcount of the server's e2e request latency histogram over the window",
		optional: true},
}, trafficMetrics...))

// OfPhase returns the metrics of phase, in display order.
func OfPhase(phase vocab.Phase) []Metric {
	var out []Metric
	for _, m := range Table {
		if m.Phase == phase {
			out = append(out, m)
		}
	}
	return out
}

// Names returns the sorted metric names of phase with the default
// percentiles (for "did you mean" and the lists of valid names).
func Names(phase vocab.Phase) []string {
	var names []string
	for _, m := range ForCells(phase, DefaultPercentiles) {
		names = append(names, m.Name)
	}
	sort.Strings(names)
	return names
}

// Direction says which way the metric improves: "higher is better" or
// "lower is better".
func (m Metric) Direction() string {
	if m.HigherIsBetter {
		return "higher is better"
	}
	return "lower is better"
}

// Integer reports whether the metric is a count stored as a whole number
// (completed, output_tokens).
func (m Metric) Integer() bool { return m.integer }

// Optional reports whether a server may not report the metric (it is then
// absent from the cell: null in specs, left out of results.json).
func (m Metric) Optional() bool { return m.optional }

// Quiet reports whether the metric is a figure that is 0 on most servers
// (the requests a server refused at admission, docs/method.md#rejections):
// every cell has it and conditions read its 0, but metric lines, tables
// and exports show it only where it is not 0, so that it takes no room on
// the servers that never refuse.
func (m Metric) Quiet() bool { return m.quiet }

// Stored is the name the metric's value is stored under in a cell: Name,
// but a distribution's name for its median spelled "_p50" (ttft_ms for
// ttft_ms_p50).
func (m Metric) Stored() string {
	if m.stored != "" {
		return m.stored
	}
	return m.Name
}

// trafficMetrics are the metrics of a traffic cell (docs/method.md#traffic),
// part of the one Table.
var trafficMetrics = []Metric{
	{Name: AchievedRPS, Phase: vocab.PhaseTraffic, Label: "Achieved req/s",
		Unit: "req/s", HigherIsBetter: true, Precision: 2,
		Doc: "requests launched inside the window ÷ window seconds"},
	{Name: GoodputRPS, Phase: vocab.PhaseTraffic, Label: "Goodput req/s",
		Unit: "req/s", HigherIsBetter: true, Precision: 2,
		Doc: "requests launched inside the window that completed meeting every SLO ÷ window seconds"},
	{Name: GoodputShare, Phase: vocab.PhaseTraffic, Label: "Goodput share",
		Unit: "", HigherIsBetter: true, Precision: 3,
		Doc: "share of the window's requests that completed meeting every SLO"},
	{Name: Launched, Phase: vocab.PhaseTraffic, Label: "Launched requests",
		Unit: "requests", HigherIsBetter: true, Precision: 0,
		Doc:     "requests launched inside the window",
		integer: true},
	{Name: Completed, Phase: vocab.PhaseTraffic, Label: "Completed requests",
		Unit: "requests", HigherIsBetter: true, Precision: 0,
		Doc:     "requests launched inside the window that finished",
		integer: true},
	{Name: Unfinished, Phase: vocab.PhaseTraffic, Label: "Unfinished requests",
		Unit: "requests", Precision: 0,
		Doc:     "requests launched inside the window still running at the drain timeout",
		integer: true},
	{Name: Rejected, Phase: vocab.PhaseTraffic, Label: "Rejected requests",
		Unit: "requests", Precision: 0,
		Doc:     "requests launched inside the window that the server refused at admission, its queue full (docs/method.md#rejections)",
		integer: true, quiet: true},
	{Name: RejectedShare, Phase: vocab.PhaseTraffic, Label: "Rejected share",
		Unit: "", Precision: 3,
		Doc:   "share of the window's requests the server refused at admission",
		quiet: true},
	{Name: E2EMs, Phase: vocab.PhaseTraffic, Label: "E2E latency",
		Unit: "ms", Precision: 0,
		Doc: "median end-to-end latency (launch to the stream's end) of the completed requests", Samples: "completed requests",
		tail: "end-to-end latency"},
	{Name: E2EMsMean, Phase: vocab.PhaseTraffic, Label: "E2E latency mean",
		Unit: "ms", Precision: 0,
		Doc: "mean end-to-end latency (the W of Little's law)"},
	{Name: TTFTMs, Phase: vocab.PhaseTraffic, Label: "TTFT",
		Unit: "ms", Precision: 0,
		Doc: "median time to first token of the window's requests", Samples: "requests",
		tail: "time to first token"},
	{Name: TBTMs, Phase: vocab.PhaseTraffic, Label: "Time between tokens",
		Unit: "ms", Precision: 1,
		Doc: "median over the window's completed requests of each one's TPOT (the older name of tpot_ms)", Samples: "completed requests",
		tail: "of the requests' mean time between tokens"},
	{Name: TPOTMs, Phase: vocab.PhaseTraffic, Label: "TPOT",
		Unit: "ms", Precision: 1, Samples: "completed requests",
		Doc:      "median TPOT as vLLM defines it, (last token chunk − first chunk) ÷ (output tokens − 1), of the window's completed requests (tbt_ms holds the same)",
		optional: true},
	{Name: TTFOMs, Phase: vocab.PhaseTraffic, Label: "TTFO",
		Unit: "ms", Precision: 0, Samples: "requests",
		Doc:      "median time to the first answer (content) token of the window's requests, the reasoning phase included; only in a cell whose stream carried reasoning (docs/method.md#reasoning)",
		optional: true, tail: "time to the first answer token"},
	{Name: ReasoningTokens, Phase: vocab.PhaseTraffic, Label: "Reasoning tokens",
		Unit: "tokens", Precision: 0, Samples: "completed requests",
		Doc:      "median reasoning tokens (delta.reasoning or delta.reasoning_content) of the window's completed requests; only in a cell whose stream carried reasoning",
		optional: true},
	{Name: ContentTokens, Phase: vocab.PhaseTraffic, Label: "Content tokens",
		Unit: "tokens", HigherIsBetter: true, Precision: 0, Samples: "completed requests",
		Doc:      "median answer (content) tokens of the window's completed requests: output tokens − reasoning tokens; only in a cell whose stream carried reasoning",
		optional: true},
	{Name: ReasoningTPS, Phase: vocab.PhaseTraffic, Label: "Reasoning tok/s",
		Unit: "tok/s", HigherIsBetter: true, Precision: 1, Samples: "completed requests",
		Doc:      "median over the window's completed requests of reasoning tokens ÷ (first answer chunk − first chunk): the reasoning phase's decode rate",
		optional: true},
	{Name: ContentTPS, Phase: vocab.PhaseTraffic, Label: "Content tok/s",
		Unit: "tok/s", HigherIsBetter: true, Precision: 1, Samples: "completed requests",
		Doc:      "median over the window's completed requests of (content tokens − 1) ÷ (last token chunk − first answer chunk): the answer phase's decode rate",
		optional: true},
	{Name: PrefixCacheHitRate, Phase: vocab.PhaseTraffic, Label: "Prefix cache hit rate",
		Unit: "", HigherIsBetter: true, Precision: 3,
		Doc:      "Δvllm:prefix_cache_hits ÷ Δvllm:prefix_cache_queries from the cell's start to its end: the share of prompt tokens the server's prefix cache served",
		optional: true},
	{Name: OutputTPS, Phase: vocab.PhaseTraffic, Label: "Output tok/s",
		Unit: "tok/s", HigherIsBetter: true, Precision: 1,
		Doc:      "output tokens of the requests launched inside the window that completed ÷ window seconds (in steady state the rate the server generates them at); what prices a search's answer (docs/method.md#cost)",
		optional: true},
	{Name: ConcurrencyAvg, Phase: vocab.PhaseTraffic, Label: "Average in flight",
		Unit: "requests", Precision: 2,
		Doc: "time-averaged number of requests in flight (launched, not ended) over the window"},
	{Name: MeasuredS, Phase: vocab.PhaseTraffic, Label: "Measured for",
		Unit: "s", HigherIsBetter: true, Precision: 1,
		Doc: "window length actually measured"},
}
