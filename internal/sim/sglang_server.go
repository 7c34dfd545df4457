package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// sglangServer is SGLang's HTTP side (entrypoints/http_server.py and the
// OpenAI serving classes) over the shared engines: its routes, its
// readiness and drain states, its metrics (docs/sglang.md).
type sglangServer struct {
	*server // the engines, body parsing, DP balancing and --sim-record, shared with the vLLM imitation
	c       *sglangConfig
	st      *settings
	log     *sglangLogger
	scheds  []*sglangScheduler
	tm      *sglangTokenizerMetrics
	started time.Time

	up       atomic.Bool // ServerStatus.Up: the warmup request finished
	draining atomic.Bool // gracefully_exit: SIGTERM received

	mu       sync.Mutex
	inflight map[string]bool // rid_to_state: generation requests not yet finished, by rid
	order    []string        // their arrival order
}

// newSGLangServer builds the HTTP side and its engines (not yet running),
// each engine reporting to its rank's scheduler metrics.
func newSGLangServer(c *sglangConfig, st *settings, log *sglangLogger) (*sglangServer, error) {
	base, err := newServer(c.core, st, &logger{w: io.Discard})
	if err != nil {
		return nil, err
	}
	s := &sglangServer{server: base, c: c, st: st, log: log, tm: newSGLangTokenizerMetrics(), started: time.Now(),
		inflight: map[string]bool{}}
	drafts := 0
	if c.core.Speculative != nil {
		drafts = c.core.Speculative.NumSpeculativeTokens
	}
	for i, e := range base.engs {
		sch := &sglangScheduler{rank: i, interval: c.decodeLogInterval, maxTotal: st.kvTokens, drafts: drafts, log: log}
		s.scheds = append(s.scheds, sch)
		e.p.observe = sch.observe
	}
	return s, nil
}

func (s *sglangServer) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", s.health)
	mux.HandleFunc("GET /health_generate", s.health)
	mux.HandleFunc("GET /ping", func(http.ResponseWriter, *http.Request) {})
	mux.HandleFunc("GET /get_model_info", s.modelInfo)
	mux.HandleFunc("GET /model_info", s.modelInfo)
	mux.HandleFunc("GET /get_server_info", s.serverInfo)
	mux.HandleFunc("GET /server_info", s.serverInfo)
	mux.HandleFunc("GET /v1/models", s.models)
	mux.HandleFunc("GET /v1/models/{model...}", s.models)
	mux.HandleFunc("POST /v1/completions", func(w http.ResponseWriter, r *http.Request) { s.generate(w, r, false) })
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) { s.generate(w, r, true) })
	mux.HandleFunc("POST /tokenize", s.tokenize)
	mux.HandleFunc("POST /v1/tokenize", s.tokenize)
	mux.HandleFunc("POST /detokenize", s.detokenize)
	mux.HandleFunc("POST /v1/detokenize", s.detokenize)
	mux.HandleFunc("/flush_cache", s.flushCache)
	if s.c.enableMetrics {
		mux.HandleFunc("GET /metrics", s.metrics)
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, map[string]string{"detail": "Not Found"}) // FastAPI's 404
	})
	return s.auth(mux)
}

