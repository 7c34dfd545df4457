package promread

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// page is a /metrics page shaped as vLLM V1 exposes it (docs/vllm.md#metrics), with
// two engines (data parallelism) and a second model that must be ignored.
const page = `# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="qwen"} 30.0
vllm:num_requests_running{engine="1",model_name="qwen"} 34.0
vllm:num_requests_running{engine="0",model_name="other"} 7.0
# HELP vllm:num_requests_waiting Number of requests waiting to be processed.
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0",model_name="qwen"} 0.0
vllm:num_requests_waiting{engine="1",model_name="qwen"} 2.0
# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig
# TYPE vllm:cache_config_info gauge
vllm:cache_config_info{block_size="16",cache_dtype="auto",enable_prefix_caching="True",engine="0",num_gpu_blocks="26589",num_cpu_blocks="None"} 1.0
# HELP vllm:generation_tokens_total Number of generation tokens processed.
# TYPE vllm:generation_tokens_total counter
vllm:generation_tokens_total{engine="0",model_name="qwen"} 1.5e+06
vllm:generation_tokens_total{engine="1",model_name="qwen"} 500000.0
# HELP vllm:num_preemptions_total Cumulative number of preemption from the engine.
# TYPE vllm:num_preemptions_total counter
vllm:num_preemptions_total{engine="0",model_name="qwen"} 3.0
# TYPE vllm:spec_decode_num_drafts_total counter
vllm:spec_decode_num_drafts_total{engine="0",model_name="qwen"} 100.0
# TYPE vllm:spec_decode_num_draft_tokens_total counter
vllm:spec_decode_num_draft_tokens_total{engine="0",model_name="qwen"} 700.0
# TYPE vllm:spec_decode_num_accepted_tokens_total counter
vllm:spec_decode_num_accepted_tokens_total{engine="0",model_name="qwen"} 350.0
# HELP vllm:time_to_first_token_seconds Histogram of time to first token in seconds.
# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{engine="0",le="0.001",model_name="qwen"} 0.0
vllm:time_to_first_token_seconds_bucket{engine="0",le="+Inf",model_name="qwen"} 4.0
vllm:time_to_first_token_seconds_count{engine="0",model_name="qwen"} 4.0
vllm:time_to_first_token_seconds_sum{engine="0",model_name="qwen"} 1.25
`

func TestParse(t *testing.T) {
	tests := []struct {
		name  string
		page  string
		model string
		want  Snapshot
	}{
		{
			name:  "vLLM page, two engines summed, other model ignored",
			page:  page,
			model: "qwen",
			want: Snapshot{Running: 64, Waiting: 2, HasRequests: true, GenerationTokens: 2e6, HasGenerationTokens: true,
				Preemptions: 3, SpeculativeDrafts: 100, SpeculativeDraftTokens: 700, SpeculativeAcceptedTokens: 350, HasSpeculative: true,
				KVCacheTokens: 26589 * 16},
		},
		{
			name: "no model filter sums every model",
			page: page,
			want: Snapshot{Running: 71, Waiting: 2, HasRequests: true, GenerationTokens: 2e6, HasGenerationTokens: true,
				Preemptions: 3, SpeculativeDrafts: 100, SpeculativeDraftTokens: 700, SpeculativeAcceptedTokens: 350, HasSpeculative: true,
				KVCacheTokens: 26589 * 16},
		},
		{
			name: "counters without _total suffix in the family name, no spec decode, no cache info",
			page: "# TYPE vllm:generation_tokens counter\nvllm:generation_tokens_total{model_name=\"m\"} 42\nvllm:num_requests_running 1\nvllm:num_requests_waiting 0\n",
			want: Snapshot{Running: 1, HasRequests: true, GenerationTokens: 42, HasGenerationTokens: true},
		},
		{
			name: "empty page",
			page: "",
			want: Snapshot{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(strings.NewReader(tc.page), tc.model)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseError(t *testing.T) {
	if _, err := Parse(strings.NewReader("vllm:num_requests_running{ 1\n"), ""); err == nil || !strings.Contains(err.Error(), "/metrics") {
		t.Fatalf("err = %v, want a parse error mentioning /metrics", err)
	}
}

func FuzzMetrics(f *testing.F) {
	f.Add(page, "qwen")
	f.Add("vllm:cache_config_info{block_size=\"-1\",num_gpu_blocks=\"99999999999999999999\"} 1\n", "")
	f.Add("# TYPE x histogram\nx_bucket{le=\"1\"} 1\n", "m")
	f.Fuzz(func(t *testing.T, s, m string) {
		snap, err := Parse(strings.NewReader(s), m) // must never panic
		if err == nil && snap.KVCacheTokens < 0 {
			t.Fatalf("KVCacheTokens = %d from a valid page: an overflow", snap.KVCacheTokens)
		}
	})
}
