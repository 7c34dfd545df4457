// Package promread reads the vLLM /metrics values slogate needs from the
// Prometheus text format (parsed with prometheus/common/expfmt): request
// gauges, token, preemption and speculative-decoding counters, the KV cache
// usage per engine, and what vllm:cache_config_info says about the KV cache
// (docs/vllm.md#cache-config-info). Counters and request gauges are summed
// over the `engine` label (data parallelism) and filtered by `model_name`
// (docs/vllm.md#metrics); the KV facts keep one value per engine, because
// vLLM's per-engine series do not all add up (num_gpu_blocks is already the
// total over engines on every series). Deciding the capacity from them is
// lifecycle's job (lifecycle/discovery.go).
package promread

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Snapshot is one scrape of /metrics.
type Snapshot struct {
	// Running and Waiting are vllm:num_requests_running / _waiting.
	// Waiting counts the requests waiting for capacity and those deferred
	// (LoRA budget, KV transfer): vLLM writes the sum of the two.
	Running, Waiting float64
	// HasRequests is true when both request gauges were present.
	HasRequests bool
	// RunningLags says Running is the state at the server's last gauge
	// update, not now: SGLang sets its gauges at prefill batches and
	// every --decode-log-interval decode steps, and a prefill batch's
	// count leaves out the requests it admits (docs/sglang.md#metric-cadence).
	// A shortfall of running requests then says nothing of queueing.
	RunningLags bool
	// WaitingCapacity and WaitingDeferred are
	// vllm:num_requests_waiting_by_reason{reason="capacity"} and
	// {reason="deferred"} (vLLM PR #38435); HasWaitingByReason says the
	// breakdown was present (older builds lack it).
	WaitingCapacity, WaitingDeferred float64
	HasWaitingByReason               bool
	// GenerationTokens is vllm:generation_tokens_total.
	GenerationTokens    float64
	HasGenerationTokens bool
	// PrefixCacheQueries and PrefixCacheHits are
	// vllm:prefix_cache_queries_total and vllm:prefix_cache_hits_total
	// (prompt tokens looked up and found, summed over engines;
	// docs/vllm.md#prefix-caching); HasPrefixCache says both were present.
	PrefixCacheQueries, PrefixCacheHits float64
	HasPrefixCache                      bool
	// Preemptions is vllm:num_preemptions_total; HasPreemptions says the
	// counter was present.
	Preemptions    float64
	HasPreemptions bool
	// Speculative decoding counters (vllm:spec_decode_*_total).
	SpeculativeDrafts, SpeculativeDraftTokens, SpeculativeAcceptedTokens float64
	HasSpeculative                                                       bool
	// KV is what vllm:cache_config_info says about the KV cache.
	KV KVCacheInfo
	// KVUsage is vllm:kv_cache_usage_perc (0..1) of each engine, by the
	// engine label ("" for a series without one); nil when absent. Each
	// engine's value is relative to its own KV cache.
	KVUsage map[string]float64
	// SpecAcceptLength and SpecAcceptRate are SGLang's gauges
	// sglang:spec_accept_length and sglang:spec_accept_rate, the mean over
	// data-parallel ranks; HasSpecAcceptGauges says they were present.
	// They are set at SGLang's decode logs only, so they lag
	// (docs/sglang.md#metric-cadence). vLLM has counters instead.
	SpecAcceptLength, SpecAcceptRate float64
	HasSpecAcceptGauges              bool
}

// KVCacheInfo is vllm:cache_config_info read as vLLM writes it
// (docs/vllm.md#cache-config-info): one series per engine, no model_name,
// every CacheConfig field a label rendered with str(), "None" for an unset
// one. A value that is absent, "None" or not a positive integer is 0.
type KVCacheInfo struct {
	// Engines is the number of distinct engine label values of the
	// series (a series without the label counts as one engine); 0 when the
	// metric is absent.
	Engines int
	// SizeTokens is the sum over the engines of their
	// kv_cache_size_tokens (vLLM PR #42206: group-aware, one engine's
	// capacity); 0 unless every engine's series carries it.
	SizeTokens int64
	// NumGPUBlocks and BlockSize are the labels as written. num_gpu_blocks
	// is the total over data-parallel engines, repeated on every series;
	// on hybrid models block_size is not the unit of a token capacity
	// (docs/vllm.md#hybrid-models). The largest value over the series.
	NumGPUBlocks, BlockSize int64
	// CacheDtype is the cache_dtype label (--kv-cache-dtype as the server
	// resolved it, e.g. "auto", "fp8"); "" when absent or "None".
	CacheDtype string
	// PrefixCaching is the enable_prefix_caching label: "True" or
	// "False"; "" when absent.
	PrefixCaching string
}

// BlocksTimesBlockSize is num_gpu_blocks × block_size taken once (not per
// engine), 0 when either is unknown or the product would overflow.
func (k KVCacheInfo) BlocksTimesBlockSize() int64 {
	if k.NumGPUBlocks <= 0 || k.BlockSize <= 0 || k.NumGPUBlocks > math.MaxInt64/k.BlockSize {
		return 0
	}
	return k.NumGPUBlocks * k.BlockSize
}

