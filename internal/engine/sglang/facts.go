package sglang

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"

	"github.com/slogate/slogate/internal/engine"
	"github.com/slogate/slogate/internal/promread"
	"github.com/slogate/slogate/internal/vocab"
)

// SimFlags makes the simulator imitate SGLang.
func (Engine) SimFlags() []string { return []string{"--engine", "sglang"} }

// ParseMetrics reads SGLang's metric names (ParseMetrics).
func (Engine) ParseMetrics(r io.Reader, model string) (promread.Snapshot, error) {
	return ParseMetrics(r, model)
}

// sglangServerInfo is what slogate reads of GET /server_info: the server
// args at the top level with the scheduler's handshake merged in, and one
// internal state per DP rank (docs/sglang.md#server-info).
type sglangServerInfo struct {
	Version              string          `json:"version"`
	MaxTotalNumTokens    int64           `json:"max_total_num_tokens"`
	DPSize               int             `json:"dp_size"`
	KVCacheDtype         string          `json:"kv_cache_dtype"`
	SpeculativeAlgorithm json.RawMessage `json:"speculative_algorithm"` // absent, null or a name
	DisableRadixCache    *bool           `json:"disable_radix_cache"`
	InternalStates       []struct {
		MemoryUsage struct {
			TokenCapacity int64 `json:"token_capacity"`
		} `json:"memory_usage"`
		// EffectiveMaxRunningRequestsPerDP is the rank's resolved running
		// limit (Scheduler.get_internal_state's
		// ret["effective_max_running_requests_per_dp"] =
		// self.max_running_requests), where the top level's
		// max_running_requests is the CLI value, null when unset.
		EffectiveMaxRunningRequestsPerDP int `json:"effective_max_running_requests_per_dp"`
	} `json:"internal_states"`
	// path is where it was read: "GET /server_info" or "GET /get_server_info".
	path string
}

// serverInfo is GET /server_info, or GET /get_server_info where the newer
// path is not served (404); nil when neither answers.
func (Engine) serverInfo(ctx context.Context, c engine.Conn) *sglangServerInfo {
	for _, path := range []string{"/server_info", "/get_server_info"} {
		code, b, err := c.Do(ctx, http.MethodGet, path, nil)
		if err != nil || code != http.StatusOK {
			continue
		}
		var info sglangServerInfo
		if json.Unmarshal(b, &info) != nil {
			continue
		}
		info.path = "GET " + path
		return &info
	}
	return nil
}

// Version is /server_info's version.
func (e Engine) Version(ctx context.Context, c engine.Conn) (string, string) {
	if info := e.serverInfo(ctx, c); info != nil && info.Version != "" {
		return info.Version, info.path
	}
	return "", ""
}

// KVCapacity is, the first that gives a value (docs/method.md#kv-capacity,
// docs/sglang.md#server-info):
//
//  1. GET /server_info: the token_capacity of every DP rank's internal
//     state, summed; without internal states, the top-level
//     max_total_num_tokens (one rank's handshake) × dp_size ("server_info");
//  2. sglang:max_total_num_tokens, summed over dp_rank ("metrics");
//  3. a launched server's log: each DP rank's "KV Cache is allocated.
//     #tokens: N" (else its "max_total_num_tokens=N"), summed ("log");
//  4. unknown: 0, "" and a warning.
func (e Engine) KVCapacity(ctx context.Context, c engine.Conn, logPath string, dp int) (tokens int64, source, warning string, read engine.KVRead) {
	if info := e.serverInfo(ctx, c); info != nil {
		var sum int64
		for _, st := range info.InternalStates {
			if st.MemoryUsage.TokenCapacity <= 0 {
				sum = 0
				break
			}
			sum += st.MemoryUsage.TokenCapacity
		}
		if sum > 0 {
			return sum, vocab.KVSourceServerInfo, "", engine.KVRead{Rule: engine.KVRankCapacity, From: info.path, Count: int64(len(info.InternalStates))}
		}
		if n := info.MaxTotalNumTokens; n > 0 {
			ranks := max(info.DPSize, 1)
			return n * int64(ranks), vocab.KVSourceServerInfo, "", engine.KVRead{Rule: engine.KVMaxTotalTimesDP, From: info.path, Tokens: n, Count: int64(ranks)}
		}
	}
	if snap, _, err := c.Metrics(ctx); err == nil && snap.KV.SizeTokens > 0 {
		return snap.KV.SizeTokens, vocab.KVSourceMetrics, "", engine.KVRead{}
	}
	if logPath != "" {
		if n, r, w := sglangKVFromLog(logPath, dp); n > 0 {
			return n, vocab.KVSourceLog, w, r
		}
	}
	return 0, "", "KV cache capacity unknown (no kv_cache_tokens in the spec, no max_total_num_tokens in GET /server_info or /metrics, no \"KV Cache is allocated\" log line): no cell is skipped as over capacity", engine.KVRead{}
}

