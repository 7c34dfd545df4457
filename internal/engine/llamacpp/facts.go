package llamacpp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/slogate/slogate/internal/engine"
	"github.com/slogate/slogate/internal/promread"
	"github.com/slogate/slogate/internal/vocab"
)

// SimFlags: slogate's simulator has no llama.cpp persona, so -sim is
// refused (Syntax.NoSimulator) and this is never used.
func (Engine) SimFlags() []string { return nil }

// ParseMetrics reads llama.cpp's metric names (ParseMetrics).
func (Engine) ParseMetrics(r io.Reader, model string) (promread.Snapshot, error) {
	return ParseMetrics(r, model)
}

// props is what slogate reads of GET /props (docs/llamacpp.md#props).
type props struct {
	BuildInfo  string `json:"build_info"`
	TotalSlots int    `json:"total_slots"`
	Default    struct {
		NCtx int64 `json:"n_ctx"`
	} `json:"default_generation_settings"`
}

// readProps is GET /props; nil when it does not answer 200 with JSON.
func readProps(ctx context.Context, c engine.Conn) *props {
	code, b, err := c.Do(ctx, http.MethodGet, "/props", nil)
	if err != nil || code != http.StatusOK {
		return nil
	}
	var p props
	if json.Unmarshal(b, &p) != nil {
		return nil
	}
	return &p
}

// Version is /props' build_info ("b11669-Debian"): llama-server has no
// /version, and --version prints to stderr only.
func (Engine) Version(ctx context.Context, c engine.Conn) (string, string) {
	if p := readProps(ctx, c); p != nil && p.BuildInfo != "" {
		return p.BuildInfo, "GET /props (build_info)"
	}
	return "", ""
}

// slotsLineRe is the startup log's slot line, `load_model: initializing,
// n_slots = 2, n_ctx_slot = 2048, kv_unified = 'false'`
// (docs/llamacpp.md#startup-log).
var slotsLineRe = regexp.MustCompile(`n_slots = (\d+), n_ctx_slot = (\d+)(?:, kv_unified = '(true|false)')?`)

// slotsLine is the last slot line of a launched server's log.
type slotsLine struct {
	slots, nCtxSlot int64
	unified         string // "true", "false" or "" when the line does not say
}

// slotsFromLog reads the log's last slot line; ok is false without one.
func slotsFromLog(path string) (l slotsLine, ok bool) {
	f, err := os.Open(path)
	if err != nil {
		return l, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		m := slotsLineRe.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		s, _ := strconv.ParseInt(m[1], 10, 64)
		n, _ := strconv.ParseInt(m[2], 10, 64)
		if s > 0 && n > 0 {
			l, ok = slotsLine{slots: s, nCtxSlot: n, unified: m[3]}, true
		}
	}
	return l, ok
}

// Slots are a llama-server's slots: how many, each one's context, and
// whether they share one unified KV pool; Unified is "" when unknown.
type Slots struct {
	Count, Context int64
	Unified        string
	// From says where each was read.
	From string
}

// ReadSlots is the server's slots: the count and a slot's context from GET
// /props (total_slots, default_generation_settings.n_ctx), whether they
// share a unified pool from a launched server's startup log (kv_unified),
// which /props does not state; the log alone when /props does not answer.
func ReadSlots(ctx context.Context, c engine.Conn, logPath string) (Slots, bool) {
	var s Slots
	p := readProps(ctx, c)
	if p != nil && p.TotalSlots > 0 && p.Default.NCtx > 0 {
		s = Slots{Count: int64(p.TotalSlots), Context: p.Default.NCtx, From: "GET /props (total_slots × default_generation_settings.n_ctx)"}
	}
	if logPath != "" {
		if l, ok := slotsFromLog(logPath); ok {
			if s.Count == 0 {
				s = Slots{Count: l.slots, Context: l.nCtxSlot, From: "server.log (n_slots × n_ctx_slot)"}
			}
			s.Unified = l.unified
		}
	}
	return s, s.Count > 0
}

