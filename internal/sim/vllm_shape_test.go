package sim

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
)

// cacheConfigSeries returns vllm:cache_config_info's series as label maps.
func cacheConfigSeries(t *testing.T, ts *testServer) []map[string]string {
	t.Helper()
	f, ok := scrape(t, ts)["vllm:cache_config_info"]
	if !ok {
		t.Fatal("no vllm:cache_config_info")
	}
	var out []map[string]string
	for _, m := range f.GetMetric() {
		if m.GetGauge().GetValue() != 1 {
			t.Errorf("cache_config_info value %g, want 1", m.GetGauge().GetValue())
		}
		out = append(out, labelMap(m))
	}
	return out
}

func labelMap(m *dto.Metric) map[string]string {
	l := map[string]string{}
	for _, lp := range m.GetLabel() {
		l[lp.GetName()] = lp.GetValue()
	}
	return l
}

// TestCacheConfigInfo checks vllm:cache_config_info as vLLM exposes it: one
// series per data-parallel engine, no model_name, every CacheConfig field
// (unset ones "None"), num_gpu_blocks summed over engines on every series,
// kv_cache_size_tokens per engine (PR #42206) and right for hybrid models
// where num_gpu_blocks × block_size is not a token capacity.
func TestCacheConfigInfo(t *testing.T) {
	tests := []struct {
		name            string
		args            []string
		engines         int
		blockSize       int
		perEngineTokens int // kv_cache_size_tokens; 0 = label absent
		totalBlocks     int
	}{
		{"one engine", nil, 1, 16, 160000, 10000},
		{"--data-parallel-size 2", []string{"--data-parallel-size", "2"}, 2, 16, 160000, 20000},
		{"-dp 3", []string{"-dp", "3"}, 3, 16, 160000, 30000},
		{"--sim-no-kv-size-label", []string{"-dp", "2", "--sim-no-kv-size-label"}, 2, 16, 0, 20000},
		// 100,000 tokens of max_model_len take 2·⌈100000/2112⌉ + 6 = 102
		// blocks: 160,000 tokens take ⌈160000·102/100000⌉ = 164 blocks per
		// engine; the capacity is 160,000 tokens (not 164 × 2112 = 346,368).
		{"--sim-hybrid", []string{"-dp", "2", "--sim-hybrid"}, 2, 2112, 160000, 2 * 164},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := startTest(t, append([]string{"m", "--served-model-name", "qwen", "--sim-tbt", "1ms", "--sim-kv-tokens", "160000",
				"--max-model-len", "100000"}, tt.args...)...)
			series := cacheConfigSeries(t, ts)
			if len(series) != tt.engines {
				t.Fatalf("%d series, want one per engine (%d)", len(series), tt.engines)
			}
			for i, l := range series {
				if l["engine"] != strconv.Itoa(i) {
					t.Errorf("series %d has engine=%q", i, l["engine"])
				}
				if _, ok := l["model_name"]; ok {
					t.Errorf("cache_config_info has a model_name label: %v", l)
				}
				for _, name := range []string{"num_gpu_blocks_override", "sliding_window", "num_cpu_blocks", "kv_cache_memory_bytes"} {
					if l[name] != "None" {
						t.Errorf("%s = %q, want the string None (unset)", name, l[name])
					}
				}
				if l["gpu_memory_utilization"] == "" || l["cache_dtype"] != "auto" || l["enable_prefix_caching"] != "True" {
					t.Errorf("labels %v", l)
				}
				if got := l["block_size"]; got != strconv.Itoa(tt.blockSize) {
					t.Errorf("block_size %s, want %d", got, tt.blockSize)
				}
				if got := l["num_gpu_blocks"]; got != strconv.Itoa(tt.totalBlocks) {
					t.Errorf("num_gpu_blocks %s, want the total over engines %d", got, tt.totalBlocks)
				}
				size, hasSize := l["kv_cache_size_tokens"]
				_, hasConc := l["kv_cache_max_concurrency"]
				if tt.perEngineTokens == 0 {
					if hasSize || hasConc {
						t.Errorf("a build before PR #42206 has kv_cache_size_tokens=%q", size)
					}
					continue
				}
				n, _ := strconv.Atoi(size)
				if n != tt.perEngineTokens {
					t.Errorf("kv_cache_size_tokens %s, want %d (one engine's)", size, tt.perEngineTokens)
				}
				// What the engine admits against is what it reports.
				if capacity := ts.srv.engs[i].p.numBlocks * blockSize; n-capacity < 0 || n-capacity >= blockSize {
					t.Errorf("engine %d admits %d tokens, reports %d", i, capacity, n)
				}
				conc, _ := strconv.ParseFloat(l["kv_cache_max_concurrency"], 64)
				if math.Abs(conc*100000-float64(n)) > 1 {
					t.Errorf("kv_cache_max_concurrency %g × 100000 ≠ kv_cache_size_tokens %d", conc, n)
				}
				naive := tt.totalBlocks / tt.engines * tt.blockSize
				if tt.blockSize != blockSize && float64(naive) < 1.5*float64(n) {
					t.Errorf("hybrid: num_gpu_blocks × block_size per engine %d should differ clearly from the capacity %d", naive, n)
				}
			}
		})
	}
	t.Run("label order is CacheConfig's, engine last", func(t *testing.T) {
		ts := startTest(t, "m", "--sim-tbt", "1ms", "--sim-kv-tokens", "160000", "--max-model-len", "100000")
		resp, err := http.Get(ts.URL + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		page := readAll(t, resp.Body)
		resp.Body.Close()
		re := regexp.MustCompile(`(?m)^vllm:cache_config_info\{block_size="16",user_specified_block_size="False",kv_cache_layout="None",.*,num_gpu_blocks="10000",num_cpu_blocks="None",effective_attention_block_size="16",kv_cache_size_tokens="160000",kv_cache_max_concurrency="1.6",hash_block_size="None",.*,_block_size_resolved="True",engine="0"\} 1.0$`)
		if !re.MatchString(page) {
			t.Errorf("cache_config_info line not as vLLM writes it:\n%s", regexp.MustCompile(`(?m)^vllm:cache_config_info.*$`).FindString(page))
		}
	})
}

