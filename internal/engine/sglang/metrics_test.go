package sglang

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/slogate/slogate/internal/promread"
)

// sglangPage is /metrics as SGLang writes it (docs/sglang.md#metrics) for
// two data-parallel ranks, TP rank 0 of each reporting (and DP0's TP
// rank 1 repeating its retraction counter, as
// --enable-metrics-for-all-schedulers writes it), and another model's
// series that must be left out. The retraction gauge
// sglang:num_retracted_reqs (the last batch's) is not the counter.
const sglangPage = `# HELP sglang:num_running_reqs The number of running requests.
# TYPE sglang:num_running_reqs gauge
sglang:num_running_reqs{dp_rank="0",engine_type="unified",model_name="qwen",pp_rank="0",tp_rank="0"} 16.0
sglang:num_running_reqs{dp_rank="1",engine_type="unified",model_name="qwen",pp_rank="0",tp_rank="0"} 12.0
sglang:num_running_reqs{dp_rank="0",engine_type="unified",model_name="other",pp_rank="0",tp_rank="0"} 99.0
# TYPE sglang:num_queue_reqs gauge
sglang:num_queue_reqs{dp_rank="0",engine_type="unified",model_name="qwen",pp_rank="0",tp_rank="0"} 0.0
sglang:num_queue_reqs{dp_rank="1",engine_type="unified",model_name="qwen",pp_rank="0",tp_rank="0"} 4.0
# TYPE sglang:token_usage gauge
sglang:token_usage{dp_rank="0",engine_type="unified",model_name="qwen",pp_rank="0",tp_rank="0"} 0.25
sglang:token_usage{dp_rank="1",engine_type="unified",model_name="qwen",pp_rank="0",tp_rank="0"} 0.5
# TYPE sglang:max_total_num_tokens gauge
sglang:max_total_num_tokens{dp_rank="0",engine_type="unified",model_name="qwen",pp_rank="0",tp_rank="0"} 500000.0
sglang:max_total_num_tokens{dp_rank="1",engine_type="unified",model_name="qwen",pp_rank="0",tp_rank="0"} 500000.0
# TYPE sglang:spec_accept_length gauge
sglang:spec_accept_length{dp_rank="0",engine_type="unified",model_name="qwen",pp_rank="0",tp_rank="0"} 3.0
sglang:spec_accept_length{dp_rank="1",engine_type="unified",model_name="qwen",pp_rank="0",tp_rank="0"} 4.0
# TYPE sglang:spec_accept_rate gauge
sglang:spec_accept_rate{dp_rank="0",engine_type="unified",model_name="qwen",pp_rank="0",tp_rank="0"} 0.3
sglang:spec_accept_rate{dp_rank="1",engine_type="unified",model_name="qwen",pp_rank="0",tp_rank="0"} 0.5
# TYPE sglang:generation_tokens_total counter
sglang:generation_tokens_total{model_name="qwen"} 12345.0
# HELP sglang:prompt_tokens_total Number of prefill tokens processed.
# TYPE sglang:prompt_tokens_total counter
sglang:prompt_tokens_total{model_name="qwen"} 4000.0
sglang:prompt_tokens_total{model_name="other"} 999.0
# HELP sglang:cached_tokens_total Number of cached prompt tokens.
# TYPE sglang:cached_tokens_total counter
sglang:cached_tokens_total{model_name="qwen"} 1000.0
# HELP sglang:num_retracted_reqs The number of retracted requests.
# TYPE sglang:num_retracted_reqs gauge
sglang:num_retracted_reqs{dp_rank="0",engine_type="unified",model_name="qwen",pp_rank="0",tp_rank="0"} 1.0
# HELP sglang:num_retracted_requests_total Total number of retracted requests.
# TYPE sglang:num_retracted_requests_total counter
sglang:num_retracted_requests_total{dp_rank="0",engine_type="unified",model_name="qwen",pp_rank="0",tp_rank="0"} 3.0
sglang:num_retracted_requests_total{dp_rank="0",engine_type="unified",model_name="qwen",pp_rank="0",tp_rank="1"} 3.0
sglang:num_retracted_requests_total{dp_rank="1",engine_type="unified",model_name="qwen",pp_rank="0",tp_rank="0"} 2.0
sglang:num_retracted_requests_total{dp_rank="0",engine_type="unified",model_name="other",pp_rank="0",tp_rank="0"} 50.0
# TYPE sglang:time_to_first_token_seconds histogram
sglang:time_to_first_token_seconds_bucket{model_name="qwen",le="+Inf"} 4.0
sglang:time_to_first_token_seconds_sum{model_name="qwen"} 0.8
sglang:time_to_first_token_seconds_count{model_name="qwen"} 4.0
# TYPE sglang:inter_token_latency_seconds histogram
sglang:inter_token_latency_seconds_bucket{model_name="qwen",le="0.01"} 300.0
sglang:inter_token_latency_seconds_bucket{model_name="qwen",le="+Inf"} 400.0
sglang:inter_token_latency_seconds_sum{model_name="qwen"} 4.0
sglang:inter_token_latency_seconds_count{model_name="qwen"} 400.0
# TYPE sglang:e2e_request_latency_seconds histogram
sglang:e2e_request_latency_seconds_bucket{model_name="qwen",le="+Inf"} 4.0
sglang:e2e_request_latency_seconds_sum{model_name="qwen"} 5.0
sglang:e2e_request_latency_seconds_count{model_name="qwen"} 4.0
`

