package vllm

import (
	"io"
	"math"

	dto "github.com/prometheus/client_model/go"

	"github.com/slogate/slogate/internal/promread"
)

// ParseMetrics reads vLLM's /metrics page (docs/vllm.md#metrics) into the
// engine-neutral figures: request gauges (vllm:num_requests_running,
// _waiting, and _waiting_by_reason's capacity and deferred series, vLLM
// PR #38435), vllm:generation_tokens_total, the prefix cache's
// vllm:prefix_cache_queries_total and _hits_total (prompt tokens looked up
// and found; docs/vllm.md#prefix-caching), vllm:num_preemptions_total,
// the speculative counters vllm:spec_decode_*_total, the admission
// rejections vllm:admission_rejections_total by reason
// (docs/vllm.md#admission-control), the sums and counts of the request
// latency histograms vllm:time_to_first_token_seconds,
// vllm:inter_token_latency_seconds and vllm:e2e_request_latency_seconds,
// vllm:kv_cache_usage_perc
// per engine, the engines asleep (vllm:engine_sleep_state), and what vllm:cache_config_info says about the KV cache
// (docs/vllm.md#cache-config-info). Counters and request gauges are summed
// over the `engine` label (data parallelism) and filtered by `model_name`;
// the KV facts keep one value per engine, because vLLM's per-engine series
// do not all add up (num_gpu_blocks is already the total over engines on
// every series). Parse reads a /metrics page. model filters series by their model_name
// label (series without that label are kept); "" keeps every series.
func ParseMetrics(r io.Reader, modelName string) (promread.Snapshot, error) {
	fams, err := promread.Families(r)
	if err != nil {
		return promread.Snapshot{}, err
	}
	var s promread.Snapshot
	sum := func(names ...string) (float64, bool) {
		for _, n := range names {
			if f, ok := fams[n]; ok {
				return promread.SumFamily(f, modelName)
			}
		}
		return 0, false
	}
	var okR, okW bool
	s.Running, okR = sum("vllm:num_requests_running")
	s.Waiting, okW = sum("vllm:num_requests_waiting")
	s.HasRequests = okR && okW
	if f, ok := fams["vllm:num_requests_waiting_by_reason"]; ok {
		s.WaitingCapacity, s.WaitingDeferred, s.HasWaitingByReason = waitingByReason(f, modelName)
	}
	s.GenerationTokens, s.HasGenerationTokens = sum("vllm:generation_tokens_total", "vllm:generation_tokens")
	var hasQ, hasH bool
	s.PrefixCacheQueries, hasQ = sum("vllm:prefix_cache_queries_total", "vllm:prefix_cache_queries")
	s.PrefixCacheHits, hasH = sum("vllm:prefix_cache_hits_total", "vllm:prefix_cache_hits")
	s.HasPrefixCache = hasQ && hasH
	var okD, okT, okA bool
	s.SpeculativeDrafts, okD = sum("vllm:spec_decode_num_drafts_total", "vllm:spec_decode_num_drafts")
	s.SpeculativeDraftTokens, okT = sum("vllm:spec_decode_num_draft_tokens_total", "vllm:spec_decode_num_draft_tokens")
	s.SpeculativeAcceptedTokens, okA = sum("vllm:spec_decode_num_accepted_tokens_total", "vllm:spec_decode_num_accepted_tokens")
	s.HasSpeculative = okD && okT && okA
	s.Preemptions, s.HasPreemptions = sum("vllm:num_preemptions_total", "vllm:num_preemptions")
	for _, n := range []string{"vllm:admission_rejections_total", "vllm:admission_rejections"} {
		if f, ok := fams[n]; ok {
			s.Rejections, s.RejectionsByReason, s.HasRejections = admissionRejections(f, modelName)
			break
		}
	}
	if f, ok := fams["vllm:cache_config_info"]; ok {
		s.KV = cacheConfigInfo(f)
	}
	for _, h := range []struct {
		dst  *promread.SumCount
		name string
	}{
		{&s.TTFT, "vllm:time_to_first_token_seconds"},
		{&s.ITL, "vllm:inter_token_latency_seconds"},
		{&s.E2E, "vllm:e2e_request_latency_seconds"},
	} {
		if f, ok := fams[h.name]; ok {
			*h.dst = promread.HistogramSumCount(f, modelName)
		}
	}
	// inter_token_latency_seconds observes one gap per output of a
	// request after its first, an output being every token an engine step
	// gave it; generation_tokens_total counts every token, the first
	// (observed by time_to_first_token_seconds) too.
	if s.HasGenerationTokens && s.TTFT.Has && s.ITL.Has {
		s.ITLTokens, s.HasITLTokens = s.GenerationTokens-s.TTFT.Count, true
	}
	if f, ok := fams["vllm:engine_sleep_state"]; ok {
		s.Asleep, s.SleepLevel, s.HasSleepState = sleepState(f, modelName)
	}
	if f, ok := fams["vllm:kv_cache_usage_perc"]; ok {
		for _, m := range f.GetMetric() {
			if !promread.ModelMatches(m, modelName) || m.GetGauge() == nil {
				continue
			}
			if s.KVUsage == nil {
				s.KVUsage = map[string]float64{}
			}
			e := promread.LabelValue(m, "engine")
			s.KVUsage[e] = max(s.KVUsage[e], m.GetGauge().GetValue())
		}
	}
	return s, nil
}

