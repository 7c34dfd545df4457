package sim

import (
	"bytes"
	"fmt"
	"strconv"
)

// Histogram bucket bounds as vLLM's v1/metrics/loggers.py defines them.
var (
	ttftBuckets = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0,
		2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}
	itlBuckets = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0,
		2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0}
)

// histogram is a fixed-size Prometheus histogram (a value type, so the
// loop's stats can be copied into a snapshot without allocating).
type histogram struct {
	counts [24]uint64 // per bucket, not cumulative; the last used slot is +Inf
	sum    float64
	count  uint64
	bounds []float64
}

func (h *histogram) observe(v float64) {
	i := 0
	for i < len(h.bounds) && v > h.bounds[i] {
		i++
	}
	h.counts[i]++
	h.sum += v
	h.count++
}

// stats are the engine's gauges and counters, copied out after each step.
type stats struct {
	running, waiting, usedBlocks int

	promptTokens, generationTokens int64
	prefixQueries, prefixHits      int64
	success, aborted, steps        int64
	specDrafts, specDraftTokens    int64
	specAccepted                   int64
	specPerPos                     [16]int64
	ttft, itl                      histogram
}

// metricsInfo is the static part of /metrics.
type metricsInfo struct {
	modelName     string
	numBlocks     int
	cacheDtype    string
	prefixCaching bool
	specTokens    int
	gpuUtil       float64
}

// writeMetrics renders s in the Prometheus text format with vLLM's names
// and labels. It is written by hand, not with client_golang: the names and
// the label set must match vLLM's exactly and the set is small and fixed.
func writeMetrics(b *bytes.Buffer, info metricsInfo, s stats) {
	labels := `engine="0",model_name="` + info.modelName + `"`
	gauge := func(name, help string, v float64) {
		fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s gauge\n%s{%s} %s\n", name, help, name, name, labels, fmtFloat(v))
	}
	counter := func(name, help string, v int64) {
		fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s counter\n%s{%s} %d\n", name, help, name, name, labels, v)
	}
	gauge("vllm:num_requests_running", "Number of requests in model execution batches.", float64(s.running))
	gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.", float64(s.waiting))
	fmt.Fprintf(b, "# HELP vllm:num_requests_waiting_by_reason Number of requests waiting, by reason.\n# TYPE vllm:num_requests_waiting_by_reason gauge\n")
	fmt.Fprintf(b, "vllm:num_requests_waiting_by_reason{%s,reason=\"capacity\"} %s\n", labels, fmtFloat(float64(s.waiting)))
	fmt.Fprintf(b, "vllm:num_requests_waiting_by_reason{%s,reason=\"deferred\"} 0.0\n", labels)
	usage := 0.0
	if info.numBlocks > 0 {
		usage = float64(s.usedBlocks) / float64(info.numBlocks)
	}
	gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", usage)
	fmt.Fprintf(b, "# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig\n# TYPE vllm:cache_config_info gauge\n")
	fmt.Fprintf(b, "vllm:cache_config_info{block_size=\"%d\",cache_dtype=\"%s\",enable_prefix_caching=\"%s\",engine=\"0\",gpu_memory_utilization=\"%s\",model_name=%q,num_gpu_blocks=\"%d\"} 1.0\n",
		blockSize, info.cacheDtype, pyBool(info.prefixCaching), fmtFloat(info.gpuUtil), info.modelName, info.numBlocks)
	counter("vllm:num_preemptions_total", "Cumulative number of preemption from the engine.", 0)
	counter("vllm:prompt_tokens_total", "Number of prefill tokens processed.", s.promptTokens)
	counter("vllm:generation_tokens_total", "Number of generation tokens processed.", s.generationTokens)
	counter("vllm:prefix_cache_queries_total", "Prefix cache queries, in terms of number of queried tokens.", s.prefixQueries)
	counter("vllm:prefix_cache_hits_total", "Prefix cache hits, in terms of number of cached tokens.", s.prefixHits)
	fmt.Fprintf(b, "# HELP vllm:request_success_total Count of successfully processed requests.\n# TYPE vllm:request_success_total counter\n")
	for _, reason := range []string{"abort", "length", "stop"} {
		v := int64(0)
		switch reason {
		case "abort":
			v = s.aborted
		case "length":
			v = s.success
		}
		fmt.Fprintf(b, "vllm:request_success_total{%s,finished_reason=%q} %d\n", labels, reason, v)
	}
	if info.specTokens > 0 {
		counter("vllm:spec_decode_num_drafts_total", "Number of spec decoding drafts.", s.specDrafts)
		counter("vllm:spec_decode_num_draft_tokens_total", "Number of draft tokens.", s.specDraftTokens)
		counter("vllm:spec_decode_num_accepted_tokens_total", "Number of accepted tokens.", s.specAccepted)
		fmt.Fprintf(b, "# HELP vllm:spec_decode_num_accepted_tokens_per_pos_total Accepted tokens per draft position.\n# TYPE vllm:spec_decode_num_accepted_tokens_per_pos_total counter\n")
		for i := 0; i < info.specTokens && i < len(s.specPerPos); i++ {
			fmt.Fprintf(b, "vllm:spec_decode_num_accepted_tokens_per_pos_total{%s,position=\"%d\"} %d\n", labels, i, s.specPerPos[i])
		}
	}
	writeHistogram(b, "vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", labels, s.ttft, ttftBuckets)
	writeHistogram(b, "vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", labels, s.itl, itlBuckets)
}

func writeHistogram(b *bytes.Buffer, name, help, labels string, h histogram, bounds []float64) {
	fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name)
	var cum uint64
	for i, le := range bounds {
		cum += h.counts[i]
		fmt.Fprintf(b, "%s_bucket{%s,le=\"%s\"} %d\n", name, labels, fmtFloat(le), cum)
	}
	cum += h.counts[len(bounds)]
	fmt.Fprintf(b, "%s_bucket{%s,le=\"+Inf\"} %d\n", name, labels, cum)
	fmt.Fprintf(b, "%s_count{%s} %d\n%s_sum{%s} %s\n", name, labels, h.count, name, labels, fmtFloat(h.sum))
}

// fmtFloat formats like Python's repr for floats (1.0, 0.25).
func fmtFloat(v float64) string {
	s := strconv.FormatFloat(v, 'g', -1, 64)
	for _, c := range s {
		if c == '.' || c == 'e' || c == 'I' || c == 'N' {
			return s
		}
	}
	return s + ".0"
}

func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}