// runMain runs `slogate sim serve args…` until it is ready, stops it, and
// returns its stdout.
func runMain(t *testing.T, args ...string) string {
	t.Helper()
	var out syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Main(ctx, &out, &out, append([]string{"serve"}, append(args, "--host", "127.0.0.1", "--port", "0", "--sim-log-interval", "0")...))
	}()
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(out.String(), "Application startup complete") {
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("no startup line:\n%s", out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Main did not return within 2s of cancellation")
	}
	return out.String()
}

// TestStartupKVLog: one KV report per engine, each from its own
// process — EngineCore_DP<i> under data parallelism, plain EngineCore
// without (as vLLM 0.32.0 prints it) — on one line as current builds print
// it (two lines before PR #42206), with the capacity kv_cache_size_tokens
// reports.
func TestStartupKVLog(t *testing.T) {
	line := regexp.MustCompile(`(?m)^\(EngineCore(?:_DP(\d+))? pid=(\d+)\) INFO \S+ \S+ \[kv_cache_utils\.py:\d+\] (GPU KV cache size: .*)$`)
	tests := []struct {
		name  string
		args  []string
		wants []string // per engine, the message after the prefix (both lines joined by " | " for old builds)
	}{
		{"qwen seed, one engine (hybrid)", []string{"Qwen/Qwen3.5-4B"},
			[]string{"GPU KV cache size: 24,000,000 tokens, Maximum concurrency for 262,144 tokens per request: 91.55x"}},
		{"two engines", []string{"m", "--sim-kv-tokens", "160000", "--max-model-len", "100000", "-dp", "2"},
			[]string{"GPU KV cache size: 160,000 tokens, Maximum concurrency for 100,000 tokens per request: 1.60x",
				"GPU KV cache size: 160,000 tokens, Maximum concurrency for 100,000 tokens per request: 1.60x"}},
		{"hybrid", []string{"m", "--sim-kv-tokens", "160000", "--max-model-len", "100000", "--sim-hybrid"},
			[]string{"GPU KV cache size: 160,000 tokens, Maximum concurrency for 100,000 tokens per request: 1.60x"}},
		{"before PR #42206", []string{"m", "--sim-kv-tokens", "160000", "--max-model-len", "100000", "-dp", "2", "--sim-no-kv-size-label"},
			[]string{"GPU KV cache size: 160,000 tokens | Maximum concurrency for 100,000 tokens per request: 1.60x",
				"GPU KV cache size: 160,000 tokens | Maximum concurrency for 100,000 tokens per request: 1.60x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := runMain(t, tt.args...)
			ms := line.FindAllStringSubmatch(out, -1)
			if len(ms) != len(tt.wants) {
				t.Fatalf("%d KV lines, want %d:\n%s", len(ms), len(tt.wants), out)
			}
			pids := map[string]bool{}
			for i, m := range ms {
				if want := strconv.Itoa(i); len(ms) == 1 && m[1] != "" || len(ms) > 1 && m[1] != want {
					t.Errorf("line %d from EngineCore%q, want EngineCore_DP<i> only with several engines", i, m[1])
				}
				pids[m[2]] = true
				got := m[3]
				if strings.Contains(tt.wants[i], " | ") {
					proc := "EngineCore"
					if m[1] != "" {
						proc += "_DP" + m[1]
					}
					next := regexp.MustCompile(`(?m)^\(` + proc + ` pid=\d+\) INFO \S+ \S+ \[kv_cache_utils\.py:\d+\] (Maximum concurrency.*)$`).FindStringSubmatch(out)
					if next == nil {
						t.Fatalf("no separate Maximum concurrency line for engine %s:\n%s", m[1], out)
					}
					got += " | " + next[1]
				}
				if got != tt.wants[i] {
					t.Errorf("engine %d logs %q, want %q", i, got, tt.wants[i])
				}
			}
			if len(pids) != len(ms) {
				t.Errorf("engines share a pid: %v", pids)
			}
		})
	}
}