// KVCapacity is the slots' KV capacity (docs/llamacpp.md#kv-capacity):
// total_slots × a slot's n_ctx from GET /props when the slots have KV of
// their own (kv_unified 'false' in the startup log: an explicit
// --parallel), one slot's n_ctx when they share a unified pool (each
// slot's n_ctx is then the whole pool); the log's slot line where /props
// does not answer. An endpoint has no log: its slots are taken as
// separate, with a warning, as /props does not say.
func (Engine) KVCapacity(ctx context.Context, c engine.Conn, logPath string, dp int) (tokens int64, source, warning string, read engine.KVRead) {
	s, ok := ReadSlots(ctx, c, logPath)
	if !ok {
		return 0, "", "KV cache capacity unknown (no kv_cache_tokens in the spec, no total_slots and n_ctx in GET /props, no \"n_slots = N, n_ctx_slot = M\" log line): no cell is skipped as over capacity", engine.KVRead{}
	}
	slots := engine.KVRead{Rule: engine.KVSlots, From: s.From, Tokens: s.Context, Count: s.Count}
	switch s.Unified {
	case "true":
		return s.Context, vocab.KVSourceProps, "", engine.KVRead{Rule: engine.KVUnifiedPool, From: s.From, Tokens: s.Context, Count: s.Count}
	case "false":
		return s.Count * s.Context, vocab.KVSourceProps, "", slots
	}
	return s.Count * s.Context, vocab.KVSourceProps,
		fmt.Sprintf("KV cache capacity taken as %d slots × %d tokens = %d (GET /props); a llama-server started with --kv-unified (its default when --parallel is not given) shares one pool of %d tokens among its slots instead, which /props does not say: set kv_cache_tokens in the spec if so (docs/llamacpp.md#kv-capacity)",
			s.Count, s.Context, s.Count*s.Context, s.Context),
		slots
}

// KVSlots is the slots' count when each has KV of its own (kv_unified
// 'false' in the startup log, or an endpoint's, taken as such with
// KVCapacity's warning), 0 for one unified pool.
func (Engine) KVSlots(ctx context.Context, c engine.Conn, logPath string) int {
	s, ok := ReadSlots(ctx, c, logPath)
	if !ok || s.Unified == "true" {
		return 0
	}
	return int(s.Count)
}

// StatedFacts: whether the server speculates, from GET /slots (each
// slot's "speculative"): llama-server serves without speculation when its
// draft fails to load, logging the error only, and /props'
// speculative.types says "none" even when it speculates
// (docs/llamacpp.md#speculative-decoding). The server states its types
// nowhere, so a speculating server states the method the spec asked is
// unknown here: Speculative is "" only when no slot speculates.
func (Engine) StatedFacts(ctx context.Context, c engine.Conn, logPath string) engine.Facts {
	var facts engine.Facts
	code, b, err := c.Do(ctx, http.MethodGet, "/slots", nil)
	if err != nil || code != http.StatusOK {
		return facts
	}
	var slots []struct {
		Speculative *bool `json:"speculative"`
	}
	if json.Unmarshal(b, &slots) != nil || len(slots) == 0 || slots[0].Speculative == nil {
		return facts
	}
	if !*slots[0].Speculative {
		facts.Speculative = ""
		facts.State("speculative", "GET /slots (speculative: false)")
	}
	return facts
}

// TokenizeBody is llama-server's POST /tokenize of text: {"content"}, with
// no special tokens (add_special defaults to false; docs/llamacpp.md#tokenize).
func (Engine) TokenizeBody(model, text string) any {
	return map[string]any{"content": text}
}

// TokenizeChatBody is nil: llama-server's /tokenize has no messages form
// (it answers {"tokens": []} to one), so ChatPromptTokens sizes a chat
// prompt instead.
func (Engine) TokenizeChatBody(string, any, bool, map[string]any) any { return nil }

// TokenizeStatesContext: llama-server's /tokenize states no context.
func (Engine) TokenizeStatesContext() bool { return false }

// ChatPromptIDs are a chat prompt's token IDs as /v1/chat/completions
// sees them: POST /apply-template renders the messages through the chat
// template with the generation prompt (the same parse as a chat request,
// no inference), then POST /tokenize {"content", "add_special": true}
// tokenizes the rendering with the BOS the chat request adds (a chat
// request's usage.prompt_tokens is /tokenize of the rendering + 1 on a
// model that adds BOS; docs/llamacpp.md#tokenize). Sent as a token-ID
// prompt on /v1/completions (no BOS added to IDs) they are that exact
// prompt.
func (Engine) ChatPromptIDs(ctx context.Context, c engine.Conn, messages any, chatTemplateKwargs map[string]any) ([]int, bool, error) {
	req := map[string]any{"messages": messages}
	if chatTemplateKwargs != nil {
		req["chat_template_kwargs"] = chatTemplateKwargs
	}
	code, b, err := c.Do(ctx, http.MethodPost, "/apply-template", req)
	if err != nil {
		return nil, true, fmt.Errorf("POST /apply-template: %v", err)
	}
	if code != http.StatusOK {
		return nil, true, &engine.StatusError{Request: "POST /apply-template", Code: code, Body: engine.Snippet(b)}
	}
	var t struct {
		Prompt *string `json:"prompt"`
	}
	if err := json.Unmarshal(b, &t); err != nil || t.Prompt == nil {
		return nil, true, fmt.Errorf("POST /apply-template gave no prompt: %s", engine.Snippet(b))
	}
	code, b, err = c.Do(ctx, http.MethodPost, "/tokenize", map[string]any{"content": *t.Prompt, "add_special": true})
	if err != nil {
		return nil, true, fmt.Errorf("POST /tokenize (the chat template's rendering): %v", err)
	}
	if code != http.StatusOK {
		return nil, true, &engine.StatusError{Request: "POST /tokenize (the chat template's rendering)", Code: code, Body: engine.Snippet(b)}
	}
	var r struct {
		Tokens []int `json:"tokens"`
	}
	if err := json.Unmarshal(b, &r); err != nil || len(r.Tokens) == 0 {
		return nil, true, fmt.Errorf("POST /tokenize gave no tokens for the chat template's rendering: %s", engine.Snippet(b))
	}
	return r.Tokens, true, nil
}

