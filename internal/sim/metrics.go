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
	success, aborted, steps        int64 // success: finished by length
	stopped                        int64 // finished at their EOS
	preemptions                    int64
	sleepLevel                     int // vLLM's sleep mode: 0 awake, 1 or 2
	drafts, draftTokens            int64
	acceptedTokens                 int64
	acceptedPerPos                 [16]int64
	ttft, itl                      histogram
}

// metricsInfo is the static part of /metrics.
type metricsInfo struct {
	modelName      string
	numBlocks      int     // per engine, in the simulator's 16-token blocks (for kv_cache_usage_perc)
	cacheConfig    []label // vllm:cache_config_info's labels in vLLM's order, without engine
	numSpeculative int
	// waitingByReason: vllm:num_requests_waiting_by_reason is written
	// (vLLM PR #38435; absent with --sim-no-waiting-by-reason).
	waitingByReason bool
}

// label is one Prometheus label.
type label struct{ name, value string }

// writeMetrics renders one stats snapshot per data-parallel engine in the
// Prometheus text format with vLLM's names and labels: every series but
// vllm:cache_config_info carries model_name and engine (the rank, "0"…).
// It is written by hand, not with client_golang: the names and the label
// sets must match vLLM's exactly and the set is small and fixed. rejected
// are the API server's admission rejections by reason (admission.counts).
func writeMetrics(b *bytes.Buffer, info metricsInfo, snaps []stats, rejected map[string]int64) {
	labels := make([]string, len(snaps))
	for i := range snaps {
		labels[i] = `engine="` + strconv.Itoa(i) + `",model_name="` + info.modelName + `"`
	}
	gauge := func(name, help string, v func(s *stats) float64) {
		fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name)
		for i := range snaps {
			fmt.Fprintf(b, "%s{%s} %s\n", name, labels[i], fmtFloat(v(&snaps[i])))
		}
	}
	counter := func(name, help string, v func(s *stats) int64) {
		fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s counter\n", name, help, name)
		for i := range snaps {
			fmt.Fprintf(b, "%s{%s} %s\n", name, labels[i], fmtFloat(float64(v(&snaps[i]))))
		}
	}
	gauge("vllm:num_requests_running", "Number of requests in model execution batches.", func(s *stats) float64 { return float64(s.running) })
	gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.", func(s *stats) float64 { return float64(s.waiting) })
	if info.waitingByReason {
		// vLLM's PrometheusStatLogger.record: capacity is the scheduler's
		// waiting queue, deferred its skipped_waiting queue (LoRA budget,
		// KV transfer), and num_requests_waiting their sum. The simulator
		// defers nothing.
		fmt.Fprintf(b, "# HELP vllm:num_requests_waiting_by_reason Number of waiting requests by reason. Reason labels: 'capacity' = waiting for scheduling capacity; 'deferred' = deferred by transient constraints (LoRA budget, KV transfer, blocked status). Sum of all reasons equals vllm:num_requests_waiting.\n# TYPE vllm:num_requests_waiting_by_reason gauge\n")
		for i := range snaps {
			fmt.Fprintf(b, "vllm:num_requests_waiting_by_reason{%s,reason=\"capacity\"} %s\n", labels[i], fmtFloat(float64(snaps[i].waiting)))
			fmt.Fprintf(b, "vllm:num_requests_waiting_by_reason{%s,reason=\"deferred\"} 0.0\n", labels[i])
		}
	}
	// vLLM's PrometheusStatLogger: one series per engine and state,
	// awake 1 while the engine serves (docs/vllm.md#metrics).
	fmt.Fprintf(b, "# HELP vllm:engine_sleep_state Engine sleep state; awake = 0 means engine is sleeping; awake = 1 means engine is awake; weights_offloaded = 1 means sleep level 1; discard_all = 1 means sleep level 2.\n# TYPE vllm:engine_sleep_state gauge\n")
	for i := range snaps {
		lvl := snaps[i].sleepLevel
		for _, st := range []struct {
			name string
			on   bool
		}{{"awake", lvl == 0}, {"weights_offloaded", lvl == 1}, {"discard_all", lvl == 2}} {
			v := 0.0
			if st.on {
				v = 1
			}
			fmt.Fprintf(b, "vllm:engine_sleep_state{%s,sleep_state=%q} %s\n", labels[i], st.name, fmtFloat(v))
		}
	}
	gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", func(s *stats) float64 {
		if info.numBlocks == 0 {
			return 0
		}
		return float64(s.usedBlocks) / float64(info.numBlocks)
	})
	// One series per engine, no model_name (vLLM's log_metrics_info).
	fmt.Fprintf(b, "# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig\n# TYPE vllm:cache_config_info gauge\n")
	for i := range snaps {
		b.WriteString("vllm:cache_config_info{")
		for _, l := range info.cacheConfig {
			fmt.Fprintf(b, "%s=%q,", l.name, l.value)
		}
		fmt.Fprintf(b, "engine=\"%d\"} 1.0\n", i)
	}
	counter("vllm:num_preemptions_total", "Cumulative number of preemption from the engine.", func(s *stats) int64 { return s.preemptions })
	counter("vllm:prompt_tokens_total", "Number of prefill tokens processed.", func(s *stats) int64 { return s.promptTokens })
	counter("vllm:generation_tokens_total", "Number of generation tokens processed.", func(s *stats) int64 { return s.generationTokens })
	counter("vllm:prefix_cache_queries_total", "Prefix cache queries, in terms of number of queried tokens.", func(s *stats) int64 { return s.prefixQueries })
	counter("vllm:prefix_cache_hits_total", "Prefix cache hits, in terms of number of cached tokens.", func(s *stats) int64 { return s.prefixHits })
	fmt.Fprintf(b, "# HELP vllm:request_success_total Count of successfully processed requests.\n# TYPE vllm:request_success_total counter\n")
	for i := range snaps {
		for _, reason := range []string{"abort", "length", "stop"} {
			v := int64(0)
			switch reason {
			case "abort":
				v = snaps[i].aborted
			case "length":
				v = snaps[i].success
			case "stop":
				v = snaps[i].stopped
			}
			fmt.Fprintf(b, "vllm:request_success_total{%s,finished_reason=%q} %s\n", labels[i], reason, fmtFloat(float64(v)))
		}
	}
	// The API server's admission rejections (vLLM 0.32 on): model_name and
	// reason, no engine label, every reason from the start
	// (docs/vllm.md#admission-control).
	fmt.Fprintf(b, "# HELP vllm:admission_rejections_total Number of admission attempts rejected by a queue limit, by reason.\n# TYPE vllm:admission_rejections_total counter\n")
	for _, reason := range admissionReasons {
		fmt.Fprintf(b, "vllm:admission_rejections_total{model_name=\"%s\",reason=%q} %s\n", info.modelName, reason, fmtFloat(float64(rejected[reason])))
	}
	if info.numSpeculative > 0 {
		counter("vllm:spec_decode_num_drafts_total", "Number of spec decoding drafts.", func(s *stats) int64 { return s.drafts })
		counter("vllm:spec_decode_num_draft_tokens_total", "Number of draft tokens.", func(s *stats) int64 { return s.draftTokens })
		counter("vllm:spec_decode_num_accepted_tokens_total", "Number of accepted tokens.", func(s *stats) int64 { return s.acceptedTokens })
		fmt.Fprintf(b, "# HELP vllm:spec_decode_num_accepted_tokens_per_pos_total Accepted tokens per draft position.\n# TYPE vllm:spec_decode_num_accepted_tokens_per_pos_total counter\n")
		for e := range snaps {
			for i := 0; i < info.numSpeculative && i < len(snaps[e].acceptedPerPos); i++ {
				fmt.Fprintf(b, "vllm:spec_decode_num_accepted_tokens_per_pos_total{%s,position=\"%d\"} %s\n", labels[e], i, fmtFloat(float64(snaps[e].acceptedPerPos[i])))
			}
		}
	}
	writeHistogram(b, "vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", labels, snaps, func(s *stats) *histogram { return &s.ttft }, ttftBuckets)
	writeHistogram(b, "vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", labels, snaps, func(s *stats) *histogram { return &s.itl }, itlBuckets)
}

func writeHistogram(b *bytes.Buffer, name, help string, labels []string, snaps []stats, get func(*stats) *histogram, bounds []float64) {
	fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name)
	for i := range snaps {
		h := get(&snaps[i])
		var cum uint64
		for j, le := range bounds {
			cum += h.counts[j]
			fmt.Fprintf(b, "%s_bucket{%s,le=\"%s\"} %s\n", name, labels[i], fmtFloat(le), fmtFloat(float64(cum)))
		}
		cum += h.counts[len(bounds)]
		fmt.Fprintf(b, "%s_bucket{%s,le=\"+Inf\"} %s\n", name, labels[i], fmtFloat(float64(cum)))
		fmt.Fprintf(b, "%s_count{%s} %s\n%s_sum{%s} %s\n", name, labels[i], fmtFloat(float64(h.count)), name, labels[i], fmtFloat(h.sum))
	}
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