// auth is add_api_key_middleware: every path but OPTIONS, /health* and
// /metrics needs the key.
func (s *sglangServer) auth(next http.Handler) http.Handler {
	if s.c.apiKey == "" {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		if r.Method != http.MethodOptions && !strings.HasPrefix(p, "/health") && !strings.HasPrefix(p, "/metrics") &&
			r.Header.Get("Authorization") != "Bearer "+s.c.apiKey {
			writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "Unauthorized"})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// warmupAndReady is _wait_and_warmup: one 8-token generation through the
// engine (it counts in the metrics, as SGLang's warmup /generate does),
// then ServerStatus.Up and the ready line. --sim-warmup stands in for the
// first request's extra cost (kernel JIT, first batch).
func (s *sglangServer) warmupAndReady(ctx contextDone) {
	if !s.c.skipWarmup {
		select {
		case <-ctx.Done():
			return
		case <-time.After(s.c.warmup):
		}
		for _, e := range s.engs {
			start := time.Now()
			prompt, hash := textTokens("The capital city of France is", nil)
			r := newRequest(prompt, 8, hash)
			e.submit(r)
			got := 0
			for got < 8 {
				select {
				case <-r.notify:
					if got == 0 {
						s.tm.firstToken(time.Since(start))
					}
					got += int(r.pending.Swap(0))
				case <-ctx.Done():
					return
				case <-e.stopped:
					return
				}
			}
			s.tm.finished(prompt, got, max(int(r.cachedTokens.Load()), 0), time.Since(start))
		}
	}
	s.up.Store(true)
	s.log.http("The server is fired up and ready to roll!")
}

// contextDone is the part of a context warmupAndReady waits on.
type contextDone interface{ Done() <-chan struct{} }

// health is /health and /health_generate: 503 while starting or draining;
// then, when no request is running or waiting, a one-token generation
// (it makes a prefill batch, so the scheduler's gauges move); 503 if it
// brings nothing within 20 s (HEALTH_CHECK_TIMEOUT).
func (s *sglangServer) health(w http.ResponseWriter, r *http.Request) {
	if s.draining.Load() || !s.up.Load() {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	e := s.engs[0]
	if e.load() > 0 {
		return // busy: the scheduler answers without running the check
	}
	req := newRequest(1, 1, 0)
	e.submit(req)
	select {
	case <-req.notify:
	case <-time.After(20 * time.Second):
		s.abort(e, req)
		w.WriteHeader(http.StatusServiceUnavailable)
	case <-r.Context().Done():
		s.abort(e, req)
	case <-e.stopped:
		w.WriteHeader(http.StatusServiceUnavailable)
	}
}

func (s *sglangServer) modelInfo(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, 200, map[string]any{"model_path": s.c.core.Model, "tokenizer_path": s.c.core.Model, "is_generation": true,
		"preferred_sampling_params": nil, "weight_version": "default"})
}

// models is GET /v1/models (and /v1/models/NAME): the one served name,
// as id and root, with the context length.
func (s *sglangServer) models(w http.ResponseWriter, r *http.Request) {
	name := s.c.core.ServedNames[0]
	card := map[string]any{"id": name, "object": "model", "created": time.Now().Unix(), "owned_by": "sglang",
		"root": name, "parent": nil, "max_model_len": s.st.maxLen}
	if m := r.PathValue("model"); m != "" {
		if m != name {
			writeJSON(w, 404, map[string]any{"error": map[string]any{"message": fmt.Sprintf("The model '%s' does not exist", m),
				"type": "invalid_request_error", "param": "model", "code": "model_not_found"}})
			return
		}
		writeJSON(w, 200, card)
		return
	}
	writeJSON(w, 200, map[string]any{"object": "list", "data": []any{card}})
}

// serverArgs are the ServerArgs fields /server_info shows (the real one
// has every field): the CLI values, null where unset, with what the
// speculative hook wrote.
func (s *sglangServer) serverArgs() map[string]any {
	c, core := s.c, s.c.core
	opt := func(p *int) any {
		if p == nil {
			return nil
		}
		return *p
	}
	optF := func(p *float64) any {
		if p == nil {
			return nil
		}
		return *p
	}
	optS := func(v string) any {
		if v == "" {
			return nil
		}
		return v
	}
	var attn any
	if c.attentionBackend != nil {
		attn = *c.attentionBackend
	}
	var maxTotal any
	if c.maxTotalTokens > 0 {
		maxTotal = c.maxTotalTokens
	}
	var apiKey any
	if c.apiKey != "" {
		apiKey = c.apiKey // dataclasses.asdict shows it, as SGLang does
	}
	return map[string]any{
		"model_path": core.Model, "tokenizer_path": core.Model, "served_model_name": core.ServedNames[0],
		"host": core.Host, "port": core.Port, "api_key": apiKey,
		"tp_size": core.TensorParallel, "dp_size": core.DataParallel, "pp_size": c.ppSize, "ep_size": c.epSize,
		"enable_dp_attention": c.enableDPAttention,
		"context_length":      opt(c.contextLength), "mem_fraction_static": optF(c.memFraction),
		"max_running_requests": opt(c.maxRunning), "max_total_tokens": maxTotal,
		"chunked_prefill_size": opt(c.chunkedPrefill), "max_prefill_tokens": c.maxPrefillTokens,
		"schedule_policy": c.schedulePolicy, "kv_cache_dtype": c.kvCacheDtype, "attention_backend": attn,
		"disable_radix_cache": core.PrefixCaching != nil && !*core.PrefixCaching,
		"enable_metrics":      c.enableMetrics, "decode_log_interval": c.decodeLogInterval,
		"speculative_algorithm": optS(c.specAlgorithm), "speculative_draft_model_path": optS(c.draftModel),
		"speculative_num_steps": opt(c.numSteps), "speculative_eagle_topk": opt(c.eagleTopK),
		"speculative_num_draft_tokens": opt(c.numDraftTokens), "speculative_dflash_block_size": opt(c.dflashBlock),
		"stream_response_default_include_usage": c.defaultUsage, "skip_server_warmup": c.skipWarmup,
	}
}

// serverInfo is /server_info and /get_server_info: the server args,
// scheduler_info (status, max_total_num_tokens, max_req_input_len) merged
// at the top level, internal_states per DP rank, the version.
func (s *sglangServer) serverInfo(w http.ResponseWriter, r *http.Request) {
	if s.c.kvLogOnly {
		http.NotFound(w, r)
		return
	}
	info := s.serverArgs()
	info["status"] = "ready"
	info["max_total_num_tokens"] = s.st.kvTokens
	info["max_req_input_len"] = maxReqInputLen(s.st)
	var states []any
	for _, sch := range s.scheds {
		state := s.serverArgs()
		sch.mu.Lock()
		state["last_gen_throughput"] = sch.lastGenThroughput
		sch.mu.Unlock()
		kvGB := math.Round(float64(s.st.kvTokens)*kvBytesPerToken/1e9*100) / 100
		state["memory_usage"] = map[string]any{"weight": 8.0, "kvcache": kvGB, "token_capacity": s.st.kvTokens, "graph": 0.5}
		// Scheduler.get_internal_state: the resolved limit (48 under
		// speculative decoding, the pool's share when unset), where the
		// server args' max_running_requests is the CLI value.
		state["effective_max_running_requests_per_dp"] = s.st.maxSeqs
		if a := sch.avgAcceptLength(); !math.IsNaN(a) {
			state["avg_spec_accept_length"] = a
		}
		states = append(states, state)
	}
	info["internal_states"] = states
	info["version"] = sglangVersion
	writeJSON(w, 200, info)
}

// sglangVersion is what /server_info reports as SGLang's version.
const sglangVersion = "0.5.5-slogate-sim"

// flushCache is /flush_cache: refused (400) while any request runs or
// waits; the body is the same text either way.
func (s *sglangServer) flushCache(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"detail": "Method Not Allowed"})
		return
	}
	busy := 0
	for _, e := range s.engs {
		busy += int(e.load())
	}
	code := 200
	if busy > 0 {
		code = http.StatusBadRequest
		s.log.rank(0, "Cache not flushed because there are pending requests. #queue-req: %d, #running-req: %d", s.engs[0].nWaiting.Load(), s.engs[0].nRunning.Load())
	} else {
		for _, e := range s.engs {
			e.resetPrefixCache()
		}
		s.log.rank(0, "Cache flushed successfully!")
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	io.WriteString(w, "Cache flushed.\nPlease check backend logs for more details. (When there are running or waiting requests, the operation will not be performed.)\n")
}

