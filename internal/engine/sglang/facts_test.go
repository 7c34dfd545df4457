package sglang

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/slogate/slogate/internal/engine"
	"github.com/slogate/slogate/internal/engine/enginetest"
	"github.com/slogate/slogate/internal/vocab"
)

// TestSGLangKVCapacity checks where SGLang's KV capacity is read, in
// order: /server_info's token_capacity per DP rank (summed), its
// top-level max_total_num_tokens × dp_size, /get_server_info on older
// builds, the gauge, then the log's lines per DP rank.
func TestSGLangKVCapacity(t *testing.T) {
	tests := []struct {
		name     string
		paths    map[string]string // path → body (200); others 404
		log      string
		dp       int
		tokens   int64
		source   string
		wantWarn bool
		read     engine.KVRead
	}{
		{name: "token_capacity per DP rank", paths: map[string]string{"/server_info": `{"max_total_num_tokens": 500, "dp_size": 2, "internal_states": [{"memory_usage": {"token_capacity": 500}}, {"memory_usage": {"token_capacity": 400}}]}`},
			tokens: 900, source: vocab.KVSourceServerInfo, read: engine.KVRead{Rule: engine.KVRankCapacity, From: "GET /server_info", Count: 2}},
		{name: "top level × dp_size without internal states", paths: map[string]string{"/server_info": `{"max_total_num_tokens": 500, "dp_size": 2}`},
			tokens: 1000, source: vocab.KVSourceServerInfo, read: engine.KVRead{Rule: engine.KVMaxTotalTimesDP, From: "GET /server_info", Tokens: 500, Count: 2}},
		{name: "older builds: /get_server_info", paths: map[string]string{"/get_server_info": `{"max_total_num_tokens": 700, "internal_states": [{"memory_usage": {"token_capacity": 700}}]}`},
			tokens: 700, source: vocab.KVSourceServerInfo, read: engine.KVRead{Rule: engine.KVRankCapacity, From: "GET /get_server_info", Count: 1}},
		{name: "the gauge", paths: map[string]string{"/metrics": "sglang:max_total_num_tokens{dp_rank=\"0\",model_name=\"m\"} 300\nsglang:max_total_num_tokens{dp_rank=\"1\",model_name=\"m\"} 300\n"},
			tokens: 600, source: vocab.KVSourceMetrics},
		{name: "the log, one line per DP rank; the pool's line wins over the summary", dp: 2, log: "[2026-03-11 13:53:23 DP0 TP0] KV Cache is allocated. #tokens: 1000, K size: 1 GB, V size: 1 GB\n" +
			"[2026-03-11 13:53:23 DP0 TP0] max_total_num_tokens=999, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=48, context_len=65536\n" +
			"[2026-03-11 13:53:23 DP1 TP0] max_total_num_tokens=800, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=48, context_len=65536\n",
			tokens: 1800, source: vocab.KVSourceLog, read: logRanks(rank(0, 1000), rank(1, 800))},
		{name: "the log names fewer ranks than dp: alike, with a warning", dp: 2, log: "[2026-03-11 13:53:23 TP0] KV Cache is allocated. #tokens: 1000, KV size: 1 GB\n",
			tokens: 2000, source: vocab.KVSourceLog, wantWarn: true, read: logRanks(rank(0, 1000))},
		{name: "nothing says", dp: 1, tokens: 0, source: "", wantWarn: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, ok := tt.paths[r.URL.Path]
				if !ok {
					http.NotFound(w, r)
					return
				}
				w.Write([]byte(body))
			}))
			defer ts.Close()
			logPath := ""
			if tt.log != "" {
				logPath = filepath.Join(t.TempDir(), "server.log")
				os.WriteFile(logPath, []byte(tt.log), 0o644)
			}
			c := enginetest.Conn{Base: ts.URL, ModelName: "m", E: Engine{}}
			tokens, source, warning, read := Engine{}.KVCapacity(context.Background(), c, logPath, max(tt.dp, 1))
			if tokens != tt.tokens || source != tt.source || (warning != "") != tt.wantWarn || !cmp.Equal(read, tt.read) {
				t.Errorf("got %d from %q (warning %q, read %+v); want %d from %q (warning %v, read %+v)", tokens, source, warning, read, tt.tokens, tt.source, tt.wantWarn, tt.read)
			}
		})
	}
}