// KVUsageMax is the largest per-engine vllm:kv_cache_usage_perc: with one
// request resident, the usage of the engine that holds it.
func (s Snapshot) KVUsageMax() float64 {
	m := 0.0
	for _, v := range s.KVUsage {
		m = max(m, v)
	}
	return m
}

// Parse reads a /metrics page. model filters series by their model_name
// label (series without that label are kept); "" keeps every series.
func Parse(r io.Reader, modelName string) (Snapshot, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return Snapshot{}, fmt.Errorf("reading /metrics: %w", err)
	}
	var s Snapshot
	sum := func(names ...string) (float64, bool) {
		for _, n := range names {
			if f, ok := fams[n]; ok {
				return sumFamily(f, modelName)
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
	if f, ok := fams["vllm:cache_config_info"]; ok {
		s.KV = cacheConfigInfo(f)
	}
	if f, ok := fams["vllm:kv_cache_usage_perc"]; ok {
		for _, m := range f.GetMetric() {
			if !modelMatches(m, modelName) || m.GetGauge() == nil {
				continue
			}
			if s.KVUsage == nil {
				s.KVUsage = map[string]float64{}
			}
			e := labelValue(m, "engine")
			s.KVUsage[e] = max(s.KVUsage[e], m.GetGauge().GetValue())
		}
	}
	return s, nil
}

// QueuedForCapacity is the number of requests waiting for the server's
// capacity: the "capacity" reason where the server breaks the waiting
// requests down, else every waiting request (docs/vllm.md#metrics).
// Deferred requests wait on a LoRA budget or a KV transfer, not on the
// batch being full.
func (s Snapshot) QueuedForCapacity() float64 {
	if s.HasWaitingByReason {
		return s.WaitingCapacity
	}
	return s.Waiting
}

// waitingByReason sums the capacity and deferred series of
// vllm:num_requests_waiting_by_reason over the engines; ok is false
// unless a capacity series is present. Other reasons (none in vLLM today)
// are left out.
func waitingByReason(f *dto.MetricFamily, modelName string) (capacity, deferred float64, ok bool) {
	for _, m := range f.GetMetric() {
		if !modelMatches(m, modelName) || m.GetGauge() == nil {
			continue
		}
		switch labelValue(m, "reason") {
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
func cacheConfigInfo(f *dto.MetricFamily) KVCacheInfo {
	var k KVCacheInfo
	sizes := map[string]int64{} // kv_cache_size_tokens by engine; 0 = absent
	for _, m := range f.GetMetric() {
		e := labelValue(m, "engine")
		size := positiveLabel(m, "kv_cache_size_tokens")
		if old, seen := sizes[e]; !seen || size > old {
			sizes[e] = size
		}
		k.NumGPUBlocks = max(k.NumGPUBlocks, positiveLabel(m, "num_gpu_blocks"))
		k.BlockSize = max(k.BlockSize, positiveLabel(m, "block_size"))
		if v := labelValue(m, "cache_dtype"); v != "" && v != "None" {
			k.CacheDtype = v
		}
		if v := labelValue(m, "enable_prefix_caching"); v == "True" || v == "False" {
			k.PrefixCaching = v
		}
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

// labelValue is the value of label name on m, "" when it has none.
func labelValue(m *dto.Metric, name string) string {
	for _, lp := range m.GetLabel() {
		if lp.GetName() == name {
			return lp.GetValue()
		}
	}
	return ""
}

// maxLabelValue bounds the integers read from labels far above any real
// KV cache (2^40 tokens or blocks), so sums and products cannot overflow.
const maxLabelValue = 1 << 40

// positiveLabel is label name on m as a positive integer; 0 when it is
// absent, "None" (an unset config field), not an integer, or implausible.
func positiveLabel(m *dto.Metric, name string) int64 {
	v := strings.TrimSpace(labelValue(m, name))
	if v == "" || v == "None" {
		return 0
	}
	f, err := strconv.ParseFloat(v, 64) // "425424" or, from a float field, "425424.0"
	if err != nil || f < 1 || f > maxLabelValue {
		return 0
	}
	return int64(f)
}

func modelMatches(m *dto.Metric, modelName string) bool {
	if modelName == "" {
		return true
	}
	for _, lp := range m.GetLabel() {
		if lp.GetName() == "model_name" {
			return lp.GetValue() == modelName
		}
	}
	return true
}

// sumFamily adds up the gauge, counter or untyped values of a family.
func sumFamily(f *dto.MetricFamily, modelName string) (float64, bool) {
	var total float64
	found := false
	for _, m := range f.GetMetric() {
		if !modelMatches(m, modelName) {
			continue
		}
		switch {
		case m.GetGauge() != nil:
			total += m.GetGauge().GetValue()
		case m.GetCounter() != nil:
			total += m.GetCounter().GetValue()
		case m.GetUntyped() != nil:
			total += m.GetUntyped().GetValue()
		default:
			continue
		}
		found = true
	}
	return total, found
}
