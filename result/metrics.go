package result

import (
	"fmt"
	"math"
	"slices"
	"sort"
)

// Metric describes one measured metric: its name in specs and results.json,
// how it reads, combines over repeats and shows, and where it lives in a
// cell. Metrics is the one table of them; code that handles every metric
// iterates it instead of naming fields (docs/method.md#metrics).
type Metric struct {
	// Name is the metric's name in specs (assert/expect), in results.json
	// and on the command line ("total_tps").
	Name  string
	Phase Phase
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

	// field locates the metric in a cell of its phase.
	field cellField
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

// Metrics lists every metric by phase, in display order.
var Metrics = append([]Metric{
	{Name: "tps", Phase: PhasePrefill, Label: "Prompt tok/s",
		Unit: "tok/s", HigherIsBetter: true, Precision: 1,
		Doc:   "context ÷ TTFT of one cold request",
		field: prefillField(func(c *PrefillCell) *float64 { return &c.TPS })},
	{Name: "ttft_ms", Phase: PhasePrefill, Label: "TTFT",
		Unit: "ms", Precision: 0,
		Doc:   "time to the first chunk of one cold request",
		field: prefillField(func(c *PrefillCell) *float64 { return &c.TTFTMs })},

	{Name: "total_tps", Phase: PhaseDecode, Label: "Total tok/s",
		Unit: "tok/s", HigherIsBetter: true, Precision: 1,
		Doc:   "output tokens generated inside the window by all streams ÷ window seconds",
		field: decodeField(func(c *DecodeCell) *float64 { return &c.TotalTPS })},
	{Name: "per_request_tps", Phase: PhaseDecode, Label: "Per request tok/s",
		Unit: "tok/s", HigherIsBetter: true, Precision: 1,
		Doc:   "median over streams of tokens ÷ time spent decoding inside the window",
		field: decodeField(func(c *DecodeCell) *float64 { return &c.PerRequestTPS })},
	{Name: "ttft_ms", Phase: PhaseDecode, Label: "TTFT",
		Unit: "ms", Precision: 0,
		Doc: "median time to first token of the requests started during the cell", Samples: "requests",
		field: decodeField(func(c *DecodeCell) *float64 { return &c.TTFTMs })},
	{Name: "ttft_ms_p90", Phase: PhaseDecode, Label: "TTFT p90",
		Unit: "ms", Precision: 0, PercentileOf: "ttft_ms",
		Doc:   "90th percentile time to first token",
		field: decodeField(func(c *DecodeCell) *float64 { return &c.TTFTMsP90 })},
	{Name: "ttft_ms_p99", Phase: PhaseDecode, Label: "TTFT p99",
		Unit: "ms", Precision: 0, PercentileOf: "ttft_ms",
		Doc:   "99th percentile time to first token",
		field: decodeField(func(c *DecodeCell) *float64 { return &c.TTFTMsP99 })},
	{Name: "tbt_ms", Phase: PhaseDecode, Label: "Time between tokens",
		Unit: "ms", Precision: 1,
		Doc: "median time between tokens (each inter-chunk gap inside the window ÷ tokens in the chunk, pooled over requests)", Samples: "token gaps",
		field: decodeField(func(c *DecodeCell) *float64 { return &c.TBTMs })},
	{Name: "tbt_ms_p90", Phase: PhaseDecode, Label: "Time between tokens p90",
		Unit: "ms", Precision: 1, PercentileOf: "tbt_ms",
		Doc:   "90th percentile time between tokens",
		field: decodeField(func(c *DecodeCell) *float64 { return &c.TBTMsP90 })},
	{Name: "tbt_ms_p99", Phase: PhaseDecode, Label: "Time between tokens p99",
		Unit: "ms", Precision: 1, PercentileOf: "tbt_ms",
		Doc:   "99th percentile time between tokens",
		field: decodeField(func(c *DecodeCell) *float64 { return &c.TBTMsP99 })},
	{Name: "itl_ms", Phase: PhaseDecode, Label: "ITL",
		Unit: "ms", Precision: 1, Samples: "chunk gaps",
		Doc:   "median inter-token latency as vLLM defines it: the time between consecutive chunks of a request inside the window, one per chunk whatever its tokens",
		field: statsField(PhaseDecode, "itl_ms")},
	{Name: "tpot_ms", Phase: PhaseDecode, Label: "TPOT",
		Unit: "ms", Precision: 1, Samples: "completed requests",
		Doc:   "median TPOT as vLLM defines it, (last token chunk − first chunk) ÷ (output tokens − 1), of the requests completed inside the window",
		field: statsField(PhaseDecode, "tpot_ms")},
	{Name: "active_avg", Phase: PhaseDecode, Label: "Average active requests",
		Unit: "requests", HigherIsBetter: true, Precision: 1,
		Doc:   "time-averaged number of streams past their first token",
		field: decodeField(func(c *DecodeCell) *float64 { return &c.ActiveAvg })},
	{Name: "completed", Phase: PhaseDecode, Label: "Completed requests",
		Unit: "requests", HigherIsBetter: true, Precision: 0,
		Doc:   "requests that finished inside the window",
		field: decodeField(func(c *DecodeCell) *int { return &c.Completed })},
	{Name: "output_tokens", Phase: PhaseDecode, Label: "Output tokens",
		Unit: "tokens", HigherIsBetter: true, Precision: 0,
		Doc:   "tokens counted in the window",
		field: decodeField(func(c *DecodeCell) *int64 { return &c.OutputTokens })},
	{Name: "measured_s", Phase: PhaseDecode, Label: "Measured for",
		Unit: "s", HigherIsBetter: true, Precision: 1,
		Doc:   "window length actually measured",
		field: decodeField(func(c *DecodeCell) *float64 { return &c.MeasuredS })},
	{Name: "server_total_tps", Phase: PhaseDecode, Label: "Server total tok/s",
		Unit: "tok/s", HigherIsBetter: true, Precision: 1,
		Doc:   "Δvllm:generation_tokens_total ÷ window",
		field: decodeOptional(func(c *DecodeCell) **float64 { return &c.ServerTotalTPS })},
	{Name: "spec_accept_rate", Phase: PhaseDecode, Label: "Speculative acceptance rate",
		Unit: "", HigherIsBetter: true, Precision: 2,
		Doc:   "accepted ÷ drafted speculative tokens",
		field: decodeOptional(func(c *DecodeCell) **float64 { return &c.SpeculativeAcceptRate })},
	{Name: "spec_accept_len", Phase: PhaseDecode, Label: "Speculative acceptance length",
		Unit: "tokens", HigherIsBetter: true, Precision: 2,
		Doc:   "mean tokens emitted per speculative step (1 + accepted ÷ drafts)",
		field: decodeOptional(func(c *DecodeCell) **float64 { return &c.SpeculativeAcceptLen })},
}, trafficMetrics...)

// PhaseMetrics returns the metrics of phase, in display order.
func PhaseMetrics(phase Phase) []Metric {
	var out []Metric
	for _, m := range Metrics {
		if m.Phase == phase {
			out = append(out, m)
		}
	}
	return out
}

// LookupMetric returns the metric called name in phase: one of the table,
// or a statistic of one of its distributions by the naming rule
// ("ttft_ms_p95", "ttft_ms_mean", "ttft_ms_count"; dist.go).
func LookupMetric(phase Phase, name string) (Metric, bool) {
	if m, ok := tableMetric(phase, name); ok {
		return m, true
	}
	return derivedMetric(phase, name)
}

// tableMetric returns the metric of the table called name in phase.
func tableMetric(phase Phase, name string) (Metric, bool) {
	for _, m := range Metrics {
		if m.Phase == phase && m.Name == name {
			return m, true
		}
	}
	return Metric{}, false
}

// MustMetric returns the metric called name in phase, for code that names
// a metric as a constant; it panics when the table has no such metric, a
// programming error the first test reaching it reports.
func MustMetric(phase Phase, name string) Metric {
	m, ok := LookupMetric(phase, name)
	if !ok {
		panic(fmt.Sprintf("result: the metric table has no %s metric %q", phase, name))
	}
	return m
}

// MetricNames returns the sorted metric names of phase with the default
// percentiles (for "did you mean" and the lists of valid names).
func MetricNames(phase Phase) []string {
	var names []string
	for _, m := range CellMetrics(phase, DefaultPercentiles) {
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
func (m Metric) Integer() bool { return m.field.integer }

// Optional reports whether a server may not report the metric (it is then
// absent from the cell: null in specs, left out of results.json).
func (m Metric) Optional() bool { return m.field.optional }

// OfDecode returns the metric's value in decode cell c; ok is false when m
// is not a decode metric or is an optional metric c does not have.
func (m Metric) OfDecode(c *DecodeCell) (v float64, ok bool) {
	if m.field.decode == nil {
		return 0, false
	}
	return m.field.decode(c).get()
}

// OfPrefill returns the metric's value in prefill cell c; ok is false when
// m is not a prefill metric.
func (m Metric) OfPrefill(c *PrefillCell) (v float64, ok bool) {
	if m.field.prefill == nil {
		return 0, false
	}
	return m.field.prefill(c).get()
}

// SetDecode stores v as the metric's value in decode cell c (rounded to the
// nearest whole number for a count); it does nothing when m is not a decode
// metric.
func (m Metric) SetDecode(c *DecodeCell, v float64) {
	if m.field.decode != nil {
		m.field.decode(c).set(v)
	}
}

// SetPrefill stores v as the metric's value in prefill cell c; it does
// nothing when m is not a prefill metric.
func (m Metric) SetPrefill(c *PrefillCell, v float64) {
	if m.field.prefill != nil {
		m.field.prefill(c).set(v)
	}
}

// ClearDecode removes an optional metric from decode cell c (the server did
// not report it); a metric that is always present is set to zero.
func (m Metric) ClearDecode(c *DecodeCell) {
	if m.field.decode != nil {
		m.field.decode(c).clear()
	}
}

// Metric returns the named metric of a prefill cell; ok is false for an
// unknown name.
func (c *PrefillCell) Metric(name string) (v float64, ok bool) {
	m, ok := LookupMetric(PhasePrefill, name)
	if !ok {
		return 0, false
	}
	return m.OfPrefill(c)
}

// Metric returns the named metric of a decode cell; ok is false for an
// unknown name or an optional metric the server did not provide.
func (c *DecodeCell) Metric(name string) (v float64, ok bool) {
	m, ok := LookupMetric(PhaseDecode, name)
	if !ok {
		return 0, false
	}
	return m.OfDecode(c)
}

// cellField is where a metric lives in a cell of its phase: exactly one of
// prefill, decode and traffic is set.
type cellField struct {
	prefill  func(*PrefillCell) slot
	decode   func(*DecodeCell) slot
	traffic  func(*TrafficCell) slot
	integer  bool // stored as int or int64
	optional bool // stored as *float64, nil when not reported
}

// slot is one metric's storage in one cell: exactly one pointer is set
// (stats with its key).
type slot struct {
	f     *float64
	i     *int
	i64   *int64
	opt   **float64
	stats *map[string]float64
	key   string
}

func (s slot) get() (float64, bool) {
	if s.stats != nil {
		v, ok := (*s.stats)[s.key]
		return v, ok
	}
	switch {
	case s.f != nil:
		return *s.f, true
	case s.i != nil:
		return float64(*s.i), true
	case s.i64 != nil:
		return float64(*s.i64), true
	case *s.opt != nil:
		return **s.opt, true
	}
	return 0, false
}

func (s slot) set(v float64) {
	if s.stats != nil {
		if *s.stats == nil {
			*s.stats = map[string]float64{}
		}
		(*s.stats)[s.key] = v
		return
	}
	switch {
	case s.f != nil:
		*s.f = v
	case s.i != nil:
		*s.i = int(math.Round(v))
	case s.i64 != nil:
		*s.i64 = int64(math.Round(v))
	default:
		*s.opt = &v
	}
}

func (s slot) clear() {
	if s.stats != nil {
		delete(*s.stats, s.key)
		return
	}
	if s.opt != nil {
		*s.opt = nil
		return
	}
	s.set(0)
}

// number is the storage types of a metric that is always present.
type number interface{ float64 | int | int64 }

func slotOf[T number](p *T) slot {
	switch p := any(p).(type) {
	case *float64:
		return slot{f: p}
	case *int:
		return slot{i: p}
	case *int64:
		return slot{i64: p}
	}
	panic("unreachable: number has three types")
}

func isInteger[T number]() bool {
	var zero T
	_, isFloat := any(zero).(float64)
	return !isFloat
}

func prefillField[T number](f func(*PrefillCell) *T) cellField {
	return cellField{prefill: func(c *PrefillCell) slot { return slotOf(f(c)) }, integer: isInteger[T]()}
}

func decodeField[T number](f func(*DecodeCell) *T) cellField {
	return cellField{decode: func(c *DecodeCell) slot { return slotOf(f(c)) }, integer: isInteger[T]()}
}

func decodeOptional(f func(*DecodeCell) **float64) cellField {
	return cellField{decode: func(c *DecodeCell) slot { return slot{opt: f(c)} }, optional: true}
}