func (s *sglangServer) metrics(w http.ResponseWriter, r *http.Request) {
	var b bytes.Buffer
	writeSGLangMetrics(&b, s.c.core.ServedNames[0], s.scheds, s.tm)
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	if s.c.kvLogOnly { // the fault: leave the capacity gauge out
		for _, line := range strings.SplitAfter(b.String(), "\n") {
			if !strings.Contains(line, "sglang:max_total_num_tokens") {
				io.WriteString(w, line)
			}
		}
		return
	}
	io.Copy(w, &b)
}

// sglangError writes SGLang's flat ErrorResponse with HTTP status code.
func sglangError(w http.ResponseWriter, code int, typ, msg string) {
	writeJSON(w, code, map[string]any{"object": "error", "message": msg, "type": typ, "param": nil, "code": code})
}

// tokenize is /tokenize and /v1/tokenize: {prompt} or (in 2026 builds)
// {messages}, exactly one; max_model_len is the tokenizer's, not the
// server's context (docs/sglang.md#tokenize).
func (s *sglangServer) tokenize(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Prompt              json.RawMessage            `json:"prompt"`
		Messages            []chatMessage              `json:"messages"`
		AddGenerationPrompt *bool                      `json:"add_generation_prompt"`
		ChatTemplateKwargs  map[string]json.RawMessage `json:"chat_template_kwargs"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		sglangError(w, 400, "Bad Request", "invalid request body: "+err.Error())
		return
	}
	hasPrompt := len(req.Prompt) > 0 && string(req.Prompt) != "null"
	if s.c.tokenizePromptOnly {
		if !hasPrompt {
			sglangError(w, 400, "Bad Request", "1 validation error for TokenizeRequest\nprompt\n  Field required [type=missing]")
			return
		}
		req.Messages = nil
	} else if hasPrompt == (req.Messages != nil) {
		sglangError(w, 400, "Bad Request", "1 validation error for TokenizeRequest\n  Value error, Exactly one of 'prompt' or 'messages' must be provided.")
		return
	}
	tokMax := s.st.prof.MaxModel // the tokenizer's model_max_length
	if req.Messages != nil {
		text := chatTemplate(req.Messages, req.AddGenerationPrompt == nil || *req.AddGenerationPrompt, req.ChatTemplateKwargs)
		ids := tokenize(text)
		writeJSON(w, 200, map[string]any{"tokens": ids, "count": len(ids), "max_model_len": tokMax})
		return
	}
	var one string
	if json.Unmarshal(req.Prompt, &one) == nil {
		ids := tokenize(one)
		writeJSON(w, 200, map[string]any{"tokens": ids, "count": len(ids), "max_model_len": tokMax})
		return
	}
	var many []string
	if err := json.Unmarshal(req.Prompt, &many); err != nil {
		sglangError(w, 400, "Bad Request", "prompt must be a string or a list of strings")
		return
	}
	tokens, counts := make([][]int, len(many)), make([]int, len(many))
	for i, p := range many {
		tokens[i] = tokenize(p)
		counts[i] = len(tokens[i])
	}
	writeJSON(w, 200, map[string]any{"tokens": tokens, "count": counts, "max_model_len": tokMax})
}

func (s *sglangServer) detokenize(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Tokens []int `json:"tokens"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		sglangError(w, 400, "Bad Request", "invalid request body: "+err.Error())
		return
	}
	writeJSON(w, 200, map[string]string{"text": detokenize(req.Tokens)})
}

