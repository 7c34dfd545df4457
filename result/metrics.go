package result

import "sort"

// Metric describes one metric name usable in specs (assert/expect) and
// present as a JSON key of a cell.
type Metric struct {
	Name  string
	Phase Phase
	// HigherIsBetter is true for throughputs and false for latencies; it
	// gives expect tolerances and diffs their direction.
	HigherIsBetter bool
	// Unit is "tok/s", "ms", "s", "requests", "tokens" or "" (a ratio).
	Unit string
	// Doc is a one-line definition, as in DESIGN §4.
	Doc string
}

// Metrics lists every metric by phase, in display order.
var Metrics = []Metric{
	{"tps", PhasePrefill, true, "tok/s", "context ÷ TTFT of one cold request"},
	{"ttft_ms", PhasePrefill, false, "ms", "time to the first chunk of one cold request"},

	{"total_tps", PhaseDecode, true, "tok/s", "output tokens generated inside the window by all streams ÷ window seconds"},
	{"per_request_tps", PhaseDecode, true, "tok/s", "median over streams of tokens ÷ time spent decoding inside the window"},
	{"ttft_ms", PhaseDecode, false, "ms", "median time to first token of the requests started during the cell"},
	{"ttft_ms_p90", PhaseDecode, false, "ms", "90th percentile time to first token"},
	{"ttft_ms_p99", PhaseDecode, false, "ms", "99th percentile time to first token"},
	{"tbt_ms", PhaseDecode, false, "ms", "median time between tokens (each inter-chunk gap ÷ tokens in the chunk)"},
	{"tbt_ms_p90", PhaseDecode, false, "ms", "90th percentile time between tokens"},
	{"tbt_ms_p99", PhaseDecode, false, "ms", "99th percentile time between tokens"},
	{"active_avg", PhaseDecode, true, "requests", "time-averaged number of streams past their first token"},
	{"completed", PhaseDecode, true, "requests", "requests that finished inside the window"},
	{"output_tokens", PhaseDecode, true, "tokens", "tokens counted in the window"},
	{"measured_s", PhaseDecode, true, "s", "window length actually measured"},
	{"server_total_tps", PhaseDecode, true, "tok/s", "Δvllm:generation_tokens_total ÷ window"},
	{"spec_accept_rate", PhaseDecode, true, "", "accepted ÷ drafted speculative tokens"},
	{"spec_accept_len", PhaseDecode, true, "tokens", "mean tokens emitted per speculative step (1 + accepted ÷ drafts)"},
}

// LookupMetric returns the metric called name in phase.
func LookupMetric(phase Phase, name string) (Metric, bool) {
	for _, m := range Metrics {
		if m.Phase == phase && m.Name == name {
			return m, true
		}
	}
	return Metric{}, false
}

// MetricNames returns the sorted metric names of phase (for "did you mean").
func MetricNames(phase Phase) []string {
	var names []string
	for _, m := range Metrics {
		if m.Phase == phase {
			names = append(names, m.Name)
		}
	}
	sort.Strings(names)
	return names
}

// Metric returns the named metric of a prefill cell; ok is false for an
// unknown name.
func (c *PrefillCell) Metric(name string) (v float64, ok bool) {
	switch name {
	case "tps":
		return c.TPS, true
	case "ttft_ms":
		return c.TTFTMs, true
	}
	return 0, false
}

// Metric returns the named metric of a decode cell; ok is false for an
// unknown name or an optional metric the server did not provide.
func (c *DecodeCell) Metric(name string) (v float64, ok bool) {
	opt := func(p *float64) (float64, bool) {
		if p == nil {
			return 0, false
		}
		return *p, true
	}
	switch name {
	case "total_tps":
		return c.TotalTPS, true
	case "per_request_tps":
		return c.PerRequestTPS, true
	case "ttft_ms":
		return c.TTFTMs, true
	case "ttft_ms_p90":
		return c.TTFTMsP90, true
	case "ttft_ms_p99":
		return c.TTFTMsP99, true
	case "tbt_ms":
		return c.TBTMs, true
	case "tbt_ms_p90":
		return c.TBTMsP90, true
	case "tbt_ms_p99":
		return c.TBTMsP99, true
	case "active_avg":
		return c.ActiveAvg, true
	case "completed":
		return float64(c.Completed), true
	case "output_tokens":
		return float64(c.OutputTokens), true
	case "measured_s":
		return c.MeasuredS, true
	case "server_total_tps":
		return opt(c.ServerTotalTPS)
	case "spec_accept_rate":
		return opt(c.SpecAcceptRate)
	case "spec_accept_len":
		return opt(c.SpecAcceptLen)
	}
	return 0, false
}
