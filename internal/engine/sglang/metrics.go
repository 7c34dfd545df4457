package sglang

import (
	"io"
	"math"

	dto "github.com/prometheus/client_model/go"

	"github.com/slogate/slogate/internal/promread"
)

// ParseMetrics reads an SGLang /metrics page (--enable-metrics;
// docs/sglang.md#metrics) into the engine-neutral figures: Running and
// Waiting from the gauges sglang:num_running_reqs and num_queue_reqs,
// KV.SizeTokens from
// sglang:max_total_num_tokens, one value per dp_rank, Preemptions from the
// retraction counter sglang:num_retracted_requests_total, the sums and
// counts of the request histograms sglang:time_to_first_token_seconds,
// inter_token_latency_seconds and e2e_request_latency_seconds, and the
// speculative gauges. Values are summed over dp_rank (the gauges of one rank are its
// own); model filters by model_name as vLLM's does. SGLang's scheduler
// gauges are set at prefill batches and every --decode-log-interval decode
// steps only (docs/sglang.md#metric-cadence): a reading may be that old.
// The prefix cache's figures are sglang:prompt_tokens_total (lookups) and
// cached_tokens_total (hits), counted as requests finish.
func ParseMetrics(r io.Reader, modelName string) (promread.Snapshot, error) {
	fams, err := promread.Families(r)
	if err != nil {
		return promread.Snapshot{}, err
	}
	var s promread.Snapshot
	// gauge sums a scheduler gauge over the ranks, each rank once.
	gauge := func(name string) (float64, bool) {
		f, ok := fams[name]
		if !ok {
			return 0, false
		}
		total := 0.0
		for _, v := range byRank(f, modelName) {
			total += v
		}
		return total, true
	}
	var okR, okW bool
	s.Running, okR = gauge("sglang:num_running_reqs")
	s.Waiting, okW = gauge("sglang:num_queue_reqs")
	s.HasRequests = okR && okW
	s.RunningLags = true
	// sglang:generation_tokens_total is left unread: SGLang adds a
	// request's tokens when it finishes (docs/sglang.md#metrics), so its
	// rate over a window of long streams is not the server's throughput,
	// and server_total_tps is not measured on SGLang.
	// KVUsage stays nil: sglang:token_usage is not refreshed while the
	// server idles (docs/sglang.md#metric-cadence), so the one-stream KV
	// cross-check would read a value from before the stream.
	if f, ok := fams["sglang:max_total_num_tokens"]; ok {
		ranks := byRank(f, modelName)
		s.KV.Engines = len(ranks)
		for _, v := range ranks {
			if v < 1 || v > promread.MaxLabelValue || s.KV.SizeTokens > math.MaxInt64-int64(v) {
				s.KV.SizeTokens = 0
				break
			}
			s.KV.SizeTokens += int64(v)
		}
	}
	// sglang:num_retracted_requests_total counts the requests the
	// scheduler retracted (SchedulerMetricsCollector.increment_retracted_reqs,
	// python/sglang/srt/observability/metrics_collector.py): SGLang's
	// preemption, a request sent back to the queue to re-prefill. Its
	// series are written from the first retraction on (a labelled
	// prometheus_client counter), so a page without it is 0 on a build
	// that has it (PreemptionsFromZero).
	s.PreemptionsFromZero = true
	if f, ok := fams["sglang:num_retracted_requests_total"]; ok {
		for _, v := range byRank(f, modelName) {
			s.Preemptions += v
			s.HasPreemptions = true
		}
	}
	// The tokenizer's request histograms (TokenizerMetricsCollector):
	// observe_inter_token_latency adds an output's whole interval to the
	// sum and counts each of its tokens, so the count is the tokens the
	// sum's waits gave, the first of each request left to TTFT.
	for _, h := range []struct {
		dst  *promread.SumCount
		name string
	}{
		{&s.TTFT, "sglang:time_to_first_token_seconds"},
		{&s.ITL, "sglang:inter_token_latency_seconds"},
		{&s.E2E, "sglang:e2e_request_latency_seconds"},
	} {
		if f, ok := fams[h.name]; ok {
			*h.dst = promread.HistogramSumCount(f, modelName)
		}
	}
	if s.ITL.Has {
		s.ITLTokens, s.HasITLTokens = s.ITL.Count, true
	}
	// The prefix cache: sglang:prompt_tokens_total counts every prompt
	// token of the requests that finished, cached_tokens_total those the
	// radix cache served (observe_one_finished_request). Both are labelled
	// counters without series before their first increment, so a page
	// with prompt_tokens_total's family counts either from zero. The
	// scheduler's sglang:cache_hit_rate gauge is the last prefill batch's
	// only (docs/sglang.md#metrics), no rate over a cell.
	if f, ok := fams["sglang:prompt_tokens_total"]; ok {
		s.PrefixCacheQueries, _ = promread.SumFamily(f, modelName)
		if c, ok := fams["sglang:cached_tokens_total"]; ok {
			s.PrefixCacheHits, _ = promread.SumFamily(c, modelName)
		}
		s.HasPrefixCache = true
	}
	length, okL := meanGauge(fams["sglang:spec_accept_length"], modelName)
	rate, okA := meanGauge(fams["sglang:spec_accept_rate"], modelName)
	if okL {
		s.SpecAcceptLength, s.SpecAcceptRate, s.HasSpecAcceptGauges = length, rate, okA
	}
	return s, nil
}

// byRank is a gauge's or counter's value per dp_rank label ("" without one),
// the largest where a rank has several series (tp_rank 0 reports; with
// --enable-metrics-for-all-schedulers every TP rank repeats its rank's
// value).
func byRank(f *dto.MetricFamily, modelName string) map[string]float64 {
	out := map[string]float64{}
	for _, m := range f.GetMetric() {
		if !promread.ModelMatches(m, modelName) {
			continue
		}
		var v float64
		switch {
		case m.GetGauge() != nil:
			v = m.GetGauge().GetValue()
		case m.GetCounter() != nil:
			v = m.GetCounter().GetValue()
		case m.GetUntyped() != nil: // a page without # TYPE lines
			v = m.GetUntyped().GetValue()
		default:
			continue
		}
		r := promread.LabelValue(m, "dp_rank")
		out[r] = max(out[r], v)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// meanGauge is the mean over dp_rank of a gauge family; ok is false when
// the family is absent.
func meanGauge(f *dto.MetricFamily, modelName string) (float64, bool) {
	if f == nil {
		return 0, false
	}
	ranks := byRank(f, modelName)
	if len(ranks) == 0 {
		return 0, false
	}
	total := 0.0
	for _, v := range ranks {
		total += v
	}
	return total / float64(len(ranks)), true
}
