package sim

import (
	"bytes"
	"math"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// TestRequestMetrics: the families vLLM 0.32.0 writes beside the
// simulator's older ones (testdata/surface/vllm-0.32.0-cpu.json) count
// what the engine did, consistently with the counters slogate reads.
// Three requests of 100 prompt tokens and 20 output tokens run on one
// slot (--max-num-seqs 1), so two wait; the last two share the first's
// prompt blocks.
func TestRequestMetrics(t *testing.T) {
	const tbt = 5 * time.Millisecond
	start := float64(time.Now().UnixNano()) / 1e9
	ts := startTest(t, "m", "--served-model-name", "qwen", "--sim-tbt", "5ms", "--sim-ttft", "20ms", "--max-num-seqs", "1",
		"--max-model-len", "1000")
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			resp := ts.post(t, "/v1/completions", "", map[string]any{"prompt": make([]int, 100), "max_tokens": 20, "ignore_eos": true})
			readAll(t, resp.Body)
		})
	}
	wg.Wait()
	time.Sleep(20 * time.Millisecond) // the snapshot is published at the next loop iteration
	fams := scrape(t, ts)
	hist := func(name string) *dto.Histogram {
		t.Helper()
		f, ok := fams[name]
		if !ok {
			t.Fatalf("%s missing", name)
		}
		return f.GetMetric()[0].GetHistogram()
	}
	bySource := func(name, source string) float64 {
		t.Helper()
		for _, m := range fams[name].GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "source" && l.GetValue() == source {
					return m.GetCounter().GetValue()
				}
			}
		}
		t.Fatalf("%s{source=%q} missing", name, source)
		return 0
	}
	prompt := value(t, fams, "vllm:prompt_tokens_total")
	computed, hits := bySource("vllm:prompt_tokens_by_source_total", "local_compute"), bySource("vllm:prompt_tokens_by_source_total", "local_cache_hit")
	tests := []struct {
		name      string
		got, want float64
	}{
		{"every request finished is in e2e_request_latency_seconds", float64(hist("vllm:e2e_request_latency_seconds").GetSampleCount()), 3},
		{"request_prompt_tokens sums the prompts", hist("vllm:request_prompt_tokens").GetSampleSum(), prompt},
		{"request_generation_tokens sums the outputs", hist("vllm:request_generation_tokens").GetSampleSum(), value(t, fams, "vllm:generation_tokens_total")},
		{"request_params_max_tokens holds max_tokens", hist("vllm:request_params_max_tokens").GetSampleSum(), 60},
		{"request_params_n is 1 per request", hist("vllm:request_params_n").GetSampleSum(), 3},
		{"prompt tokens by source add up", computed + hits, prompt},
		{"the cache hits are the prefix cache's", hits, value(t, fams, "vllm:prefix_cache_hits_total")},
		{"prompt_tokens_cached is the hits", value(t, fams, "vllm:prompt_tokens_cached_total"), hits},
		{"the device tier is the prefix cache's", bySource("vllm:prompt_tokens_cached_by_source_total", "device"), hits},
		{"prefill_kv_computed_tokens is what was computed", hist("vllm:request_prefill_kv_computed_tokens").GetSampleSum(), computed},
		{"iteration_tokens_total sums computed and generated tokens", hist("vllm:iteration_tokens_total").GetSampleSum(), computed + 60},
		{"no request was preempted", hist("vllm:request_num_preemptions").GetSampleSum(), 0},
		// vLLM observes one inter-token gap per output after a request's
		// first, its time to first token at the first: without speculation
		// the two counts add up to the tokens generated, as on the real
		// vLLM 0.32.0 (672 = 649 + 23, engine/vllm's
		// testdata/latency_cpu_0.32.0.prom).
		{"inter-token gaps and first tokens add up to the tokens", float64(hist("vllm:inter_token_latency_seconds").GetSampleCount() + hist("vllm:time_to_first_token_seconds").GetSampleCount()),
			value(t, fams, "vllm:generation_tokens_total")},
		{"the MFU estimates stay 0 without --enable-mfu-metrics", value(t, fams, "vllm:estimated_flops_per_gpu_total"), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("%g, want %g", tt.got, tt.want)
			}
		})
	}
	t.Run("two requests waited their turn", func(t *testing.T) {
		// A request takes 20 ms of prefill and 19 steps of 5 ms: the second
		// waits about one request, the third two.
		q := hist("vllm:request_queue_time_seconds")
		if q.GetSampleSum() < 0.15 || q.GetSampleSum() > 0.5 {
			t.Errorf("queue time sum %gs, want about 3 × 0.115 s", q.GetSampleSum())
		}
	})
	t.Run("time per output token is the step", func(t *testing.T) {
		h := hist("vllm:request_time_per_output_token_seconds")
		if mean := h.GetSampleSum() / float64(h.GetSampleCount()); math.Abs(mean-tbt.Seconds()) > 0.2*tbt.Seconds() {
			t.Errorf("mean %gs, want %v", mean, tbt)
		}
		e2e, queue, inference := hist("vllm:e2e_request_latency_seconds").GetSampleSum(), hist("vllm:request_queue_time_seconds").GetSampleSum(), hist("vllm:request_inference_time_seconds").GetSampleSum()
		if math.Abs(e2e-queue-inference) > 1e-6 {
			t.Errorf("e2e %g ≠ queue %g + inference %g", e2e, queue, inference)
		}
		prefill, decode := hist("vllm:request_prefill_time_seconds").GetSampleSum(), hist("vllm:request_decode_time_seconds").GetSampleSum()
		if math.Abs(inference-prefill-decode) > 1e-6 {
			t.Errorf("inference %g ≠ prefill %g + decode %g", inference, prefill, decode)
		}
	})
	t.Run("an inter-token gap is a request's, the step", func(t *testing.T) {
		h := hist("vllm:inter_token_latency_seconds")
		if mean := h.GetSampleSum() / float64(h.GetSampleCount()); math.Abs(mean-tbt.Seconds()) > 0.2*tbt.Seconds() {
			t.Errorf("mean %gs, want %v", mean, tbt)
		}
	})
	t.Run("every counter and histogram has its _created", func(t *testing.T) {
		for name, f := range fams {
			base := name
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				base = name[:len(name)-len("_total")]
			case dto.MetricType_HISTOGRAM:
			default:
				continue
			}
			c, ok := fams[base+"_created"]
			if !ok || len(c.GetMetric()) != len(f.GetMetric()) {
				t.Errorf("%s: %s_created missing or with other series", name, base)
				continue
			}
			if at := c.GetMetric()[0].GetGauge().GetValue(); at < start-1 || at > start+60 {
				t.Errorf("%s_created = %f, want the start, about %f", base, at, start)
			}
		}
	})
}

// BenchmarkMetricsPage renders one engine's /metrics page, which slogate
// scrapes every 50 ms during a cell.
func BenchmarkMetricsPage(b *testing.B) {
	ts := startTest(b, "m", "--served-model-name", "qwen", "--sim-tbt", "1ms")
	snaps := []stats{ts.srv.engs[0].snapshot()}
	var buf bytes.Buffer
	for b.Loop() {
		buf.Reset()
		writeMetrics(&buf, ts.srv.info, snaps, ts.srv.adm.counts())
	}
	b.ReportMetric(float64(buf.Len()), "bytes/page")
}
