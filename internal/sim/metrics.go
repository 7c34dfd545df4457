package sim

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Histogram bucket bounds as vLLM's v1/metrics/buckets.py defines them.
var (
	ttftBuckets = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0,
		2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}
	itlBuckets = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0,
		2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0}
	// latencyBuckets are REQUEST_LATENCY_BUCKETS: e2e, queue, inference,
	// prefill and decode times.
	latencyBuckets = []float64{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0,
		120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0}
	iterationBuckets  = []float64{1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384}
	paramsNBuckets    = []float64{1, 2, 5, 10, 20}
	preemptionBuckets = []float64{1, 2, 3, 4, 5, 10, 20}
)

// histogramSlots is how many buckets a histogram holds, +Inf included.
const histogramSlots = 24

// tokenBuckets are vLLM's request_tokens buckets, a 1-2-5 series up to
// max_model_len (build_1_2_5_buckets), at most histogramSlots − 1 of them.
func tokenBuckets(maxLen int) []float64 {
	var out []float64
	for scale := 1; len(out) < histogramSlots-1; scale *= 10 {
		for _, m := range []int{1, 2, 5} {
			if m*scale > maxLen || len(out) == histogramSlots-1 {
				return out
			}
			out = append(out, float64(m*scale))
		}
	}
	return out
}

// histogram is a fixed-size Prometheus histogram (a value type, so the
// loop's stats can be copied into a snapshot without allocating).
type histogram struct {
	counts [histogramSlots]uint64 // per bucket, not cumulative; the last used slot is +Inf
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
	// promptComputed and promptCached split promptTokens by source: the
	// prompt tokens prefilled and those the prefix cache served.
	promptComputed, promptCached int64
	// Per finished request (vLLM's FinishedRequestStats): its phases'
	// times, its token counts and preemptions; and per engine step the
	// tokens it computed (iterationTokens).
	e2e, queue, prefill, inference, decode, tpot            histogram
	reqPrompt, reqGeneration, reqMaxGeneration, reqMaxParam histogram
	reqN, reqPreemptions, reqKVComputed, iterationTokens    histogram
}

// newStats is an engine's stats with every histogram's buckets; maxLen
// sizes the token-count buckets.
func newStats(maxLen int) stats {
	tokens := tokenBuckets(maxLen)
	h := func(bounds []float64) histogram { return histogram{bounds: bounds} }
	return stats{
		ttft: h(ttftBuckets), itl: h(itlBuckets), tpot: h(itlBuckets),
		e2e: h(latencyBuckets), queue: h(latencyBuckets), prefill: h(latencyBuckets), inference: h(latencyBuckets), decode: h(latencyBuckets),
		reqPrompt: h(tokens), reqGeneration: h(tokens), reqMaxGeneration: h(tokens), reqMaxParam: h(tokens), reqKVComputed: h(tokens),
		reqN: h(paramsNBuckets), reqPreemptions: h(preemptionBuckets), iterationTokens: h(iterationBuckets),
	}
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
	// created is when the server made its metrics, in seconds since the
	// epoch: the value of every NAME_created series.
	created float64
}

// label is one Prometheus label.
type label struct{ name, value string }