// KVSlots: every request shares the KV pool.
func (Engine) KVSlots(context.Context, engine.Conn, string) int { return 0 }

// StatedFacts reads kv_cache_dtype, speculative_algorithm and
// disable_radix_cache from GET /server_info (the server's args as it was
// launched: docs/sglang.md#server-info), and the running limit the
// scheduler resolved (max_num_seqs): each DP rank's
// effective_max_running_requests_per_dp there, the least where ranks
// differ, else the log's summary line "max_running_requests=R"
// (docs/sglang.md#log-lines).
func (e Engine) StatedFacts(ctx context.Context, c engine.Conn, logPath string) engine.Facts {
	var facts engine.Facts
	info := e.serverInfo(ctx, c)
	if info == nil || !stateRunningLimit(&facts, info) {
		if n := maxRunningFromLog(logPath); n > 0 {
			facts.MaxNumSeqs = n
			facts.State("max_num_seqs", "server.log (max_running_requests=)")
		}
	}
	if info == nil {
		return facts
	}
	if info.KVCacheDtype != "" {
		facts.KVCacheDtype = info.KVCacheDtype
		facts.State("kv_cache_dtype", info.path)
	}
	if raw := info.SpeculativeAlgorithm; len(raw) > 0 {
		var a *string
		if json.Unmarshal(raw, &a) == nil {
			facts.Speculative = "" // null: the server runs without
			if a != nil {
				facts.Speculative = strings.ToUpper(*a)
			}
			facts.State("speculative", info.path)
		}
	}
	if d := info.DisableRadixCache; d != nil {
		on := !*d
		facts.PrefixCaching = &on
		facts.State("enable_prefix_caching", info.path)
	}
	return facts
}

// TokenizeBody is SGLang's POST /tokenize of text, the form vLLM's takes:
// {"model", "prompt", "add_special_tokens": false} (docs/sglang.md#tokenize).
func (Engine) TokenizeBody(model, text string) any {
	return map[string]any{"model": model, "prompt": text, "add_special_tokens": false}
}

// TokenizeChatBody is POST /tokenize of chat messages in vLLM's form,
// which newer SGLang builds take; older ones refuse it, and
// ChatPromptTokens measures the length instead (docs/sglang.md#tokenize).
func (Engine) TokenizeChatBody(model string, messages any, addGenerationPrompt bool, chatTemplateKwargs map[string]any) any {
	req := map[string]any{"model": model, "messages": messages, "add_generation_prompt": addGenerationPrompt}
	if chatTemplateKwargs != nil {
		req["chat_template_kwargs"] = chatTemplateKwargs
	}
	return req
}

// TokenizeStatesContext: SGLang's /tokenize answers the tokenizer's
// model_max_length, not --context-length (docs/sglang.md#tokenize).
func (Engine) TokenizeStatesContext() bool { return false }

