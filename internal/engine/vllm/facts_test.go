package vllm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/slogate/slogate/internal/engine"
)

// TestKVFromLog: the KV capacity of every log form users get
// (engine/vllm/testdata/kvlog/*.log: prefixes (EngineCore_DP0 pid=N),
// (EngineCore pid=N), (Worker_TP0 pid=N), none; timestamps and pids elided
// as "..."; one line or two; the concurrency line alone; "per GPU" memory
// lines; thousands separators or none), summed over engines; an engine
// whose two lines disagree by more than 1 % takes concurrency × length,
// with a warning naming both numbers and vLLM #40691
// (docs/vllm.md#kv-cache-log-lines).
func TestKVFromLog(t *testing.T) {
	tests := []struct {
		name string
		file string // under testdata/kvlog
		log  string // inline, when file is ""
		dp   int    // data_parallel_size; 0: 1
		want int64
		warn []string // substrings of the one warning; nil: none
	}{
		{name: "current one-line layout", file: "current-one-line.log", want: 425424},
		{name: "vLLM 0.24 (EngineCore pid=N)", file: "v024-engine-core.log", want: 1216512},
		{name: "two-line layout, Worker_TP memory lines", file: "two-lines-worker-memory.log", want: 508880},
		{name: "no prefix", file: "no-prefix.log", want: 175856},
		{name: "pids and timestamps elided as ...", file: "elided.log", want: 53136},
		{name: "concurrency line only: X × N", file: "concurrency-only.log", want: 31200},
		{name: "vLLM 0.19 hybrid: the lines disagree", file: "hybrid-0.19-disagree.log", want: 1082654,
			warn: []string{`"GPU KV cache size: 290,864 tokens"`, `"Maximum concurrency for 32,768 tokens per request: 33.04x" gives 1,082,654 tokens`, "using 1,082,654", "vLLM #40691"}},
		{name: "two engines add up", file: "two-engines.log", want: 2 * 160784},
		{name: "per GPU memory lines are not capacities", file: "per-gpu-memory.log", want: 349984},
		{name: "other loggers' timestamps", file: "dynamo-timestamps.log", want: 739536},
		{name: "no KV line", file: "no-kv-line.log", want: 0},
		{name: "older two-line layout, two engines",
			log: "(EngineCore_DP0 pid=1) INFO [kv_cache_utils.py:1087] GPU KV cache size: 160,000 tokens\n" +
				"(EngineCore_DP0 pid=1) INFO [kv_cache_utils.py:1091] Maximum concurrency for 100,000 tokens per request: 1.60x\n" +
				"(EngineCore_DP1 pid=2) INFO [kv_cache_utils.py:1087] GPU KV cache size: 160,000 tokens\n" +
				"(EngineCore_DP1 pid=2) INFO [kv_cache_utils.py:1091] Maximum concurrency for 100,000 tokens per request: 1.60x\n",
			want: 320000},
		{name: "an engine logging twice counts once (its last line)",
			log: "(EngineCore_DP0 pid=1) GPU KV cache size: 1,000 tokens\n(EngineCore_DP0 pid=1) GPU KV cache size: 2,000 tokens\n", want: 2000},
		{name: "within 1 % the size line wins",
			log:  "GPU KV cache size: 100,400 tokens, Maximum concurrency for 100,000 tokens per request: 1.00x\n",
			want: 100400},
		{name: "no separators", log: "GPU KV cache size: 7000 tokens\n", want: 7000},
		// Two engines logging without a prefix fold into engine 0 (its last
		// line wins): half the pool unless data_parallel_size says two.
		{name: "data_parallel_size 2, lines without engine prefixes", dp: 2,
			log:  "GPU KV cache size: 160,784 tokens\nGPU KV cache size: 160,784 tokens\n",
			want: 2 * 160784, warn: []string{"KV cache lines for 1 of the 2 data-parallel engines (data_parallel_size = 2", "assuming the engines are alike, 160,784 tokens each", "321,568 in all", "set kv_cache_tokens"}},
		{name: "data_parallel_size 2, both engines logged", dp: 2, file: "two-engines.log", want: 2 * 160784},
		// 10,300 ÷ 32,768 = 0.3143, printed 0.31x: 0.31 × 32,768 = 10,158 is
		// 1.4 % below the size, from the two-decimal rounding alone.
		{name: "below 0.5x the rounding is no disagreement",
			log:  "GPU KV cache size: 10,300 tokens, Maximum concurrency for 32,768 tokens per request: 0.31x\n",
			want: 10300},
		{name: "below 0.5x, beyond the rounding",
			log:  "GPU KV cache size: 5,000 tokens, Maximum concurrency for 32,768 tokens per request: 0.31x\n",
			want: 10158, warn: []string{`"GPU KV cache size: 5,000 tokens"`, "gives 10,158 tokens", "vLLM #40691"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join("testdata", "kvlog", tc.file)
			if tc.file == "" {
				p = filepath.Join(t.TempDir(), "server.log")
				os.WriteFile(p, []byte(tc.log), 0o644)
			}
			got := kvFromLog(p, max(tc.dp, 1))
			if got.tokens != tc.want {
				t.Errorf("kvFromLog = %d tokens (%+v), want %d", got.tokens, got.read, tc.want)
			}
			if len(tc.warn) == 0 {
				if len(got.warnings) > 0 {
					t.Errorf("warnings %q, want none", got.warnings)
				}
				return
			}
			if len(got.warnings) != 1 {
				t.Fatalf("warnings %q, want one", got.warnings)
			}
			for _, w := range tc.warn {
				if !strings.Contains(got.warnings[0], w) {
					t.Errorf("warning lacks %q:\n%s", w, got.warnings[0])
				}
			}
		})
	}
}