// writeMetrics renders one stats snapshot per data-parallel engine in the
// Prometheus text format with vLLM's names, labels and order (vLLM 0.32.0's
// PrometheusStatLogger, testdata/surface/vllm-0.32.0-cpu.json): every
// series but vllm:cache_config_info carries model_name and engine (the
// rank, "0"…), and every counter and histogram is followed by its
// NAME_created gauge, as prometheus_client writes them. It is written by
// hand, not with client_golang: the names and the label sets must match
// vLLM's exactly and the set is small and fixed. rejected are the API
// server's admission rejections by reason (admission.counts).
func writeMetrics(b *bytes.Buffer, info metricsInfo, snaps []stats, rejected map[string]int64) {
	w := metricsWriter{b: b, info: info, snaps: snaps, labels: make([]string, len(snaps))}
	for i := range snaps {
		w.labels[i] = `engine="` + strconv.Itoa(i) + `",model_name="` + info.modelName + `"`
	}
	zero := func(*stats) int64 { return 0 }
	// The model-FLOPs estimates count only with --enable-mfu-metrics
	// (off by default), so vLLM writes them at 0; so does the simulator.
	w.counter("vllm:estimated_flops_per_gpu_total", "Estimated number of floating point operations per GPU (for Model Flops Utilization calculations).", zero)
	w.counter("vllm:estimated_read_bytes_per_gpu_total", "Estimated number of bytes read from memory per GPU (for Model Flops Utilization calculations).", zero)
	w.counter("vllm:estimated_write_bytes_per_gpu_total", "Estimated number of bytes written to memory per GPU (for Model Flops Utilization calculations).", zero)
	w.gauge("vllm:num_requests_running", "Number of requests in model execution batches.", func(s *stats) float64 { return float64(s.running) })
	w.gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.", func(s *stats) float64 { return float64(s.waiting) })
	if info.waitingByReason {
		// vLLM's PrometheusStatLogger.record: capacity is the scheduler's
		// waiting queue, deferred its skipped_waiting queue (LoRA budget,
		// KV transfer), and num_requests_waiting their sum. The simulator
		// defers nothing.
		fmt.Fprintf(b, "# HELP vllm:num_requests_waiting_by_reason Number of waiting requests by reason. Reason labels: 'capacity' = waiting for scheduling capacity; 'deferred' = deferred by transient constraints (LoRA budget, KV transfer, blocked status). Sum of all reasons equals vllm:num_requests_waiting.\n# TYPE vllm:num_requests_waiting_by_reason gauge\n")
		for i := range snaps {
			fmt.Fprintf(b, "vllm:num_requests_waiting_by_reason{%s,reason=\"capacity\"} %s\n", w.labels[i], fmtFloat(float64(snaps[i].waiting)))
			fmt.Fprintf(b, "vllm:num_requests_waiting_by_reason{%s,reason=\"deferred\"} 0.0\n", w.labels[i])
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
			fmt.Fprintf(b, "vllm:engine_sleep_state{%s,sleep_state=%q} %s\n", w.labels[i], st.name, fmtFloat(v))
		}
	}
	w.gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", func(s *stats) float64 {
		if info.numBlocks == 0 {
			return 0
		}
		return float64(s.usedBlocks) / float64(info.numBlocks)
	})
	w.counter("vllm:prefix_cache_queries_total", "Prefix cache queries, in terms of number of queried tokens.", func(s *stats) int64 { return s.prefixQueries })
	w.counter("vllm:prefix_cache_hits_total", "Prefix cache hits, in terms of number of cached tokens.", func(s *stats) int64 { return s.prefixHits })
	// No KV connector shares a cache across instances, and the simulator
	// serves text only: vLLM writes these at 0 then.
	w.counter("vllm:external_prefix_cache_queries_total", "External prefix cache queries from KV connector cross-instance cache sharing, in terms of number of queried tokens.", zero)
	w.counter("vllm:external_prefix_cache_hits_total", "External prefix cache hits from KV connector cross-instance cache sharing, in terms of number of cached tokens.", zero)
	w.counter("vllm:mm_cache_queries_total", "Multi-modal cache queries, in terms of number of queried items.", zero)
	w.counter("vllm:mm_cache_hits_total", "Multi-modal cache hits, in terms of number of cached items.", zero)
	w.counter("vllm:num_preemptions_total", "Cumulative number of preemption from the engine.", func(s *stats) int64 { return s.preemptions })
	w.counter("vllm:prompt_tokens_total", "Number of prefill tokens processed.", func(s *stats) int64 { return s.promptTokens })
	w.labelled("vllm:prompt_tokens_by_source_total", "Number of prompt tokens by source.", "source", []string{"local_compute", "local_cache_hit", "external_kv_transfer"},
		func(s *stats, source string) int64 {
			switch source {
			case "local_compute":
				return s.promptComputed
			case "local_cache_hit":
				return s.promptCached
			}
			return 0
		})
	w.counter("vllm:prompt_tokens_cached_total", "Number of cached prompt tokens (local + external).", func(s *stats) int64 { return s.promptCached })
	// device is what vllm:prefix_cache_hits counts (PrometheusStatLogger
	// adds the scheduler's prefix-cache hits to it); the other tiers are
	// a KV connector's.
	w.labelled("vllm:prompt_tokens_cached_by_source_total", "Prefix-cache hit tokens by the cache tier that supplied them: device (local HBM), host (offloaded to DRAM), disk, p2p (transferred from another vLLM instance) or external_unspecified. Counted at admission; sums to vllm:prefix_cache_hits + vllm:external_prefix_cache_hits.",
		"source", []string{"device", "host", "p2p", "disk", "external_unspecified"},
		func(s *stats, source string) int64 {
			if source == "device" {
				return s.prefixHits
			}
			return 0
		})
	w.counter("vllm:generation_tokens_total", "Number of generation tokens processed.", func(s *stats) int64 { return s.generationTokens })
	// error and repetition never happen in the simulator; vLLM writes
	// every reason from the start.
	w.labelled("vllm:request_success_total", "Count of successfully processed requests.", "finished_reason", []string{"stop", "length", "abort", "error", "repetition"},
		func(s *stats, reason string) int64 {
			switch reason {
			case "stop":
				return s.stopped
			case "length":
				return s.success
			case "abort":
				return s.aborted
			}
			return 0
		})
	// The API server's admission rejections (vLLM 0.32 on): model_name and
	// reason, no engine label, every reason from the start
	// (docs/vllm.md#admission-control).
	fmt.Fprintf(b, "# HELP vllm:admission_rejections_total Number of admission attempts rejected by a queue limit, by reason.\n# TYPE vllm:admission_rejections_total counter\n")
	for _, reason := range admissionReasons {
		fmt.Fprintf(b, "vllm:admission_rejections_total{model_name=\"%s\",reason=%q} %s\n", info.modelName, reason, fmtFloat(float64(rejected[reason])))
	}
	fmt.Fprintf(b, "# HELP vllm:admission_rejections_created Number of admission attempts rejected by a queue limit, by reason.\n# TYPE vllm:admission_rejections_created gauge\n")
	for _, reason := range admissionReasons {
		fmt.Fprintf(b, "vllm:admission_rejections_created{model_name=\"%s\",reason=%q} %s\n", info.modelName, reason, fmtFloat(info.created))
	}
	if info.numSpeculative > 0 {
		w.counter("vllm:spec_decode_num_drafts_total", "Number of spec decoding drafts.", func(s *stats) int64 { return s.drafts })
		w.counter("vllm:spec_decode_num_draft_tokens_total", "Number of draft tokens.", func(s *stats) int64 { return s.draftTokens })
		w.counter("vllm:spec_decode_num_accepted_tokens_total", "Number of accepted tokens.", func(s *stats) int64 { return s.acceptedTokens })
		positions := make([]string, min(info.numSpeculative, len(snaps[0].acceptedPerPos)))
		for i := range positions {
			positions[i] = strconv.Itoa(i)
		}
		w.labelled("vllm:spec_decode_num_accepted_tokens_per_pos_total", "Accepted tokens per draft position.", "position", positions,
			func(s *stats, pos string) int64 { i, _ := strconv.Atoi(pos); return s.acceptedPerPos[i] })
	}
	w.histogram("vllm:request_prompt_tokens", "Number of prefill tokens processed.", func(s *stats) *histogram { return &s.reqPrompt })
	w.histogram("vllm:request_generation_tokens", "Number of generation tokens processed.", func(s *stats) *histogram { return &s.reqGeneration })
	w.histogram("vllm:iteration_tokens_total", "Histogram of number of tokens per engine_step.", func(s *stats) *histogram { return &s.iterationTokens })
	w.histogram("vllm:request_max_num_generation_tokens", "Histogram of maximum number of requested generation tokens.", func(s *stats) *histogram { return &s.reqMaxGeneration })
	w.histogram("vllm:request_params_n", "Histogram of the n request parameter.", func(s *stats) *histogram { return &s.reqN })
	w.histogram("vllm:request_params_max_tokens", "Histogram of the max_tokens request parameter.", func(s *stats) *histogram { return &s.reqMaxParam })
	w.histogram("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", func(s *stats) *histogram { return &s.ttft })
	w.histogram("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", func(s *stats) *histogram { return &s.itl })
	w.histogram("vllm:request_time_per_output_token_seconds", "Histogram of time_per_output_token_seconds per request.", func(s *stats) *histogram { return &s.tpot })
	w.histogram("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", func(s *stats) *histogram { return &s.e2e })
	w.histogram("vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.", func(s *stats) *histogram { return &s.queue })
	w.histogram("vllm:request_inference_time_seconds", "Histogram of time spent in RUNNING phase for request.", func(s *stats) *histogram { return &s.inference })
	w.histogram("vllm:request_prefill_time_seconds", "Histogram of time spent in PREFILL phase for request.", func(s *stats) *histogram { return &s.prefill })
	w.histogram("vllm:request_decode_time_seconds", "Histogram of time spent in DECODE phase for request.", func(s *stats) *histogram { return &s.decode })
	w.histogram("vllm:request_num_preemptions", "Histogram of the number of times a request was preempted.", func(s *stats) *histogram { return &s.reqPreemptions })
	w.histogram("vllm:request_prefill_kv_computed_tokens", "Histogram of new KV tokens computed during prefill (excluding cached tokens).", func(s *stats) *histogram { return &s.reqKVComputed })
	// One series per engine, no model_name (vLLM's log_metrics_info).
	fmt.Fprintf(b, "# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig\n# TYPE vllm:cache_config_info gauge\n")
	for i := range snaps {
		b.WriteString("vllm:cache_config_info{")
		for _, l := range info.cacheConfig {
			fmt.Fprintf(b, "%s=%q,", l.name, l.value)
		}
		fmt.Fprintf(b, "engine=\"%d\"} 1.0\n", i)
	}
}

