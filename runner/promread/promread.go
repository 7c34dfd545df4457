// Package promread reads the vLLM /metrics values the runner needs from the
// Prometheus text format (parsed with prometheus/common/expfmt): request
// gauges, token and speculative-decoding counters, and the KV cache size
// from vllm:cache_config_info. Every value is summed over the `engine`
// label (data parallelism) and filtered by `model_name` (docs/vllm.md#metrics).
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
	Running, Waiting float64
	// HasRequests is true when both request gauges were present.
	HasRequests bool
	// GenerationTokens is vllm:generation_tokens_total.
	GenerationTokens    float64
	HasGenerationTokens bool
	// Preemptions is vllm:num_preemptions_total.
	Preemptions float64
	// Speculative decoding counters (vllm:spec_decode_*_total).
	SpeculativeDrafts, SpeculativeDraftTokens, SpeculativeAcceptedTokens float64
	HasSpeculative                                                       bool
	// KVCacheTokens is Σ num_gpu_blocks × block_size over the
	// vllm:cache_config_info series; 0 when absent.
	KVCacheTokens int64
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
	s.GenerationTokens, s.HasGenerationTokens = sum("vllm:generation_tokens_total", "vllm:generation_tokens")
	s.Preemptions, _ = sum("vllm:num_preemptions_total", "vllm:num_preemptions")
	var okD, okT, okA bool
	s.SpeculativeDrafts, okD = sum("vllm:spec_decode_num_drafts_total", "vllm:spec_decode_num_drafts")
	s.SpeculativeDraftTokens, okT = sum("vllm:spec_decode_num_draft_tokens_total", "vllm:spec_decode_num_draft_tokens")
	s.SpeculativeAcceptedTokens, okA = sum("vllm:spec_decode_num_accepted_tokens_total", "vllm:spec_decode_num_accepted_tokens")
	s.HasSpeculative = okD && okT && okA
	if f, ok := fams["vllm:cache_config_info"]; ok {
		for _, m := range f.GetMetric() {
			if !modelMatches(m, modelName) {
				continue
			}
			var blocks, size int64
			for _, lp := range m.GetLabel() {
				switch lp.GetName() {
				case "num_gpu_blocks":
					blocks, _ = strconv.ParseInt(strings.TrimSpace(lp.GetValue()), 10, 64)
				case "block_size":
					size, _ = strconv.ParseInt(strings.TrimSpace(lp.GetValue()), 10, 64)
				}
			}
			// Bounds far above any real GPU (2^32 blocks of 2^16 tokens)
			// keep the product and the sum over engines from overflowing.
			if blocks > 0 && size > 0 && blocks < 1<<32 && size < 1<<16 && s.KVCacheTokens < math.MaxInt64-blocks*size {
				s.KVCacheTokens += blocks * size
			}
		}
	}
	return s, nil
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