// TestDataParallelSharesLoad: requests spread over the engines, each with
// its own running cap, and the per-engine gauges say so.
func TestDataParallelSharesLoad(t *testing.T) {
	ts := startTest(t, "m", "--served-model-name", "qwen", "-dp", "2", "--max-num-seqs", "2", "--sim-tbt", "5ms")
	openStreams(t, ts, 5)
	deadline := time.Now().Add(3 * time.Second)
	for {
		fams := scrape(t, ts)
		per := map[string][2]float64{}
		for i, name := range []string{"vllm:num_requests_running", "vllm:num_requests_waiting"} {
			for _, m := range fams[name].GetMetric() {
				l := labelMap(m)
				if l["model_name"] != "qwen" {
					t.Fatalf("%s labels %v", name, l)
				}
				v := per[l["engine"]]
				v[i] = m.GetGauge().GetValue()
				per[l["engine"]] = v
			}
		}
		got := per["0"][0] + per["1"][0]
		if len(per) == 2 && got == 4 && per["0"][0] == 2 && per["0"][1]+per["1"][1] == 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("per engine [running waiting] %v, want 2 running on each and one waiting", per)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestResetPrefixCacheNeedsDevMode: vLLM registers the route only with
// VLLM_SERVER_DEV_MODE=1.
func TestResetPrefixCacheNeedsDevMode(t *testing.T) {
	for _, tt := range []struct {
		name, env string
		want      int
	}{{"unset", "", 404}, {"0", "0", 404}, {"1", "1", 200}} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("VLLM_SERVER_DEV_MODE", tt.env)
			ts := startTest(t, "m", "--sim-tbt", "1ms")
			if resp := ts.post(t, "/reset_prefix_cache", "", nil); resp.StatusCode != tt.want {
				t.Errorf("status %d, want %d", resp.StatusCode, tt.want)
			}
		})
	}
}

// TestPreemption runs engines in virtual time with KV that holds every
// prompt but not every output: without --sim-preempt the third request
// waits for KV reserved in full; with it all three run, the newest is
// preempted when KV runs out, re-prefills later, and still gets all its
// tokens.
func TestPreemption(t *testing.T) {
	for _, preempt := range []bool{false, true} {
		t.Run("preempt="+strconv.FormatBool(preempt), func(t *testing.T) {
			// 3 × (1,000 + 1,000) tokens would need 375 blocks; 250 hold 4,000.
			e := newEngine(engineParams{numBlocks: 250, runCap: 16, acceptLen: 1, stepScale: 1, profAccept: 1,
				tbt: time.Millisecond, ttft: time.Millisecond, prefillTPS: 1e6, seed: 1, preempt: preempt})
			e.virtual = true
			rs := []*request{newRequest(1000, 1000, 1), newRequest(1000, 1000, 2), newRequest(1000, 1000, 3)}
			for _, r := range rs {
				e.submit(r)
			}
			maxRunning, sawWaiting, got := 0, false, make([]int64, len(rs))
			for steps := 0; ; steps++ {
				if steps > 100000 {
					t.Fatal("requests did not finish")
				}
				busy, _ := e.iterate(context.Background())
				for i, r := range rs {
					got[i] += r.pending.Swap(0)
				}
				maxRunning = max(maxRunning, e.st.running)
				sawWaiting = sawWaiting || e.st.waiting > 0
				if e.usedBlocks > e.p.numBlocks {
					t.Fatalf("%d blocks used of %d", e.usedBlocks, e.p.numBlocks)
				}
				if !busy {
					break
				}
			}
			if diff := cmp.Diff([]int64{1000, 1000, 1000}, got); diff != "" {
				t.Errorf("tokens per request (-want +got):\n%s", diff)
			}
			if !sawWaiting {
				t.Error("the waiting gauge never showed a request")
			}
			if e.usedBlocks != 0 || e.st.success != 3 {
				t.Errorf("after the run: %d blocks used, %d finished", e.usedBlocks, e.st.success)
			}
			if preempt {
				if e.st.preemptions == 0 || maxRunning != 3 {
					t.Errorf("preemptions %d, max running %d; want > 0 and 3 (admitted without reserving)", e.st.preemptions, maxRunning)
				}
				if e.st.promptTokens != 3000 || e.st.ttft.count != 3 {
					t.Errorf("prompt tokens %d, TTFTs %d: a re-prefill is not a new request", e.st.promptTokens, e.st.ttft.count)
				}
				// The first output after a preemption is an inter-token gap
				// (vLLM's OutputProcessor clears is_prefilling at a request's
				// first output), the wait in it.
				if int64(e.st.itl.count+e.st.ttft.count) != e.st.generationTokens {
					t.Errorf("%d inter-token gaps + %d first tokens ≠ %d tokens: a resumed request's first output was not observed", e.st.itl.count, e.st.ttft.count, e.st.generationTokens)
				}
			} else if e.st.preemptions != 0 || maxRunning != 2 {
				t.Errorf("preemptions %d, max running %d; want 0 and 2 (full reservation)", e.st.preemptions, maxRunning)
			}
		})
	}
	t.Run("counter on /metrics", func(t *testing.T) {
		ts := startTest(t, "m", "--sim-preempt", "--sim-kv-tokens", "4000", "--max-model-len", "2000", "--sim-tbt", "1ms")
		done := make(chan struct{}, 3)
		for i := range 3 {
			go func() {
				resp := ts.post(t, "/v1/completions", "", map[string]any{"prompt": []int{1, i, 3}, "max_tokens": 1900, "ignore_eos": true})
				readAll(t, resp.Body)
				done <- struct{}{}
			}()
		}
		for range 3 {
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("requests did not finish")
			}
		}
		time.Sleep(20 * time.Millisecond)
		if got := value(t, scrape(t, ts), "vllm:num_preemptions_total"); got == 0 {
			t.Error("vllm:num_preemptions_total did not move")
		}
	})
}