// metricsWriter writes the families of writeMetrics, one series per engine.
type metricsWriter struct {
	b      *bytes.Buffer
	info   metricsInfo
	snaps  []stats
	labels []string // per engine: engine="i",model_name="…"
}

// gauge writes a gauge family.
func (w metricsWriter) gauge(name, help string, v func(s *stats) float64) {
	fmt.Fprintf(w.b, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name)
	for i := range w.snaps {
		fmt.Fprintf(w.b, "%s{%s} %s\n", name, w.labels[i], fmtFloat(v(&w.snaps[i])))
	}
}

// counter writes a counter family NAME_total and its NAME_created.
func (w metricsWriter) counter(name, help string, v func(s *stats) int64) {
	fmt.Fprintf(w.b, "# HELP %s %s\n# TYPE %s counter\n", name, help, name)
	for i := range w.snaps {
		fmt.Fprintf(w.b, "%s{%s} %s\n", name, w.labels[i], fmtFloat(float64(v(&w.snaps[i]))))
	}
	w.created(strings.TrimSuffix(name, "_total"), help, func(i int, emit func(string)) { emit(w.labels[i]) })
}

// labelled writes a counter family with one more label, key, of values
// (in vLLM's order; the label names sorted, as vLLM writes them), and its
// NAME_created.
func (w metricsWriter) labelled(name, help, key string, values []string, v func(s *stats, value string) int64) {
	set := func(i int, value string) string {
		ls := []string{`engine="` + strconv.Itoa(i) + `"`, `model_name="` + w.info.modelName + `"`, key + `="` + value + `"`}
		slices.Sort(ls)
		return strings.Join(ls, ",")
	}
	fmt.Fprintf(w.b, "# HELP %s %s\n# TYPE %s counter\n", name, help, name)
	for i := range w.snaps {
		for _, value := range values {
			fmt.Fprintf(w.b, "%s{%s} %s\n", name, set(i, value), fmtFloat(float64(v(&w.snaps[i], value))))
		}
	}
	w.created(strings.TrimSuffix(name, "_total"), help, func(i int, emit func(string)) {
		for _, value := range values {
			emit(set(i, value))
		}
	})
}