// ChatPromptTokens is the rendered chat prompt's length on a build whose
// /tokenize takes a prompt only (docs/sglang.md#tokenize): a
// non-streaming /v1/chat/completions of the messages with max_tokens 1,
// whose usage.prompt_tokens is the prompt as the chat template rendered
// it, generation prompt included (SGLang's chat request adds it). It costs
// a prefill of the prompt per call, and the radix cache keeps that
// prompt's blocks: the builder's prompts differ from their first tokens
// on (each stream's header), so no measured request reuses them beyond
// the chat template's opening.
func (Engine) ChatPromptTokens(ctx context.Context, c engine.Conn, messages any, chatTemplateKwargs map[string]any) (int, bool, error) {
	req := map[string]any{"model": c.Model(), "messages": messages, "max_tokens": 1, "stream": false}
	if chatTemplateKwargs != nil {
		req["chat_template_kwargs"] = chatTemplateKwargs
	}
	code, b, err := c.Do(ctx, http.MethodPost, "/v1/chat/completions", req)
	if err != nil {
		return 0, true, fmt.Errorf("POST /v1/chat/completions (max_tokens 1, for the prompt's length): %v", err)
	}
	if code != http.StatusOK {
		return 0, true, &engine.StatusError{Request: "POST /v1/chat/completions (max_tokens 1, for the prompt's length)", Code: code, Body: engine.Snippet(b)}
	}
	var r struct {
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(b, &r); err != nil || r.Usage.PromptTokens <= 0 {
		return 0, true, fmt.Errorf("POST /v1/chat/completions (max_tokens 1) gave no usage.prompt_tokens: %s", engine.Snippet(b))
	}
	return r.Usage.PromptTokens, true, nil
}

// Status: SGLang reports no deferred requests; its preemptions are
// retractions (retract_decode sends a running request back to the queue
// when the KV pool runs out, docs/sglang.md#admission), counted by
// sglang:num_retracted_requests_total; its KV usage gauge is not read
// (sglang:token_usage is not refreshed while the server idles,
// docs/sglang.md#metric-cadence), so the cross-check does not run, but a
// failed one would point at /server_info.
func (Engine) Status() *engine.Status { return status }

var status = &engine.Status{
	Preemptions: "sglang:num_retracted_requests_total: requests retracted to the queue when the KV pool ran out",
	KVSuspect: func(source string) string {
		if source == vocab.KVSourceServerInfo {
			return "GET /server_info's token_capacity is suspect"
		}
		return ""
	},
}

// SamplingRejected: slogate knows no SGLang answer that refuses every
// request's sampling settings alike.
func (Engine) SamplingRejected(string, engine.Sampling) (why, remedy string, ok bool) {
	return "", "", false
}

// SpeculativeIdle: SGLang has no draft counter, only the gauges
// sglang:spec_accept_length and sglang:spec_accept_rate, set at decode log
// intervals (docs/sglang.md#metrics), so an idle speculation is an accept
// length of 0 or no gauge at the window's end.
func (Engine) SpeculativeIdle() string {
	return "speculative decoding did not run in this cell (sglang:spec_accept_length was 0 or absent after the window): check the server's --speculative-algorithm and its log"
}

// stateRunningLimit states max_num_seqs from the internal states'
// effective_max_running_requests_per_dp, the least over the DP ranks;
// false when no rank states one.
func stateRunningLimit(facts *engine.Facts, info *sglangServerInfo) bool {
	least := 0
	for _, st := range info.InternalStates {
		if n := st.EffectiveMaxRunningRequestsPerDP; n > 0 && (least == 0 || n < least) {
			least = n
		}
	}
	if least == 0 {
		return false
	}
	facts.MaxNumSeqs = least
	facts.State("max_num_seqs", info.path+" internal_states[].effective_max_running_requests_per_dp")
	return true
}

// maxRunningFromLog is the resolved max_running_requests of the log's
// first summary line ("max_total_num_tokens=N, …, max_running_requests=R,
// …", logged by TP rank 0: the same R on every DP rank); 0 when there is
// none.
func maxRunningFromLog(path string) int {
	if path == "" {
		return 0
	}
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		if !sglangMaxTotRe.MatchString(line) {
			continue
		}
		if m := sglangMaxRunningRe.FindStringSubmatch(line); m != nil {
			if n, err := strconv.Atoi(m[1]); err == nil && n > 0 {
				return n
			}
		}
	}
	return 0
}