// TestSGLangStatedFacts checks the facts /server_info states: the KV
// cache dtype, the speculative algorithm (null: none) and the radix cache.
func TestSGLangStatedFacts(t *testing.T) {
	tests := []struct {
		name, body    string
		spec, dtype   string
		prefix        bool
		hasSpecStated bool
	}{
		{"speculating", `{"kv_cache_dtype": "fp8_e4m3", "speculative_algorithm": "DFLASH", "disable_radix_cache": false}`, "DFLASH", "fp8_e4m3", true, true},
		{"not speculating, radix off", `{"kv_cache_dtype": "auto", "speculative_algorithm": null, "disable_radix_cache": true}`, "", "auto", false, true},
		{"no speculative key: unstated", `{"kv_cache_dtype": "auto", "disable_radix_cache": false}`, "", "auto", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/server_info" {
					http.NotFound(w, r)
					return
				}
				w.Write([]byte(tt.body))
			}))
			defer ts.Close()
			c := enginetest.Conn{Base: ts.URL, ModelName: "m", E: Engine{}}
			facts := Engine{}.StatedFacts(context.Background(), c, "")
			stated := facts.Stated
			_, specStated := stated["speculative"]
			if facts.Speculative != tt.spec || facts.KVCacheDtype != tt.dtype || facts.PrefixCaching == nil || *facts.PrefixCaching != tt.prefix ||
				specStated != tt.hasSpecStated || stated["kv_cache_dtype"] != "GET /server_info" {
				t.Errorf("facts %+v stated %v", facts, stated)
			}
		})
	}
}

// TestSGLangRunningLimit: max_num_seqs is stated from /server_info's
// internal_states[].effective_max_running_requests_per_dp (the least over
// the DP ranks), else from the log's summary line, and not at all where
// neither says.
func TestSGLangRunningLimit(t *testing.T) {
	const summary = "[2026-09-12 00:22:50 DP0 TP0] max_total_num_tokens=454112, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=48, context_len=65536, available_gpu_mem=10.00 GB\n"
	tests := []struct {
		name, body, log string // body "" is no /server_info
		want            int
		from            string
	}{
		{name: "the internal state's resolved limit, not the CLI's null",
			body: `{"max_running_requests": null, "internal_states": [{"memory_usage": {"token_capacity": 20480}, "effective_max_running_requests_per_dp": 128}]}`,
			log:  summary, want: 128, from: "GET /server_info internal_states[].effective_max_running_requests_per_dp"},
		{name: "the least of the DP ranks",
			body: `{"internal_states": [{"effective_max_running_requests_per_dp": 64}, {"effective_max_running_requests_per_dp": 52}]}`,
			want: 52, from: "GET /server_info internal_states[].effective_max_running_requests_per_dp"},
		{name: "an older build without the field: the log's summary",
			body: `{"max_running_requests": 64, "internal_states": [{"memory_usage": {"token_capacity": 20480}}]}`,
			log:  "[2026-09-12 00:22:48 TP0] KV Cache is allocated. dtype: torch.bfloat16, #tokens: 454112, K size: 3.46 GB, V size: 3.46 GB\n" + summary,
			want: 48, from: "server.log (max_running_requests=)"},
		{name: "no /server_info: the log's summary", log: summary, want: 48, from: "server.log (max_running_requests=)"},
		{name: "neither says", body: `{"internal_states": [{}]}`, log: "[2026-09-12 00:22:48] The server is fired up and ready to roll!\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/server_info" || tt.body == "" {
					http.NotFound(w, r)
					return
				}
				w.Write([]byte(tt.body))
			}))
			defer ts.Close()
			logPath := filepath.Join(t.TempDir(), "server.log")
			os.WriteFile(logPath, []byte(tt.log), 0o644)
			c := enginetest.Conn{Base: ts.URL, ModelName: "m", E: Engine{}}
			f := Engine{}.StatedFacts(context.Background(), c, logPath)
			if from, stated := f.Stated["max_num_seqs"]; f.MaxNumSeqs != tt.want || from != tt.from || stated != (tt.from != "") {
				t.Errorf("max_num_seqs %d from %q (stated %v); want %d from %q", f.MaxNumSeqs, from, stated, tt.want, tt.from)
			}
		})
	}
}