// TestSpeculationThatDoesNotRun: --sim-spec-off keeps speculative decoding
// configured (log, counters present) but never drafts; sampling does not
// switch it off (penalties speculate since vLLM PR #32003 removed
// is_spec_decode_unsupported).
func TestSpeculationThatDoesNotRun(t *testing.T) {
	spec := `{"method":"dflash","num_speculative_tokens":7}`
	tests := []struct {
		name       string
		args       []string
		body       map[string]any
		wantDrafts bool
	}{
		{"speculating", nil, nil, true},
		{"temperature does not stop it", nil, map[string]any{"temperature": 0.6, "top_p": 0.95}, true},
		{"--sim-spec-off", []string{"--sim-spec-off"}, nil, false},
		{"repetition_penalty speculates", nil, map[string]any{"repetition_penalty": 1.05}, true},
		{"presence_penalty speculates", nil, map[string]any{"presence_penalty": 0.5}, true},
		{"logprobs speculate", nil, map[string]any{"logprobs": 2}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := startTest(t, append([]string{"m", "--sim-tbt", "1ms", "--speculative-config", spec}, tt.args...)...)
			body := map[string]any{"prompt": []int{1, 2, 3}, "max_tokens": 60, "stream": true, "stream_options": streamUsage}
			for k, v := range tt.body {
				body[k] = v
			}
			chunks, done := readSSE(t, ts.post(t, "/v1/completions", "", body).Body, time.Time{})
			if !done {
				t.Fatal("no [DONE]")
			}
			time.Sleep(20 * time.Millisecond)
			fams := scrape(t, ts)
			drafts := value(t, fams, "vllm:spec_decode_num_drafts_total")
			if (drafts > 0) != tt.wantDrafts {
				t.Errorf("spec_decode_num_drafts_total = %g, want moving: %v", drafts, tt.wantDrafts)
			}
			// One token per decode step without speculation: 59 steps after
			// the prefill's token; speculation needs fewer.
			steps := ts.srv.engs[0].snapshot().steps
			if plain := steps == 59; plain == tt.wantDrafts {
				t.Errorf("%d decode steps for 60 tokens (%d chunks); speculating: %v", steps, len(chunks), tt.wantDrafts)
			}
		})
	}
	t.Run("the log still says speculative decoding is on", func(t *testing.T) {
		out := runMain(t, "m", "--speculative-config", spec, "--sim-spec-off")
		if !strings.Contains(out, "Speculative decoding: method=dflash num_speculative_tokens=7") {
			t.Errorf("log:\n%s", out)
		}
	})
}

// TestRecord: --sim-record writes one line per generation request with
// what was sent; the chat prompt and the completions prompt of the same
// token IDs record the same digest.
func TestRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sent.jsonl")
	ts := startTest(t, "m", "--sim-tbt", "1ms", "--sim-record", path)
	msgs := []map[string]string{{"role": "user", "content": strings.Repeat("a long document. ", 20)}}
	kwargs := map[string]any{"enable_thinking": false}
	var tok struct{ Tokens []int }
	json.NewDecoder(ts.post(t, "/tokenize", "", map[string]any{"messages": msgs, "chat_template_kwargs": kwargs}).Body).Decode(&tok)
	readAll(t, ts.post(t, "/v1/chat/completions", "", map[string]any{"messages": msgs, "chat_template_kwargs": kwargs,
		"max_tokens": 4, "temperature": 0.6, "top_p": 0.95, "seed": 7, "ignore_eos": true, "cache_salt": "x"}).Body)
	readAll(t, ts.post(t, "/v1/completions", "", map[string]any{"prompt": tok.Tokens, "max_tokens": 3, "min_tokens": 3}).Body)
	readAll(t, ts.post(t, "/tokenize", "", map[string]any{"prompt": "not a generation request"}).Body)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []map[string]json.RawMessage
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		lines = append(lines, m)
	}
	if len(lines) != 2 {
		t.Fatalf("%d lines, want one per generation request (2)", len(lines))
	}
	sum := sha256.New()
	for _, id := range tok.Tokens {
		sum.Write(binary.LittleEndian.AppendUint32(nil, uint32(id)))
	}
	wantSum := `"` + hex.EncodeToString(sum.Sum(nil)) + `"`
	head, _ := json.Marshal(tok.Tokens[:64])
	tail, _ := json.Marshal(tok.Tokens[len(tok.Tokens)-64:])
	seen := map[int]bool{}
	for _, id := range tok.Tokens {
		seen[id] = true
	}
	distinct := strconv.Itoa(len(seen))
	tests := []struct {
		name string
		line map[string]json.RawMessage
		want map[string]string
	}{
		{"chat", lines[0], map[string]string{"endpoint": `"/v1/chat/completions"`, "prompt_tokens": strconv.Itoa(len(tok.Tokens)),
			"prompt_token_ids_head": string(head), "prompt_token_ids_tail": string(tail), "prompt_distinct_ids": distinct, "prompt_sha256": wantSum, "sampling": `{"seed":7,"temperature":0.6,"top_p":0.95}`,
			"chat_template_kwargs": `{"enable_thinking":false}`, "max_tokens": "4", "min_tokens": "null", "ignore_eos": "true",
			"cache_salt": "true", "stream": "false"}},
		{"completions", lines[1], map[string]string{"endpoint": `"/v1/completions"`, "prompt_tokens": strconv.Itoa(len(tok.Tokens)),
			"prompt_token_ids_head": string(head), "prompt_token_ids_tail": string(tail), "prompt_distinct_ids": distinct, "prompt_sha256": wantSum, "sampling": `{}`, "chat_template_kwargs": "null",
			"max_tokens": "3", "min_tokens": "3", "ignore_eos": "null", "cache_salt": "false"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, want := range tt.want {
				if got := string(tt.line[k]); got != want {
					t.Errorf("%s = %s, want %s", k, got, want)
				}
			}
		})
	}
}