// histogram writes a histogram family and its NAME_created.
func (w metricsWriter) histogram(name, help string, get func(*stats) *histogram) {
	writeHistogram(w.b, name, help, w.labels, w.snaps, get)
	w.created(name, help, func(i int, emit func(string)) { emit(w.labels[i]) })
}

// created writes base_created, the gauge prometheus_client writes beside
// each counter and histogram: when each series was made (at the start,
// for vLLM's, which it makes up front). series emits engine i's label sets.
func (w metricsWriter) created(base, help string, series func(i int, emit func(labels string))) {
	name := base + "_created"
	fmt.Fprintf(w.b, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name)
	at := fmtFloat(w.info.created)
	for i := range w.snaps {
		series(i, func(labels string) { fmt.Fprintf(w.b, "%s{%s} %s\n", name, labels, at) })
	}
}

// writeHistogram writes a histogram family, one series per engine, each
// with its own buckets.
func writeHistogram(b *bytes.Buffer, name, help string, labels []string, snaps []stats, get func(*stats) *histogram) {
	fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name)
	for i := range snaps {
		h := get(&snaps[i])
		bounds := h.bounds
		var cum uint64
		// One line per bucket, appended without fmt: a page has some 350
		// of them, and slogate scrapes it every 50 ms during a cell.
		line := func(suffix, le string, v float64) {
			b.WriteString(name)
			b.WriteString(suffix)
			b.WriteByte('{')
			b.WriteString(labels[i])
			if le != "" {
				b.WriteString(`,le="`)
				b.WriteString(le)
				b.WriteByte('"')
			}
			b.WriteString("} ")
			b.WriteString(fmtFloat(v))
			b.WriteByte('\n')
		}
		for j, le := range bounds {
			cum += h.counts[j]
			line("_bucket", fmtFloat(le), float64(cum))
		}
		cum += h.counts[len(bounds)]
		line("_bucket", "+Inf", float64(cum))
		line("_count", "", float64(h.count))
		line("_sum", "", h.sum)
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