// TestSGLangKVFromLogFixtures reads SGLang's KV capacity from startup logs
// users pasted (testdata/sglang-kvlog/README.md names each source) and from
// forms written inline: the 2026 line with its dtype and the older one,
// TP ranks that repeat their DP rank's pools, a draft pool after the
// target's, the SWAKVPool's full pool, DP prefixes after a container
// runtime's timestamp, and DP attention, whose summary line only DP0 logs.
func TestSGLangKVFromLogFixtures(t *testing.T) {
	tests := []struct {
		name, file, log string // file under testdata/sglang-kvlog, else log
		dp              int
		tokens          int64
		read            engine.KVRead
		warn            string // a substring of the warning; "" for none
	}{
		{name: "CUDA 2026: target then draft pool per TP rank", file: "cuda-2026-draft-pool.log", dp: 1, tokens: 454112, read: logRanks(rank(0, 454112))},
		{name: "Ascend 2026: TP16, no TP0 line", file: "ascend-2026-tp16.log", dp: 1, tokens: 387968, read: logRanks(rank(0, 387968))},
		{name: "2026 summary alone, one GPU", file: "summary-only-2026.log", dp: 1, tokens: 2086558, read: logRanks(rank(0, 2086558))},
		{name: "SWA: the SWAKVPool's full pool", file: "swa-2025.log", dp: 1, tokens: 1496958, read: logRanks(rank(0, 1496958))},
		{name: "the line without dtype", file: "legacy-tp8-2025.log", dp: 1, tokens: 3059425, read: logRanks(rank(0, 3059425))},
		{name: "DP attention, DP0's summary and DP7's pool of 8 ranks", file: "dp-attention-2025.log", dp: 8, tokens: 8 * 1230416,
			read: logRanks(rank(0, 1230416), rank(7, 1230416)), warn: "KV lines for 2 of 8 data-parallel ranks"},
		{name: "DP attention, MLA form, 4 of 8 ranks", file: "dp-attention-mla-2025.log", dp: 8, tokens: 8 * 161488,
			read: logRanks(rank(1, 161488), rank(3, 161488), rank(5, 161488), rank(7, 161488)), warn: "4 of 8"},
		{name: "DP attention: every rank's pool, the summary on DP0 only", dp: 2, tokens: 2 * 454112, read: logRanks(rank(0, 454112), rank(1, 454112)),
			log: "[2026-09-12 00:22:48 DP0 TP0] KV Cache is allocated. dtype: torch.bfloat16, #tokens: 454112, K size: 3.46 GB, V size: 3.46 GB\n" +
				"[2026-09-12 00:22:48 DP0 TP1] KV Cache is allocated. dtype: torch.bfloat16, #tokens: 454112, K size: 3.46 GB, V size: 3.46 GB\n" +
				"[2026-09-12 00:22:48 DP1 TP2] KV Cache is allocated. dtype: torch.bfloat16, #tokens: 454112, K size: 3.46 GB, V size: 3.46 GB\n" +
				"[2026-09-12 00:22:48 DP1 TP3] KV Cache is allocated. dtype: torch.bfloat16, #tokens: 454112, K size: 3.46 GB, V size: 3.46 GB\n" +
				"[2026-09-12 00:22:50 DP0 TP0] max_total_num_tokens=454112, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=48, context_len=65536\n"},
		{name: "DP attention, the summary alone: DP0's, the ranks alike", dp: 4, tokens: 4 * 1230416, read: logRanks(rank(0, 1230416)),
			log:  "[2025-06-10 14:09:45 DP0 TP0] max_total_num_tokens=1230416, chunked_prefill_size=16384, max_prefill_tokens=16384, max_running_requests=3846, context_len=163840\n",
			warn: "DP0's alone under DP attention"},
		{name: "docker --timestamps: DP ranks after the runtime's prefix", dp: 2, tokens: 454112 + 400000, read: logRanks(rank(0, 454112), rank(1, 400000)),
			log: "2026-09-12T00:22:48.123456789Z [2026-09-12 00:22:48 DP0 TP0] KV Cache is allocated. dtype: torch.float8_e4m3fn, #tokens: 454112, K size: 3.46 GB, V size: 3.46 GB\n" +
				"2026-09-12T00:22:48.223456789Z [2026-09-12 00:22:48 DP1 TP0] KV Cache is allocated. dtype: torch.float8_e4m3fn, #tokens: 400000, K size: 3.05 GB, V size: 3.05 GB\n"},
		{name: "a draft pool that differs: the target's, named", dp: 1, tokens: 56320,
			read: logRanks(engine.KVPart{Rule: engine.KVRankTokens, Tokens: 56320, Draft: 70656}),
			log: "[2026-06-11 10:00:00] KV Cache is allocated. dtype: torch.bfloat16, #tokens: 56320, K size: 5.40 GB, V size: 5.40 GB\n" +
				"[2026-06-11 10:00:01] KV Cache is allocated. dtype: torch.bfloat16, #tokens: 70656, K size: 0.68 GB, V size: 0.68 GB\n"},
		{name: "SWA pools unequal: the SWAKVPool's full size, not the first pool", dp: 1, tokens: 400000, read: logRanks(rank(0, 400000)),
			log: "[2026-09-12 00:22:48] KV Cache is allocated. dtype: torch.bfloat16, #tokens: 100000, K size: 1.00 GB, V size: 1.00 GB\n" +
				"[2026-09-12 00:22:48] KV Cache is allocated. dtype: torch.bfloat16, #tokens: 400000, K size: 0.50 GB, V size: 0.50 GB\n" +
				"[2026-09-12 00:22:48] SWAKVPool mem usage: 3.00 GB, swa size: 100000, full size: 400000\n"},
		{name: "MOE_DP is not a DP rank", dp: 1, tokens: 1000, read: logRanks(rank(0, 1000)),
			log: "[2026-09-12 00:22:48 MOE_DP1 TP1] KV Cache is allocated. dtype: torch.bfloat16, #tokens: 1000, KV size: 1.00 GB\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join("testdata", "sglang-kvlog", tc.file)
			if tc.file == "" {
				path = filepath.Join(t.TempDir(), "server.log")
				if err := os.WriteFile(path, []byte(tc.log), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			tokens, read, warning := sglangKVFromLog(path, tc.dp)
			if tokens != tc.tokens || !cmp.Equal(read, tc.read) {
				t.Errorf("got %d tokens (%+v), want %d (%+v)", tokens, read, tc.tokens, tc.read)
			}
			if (tc.warn == "") != (warning == "") || !strings.Contains(warning, tc.warn) {
				t.Errorf("warning %q, want one containing %q", warning, tc.warn)
			}
		})
	}
}

// TestSamplingRejectedNone: no SGLang answer ends the run as vLLM's
// refusal of min_p under speculative decoding does.
func TestSamplingRejectedNone(t *testing.T) {
	if why, remedy, ok := (Engine{}).SamplingRejected("The min_p and logit_bias sampling parameters are not yet supported with speculative decoding.", engine.Sampling{Speculative: true}); ok {
		t.Errorf("SGLang read vLLM's refusal: %q, %q", why, remedy)
	}
}

// rank is DP rank i's tokens as the log states them.
func rank(i int, tokens int64) engine.KVPart {
	return engine.KVPart{Rule: engine.KVRankTokens, Index: i, Tokens: tokens}
}

// logRanks is a log's reading of parts, rank by rank.
func logRanks(parts ...engine.KVPart) engine.KVRead {
	return engine.KVRead{Rule: engine.KVLogParts, Parts: parts}
}