// stepFactors runs an engine in virtual time with one request and flat
// 1 ms steps and returns each second's mean step-time factor.
func stepFactors(t *testing.T, noise float64, seed uint64, seconds int) []float64 {
	t.Helper()
	return windowFactors(t, engineParams{numBlocks: 1 << 20, runCap: 1, acceptLen: 1, stepScale: 1, profAccept: 1,
		tbt: time.Millisecond, ttft: time.Millisecond, prefillTPS: 1e9, seed: seed, noise: noise}, seconds)
}

// windowFactors runs an engine of p in virtual time with one endless
// request and returns each second's mean step time in units of 1 ms.
func windowFactors(t *testing.T, p engineParams, seconds int) []float64 {
	t.Helper()
	e := newEngine(p)
	e.virtual = true
	e.submit(newRequest(10, 1<<22, 1))
	var out []float64
	for len(out) < seconds {
		start, steps := e.now, 0
		for e.now-start < time.Second {
			if busy, _ := e.iterate(context.Background()); !busy {
				t.Fatal("engine idle")
			}
			steps++
		}
		out = append(out, float64(e.now-start)/float64(steps)/float64(time.Millisecond))
	}
	return out
}

// TestNoise: --sim-noise jitters step times by a log-normal factor of mean
// 1 whose spread shows between one-second windows (not only per step),
// reproducibly for a seed.
func TestNoise(t *testing.T) {
	meanStd := func(xs []float64) (float64, float64) {
		var s, ss float64
		for _, x := range xs {
			s += x
		}
		m := s / float64(len(xs))
		for _, x := range xs {
			ss += (x - m) * (x - m)
		}
		return m, math.Sqrt(ss / float64(len(xs)-1))
	}
	if _, sd := meanStd(stepFactors(t, 0, 1, 20)); sd > 1e-3 {
		t.Errorf("no noise: windows differ (sd %g)", sd)
	}
	noisy := stepFactors(t, 0.05, 1, 300)
	m, sd := meanStd(noisy)
	t.Logf("σ=0.05: mean window factor %.4f, sd between 1 s windows %.4f", m, sd)
	if math.Abs(m-1) > 0.02 {
		t.Errorf("mean factor %.4f, want 1 ± 0.02", m)
	}
	if sd < 0.02 || sd > 0.08 {
		t.Errorf("sd between 1 s windows %.4f, want about 0.05 (0.02–0.08)", sd)
	}
	if again := stepFactors(t, 0.05, 1, 5); !cmp.Equal(again, noisy[:5]) {
		t.Errorf("same seed, different jitter: %v vs %v", again, noisy[:5])
	}
	if other := stepFactors(t, 0.05, 2, 5); cmp.Equal(other, noisy[:5]) {
		t.Error("another seed gave the same jitter")
	}
}

// TestKVUsageCountsHeldBlocks: vllm:kv_cache_usage_perc counts the blocks a
// request holds now (prompt + tokens generated so far), as vLLM allocates
// them step by step, not the whole prompt + max_tokens the simulator
// reserves at admission (docs/vllm.md#metrics); the runner's KV
// cross-check relies on it (docs/method.md#kv-capacity).
func TestKVUsageCountsHeldBlocks(t *testing.T) {
	e := newEngine(engineParams{numBlocks: 1000, runCap: 16, acceptLen: 1, stepScale: 1, profAccept: 1,
		tbt: time.Millisecond, ttft: time.Millisecond, prefillTPS: 1e6, seed: 1})
	e.virtual = true
	r := newRequest(1600, 8000, 1)
	e.submit(r)
	for steps := 0; r.generated < 800; steps++ {
		if steps > 100000 {
			t.Fatal("the request did not reach 800 tokens")
		}
		e.iterate(context.Background())
	}
	e.publish()
	held := blocksFor(1600 + r.generated)
	if got := e.snapshot().usedBlocks; got != held {
		t.Errorf("usage counts %d blocks with %d tokens generated, want %d (prompt + generated), not the %d reserved",
			got, r.generated, held, e.usedBlocks)
	}
}