// track registers a generation request in rid_to_state until done is
// called.
func (s *sglangServer) track(rid string) (done func()) {
	s.mu.Lock()
	s.inflight[rid] = true
	s.order = append(s.order, rid)
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		delete(s.inflight, rid)
		s.order = slices.DeleteFunc(s.order, func(x string) bool { return x == rid })
		s.mu.Unlock()
	}
}

// inflightRIDs are the unfinished requests, oldest first.
func (s *sglangServer) inflightRIDs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.order)
}

// generate serves /v1/completions and /v1/chat/completions as SGLang's
// OpenAIServingCompletion and OpenAIServingChat do.
func (s *sglangServer) generate(w http.ResponseWriter, r *http.Request, chat bool) {
	arrived := time.Now()
	if mt := strings.TrimSpace(strings.Split(r.Header.Get("Content-Type"), ";")[0]); strings.ToLower(mt) != "application/json" {
		sglangError(w, 400, "Bad Request", "[{'loc': ['header', 'content-type'], 'msg': \"Unsupported Media Type: Only 'application/json' is allowed\", 'type': 'value_error'}]")
		return
	}
	req, digest, err := s.readGenRequest(r)
	if err != nil {
		sglangError(w, 400, "Bad Request", err.Error())
		return
	}
	model := req.Model
	if model == "" {
		model = "default" // CompletionRequest.model's default, echoed in every chunk
	}
	switch {
	case chat && req.Messages == nil:
		sglangError(w, 400, "Bad Request", "1 validation error for ChatCompletionRequest\nmessages\n  Field required [type=missing]")
		return
	case !chat && !req.Prompt.set:
		sglangError(w, 400, "Bad Request", "1 validation error for CompletionRequest\nprompt\n  Field required [type=missing]")
		return
	}
	prompt, hash, chain := req.promptTokens(chat, digest)
	if req.Prompt.maxID >= vocabSize {
		sglangError(w, 400, "BadRequestError", fmt.Sprintf("The input_ids contains values greater than the vocab size (%d).", vocabSize))
		return
	}
	maxLen := s.st.maxLen
	maxTokens := req.requestedTokens(chat, maxLen-prompt-1) // max_new_tokens None: up to the context
	if req.MaxTokens != nil && *req.MaxTokens <= 0 && !chat {
		sglangError(w, 400, "Bad Request", "1 validation error for CompletionRequest\nmax_tokens\n  Value error, max_tokens must be positive")
		return
	}
	if prompt >= maxLen {
		sglangError(w, 400, "BadRequestError", fmt.Sprintf("The input (%d tokens) is longer than the model's context length (%d tokens).", prompt, maxLen))
		return
	}
	if maxTokens < 1 {
		maxTokens = 1
	}
	if prompt+maxTokens >= maxLen {
		sglangError(w, 400, "BadRequestError", fmt.Sprintf("Requested token count exceeds the model's maximum context length of %d tokens. You requested a total of %d tokens: %d tokens from the input messages and %d tokens for the completion. Please reduce the number of tokens in the input messages or the completion to fit within the limit.",
			maxLen, prompt+maxTokens, prompt, maxTokens))
		return
	}
	// The scheduler clips max_new_tokens to what the pool can hold
	// (handle_generate_request: max_req_len − input − 1); the request ends
	// there by length, without an error.
	if clip := maxReqInputLen(s.st) - prompt - 1; clip >= 1 && maxTokens > clip {
		maxTokens = clip
	}
	if s.simulatedError() {
		s.log.http("sim: simulated server error (--sim-error-rate %g)", s.c.core.ErrorRate)
		sglangError(w, 500, "InternalServerError", "Internal server error: simulated server error (--sim-error-rate)")
		return
	}
	// The model is the vLLM imitation's: it stops at a seeded EOS unless
	// ignore_eos, never before min_tokens (SGLang's min_new_tokens).
	er, eng, id := s.admit(req, chat, digest, prompt, maxTokens, hash, chain)
	defer s.track(id)()
	eng.submit(er)
	o := &sglangOutput{s: s, eng: eng, er: er, r: r, arrived: arrived, prompt: prompt}
	if req.Stream {
		includeUsage, continuous := s.c.defaultUsage, false
		if so := req.StreamOptions; so != nil {
			includeUsage = so.IncludeUsage || s.c.defaultUsage
			continuous = so.ContinuousUsageStats && !s.c.core.NoContinuousUsage
		}
		c := &sglangChunker{chat: chat, id: id, created: time.Now().Unix(), model: model, prompt: prompt, continuous: continuous}
		s.stream(w, o, c, includeUsage)
		return
	}
	s.complete(w, o, chat, id, model)
}