// sleepState reads vllm:engine_sleep_state (v1/metrics/loggers.py: one
// gauge per engine and sleep_state; awake 1 while the engine serves, 0
// asleep, weights_offloaded 1 at sleep level 1, discard_all 1 at level 2):
// the engines whose awake series is 0, and the deepest level set; ok
// unless no awake series is on the page.
func sleepState(f *dto.MetricFamily, modelName string) (asleep, level int, ok bool) {
	for _, m := range f.GetMetric() {
		if !promread.ModelMatches(m, modelName) || m.GetGauge() == nil {
			continue
		}
		on := m.GetGauge().GetValue() == 1
		switch promread.LabelValue(m, "sleep_state") {
		case "awake":
			ok = true
			if m.GetGauge().GetValue() == 0 {
				asleep++
			}
		case "weights_offloaded":
			if on {
				level = max(level, 1)
			}
		case "discard_all":
			if on {
				level = max(level, 2)
			}
		}
	}
	return asleep, level, ok
}

// waitingByReason sums the capacity and deferred series of
// vllm:num_requests_waiting_by_reason over the engines; ok is false
// unless a capacity series is present. Other reasons (none in vLLM today)
// are left out.
func waitingByReason(f *dto.MetricFamily, modelName string) (capacity, deferred float64, ok bool) {
	for _, m := range f.GetMetric() {
		if !promread.ModelMatches(m, modelName) || m.GetGauge() == nil {
			continue
		}
		switch promread.LabelValue(m, "reason") {
		case "capacity":
			capacity += m.GetGauge().GetValue()
			ok = true
		case "deferred":
			deferred += m.GetGauge().GetValue()
		}
	}
	return capacity, deferred, ok
}

// cacheConfigInfo reads vllm:cache_config_info's series. It has no
// model_name label (vLLM's log_metrics_info), so no series is filtered.
// Several series of one engine (Prometheus multiprocess mode) count once.
func cacheConfigInfo(f *dto.MetricFamily) promread.KVCacheInfo {
	var k promread.KVCacheInfo
	sizes := map[string]int64{} // kv_cache_size_tokens by engine; 0 = absent
	hybrid := false
	for _, m := range f.GetMetric() {
		e := promread.LabelValue(m, "engine")
		size := promread.PositiveLabel(m, "kv_cache_size_tokens")
		if old, seen := sizes[e]; !seen || size > old {
			sizes[e] = size
		}
		k.NumGPUBlocks = max(k.NumGPUBlocks, promread.PositiveLabel(m, "num_gpu_blocks"))
		k.BlockSize = max(k.BlockSize, promread.PositiveLabel(m, "block_size"))
		// A hybrid model's attention blocks are sized to its state
		// blocks (docs/vllm.md#hybrid-models): block_size is then not the
		// unit a request's tokens are held in.
		hybrid = hybrid || promread.PositiveLabel(m, "mamba_block_size") > 0
		if v := promread.LabelValue(m, "cache_dtype"); v != "" && v != "None" {
			k.CacheDtype = v
		}
		if v := promread.LabelValue(m, "enable_prefix_caching"); v == "True" || v == "False" {
			k.PrefixCaching = v
		}
	}
	if !hybrid {
		k.TokenBlock = k.BlockSize
	}
	k.Engines = len(sizes)
	for _, size := range sizes {
		if size == 0 || k.SizeTokens > math.MaxInt64-size {
			k.SizeTokens = 0
			break
		}
		k.SizeTokens += size
	}
	return k
}