// TestSamplingRejectedAsVLLM: the simulator answers HTTP 400 with vLLM's
// body where vLLM does: a temperature outside [0, 2]
// (SamplingParams._verify_args, PR #44965) and, under speculative
// decoding, min_p > 1e-5 or any logit_bias (_validate_spec_decode, PR
// #31982), including a min_p that only the server's generation config
// supplies; a greedy temperature resets min_p first, as vLLM's
// __post_init__ does.
func TestSamplingRejectedAsVLLM(t *testing.T) {
	spec := []string{"--speculative-config", `{"method":"ngram","num_speculative_tokens":3}`}
	const specMsg = "The min_p and logit_bias sampling parameters are not yet supported with speculative decoding."
	tests := []struct {
		name      string
		args      []string
		body      map[string]any
		wantMsg   string // "" = accepted
		wantParam any
	}{
		{name: "temperature 2.5", body: map[string]any{"temperature": 2.5},
			wantMsg: "temperature must be in [0, 2], got 2.5. (parameter=temperature, value=2.5)", wantParam: "temperature"},
		{name: "temperature 3", body: map[string]any{"temperature": 3},
			wantMsg: "temperature must be in [0, 2], got 3.0. (parameter=temperature, value=3.0)", wantParam: "temperature"},
		{name: "negative temperature", body: map[string]any{"temperature": -1},
			wantMsg: "temperature must be non-negative, got -1.0. (parameter=temperature, value=-1.0)", wantParam: "temperature"},
		{name: "temperature 2 is accepted", body: map[string]any{"temperature": 2}},
		{name: "min_p without speculation is accepted", body: map[string]any{"min_p": 0.1}},
		{name: "min_p with speculation", args: spec, body: map[string]any{"min_p": 0.1}, wantMsg: specMsg},
		{name: "min_p 1e-5 with speculation is unset", args: spec, body: map[string]any{"min_p": 1e-5}},
		{name: "logit_bias with speculation", args: spec, body: map[string]any{"logit_bias": map[string]any{"7": -100}}, wantMsg: specMsg},
		{name: "empty logit_bias with speculation", args: spec, body: map[string]any{"logit_bias": map[string]any{}}},
		{name: "min_p from the generation config", args: append([]string{"--override-generation-config", `{"min_p": 0.05, "presence_penalty": 1}`}, spec...),
			body: map[string]any{}, wantMsg: specMsg},
		{name: "min_p = 0 overrides the generation config", args: append([]string{"--override-generation-config", `{"min_p": 0.05}`}, spec...),
			body: map[string]any{"min_p": 0}},
		{name: "greedy resets min_p", args: spec, body: map[string]any{"min_p": 0.1, "temperature": 0}},
		{name: "temperature from the generation config", args: []string{"--override-generation-config", `{"temperature": 2.5}`}, body: map[string]any{},
			wantMsg: "temperature must be in [0, 2], got 2.5. (parameter=temperature, value=2.5)", wantParam: "temperature"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := startTest(t, append([]string{"m", "--sim-tbt", "1ms"}, tt.args...)...)
			body := map[string]any{"prompt": []int{1, 2, 3}, "max_tokens": 4, "stream": true}
			for k, v := range tt.body {
				body[k] = v
			}
			resp := ts.post(t, "/v1/completions", "", body)
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			if tt.wantMsg == "" {
				if resp.StatusCode != 200 {
					t.Fatalf("status %d, want 200: %s", resp.StatusCode, raw)
				}
				return
			}
			if resp.StatusCode != 400 {
				t.Fatalf("status %d, want 400: %s", resp.StatusCode, raw)
			}
			var got struct {
				Error map[string]any `json:"error"`
			}
			if err := json.Unmarshal(raw, &got); err != nil {
				t.Fatalf("%s: %v", raw, err)
			}
			want := map[string]any{"message": tt.wantMsg, "type": "BadRequestError", "param": tt.wantParam, "code": 400.0}
			if diff := cmp.Diff(want, got.Error); diff != "" {
				t.Errorf("error body (-want +got):\n%s", diff)
			}
		})
	}
}

// TestGenerationConfigFolder: --generation-config DIR reads
// DIR/generation_config.json and keeps only the sampling fields vLLM's
// get_diff_sampling_param keeps.
func TestGenerationConfigFolder(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "generation_config.json"), []byte(`{"min_p": 0.02, "temperature": 0.7, "presence_penalty": 1.5, "eos_token_id": [1, 2]}`), 0o644)
	c, err := parseServe([]string{"m", "--generation-config", dir, "--override-generation-config", `{"temperature": 0.6}`})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]float64{"min_p": 0.02, "temperature": 0.6}, c.GenerationDefaults); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
	if _, err := parseServe([]string{"m", "--generation-config", filepath.Join(dir, "missing")}); err == nil {
		t.Error("a folder without generation_config.json was accepted")
	}
}