// sglangOutput follows one request's outputs as the TokenizerManager
// does: it waits for tokens and feeds the tokenizer metrics.
type sglangOutput struct {
	s        *sglangServer
	eng      *engine
	er       *request
	r        *http.Request
	arrived  time.Time
	last     time.Time // the last output's arrival
	prompt   int
	got      int
	finished bool
}

// next waits for the request's next output and returns its new tokens;
// ok is false when the client left or the engine stopped (it is then
// aborted).
func (o *sglangOutput) next() (n int, ok bool) {
	for {
		select {
		case <-o.er.notify:
		case <-o.r.Context().Done():
			o.abort()
			return 0, false
		case <-o.eng.stopped:
			return 0, false
		}
		n = int(o.er.pending.Swap(0))
		if n == 0 {
			continue
		}
		now := time.Now()
		if o.got == 0 {
			o.s.tm.firstToken(now.Sub(o.arrived))
		} else {
			o.s.tm.tokens(now.Sub(o.last), n)
		}
		o.last = now
		o.got += n
		if o.got >= o.er.limit && !o.finished {
			o.finished = true
			o.s.tm.finished(o.prompt, o.got, max(int(o.er.cachedTokens.Load()), 0), now.Sub(o.arrived))
		}
		return n, true
	}
}

func (o *sglangOutput) abort() {
	o.s.abort(o.eng, o.er)
	o.s.tm.abortedOne()
}

