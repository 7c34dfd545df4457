// Package promread holds the engine-neutral figures slogate reads from a
// server's /metrics (Snapshot) and the Prometheus text format helpers the
// engines read their pages with (parsed with prometheus/common/expfmt).
// Which metric names an engine writes, and how its series add up, is the
// engine's own (internal/engine/<name>: its ParseMetrics); deciding the KV
// capacity from them is lifecycle's and the engine's.
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

// Snapshot is one scrape of /metrics, read into engine-neutral figures by
// the server's engine (engine.Engine's ParseMetrics; which metric each
// field comes from is in the engine's package). A Has… field says its
// figures were on the page.
type Snapshot struct {
	// Running and Waiting are the requests running and waiting. Waiting
	// may count, beside the requests waiting for capacity, those deferred
	// for another reason, where the engine writes the sum of the two.
	Running, Waiting float64
	// HasRequests is true when both request gauges were present.
	HasRequests bool
	// RunningLags says Running is the state at the server's last gauge
	// update, not now: SGLang sets its gauges at prefill batches and
	// every --decode-log-interval decode steps, and a prefill batch's
	// count leaves out the requests it admits (docs/sglang.md#metric-cadence).
	// A shortfall of running requests then says nothing of queueing.
	RunningLags bool
	// WaitingCapacity and WaitingDeferred break Waiting down: waiting for
	// capacity, and deferred for another reason (vLLM: a LoRA budget or a
	// KV transfer); HasWaitingByReason says the breakdown was present
	// (older builds lack it).
	WaitingCapacity, WaitingDeferred float64
	HasWaitingByReason               bool
	// GenerationTokens is the server's counter of generated tokens.
	GenerationTokens    float64
	HasGenerationTokens bool
	// PrefixCacheQueries and PrefixCacheHits are the prompt tokens looked
	// up in the prefix cache and found, summed over engines; HasPrefixCache
	// says both were present.
	PrefixCacheQueries, PrefixCacheHits float64
	HasPrefixCache                      bool
	// FinishedTokens is a counter of generated tokens the server adds to
	// when each request finishes, by that request's own count
	// (llama-server's tokens_predicted_total): not a rate over a window of
	// long streams, but checkable against the requests that finished
	// between two scrapes. HasFinishedTokens says it was present.
	FinishedTokens    float64
	HasFinishedTokens bool
	// Preemptions is the server's preemption counter; HasPreemptions says
	// the counter was present.
	Preemptions    float64
	HasPreemptions bool
	// Rejections is the server's counter of the requests it refused at
	// admission because a queue limit was reached (docs/method.md#rejections),
	// summed over its reasons; RejectionsByReason is the same by the
	// engine's reason label (the limit that refused them); HasRejections
	// says the counter was on the page.
	Rejections         float64
	RejectionsByReason map[string]float64
	HasRejections      bool
	// Asleep is the number of engines the server reports asleep (vLLM's
	// sleep mode: a sleeping engine answers /health but serves no
	// request), SleepLevel the deepest level among them; HasSleepState
	// says the engine's sleep gauge was on the page.
	Asleep, SleepLevel int
	HasSleepState      bool
	// PreemptionsFromZero says the engine writes its preemption counter
	// from the first preemption on (SGLang's labelled retraction counter),
	// so a page without it, before one with it, stands for 0.
	PreemptionsFromZero bool
	// Speculative decoding counters: drafts, drafted tokens, accepted
	// tokens.
	SpeculativeDrafts, SpeculativeDraftTokens, SpeculativeAcceptedTokens float64
	HasSpeculative                                                       bool
	// KV is what the server's metrics say about its KV cache.
	KV KVCacheInfo
	// KVUsage is the KV cache usage (0..1) of each data-parallel engine,
	// by its label ("" for a series without one); nil when absent. Each
	// engine's value is relative to its own KV cache.
	KVUsage map[string]float64
	// SpecAcceptLength and SpecAcceptRate are gauges of the speculative
	// acceptance, the mean over data-parallel ranks, where the engine has
	// gauges instead of counters (SGLang); HasSpecAcceptGauges says they
	// were present. SGLang sets them at its decode logs only, so they lag
	// (docs/sglang.md#metric-cadence).
	SpecAcceptLength, SpecAcceptRate float64
	HasSpecAcceptGauges              bool
	// TTFT, ITL and E2E are the sums (seconds) and counts of the engine's
	// per-request latency histograms: time to first token, inter-token
	// latency, end-to-end request latency (vLLM's, which its engine
	// package names); not Has where the engine has none. Their means over a window are Δsum ÷ Δcount: the buckets
	// are too coarse for medians (docs/method.md#server-latency).
	TTFT, ITL, E2E SumCount
	// ITLTokens counts, cumulatively, the output tokens whose waits ITL's
	// sum adds up: those after each request's first, so that
	// ΔITLTokens ÷ ΔITL.Sum is the server's own per-request decode rate
	// over a window (docs/method.md#unmeasurable). vLLM observes one gap
	// per engine step of a request, however many tokens the step gave
	// (v1/metrics/stats.py, IterationStats.update_from_output), so its
	// count is generation tokens less first tokens; SGLang counts each
	// token of an output (observe_inter_token_latency). HasITLTokens says
	// it was read.
	ITLTokens    float64
	HasITLTokens bool
}