// TestBootNoise: --sim-boot-noise draws one step-time factor per process
// start, from --sim-seed and $SLOGATE_BOOT: every second of one boot runs
// at the same factor, two boots differ, a boot seed gives the same factor
// again, and over many boots the factor is log-normal with mean 1 and the
// flag's σ.
func TestBootNoise(t *testing.T) {
	boot := func(t *testing.T, env string, flags ...string) engineParams {
		t.Helper()
		t.Setenv("SLOGATE_BOOT", env)
		cfg, err := parseServe(append([]string{"m", "--sim-tbt", "1ms"}, flags...))
		if err != nil {
			t.Fatal(err)
		}
		st, err := settle(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return st.params
	}
	windows := func(t *testing.T, p engineParams) []float64 {
		t.Helper()
		p.numBlocks, p.runCap = 1<<20, 1  // room for one endless request
		return windowFactors(t, p, 6)[1:] // the first second holds the prefill
	}
	one := windows(t, boot(t, "1", "--sim-boot-noise", "0.05"))
	for _, w := range one[1:] {
		if math.Abs(w-one[0]) > 1e-6 {
			t.Errorf("one boot is not stable: windows %v", one)
			break
		}
	}
	two := windows(t, boot(t, "2", "--sim-boot-noise", "0.05"))
	if math.Abs(one[0]-two[0]) < 1e-3 {
		t.Errorf("boots 1 and 2 run alike: step factors %.5f and %.5f", one[0], two[0])
	}
	if again := windows(t, boot(t, "1", "--sim-boot-noise", "0.05")); math.Abs(again[0]-one[0]) > 1e-9 {
		t.Errorf("boot 1 again: factor %.5f, first time %.5f", again[0], one[0])
	}
	if off := boot(t, "2").bootFactor; off != 1 {
		t.Errorf("without --sim-boot-noise the factor is %g, want 1", off)
	}
	var sum, sumLog, sumLog2 float64
	const n = 2000
	for i := range n {
		f := bootFactor(&Config{Seed: 1, BootSeed: uint64(i), BootNoise: 0.05})
		sum += f
		sumLog += math.Log(f)
		sumLog2 += math.Log(f) * math.Log(f)
	}
	mean, sd := sum/n, math.Sqrt(sumLog2/n-(sumLog/n)*(sumLog/n))
	t.Logf("%d boots at σ = 0.05: mean factor %.4f, sd of its log %.4f", n, mean, sd)
	if math.Abs(mean-1) > 0.005 || sd < 0.045 || sd > 0.055 {
		t.Errorf("boot factors: mean %.4f (want 1 ± 0.005), sd of log %.4f (want 0.05 ± 0.005)", mean, sd)
	}
}

// TestStatsAtStepEnd: the request gauges are a snapshot taken where vLLM's
// Scheduler.update_from_output makes its SchedulerStats, at the end of a
// step: a request that finished in the step no longer counts as running,
// and a request that arrives during a step is not waiting until the next
// schedule has seen it (docs/vllm.md#metrics).
func TestStatsAtStepEnd(t *testing.T) {
	e := newEngine(engineParams{numBlocks: 1000, runCap: 1, tbt: time.Millisecond, prefillTPS: 1e9})
	e.virtual = true
	bg := context.Background()
	a, b := newRequest(16, 2, 1), newRequest(16, 2, 2)
	e.submit(a)
	e.submit(b)
	e.iterate(bg) // admits a (the cap is 1); b waits; a's prefill is due
	if s := e.snapshot(); s.running != 1 || s.waiting != 1 {
		t.Fatalf("after the first schedule: running %d, waiting %d; want 1, 1", s.running, s.waiting)
	}
	e.iterate(bg) // a's first token, then a decode step that gives its second and last
	if a.generated != 2 {
		t.Fatalf("a generated %d tokens, want 2", a.generated)
	}
	if s := e.snapshot(); s.running != 0 || s.waiting != 1 {
		t.Errorf("after the step that finished a: running %d, waiting %d; want 0 (a is gone), 1 (b is admitted at the next schedule)", s.running, s.waiting)
	}
	c := newRequest(16, 2, 3)
	e.submit(c) // arrives between steps: the next schedule admits b; c waits
	e.iterate(bg)
	if s := e.snapshot(); s.running != 1 || s.waiting != 1 {
		t.Errorf("after b's schedule: running %d, waiting %d; want 1, 1 (c)", s.running, s.waiting)
	}
}

// TestWaitingByReason: vllm:num_requests_waiting_by_reason as vLLM PR
// #38435 writes it (capacity = the waiting queue, deferred = 0 here), and
// absent with --sim-no-waiting-by-reason, as in builds before it.
func TestWaitingByReason(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want bool
	}{
		{name: "current builds", args: nil, want: true},
		{name: "before PR #38435", args: []string{"--sim-no-waiting-by-reason"}, want: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := startTest(t, append([]string{"m", "--max-num-seqs", "1", "--sim-tbt", "5ms"}, tc.args...)...)
			openStreams(t, ts, 3)
			waitMetric(t, ts, "vllm:num_requests_waiting", 2)
			f, ok := scrape(t, ts)["vllm:num_requests_waiting_by_reason"]
			if ok != tc.want {
				t.Fatalf("vllm:num_requests_waiting_by_reason present %v, want %v", ok, tc.want)
			}
			if !ok {
				return
			}
			got := map[string]float64{}
			for _, m := range f.GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetName() == "reason" {
						got[l.GetValue()] = m.GetGauge().GetValue()
					}
				}
			}
			if got["capacity"] != 2 || got["deferred"] != 0 || len(got) != 2 {
				t.Errorf("waiting by reason %v, want capacity 2, deferred 0", got)
			}
		})
	}
}