// TestSpeculativeFromLog: the speculative method from vLLM's "non-default
// args" startup line (a Python dict), "" when the line has no
// speculative_config, unknown without the line or without a method.
func TestSpeculativeFromLog(t *testing.T) {
	tests := []struct {
		name   string
		log    string
		method string
		ok     bool
	}{
		{name: "dflash", log: "(APIServer pid=1) INFO 11-30 21:02:10 [utils.py:328] non-default args: {'model': 'Qwen/Qwen3.5-4B', 'speculative_config': {'method': 'dflash', 'model': 'z-lab/Qwen3.5-4B-DFlash', 'num_speculative_tokens': 7}, 'kv_cache_dtype': 'fp8'}\n",
			method: "dflash", ok: true},
		{name: "no speculative_config", log: "(APIServer pid=1) INFO [utils.py:328] non-default args: {'model': 'm', 'max_num_seqs': 64}\n", method: "", ok: true},
		{name: "no method", log: "non-default args: {'speculative_config': {'model': 'x', 'num_speculative_tokens': 3}}\n", ok: false},
		{name: "nested dict", log: "non-default args: {'model': 'm', 'speculative_config': {'method': 'dflash', 'model': 'x', 'num_speculative_tokens': 15, 'draft_tensor_parallel_size': 1, 'extra': {'a': 1}}, 'max_num_seqs': 8}\n",
			method: "dflash", ok: true},
		{name: "nested dict before the method", log: "non-default args: {'speculative_config': {'extra': {'a': '}'}, 'method': 'eagle3'}}\n", method: "eagle3", ok: true},
		{name: "JSON string", log: `non-default args: {'model': 'm', 'speculative_config': '{"method": "ngram", "num_speculative_tokens": 4}'}` + "\n", method: "ngram", ok: true},
		{name: "None", log: "non-default args: {'model': 'm', 'speculative_config': None}\n", method: "", ok: true},
		// Present but unreadable is unknown, never "no speculation".
		{name: "unreadable", log: "non-default args: {'model': 'm', 'speculative_config': SpeculativeConfig(method=dflash)}\n", ok: false},
		{name: "cut off", log: "non-default args: {'speculative_config': {'method': 'dflash', 'extra': {'a': 1}\n", ok: false},
		{name: "no line", log: "(APIServer pid=1) INFO Starting vLLM API server\n", ok: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "server.log")
			os.WriteFile(p, []byte(tc.log), 0o644)
			m, ok := speculativeFromLog(p)
			if m != tc.method || ok != tc.ok {
				t.Errorf("speculativeFromLog = %q, %v; want %q, %v", m, ok, tc.method, tc.ok)
			}
		})
	}
}

// TestKVFromLogRead: how the log was read, engine by engine, as rules and
// figures (the console words them).
func TestKVFromLogRead(t *testing.T) {
	tests := []struct {
		name, file, log string
		dp              int
		want            engine.KVRead
	}{
		{name: "the size line", log: "GPU KV cache size: 7000 tokens\n",
			want: engine.KVRead{Rule: engine.KVLogParts, Parts: []engine.KVPart{{Rule: engine.KVSizeLine, Tokens: 7000}}}},
		{name: "the concurrency line alone", file: "concurrency-only.log",
			want: engine.KVRead{Rule: engine.KVLogParts, Parts: []engine.KVPart{{Rule: engine.KVConcurrencyNoSize, Concurrency: 1.56, PerRequest: 20000}}}},
		{name: "the lines disagree", file: "hybrid-0.19-disagree.log",
			want: engine.KVRead{Rule: engine.KVLogParts, Parts: []engine.KVPart{{Rule: engine.KVConcurrency, Concurrency: 33.04, PerRequest: 32768}}}},
		{name: "one engine of two logged", dp: 2, log: "(EngineCore_DP1 pid=2) GPU KV cache size: 1,000 tokens\n",
			want: engine.KVRead{Rule: engine.KVLogParts, Parts: []engine.KVPart{{Rule: engine.KVSizeLine, Index: 1, Tokens: 1000}}, Engines: 2, Found: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join("testdata", "kvlog", tc.file)
			if tc.file == "" {
				p = filepath.Join(t.TempDir(), "server.log")
				os.WriteFile(p, []byte(tc.log), 0o644)
			}
			if got := kvFromLog(p, max(tc.dp, 1)).read; !cmp.Equal(got, tc.want) {
				t.Errorf("read %+v, want %+v", got, tc.want)
			}
		})
	}
}
