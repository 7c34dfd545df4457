package vllm

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/slogate/slogate/internal/promread"
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
		want  promread.Snapshot
	}{
		{
			name:  "vLLM page, two engines summed, other model ignored",
			page:  page,
			model: "qwen",
			want: promread.Snapshot{Running: 64, Waiting: 2, HasRequests: true, GenerationTokens: 2e6, HasGenerationTokens: true,
				Preemptions: 3, HasPreemptions: true, SpeculativeDrafts: 100, SpeculativeDraftTokens: 700, SpeculativeAcceptedTokens: 350, HasSpeculative: true,
				KV:   promread.KVCacheInfo{Engines: 1, NumGPUBlocks: 26589, BlockSize: 16, TokenBlock: 16, CacheDtype: "auto", PrefixCaching: "True"},
				TTFT: promread.SumCount{Sum: 1.25, Count: 4, Has: true}},
		},
		{
			name: "no model filter sums every model",
			page: page,
			want: promread.Snapshot{Running: 71, Waiting: 2, HasRequests: true, GenerationTokens: 2e6, HasGenerationTokens: true,
				Preemptions: 3, HasPreemptions: true, SpeculativeDrafts: 100, SpeculativeDraftTokens: 700, SpeculativeAcceptedTokens: 350, HasSpeculative: true,
				KV:   promread.KVCacheInfo{Engines: 1, NumGPUBlocks: 26589, BlockSize: 16, TokenBlock: 16, CacheDtype: "auto", PrefixCaching: "True"},
				TTFT: promread.SumCount{Sum: 1.25, Count: 4, Has: true}},
		},
		{
			name: "counters without _total suffix in the family name, no spec decode, no cache info",
			page: "# TYPE vllm:generation_tokens counter\nvllm:generation_tokens_total{model_name=\"m\"} 42\nvllm:num_requests_running 1\nvllm:num_requests_waiting 0\n",
			want: promread.Snapshot{Running: 1, HasRequests: true, GenerationTokens: 42, HasGenerationTokens: true},
		},
		{
			name: "waiting by reason (vLLM PR #38435): capacity and deferred summed over engines, the other model ignored",
			page: `# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="qwen"} 8.0
vllm:num_requests_running{engine="1",model_name="qwen"} 8.0
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0",model_name="qwen"} 5.0
vllm:num_requests_waiting{engine="1",model_name="qwen"} 1.0
# TYPE vllm:num_requests_waiting_by_reason gauge
vllm:num_requests_waiting_by_reason{engine="0",model_name="qwen",reason="capacity"} 2.0
vllm:num_requests_waiting_by_reason{engine="0",model_name="qwen",reason="deferred"} 3.0
vllm:num_requests_waiting_by_reason{engine="1",model_name="qwen",reason="capacity"} 1.0
vllm:num_requests_waiting_by_reason{engine="1",model_name="qwen",reason="deferred"} 0.0
vllm:num_requests_waiting_by_reason{engine="0",model_name="other",reason="capacity"} 9.0
`,
			model: "qwen",
			want:  promread.Snapshot{Running: 16, Waiting: 6, HasRequests: true, WaitingCapacity: 3, WaitingDeferred: 3, HasWaitingByReason: true},
		},
		{
			name: "empty page",
			page: "",
			want: promread.Snapshot{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseMetrics(strings.NewReader(tc.page), tc.model)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestParseVLLMPages reads the pages in testdata (see its README), shaped
// as vLLM writes them (docs/vllm.md#cache-config-info): the KV facts keep
// one value per engine, so the runner can take kv_cache_size_tokens per
// engine and num_gpu_blocks (already the total over engines) once.
func TestParseVLLMPages(t *testing.T) {
	tests := []struct {
		name string
		file string
		want promread.Snapshot
	}{
		{
			name: "DP 2, hybrid, after PR #42206: size per engine, blocks total, usage per engine",
			file: "dp2_hybrid.prom",
			want: promread.Snapshot{Running: 1, HasRequests: true, HasWaitingByReason: true, GenerationTokens: 2000, HasGenerationTokens: true,
				Preemptions: 7, HasPreemptions: true,
				KV:      promread.KVCacheInfo{Engines: 2, SizeTokens: 2 * 24000512, NumGPUBlocks: 46876, BlockSize: 2112, CacheDtype: "auto", PrefixCaching: "True"},
				KVUsage: map[string]float64{"0": 0.00036, "1": 0},
				TTFT:    promread.SumCount{Sum: 0.35, Count: 2, Has: true}},
		},
		{
			name: "before PR #42206: no size label",
			file: "before_42206.prom",
			want: promread.Snapshot{Running: 64, HasRequests: true, GenerationTokens: 123456, HasGenerationTokens: true, HasPreemptions: true,
				KV:      promread.KVCacheInfo{Engines: 1, NumGPUBlocks: 26589, BlockSize: 16, TokenBlock: 16, CacheDtype: "auto", PrefixCaching: "True"},
				KVUsage: map[string]float64{"0": 0.412}},
		},
		{
			name: "\"None\" is an absent value",
			file: "none_values.prom",
			want: promread.Snapshot{KV: promread.KVCacheInfo{Engines: 1, BlockSize: 16, TokenBlock: 16, CacheDtype: "auto", PrefixCaching: "True"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			got, err := ParseMetrics(f, "qwen")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestKVCacheInfo(t *testing.T) {
	tests := []struct {
		name            string
		series          string
		wantSize        int64
		wantEngines     int
		wantBlocksTimes int64
	}{
		{name: "one engine", series: `{engine="0",block_size="16",num_gpu_blocks="100",kv_cache_size_tokens="1600"}`,
			wantSize: 1600, wantEngines: 1, wantBlocksTimes: 1600},
		{name: "two engines: sizes add up, the blocks total is taken once",
			series:   `{engine="0",block_size="16",num_gpu_blocks="200",kv_cache_size_tokens="1600"}` + " 1\nvllm:cache_config_info" + `{engine="1",block_size="16",num_gpu_blocks="200",kv_cache_size_tokens="1600"}`,
			wantSize: 3200, wantEngines: 2, wantBlocksTimes: 3200},
		{name: "one engine twice (multiprocess mode) counts once",
			series:   `{engine="0",pid="1",kv_cache_size_tokens="1600"}` + " 1\nvllm:cache_config_info" + `{engine="0",pid="2",kv_cache_size_tokens="1600"}`,
			wantSize: 1600, wantEngines: 1},
		{name: "an engine without the size label: no size",
			series:   `{engine="0",kv_cache_size_tokens="1600"}` + " 1\nvllm:cache_config_info" + `{engine="1",kv_cache_size_tokens="None"}`,
			wantSize: 0, wantEngines: 2},
		{name: "no engine label is one engine, a float rendering is read", series: `{kv_cache_size_tokens="1600.0"}`, wantSize: 1600, wantEngines: 1},
		{name: "implausible values are absent", series: `{block_size="-16",num_gpu_blocks="99999999999999999999",kv_cache_size_tokens="0"}`, wantEngines: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseMetrics(strings.NewReader("# TYPE vllm:cache_config_info gauge\nvllm:cache_config_info"+tc.series+" 1\n"), "qwen")
			if err != nil {
				t.Fatal(err)
			}
			if got.KV.SizeTokens != tc.wantSize || got.KV.Engines != tc.wantEngines || got.KV.BlocksTimesBlockSize() != tc.wantBlocksTimes {
				t.Errorf("KV = %+v (blocks × size %d), want size %d over %d engines, blocks × size %d",
					got.KV, got.KV.BlocksTimesBlockSize(), tc.wantSize, tc.wantEngines, tc.wantBlocksTimes)
			}
		})
	}
}

func TestParseError(t *testing.T) {
	if _, err := ParseMetrics(strings.NewReader("vllm:num_requests_running{ 1\n"), ""); err == nil || !strings.Contains(err.Error(), "/metrics") {
		t.Fatalf("err = %v, want a parse error mentioning /metrics", err)
	}
}

func FuzzMetrics(f *testing.F) {
	f.Add(page, "qwen")
	f.Add("vllm:cache_config_info{block_size=\"-1\",num_gpu_blocks=\"99999999999999999999\"} 1\n", "")
	f.Add("# TYPE x histogram\nx_bucket{le=\"1\"} 1\n", "m")
	f.Fuzz(func(t *testing.T, s, m string) {
		snap, err := ParseMetrics(strings.NewReader(s), m) // must never panic
		if err == nil && (snap.KV.SizeTokens < 0 || snap.KV.BlocksTimesBlockSize() < 0) {
			t.Fatalf("KV = %+v from a valid page: an overflow", snap.KV)
		}
	})
}

// TestSleepState reads vllm:engine_sleep_state (v1/metrics/loggers.py):
// the engines whose awake series is 0 and the deepest level set, another
// model's series left out; a page without the gauge says nothing.
func TestSleepState(t *testing.T) {
	series := func(engine, model string, awake, offloaded, discard float64) string {
		return fmt.Sprintf("vllm:engine_sleep_state{engine=%q,model_name=%q,sleep_state=\"awake\"} %g\n"+
			"vllm:engine_sleep_state{engine=%q,model_name=%q,sleep_state=\"weights_offloaded\"} %g\n"+
			"vllm:engine_sleep_state{engine=%q,model_name=%q,sleep_state=\"discard_all\"} %g\n",
			engine, model, awake, engine, model, offloaded, engine, model, discard)
	}
	const head = "# TYPE vllm:engine_sleep_state gauge\n"
	tests := []struct {
		name          string
		page          string
		asleep, level int
		has           bool
	}{
		{name: "awake", page: head + series("0", "qwen", 1, 0, 0), has: true},
		{name: "level 1 on one of two engines", page: head + series("0", "qwen", 0, 1, 0) + series("1", "qwen", 1, 0, 0), asleep: 1, level: 1, has: true},
		{name: "level 2 on both", page: head + series("0", "qwen", 0, 0, 1) + series("1", "qwen", 0, 0, 1), asleep: 2, level: 2, has: true},
		{name: "another model asleep", page: head + series("0", "qwen", 1, 0, 0) + series("0", "other", 0, 1, 0), has: true},
		{name: "no gauge", page: "vllm:num_requests_running{engine=\"0\",model_name=\"qwen\"} 1\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ParseMetrics(strings.NewReader(tt.page), "qwen")
			if err != nil {
				t.Fatal(err)
			}
			if s.Asleep != tt.asleep || s.SleepLevel != tt.level || s.HasSleepState != tt.has {
				t.Errorf("asleep %d level %d has %v; want %d, %d, %v", s.Asleep, s.SleepLevel, s.HasSleepState, tt.asleep, tt.level, tt.has)
			}
		})
	}
}

// TestLatencyHistograms: the sums and counts of vLLM's request-latency
// histograms, read from a page of the real vLLM 0.32.0 CPU build, and the
// mean of a window between two reads (Δsum ÷ Δcount); a read without the
// family, or a restart, gives none.
func TestLatencyHistograms(t *testing.T) {
	f, err := os.Open("testdata/latency_cpu_0.32.0.prom")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := ParseMetrics(f, "tiny")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		got        promread.SumCount
		sum, count float64
	}{
		{name: "TTFT", got: s.TTFT, sum: 2.4270708560943604, count: 23},
		{name: "ITL", got: s.ITL, sum: 2.1226586560001124, count: 649},
		{name: "E2E", got: s.E2E, sum: 4.513291358947754, count: 23},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !tt.got.Has || tt.got.Sum != tt.sum || tt.got.Count != tt.count {
				t.Errorf("%+v, want sum %g, count %g", tt.got, tt.sum, tt.count)
			}
		})
	}
	// Without speculation an engine step gives a request one token: the
	// tokens after each request's first (generation 672 − 23 first
	// tokens) are the inter-token observations, 649.
	if !s.HasITLTokens || s.ITLTokens != 649 || s.ITLTokens != s.ITL.Count {
		t.Errorf("ITLTokens %g (%v), want 649, the ITL count", s.ITLTokens, s.HasITLTokens)
	}
	before := promread.SumCount{Sum: 1.4270708560943604, Count: 13, Has: true}
	if mean, ok := s.TTFT.MeanSince(before); !ok || math.Abs(mean-0.1) > 1e-12 {
		t.Errorf("TTFT mean over the window %g (%v), want 0.1 s (1 s over 10 requests)", mean, ok)
	}
	for _, tc := range []struct {
		name   string
		before promread.SumCount
	}{
		{name: "no family before", before: promread.SumCount{}},
		{name: "no request in the window", before: s.TTFT},
		{name: "a restart", before: promread.SumCount{Sum: 9, Count: 99, Has: true}},
	} {
		if _, ok := s.TTFT.MeanSince(tc.before); ok {
			t.Errorf("%s: a mean, want none", tc.name)
		}
	}
}