// TestHybridByDefault: the Qwen3.5 and Ling-3.0 families are served as
// hybrid models without --sim-hybrid, with prefix caching on in align mode
// as vLLM does since PR #50991, and the cache really serves a repeated
// prompt; --sim-hybrid=false serves them as plain decoders.
func TestHybridByDefault(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		blockSize  string
		mambaMode  string
		prefixHits bool
	}{
		{name: "Qwen3.5", args: []string{"Qwen/Qwen3.5-4B"}, blockSize: "2112", mambaMode: "align", prefixHits: true},
		{name: "Ling-3.0", args: []string{"inclusionAI/Ling-3.0-flash-int4"}, blockSize: "2112", mambaMode: "align", prefixHits: true},
		{name: "a plain decoder", args: []string{"meta-llama/Llama-3.1-8B"}, blockSize: "16", mambaMode: "none", prefixHits: true},
		{name: "--sim-hybrid=false", args: []string{"Qwen/Qwen3.5-4B", "--sim-hybrid=false"}, blockSize: "16", mambaMode: "none", prefixHits: true},
		{name: "hybrid without prefix caching", args: []string{"Qwen/Qwen3.5-4B", "--no-enable-prefix-caching"}, blockSize: "2112", mambaMode: "none"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := startTest(t, append(tt.args, "--sim-tbt", "1ms", "--max-model-len", "32768")...)
			l := cacheConfigSeries(t, ts)[0]
			wantPrefix := pyBool(tt.prefixHits)
			if l["block_size"] != tt.blockSize || l["mamba_cache_mode"] != tt.mambaMode || l["enable_prefix_caching"] != wantPrefix {
				t.Errorf("block_size %s, mamba_cache_mode %s, enable_prefix_caching %s; want %s, %s, %s",
					l["block_size"], l["mamba_cache_mode"], l["enable_prefix_caching"], tt.blockSize, tt.mambaMode, wantPrefix)
			}
			prompt := make([]int, 4096)
			for i := range prompt {
				prompt[i] = i + 1
			}
			for i := 0; i < 2; i++ {
				chunks, done := readSSE(t, ts.post(t, "/v1/completions", "", map[string]any{"prompt": prompt, "max_tokens": 2, "stream": true}).Body, time.Time{})
				if !done {
					t.Fatalf("request %d: no [DONE] (%d chunks)", i, len(chunks))
				}
			}
			time.Sleep(20 * time.Millisecond)
			if hits := value(t, scrape(t, ts), "vllm:prefix_cache_hits_total"); (hits > 0) != tt.prefixHits {
				t.Errorf("prefix_cache_hits_total = %g after the same prompt twice, want hits: %v", hits, tt.prefixHits)
			}
		})
	}
}

// TestHistogramsCountDroppedTime: when the step loop falls more than
// maxLag behind real time (a busy machine) it drops the time it cannot
// make up, but vLLM times its TTFT and inter-token histograms by the wall
// clock: a gap spanning the drop counts it, one after it does not.
func TestHistogramsCountDroppedTime(t *testing.T) {
	e := newEngine(engineParams{numBlocks: 250, runCap: 16, acceptLen: 1, stepScale: 1, profAccept: 1,
		tbt: time.Millisecond, ttft: time.Millisecond, prefillTPS: 1e6, seed: 1})
	e.base = time.Now().Add(-2 * time.Second) // two seconds behind
	e.now = 10 * time.Millisecond
	if !e.sleepUntil(context.Background(), e.now, false) {
		t.Fatal("sleepUntil ended")
	}
	tests := []struct {
		name           string
		since, dropped time.Duration
		lo, hi         time.Duration
	}{
		// 2 s behind less the 10 ms step and the 250 ms kept: at least
		// 1.74 s dropped; the call itself may take a while on a loaded
		// machine, so the top is generous.
		{name: "a gap spanning the drop counts it", lo: 1750 * time.Millisecond, hi: 10 * time.Second},
		{name: "a gap after it does not", since: 5 * time.Millisecond, dropped: e.dropped, lo: 5 * time.Millisecond, hi: 5 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := e.wall(tt.since, tt.dropped); got < tt.lo || got > tt.hi {
				t.Errorf("wall %v, want %v to %v", got, tt.lo, tt.hi)
			}
		})
	}
}