// ChatPromptTokens is len(ChatPromptIDs).
func (e Engine) ChatPromptTokens(ctx context.Context, c engine.Conn, messages any, chatTemplateKwargs map[string]any) (int, bool, error) {
	ids, ok, err := e.ChatPromptIDs(ctx, c, messages, chatTemplateKwargs)
	return len(ids), ok, err
}

// blockRe is llama-server's refusal of a quantized KV cache type whose
// block does not divide the model's head size: "K cache type q8_0 with
// block size 32 does not divide n_embd_head_k=24".
var blockRe = regexp.MustCompile(`([KV]) cache type (\S+) with block size (\d+) does not divide n_embd_head_[kv]=(\d+)`)

// ExitHint explains the exits whose log lines name what the spec should
// change (docs/llamacpp.md#errors): a quantized KV cache type whose block
// does not divide the head size, and --split-mode tensor on a build that
// finds no GPU.
func (Engine) ExitHint(logTail []string) string {
	for _, l := range logTail {
		if m := blockRe.FindStringSubmatch(l); m != nil {
			return fmt.Sprintf("llama-server refused kv_cache_dtype %q: a quantized KV cache type's block (%s) must divide the model's head size (%s), and this model's does not; choose a type whose block divides it, or f16, bf16 or f32, which have none (docs/llamacpp.md#kv-cache-types)", m[2], m[3], m[4])
		}
		if strings.Contains(l, "LLAMA_SPLIT_MODE_TENSOR needs >= 1 devices") {
			return "llama-server found no GPU for --split-mode tensor in args: a build without GPU offload exits on it; remove it (docs/llamacpp.md#flags)"
		}
	}
	return ""
}

// UncachedField: llama-server has no cache_salt (it ignores the field)
// and reuses a slot's cached prefix (an identical second prompt came back
// with 1,001 of 1,002 tokens cached); "cache_prompt": false makes it
// evaluate the whole prompt (docs/llamacpp.md#prompt-cache).
func (Engine) UncachedField() string { return `"cache_prompt":false` }

// StreamClosesConnection: llama-server (b11669) closes the connection
// after a streamed response while its headers say "Keep-Alive: timeout=5,
// max=100" (curl: "Connection 0 seems to be dead" on the next request;
// a non-streamed response's connection is reused), so a reused one meets
// EOF (docs/llamacpp.md#streaming).
func (Engine) StreamClosesConnection() bool { return true }

// SpeculativeIdle: llama.cpp counts verification steps in
// llamacpp:spec_decode_num_drafts_total, at the end of each request.
func (Engine) SpeculativeIdle() string {
	return "speculative decoding did not run in this cell (llamacpp:spec_decode_num_drafts_total did not move; llama-server adds to it when a request finishes): check the server's --spec-type and -md and its log (a draft that fails to load is logged, and the server serves without speculation)"
}

// Status: max_model_len is a slot's context (-c ÷ --parallel), fixed
// before any request; llama-server's deferred requests wait for a free
// slot, i.e. for capacity (ParseMetrics counts llamacpp:requests_deferred
// as waiting, so a cell that saw some is queued); it has no preemption
// counter and no KV usage gauge, so the one-stream KV cross-check is not
// made.
func (Engine) Status() *engine.Status { return status }

var status = &engine.Status{
	ContextIsSlot:    true,
	DeferredIsQueued: true,
	Deferred:         "llamacpp:requests_deferred: waiting for a free slot",
	// docs/llamacpp.md#disconnect: a closed request is noticed at the
	// next poll of its connection, every HTTP_POLLING_SECONDS (1 s).
	AbortLatency: time.Second,
	KVSuspect: func(source string) string {
		if source == vocab.KVSourceProps {
			return "GET /props' total_slots × n_ctx is suspect (a --kv-unified server shares one pool of n_ctx)"
		}
		return ""
	},
}

// SamplingRejected: slogate knows no llama-server answer that refuses
// every request's sampling settings alike.
func (Engine) SamplingRejected(string, engine.Sampling) (why, remedy string, ok bool) {
	return "", "", false
}