// complete answers a non-streaming request once every token is generated.
func (s *sglangServer) complete(w http.ResponseWriter, o *sglangOutput, chat bool, id, model string) {
	for o.got < o.er.limit {
		if _, ok := o.next(); !ok {
			if o.r.Context().Err() == nil {
				sglangError(w, 500, "InternalServerError", "server shutting down")
			}
			return
		}
	}
	text := strings.Repeat(genText, visibleTokens(o.er, o.got))
	var logprobs any
	if o.er.ask.on {
		toks := greedyOutput(s.c.core, o.er.hash, visibleTokens(o.er, o.got), o.er.ask.topK)
		text = greedyText(toks)
		if chat {
			logprobs = chatLogprobs(toks, o.er.ask.topK)
		} else {
			logprobs = completionLogprobs(toks, o.er.ask.topK)
		}
	}
	finish, matched := sglangFinish(o.er, o.got)
	usage := map[string]any{"prompt_tokens": o.prompt, "total_tokens": o.prompt + o.got, "completion_tokens": o.got,
		"prompt_tokens_details": nil, "reasoning_tokens": 0}
	var choice map[string]any
	object := "text_completion"
	if chat {
		object = "chat.completion"
		choice = map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": text, "reasoning_content": nil, "tool_calls": nil},
			"logprobs": logprobs, "finish_reason": finish, "matched_stop": matched}
	} else {
		choice = map[string]any{"index": 0, "text": text, "logprobs": logprobs, "finish_reason": finish, "matched_stop": matched}
	}
	writeJSON(w, 200, map[string]any{"id": id, "object": object, "created": time.Now().Unix(), "model": model,
		"choices": []any{choice}, "usage": usage, "metadata": nil})
}

// stream writes the request's tokens as SGLang's SSE chunks. The response
// status waits for the first output (_handle_streaming_request awaits the
// generator's first item before the StreamingResponse exists).
func (s *sglangServer) stream(w http.ResponseWriter, o *sglangOutput, c *sglangChunker, includeUsage bool) {
	flusher, _ := w.(http.Flusher)
	cfg := s.c.core
	buf := make([]byte, 0, 4096)
	sent, chunks := 0, 0
	for sent < o.er.limit {
		n, ok := o.next()
		if !ok {
			return
		}
		buf = buf[:0]
		if sent == 0 {
			w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
			w.WriteHeader(200)
			if c.chat {
				buf = c.role(buf)
			}
		}
		per := n
		if cfg.OneTokenChunks {
			per = 1
		}
		for n > 0 {
			k := min(per, n)
			if sent < o.er.reasoning {
				k = min(k, o.er.reasoning-sent) // the reasoning ends at a chunk's end
			}
			if s.streamFault(w, flusher, buf, chunks, sglangMidstreamError, o.r.Context().Done(), o.abort) {
				return
			}
			sent += k
			n -= k
			chunks++
			buf = c.content(buf, k, sent, o.er)
		}
		if sent == o.er.limit {
			if includeUsage {
				buf = c.final(buf, sent)
			}
			buf = append(buf, doneChunk...)
		}
		if !s.flush(w, flusher, buf) {
			o.abort()
			return
		}
	}
}

// sglangMidstreamError is --sim-midstream-error-after's line in SGLang's
// form (create_streaming_error_response): the flat ErrorResponse under
// "error", as json.dumps writes it.
const sglangMidstreamError = `data: {"error": {"object": "error", "message": "simulated mid-stream error (--sim-midstream-error-after)", "type": "InternalServerError", "param": null, "code": 500}}` + "\n\n"

// sglangChunker formats one request's chunks as SGLang's pydantic models
// dump them: every field, "usage": null unless continuous usage is on.
type sglangChunker struct {
	chat       bool
	id         string
	created    int64
	model      string
	prompt     int
	continuous bool
}