func TestParseSGLang(t *testing.T) {
	s, err := ParseMetrics(strings.NewReader(sglangPage), "qwen")
	if err != nil {
		t.Fatal(err)
	}
	want := promread.Snapshot{
		Running: 28, Waiting: 4, HasRequests: true, RunningLags: true,
		KV:               promread.KVCacheInfo{Engines: 2, SizeTokens: 1000000},
		SpecAcceptLength: 3.5, SpecAcceptRate: 0.4, HasSpecAcceptGauges: true,
		Preemptions: 5, HasPreemptions: true, PreemptionsFromZero: true,
		// observe_inter_token_latency counts every token of an output:
		// the ITL count is the tokens its sum's waits gave.
		TTFT: promread.SumCount{Sum: 0.8, Count: 4, Has: true}, ITL: promread.SumCount{Sum: 4, Count: 400, Has: true},
		E2E: promread.SumCount{Sum: 5, Count: 4, Has: true}, ITLTokens: 400, HasITLTokens: true,
		PrefixCacheQueries: 4000, PrefixCacheHits: 1000, HasPrefixCache: true,
	}
	if diff := cmp.Diff(want, s); diff != "" {
		t.Errorf("snapshot (-want +got):\n%s", diff)
	}
	// Before the first retraction SGLang writes no counter series: no
	// figure, but one that a later page's counter is counted from.
	if v, _ := ParseMetrics(strings.NewReader(strings.Split(sglangPage, "# HELP sglang:num_retracted_reqs ")[0]), "qwen"); v.HasPreemptions || !v.PreemptionsFromZero {
		t.Errorf("page without the counter: HasPreemptions %v, PreemptionsFromZero %v; want false, true", v.HasPreemptions, v.PreemptionsFromZero)
	}
	// Before a prompt token was cached SGLang writes no cached series:
	// hits are 0, not unknown.
	noHits := strings.Replace(sglangPage, `sglang:cached_tokens_total{model_name="qwen"} 1000.0`, "", 1)
	if v, _ := ParseMetrics(strings.NewReader(noHits), "qwen"); !v.HasPrefixCache || v.PrefixCacheHits != 0 || v.PrefixCacheQueries != 4000 {
		t.Errorf("page without cached series: hits %v of %v (has %v); want 0 of 4000", v.PrefixCacheHits, v.PrefixCacheQueries, v.HasPrefixCache)
	}
	// A vLLM page read as SGLang's has none of its values (the reverse is
	// registry's TestEnginesReadOnlyTheirOwnMetrics).
	if v, _ := ParseMetrics(strings.NewReader("vllm:num_requests_running 3\nvllm:num_requests_waiting 1\n"), ""); v.HasRequests {
		t.Errorf("vLLM's gauges read as SGLang's: %+v", v)
	}
}