// DecodeRateSince is the server's own per-request decode rate, in tokens
// a second, over the window since before: ΔITLTokens ÷ ΔITL.Sum; false
// when either read lacks it, nothing was observed, or a counter went
// back (a restart).
func (s Snapshot) DecodeRateSince(before Snapshot) (float64, bool) {
	if !s.HasITLTokens || !before.HasITLTokens || !s.ITL.Has || !before.ITL.Has {
		return 0, false
	}
	n, t := s.ITLTokens-before.ITLTokens, s.ITL.Sum-before.ITL.Sum
	if n <= 0 || t <= 0 {
		return 0, false
	}
	return n / t, true
}

// SumCount is a histogram's sum and count, summed over its series.
type SumCount struct {
	Sum, Count float64
	// Has says the family was on the page.
	Has bool
}

// MeanSince is the mean of the observations made since before: Δsum ÷
// Δcount, and false when there were none (or either read lacks the
// family, or the counters went back: a restart).
func (s SumCount) MeanSince(before SumCount) (float64, bool) {
	n := s.Count - before.Count
	if !s.Has || !before.Has || n <= 0 || s.Sum < before.Sum {
		return 0, false
	}
	return (s.Sum - before.Sum) / n, true
}

// HistogramSumCount is the sum and count of a histogram family's series
// whose model_name matches modelName, summed (data-parallel engines).
func HistogramSumCount(f *dto.MetricFamily, modelName string) SumCount {
	var s SumCount
	for _, m := range f.GetMetric() {
		h := m.GetHistogram()
		if h == nil || !ModelMatches(m, modelName) {
			continue
		}
		s.Sum += h.GetSampleSum()
		s.Count += float64(h.GetSampleCount())
		s.Has = true
	}
	return s
}

// KVCacheInfo is what a server's metrics say about its KV cache
// (vLLM's cache config metric, docs/vllm.md#cache-config-info; SGLang's
// token capacity gauge). A value that is absent, "None" or not a positive
// integer is 0.
type KVCacheInfo struct {
	// Engines is the number of data-parallel engines (or ranks) the
	// figures have a series for; 0 when the metric is absent.
	Engines int
	// SizeTokens is the sum over the engines of their capacity in
	// tokens; 0 unless every engine states it.
	SizeTokens int64
	// NumGPUBlocks and BlockSize are the labels as written. vLLM's
	// num_gpu_blocks is the total over data-parallel engines, repeated on
	// every series; on hybrid models block_size is not the unit of a token
	// capacity (docs/vllm.md#hybrid-models). The largest value over the
	// series.
	NumGPUBlocks, BlockSize int64
	// TokenBlock is the block a request's tokens are held in, in tokens:
	// BlockSize on a plain decoder; 0 where the engine does not say it or
	// where block_size is not that unit (a hybrid model, vLLM's
	// mamba_block_size set).
	TokenBlock int64
	// CacheDtype is the KV cache dtype as the server resolved it (e.g.
	// "auto", "fp8"); "" when absent or "None".
	CacheDtype string
	// PrefixCaching is whether prefix caching is on: "True" or "False";
	// "" when absent.
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

// KVUsageMax is the largest per-engine KV cache usage: with one
// request resident, the usage of the engine that holds it.
func (s Snapshot) KVUsageMax() float64 {
	m := 0.0
	for _, v := range s.KVUsage {
		m = max(m, v)
	}
	return m
}

// QueuedForCapacity is the number of requests waiting for the server's
// capacity: WaitingCapacity where the server breaks the waiting requests
// down, else every waiting request (docs/vllm.md#metrics). vLLM's deferred
// requests wait on a LoRA budget or a KV transfer, not on the batch being
// full.
func (s Snapshot) QueuedForCapacity() float64 {
	if s.HasWaitingByReason {
		return s.WaitingCapacity
	}
	return s.Waiting
}

// LabelValue is the value of label name on m, "" when it has none.
func LabelValue(m *dto.Metric, name string) string {
	for _, lp := range m.GetLabel() {
		if lp.GetName() == name {
			return lp.GetValue()
		}
	}
	return ""
}

// MaxLabelValue bounds the integers read from labels far above any real
// KV cache (2^40 tokens or blocks), so sums and products cannot overflow.
const MaxLabelValue = 1 << 40

// PositiveLabel is label name on m as a positive integer; 0 when it is
// absent, "None" (an unset config field), not an integer, or implausible.
func PositiveLabel(m *dto.Metric, name string) int64 {
	v := strings.TrimSpace(LabelValue(m, name))
	if v == "" || v == "None" {
		return 0
	}
	f, err := strconv.ParseFloat(v, 64) // "425424" or, from a float field, "425424.0"
	if err != nil || f < 1 || f > MaxLabelValue {
		return 0
	}
	return int64(f)
}

// ModelMatches reports whether m is modelName's series: its model_name
// label is modelName, or it has none, or modelName is "".
func ModelMatches(m *dto.Metric, modelName string) bool {
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

// SumFamily adds up the gauge, counter or untyped values of a family.
func SumFamily(f *dto.MetricFamily, modelName string) (float64, bool) {
	var total float64
	found := false
	for _, m := range f.GetMetric() {
		if !ModelMatches(m, modelName) {
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

// Families reads a /metrics page in the Prometheus text format, by metric
// name.
func Families(r io.Reader) (map[string]*dto.MetricFamily, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("reading /metrics: %w", err)
	}
	return fams, nil
}