func (c *sglangChunker) head(b []byte) []byte {
	b = append(b, `data: {"id":`...)
	b = appendJSONString(b, c.id)
	if c.chat {
		b = append(b, `,"object":"chat.completion.chunk","created":`...)
	} else {
		b = append(b, `,"object":"text_completion","created":`...)
	}
	b = strconv.AppendInt(b, c.created, 10)
	b = append(b, `,"model":`...)
	b = appendJSONString(b, c.model)
	return append(b, `,"choices":[`...)
}

// usage appends the UsageInfo of completion tokens so far; final drops
// the null prompt_tokens_details (model_dump_json(exclude_none=True)).
func (c *sglangChunker) usage(b []byte, completion int, final bool) []byte {
	b = append(b, `"usage":{"prompt_tokens":`...)
	b = strconv.AppendInt(b, int64(c.prompt), 10)
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, int64(c.prompt+completion), 10)
	b = append(b, `,"completion_tokens":`...)
	b = strconv.AppendInt(b, int64(completion), 10)
	if !final {
		b = append(b, `,"prompt_tokens_details":null`...)
	}
	return append(b, `,"reasoning_tokens":0}`...)
}

// role appends the chat role chunk SGLang sends with the first output.
func (c *sglangChunker) role(b []byte) []byte {
	b = c.head(b)
	b = append(b, `{"index":0,"delta":{"role":"assistant","content":"","reasoning_content":null,"tool_calls":null},"logprobs":null,"finish_reason":null,"matched_stop":null}],"usage":null}`+"\n\n"...)
	return b
}

// content appends a chunk of n of er's tokens; total counts the
// completion tokens so far. A chat chunk within er's reasoning carries
// its text in "reasoning_content", as SGLang's serving_chat.py sends a
// reasoning parser's output (DeltaMessage(reasoning_content=…),
// python/sglang/srt/entrypoints/openai/serving_chat.py).
func (c *sglangChunker) content(b []byte, n, total int, er *request) []byte {
	finish, matched := sglangFinish(er, total)
	if finish == "stop" {
		n-- // the EOS token has no text
	}
	b = c.head(b)
	reasoning := c.chat && total <= er.reasoning
	switch {
	case reasoning:
		b = append(b, `{"index":0,"delta":{"role":null,"content":null,"reasoning_content":"`...)
	case c.chat:
		b = append(b, `{"index":0,"delta":{"role":null,"content":"`...)
	default:
		b = append(b, `{"index":0,"text":"`...)
	}
	for range n {
		b = append(b, genText...)
	}
	switch {
	case reasoning:
		b = append(b, `","tool_calls":null},"logprobs":null,"finish_reason":`...)
	case c.chat:
		b = append(b, `","reasoning_content":null,"tool_calls":null},"logprobs":null,"finish_reason":`...)
	default:
		b = append(b, `","logprobs":null,"finish_reason":`...)
	}
	if finish == "" {
		b = append(b, `null,"matched_stop":null}],`...)
	} else {
		b = append(b, `"`+finish+`","matched_stop":`...)
		if matched == nil {
			b = append(b, `null`...)
		} else {
			b = strconv.AppendInt(b, int64(matched.(int)), 10)
		}
		b = append(b, `}],`...)
	}
	if c.continuous {
		b = c.usage(b, total, false)
	} else {
		b = append(b, `"usage":null`...)
	}
	return append(b, "}\n\n"...)
}

// final appends the usage chunk include_usage asks for.
func (c *sglangChunker) final(b []byte, total int) []byte {
	b = c.head(b)
	b = append(b, "],"...)
	b = c.usage(b, total, true)
	return append(b, "}\n\n"...)
}

// sglangEOS is the token the simulated model ends on (Qwen's <|im_end|>):
// SGLang reports a stop on EOS with the token as matched_stop.
const sglangEOS = 151645

// sglangFinish is finish_reason and matched_stop after sent of er's
// tokens: none before the last; "stop" with the EOS token when it ended
// there, else "length" (matched_stop null).
func sglangFinish(er *request, sent int) (reason string, matched any) {
	switch finishReason(er, sent) {
	case "stop":
		return "stop", sglangEOS
	case "length":
		return "length", nil
	}
	return "", nil
}
