package sim

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"maps"
	"math"
	mrand "math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// server is the HTTP side: vLLM's OpenAI-compatible routes over an engine.
type server struct {
	cfg    *Config
	engs   []*engine // one per data-parallel rank
	record *recorder // --sim-record; nil = off
	// fingerprint is the system_fingerprint of every answer.
	fingerprint string
	adm         *admission
	maxLen      int
	version     string
	info        metricsInfo
	bodies      chan *bytes.Buffer
	log         *logger
	errorRNG    *mrand.Rand
	rngMu       sync.Mutex
	// preflighted, when set, runs between admission's two checks of a
	// request (tests: a request admitted meanwhile fills the queue).
	preflighted func()
}

func (s *server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("/ping", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("GET /version", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]string{"version": s.version})
	})
	mux.HandleFunc("GET /v1/models", s.models)
	mux.HandleFunc("POST /v1/completions", func(w http.ResponseWriter, r *http.Request) { s.generate(w, r, false) })
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) { s.generate(w, r, true) })
	mux.HandleFunc("POST /tokenize", s.tokenize)
	mux.HandleFunc("POST /detokenize", s.detokenize)
	mux.HandleFunc("GET /metrics", s.metrics)
	// vLLM registers its development routes only with VLLM_SERVER_DEV_MODE=1;
	// without it the path is unknown (404).
	if s.cfg.DevMode {
		mux.HandleFunc("POST /reset_prefix_cache", func(w http.ResponseWriter, r *http.Request) {
			for _, e := range s.engs {
				e.resetPrefixCache()
			}
			w.WriteHeader(200)
		})
		// Sleep mode's routes (vllm/entrypoints/serve/dev/sleep/api_router.py):
		// POST /sleep?level=N (1 by default), POST /wake_up, GET
		// /is_sleeping → {"is_sleeping": bool}. /health still answers 200
		// while the engines sleep.
		mux.HandleFunc("POST /sleep", func(w http.ResponseWriter, r *http.Request) {
			level := 1
			if v := r.URL.Query().Get("level"); v != "" {
				n, err := strconv.Atoi(v)
				if err != nil || n < 1 || n > 2 {
					writeJSON(w, http.StatusBadRequest, map[string]string{"error": "level must be 1 or 2, not " + strconv.Quote(v)})
					return
				}
				level = n
			}
			for _, e := range s.engs {
				e.sleep(level)
			}
			w.WriteHeader(200)
		})
		mux.HandleFunc("POST /wake_up", func(w http.ResponseWriter, r *http.Request) {
			for _, e := range s.engs {
				e.wakeUp()
			}
			w.WriteHeader(200)
		})
		mux.HandleFunc("GET /is_sleeping", func(w http.ResponseWriter, r *http.Request) {
			asleep := false
			for _, e := range s.engs {
				asleep = asleep || e.asleep()
			}
			writeJSON(w, 200, map[string]bool{"is_sleeping": asleep})
		})
	}
	return s.auth(mux)
}

// auth checks the API key on /v1, /v2 and /inference paths only, as vLLM does.
func (s *server) auth(next http.Handler) http.Handler {
	if len(s.cfg.APIKeys) == 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		if strings.HasPrefix(p, "/v1") || strings.HasPrefix(p, "/v2") || strings.HasPrefix(p, "/inference") {
			got := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
			ok := false
			for _, k := range s.cfg.APIKeys {
				ok = ok || got == k
			}
			if !ok {
				writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "Unauthorized"})
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func (s *server) models(w http.ResponseWriter, r *http.Request) {
	type perm struct {
		ID                 string  `json:"id"`
		Object             string  `json:"object"`
		Created            int64   `json:"created"`
		AllowCreateEngine  bool    `json:"allow_create_engine"`
		AllowSampling      bool    `json:"allow_sampling"`
		AllowLogprobs      bool    `json:"allow_logprobs"`
		AllowSearchIndices bool    `json:"allow_search_indices"`
		AllowView          bool    `json:"allow_view"`
		AllowFineTuning    bool    `json:"allow_fine_tuning"`
		Organization       string  `json:"organization"`
		Group              *string `json:"group"`
		IsBlocking         bool    `json:"is_blocking"`
	}
	type card struct {
		ID          string  `json:"id"`
		Object      string  `json:"object"`
		Created     int64   `json:"created"`
		OwnedBy     string  `json:"owned_by"`
		Root        string  `json:"root"`
		Parent      *string `json:"parent"`
		MaxModelLen int     `json:"max_model_len"`
		Permission  []perm  `json:"permission"`
	}
	var data []card
	for _, n := range s.cfg.ServedNames {
		data = append(data, card{ID: n, Object: "model", Created: time.Now().Unix(), OwnedBy: "vllm", Root: s.cfg.Model,
			MaxModelLen: s.maxLen, Permission: []perm{{ID: "modelperm-" + newID(), Object: "model_permission",
				Created: time.Now().Unix(), AllowSampling: true, AllowLogprobs: true, AllowView: true, Organization: "*"}}})
	}
	writeJSON(w, 200, map[string]any{"object": "list", "data": data})
}

// apiError writes vLLM's error body.
func apiError(w http.ResponseWriter, code int, typ, param, msg string) {
	var p any
	if param != "" {
		p = param
	}
	writeJSON(w, code, map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": p, "code": code}})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

// genRequest is the part of a completions or chat request the simulator reads;
// other fields are ignored, as vLLM ignores unknown fields.
type genRequest struct {
	// textHash is the prompt's hash before any cache_salt: what the
	// simulated model's output depends on (promptTokens sets it).
	textHash            uint64
	Model               string        `json:"model"`
	Prompt              promptField   `json:"prompt"`
	Messages            []chatMessage `json:"messages"`
	MaxTokens           *int          `json:"max_tokens"`
	MaxCompletionTokens *int          `json:"max_completion_tokens"`
	MinTokens           *int          `json:"min_tokens"`
	IgnoreEOS           *bool         `json:"ignore_eos"`
	Stream              bool          `json:"stream"`
	CacheSalt           string        `json:"cache_salt"`
	StreamOptions       *struct {
		IncludeUsage         bool `json:"include_usage"`
		ContinuousUsageStats bool `json:"continuous_usage_stats"`
	} `json:"stream_options"`
	AddGenerationPrompt *bool                      `json:"add_generation_prompt"`
	ChatTemplateKwargs  map[string]json.RawMessage `json:"chat_template_kwargs"`
	samplingFields
}

// samplingFields are the request's sampling parameters, kept as sent: the
// simulator does not sample, but --sim-record reports them and it rejects
// the ones vLLM rejects (rejectSampling).
type samplingFields struct {
	Temperature       json.RawMessage `json:"temperature"`
	TopP              json.RawMessage `json:"top_p"`
	TopK              json.RawMessage `json:"top_k"`
	MinP              json.RawMessage `json:"min_p"`
	RepetitionPenalty json.RawMessage `json:"repetition_penalty"`
	PresencePenalty   json.RawMessage `json:"presence_penalty"`
	FrequencyPenalty  json.RawMessage `json:"frequency_penalty"`
	Seed              json.RawMessage `json:"seed"`
	Stop              json.RawMessage `json:"stop"`
	StopTokenIDs      json.RawMessage `json:"stop_token_ids"`
	N                 json.RawMessage `json:"n"`
	Logprobs          json.RawMessage `json:"logprobs"`
	TopLogprobs       json.RawMessage `json:"top_logprobs"`
	LogitBias         json.RawMessage `json:"logit_bias"`
}

// present returns the sampling fields the request set, by JSON name.
func (f *samplingFields) present() map[string]json.RawMessage {
	m := map[string]json.RawMessage{}
	for _, kv := range []struct {
		name string
		raw  json.RawMessage
	}{
		{"temperature", f.Temperature}, {"top_p", f.TopP}, {"top_k", f.TopK}, {"min_p", f.MinP},
		{"repetition_penalty", f.RepetitionPenalty}, {"presence_penalty", f.PresencePenalty},
		{"frequency_penalty", f.FrequencyPenalty}, {"seed", f.Seed}, {"stop", f.Stop},
		{"stop_token_ids", f.StopTokenIDs}, {"n", f.N}, {"logprobs", f.Logprobs}, {"top_logprobs", f.TopLogprobs},
		{"logit_bias", f.LogitBias},
	} {
		if kv.raw != nil {
			m[kv.name] = kv.raw
		}
	}
	return m
}

// samplingDefaults are the server's default sampling values: vLLM's
// ModelConfig.get_diff_sampling_param() keeps only these fields of the
// model's generation_config.json (and of --override-generation-config).
var samplingDefaultFields = []string{"repetition_penalty", "temperature", "top_k", "top_p", "min_p", "max_new_tokens"}

// samplingEps is vLLM's _SAMPLING_EPS.
const samplingEps = 1e-5

// rejectSampling answers, as vLLM does, a request whose sampling vLLM
// rejects: the message, the parameter it names ("" = null) and true; or
// false. The request's value wins, else the server default
// (CompletionRequest.to_sampling_params: "user -> server default -> OpenAI
// default"). The rules are SamplingParams._verify_args (temperature
// finite and in [0, 2], vLLM PR #44965) and _validate_spec_decode (min_p >
// 1e-5 or any logit_bias under speculative decoding, PR #31982); a
// temperature below 1e-5 is greedy and resets min_p first, as
// SamplingParams.__post_init__ does. docs/vllm.md#sampling-parameters.
func (f *samplingFields) rejectSampling(defaults map[string]float64, speculative bool) (msg, param string, rejected bool) {
	num := func(raw json.RawMessage, name string, def float64) float64 {
		if v, ok := defaults[name]; ok {
			def = v
		}
		if raw == nil || string(raw) == "null" {
			return def
		}
		v := def
		json.Unmarshal(raw, &v)
		return v
	}
	temp := num(f.Temperature, "temperature", 1)
	switch {
	case math.IsNaN(temp) || math.IsInf(temp, 0):
		return fmt.Sprintf("temperature must be a finite number, got %s. (parameter=temperature, value=%[1]s)", pyFloat(temp)), "temperature", true
	case temp < 0:
		return fmt.Sprintf("temperature must be non-negative, got %s. (parameter=temperature, value=%[1]s)", pyFloat(temp)), "temperature", true
	case temp > 2:
		return fmt.Sprintf("temperature must be in [0, 2], got %s. (parameter=temperature, value=%[1]s)", pyFloat(temp)), "temperature", true
	}
	if !speculative {
		return "", "", false
	}
	minP := num(f.MinP, "min_p", 0)
	if temp < samplingEps {
		minP = 0
	}
	var bias map[string]json.RawMessage
	if f.LogitBias != nil {
		json.Unmarshal(f.LogitBias, &bias)
	}
	if minP > samplingEps || len(bias) > 0 {
		return "The min_p and logit_bias sampling parameters are not yet supported with speculative decoding.", "", true
	}
	return "", "", false
}

// pyFloat formats f as Python's str(float) does for the values vLLM's
// messages print: 2.5, 3.0, -1.0, inf, nan.
func pyFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eEn") {
		s += ".0"
	}
	return s
}

// parseSlots bounds how many request bodies are held and parsed at once,
// and bodies holds their reusable buffers: 128 simultaneous 251K-token
// prompts (2 MB of JSON each) then cost a few buffers, not 128.
const parseSlots = 4

// parseBody reads and decodes a request body into v inside a parse slot.
func (s *server) parseBody(r *http.Request, v any) error {
	var buf *bytes.Buffer
	select {
	case buf = <-s.bodies:
	case <-r.Context().Done():
		return r.Context().Err()
	}
	defer func() { s.bodies <- buf }()
	buf.Reset()
	if n := r.ContentLength; n > 0 && n < 256<<20 {
		buf.Grow(int(n) + bytes.MinRead) // ReadFrom wants MinRead free at EOF
	}
	if _, err := buf.ReadFrom(http.MaxBytesReader(nil, r.Body, 256<<20)); err != nil {
		return err
	}
	err := json.Unmarshal(buf.Bytes(), v)
	if buf.Cap() > 16<<20 {
		*buf = bytes.Buffer{} // do not keep an outsized buffer
	}
	return err
}

// readGenRequest parses a generation request's body, its prompt's digest
// taken as it is read when --sim-record is on (digest nil otherwise).
func (s *server) readGenRequest(r *http.Request) (req *genRequest, digest *promptDigest, err error) {
	req = &genRequest{}
	if s.record != nil {
		digest = newPromptDigest()
		req.Prompt.digest = digest
	}
	return req, digest, s.parseBody(r, req)
}

// promptTokens is the request's prompt as both imitations count it, once
// the request is known to have one: the chat template's tokens for chat
// (added to the digest), else the prompt's; its hash and KV blocks, salted
// by cache_salt.
func (req *genRequest) promptTokens(chat bool, digest *promptDigest) (prompt int, hash uint64, chain *blockChain) {
	chain = &req.Prompt.chain
	if chat {
		text := chatTemplate(req.Messages, req.AddGenerationPrompt == nil || *req.AddGenerationPrompt, req.ChatTemplateKwargs)
		chain = &blockChain{}
		prompt, hash = textTokens(text, chain)
		if digest != nil {
			eachToken(text, digest.add)
		}
	} else {
		prompt, hash = req.Prompt.tokens, req.Prompt.hash
	}
	req.textHash = hash
	if req.CacheSalt != "" {
		hash = hashString(hash^0x5bd1e995, req.CacheSalt)
		saltChain(chain.blocks, req.CacheSalt)
	}
	return prompt, hash, chain
}

// requestedTokens is the output the request asks for: max_completion_tokens
// (chat) or max_tokens, else chatDefault for chat (the engine's: up to the
// context), else 16 (the OpenAI completions default).
func (req *genRequest) requestedTokens(chat bool, chatDefault int) int {
	switch {
	case chat && req.MaxCompletionTokens != nil:
		return *req.MaxCompletionTokens
	case req.MaxTokens != nil:
		return *req.MaxTokens
	case chat:
		return chatDefault
	}
	return 16
}

// admit makes the admitted request's engine request, picks its engine
// (data-parallel balancing), records it for --sim-record and names it: the
// caller submits it.
func (s *server) admit(req *genRequest, chat bool, digest *promptDigest, prompt, maxTokens int, hash uint64, chain *blockChain) (er *request, eng *engine, id string) {
	er = s.engineRequest(req, prompt, maxTokens, hash, chain, chat && s.cfg.ReasoningParser != "")
	eng = s.pickEngine()
	s.recordRequest(chat, eng, prompt, digest, req)
	id = "cmpl-" + newID()
	if chat {
		id = "chatcmpl-" + newID()
	}
	return er, eng, id
}

// generate serves /v1/completions and /v1/chat/completions.
func (s *server) generate(w http.ResponseWriter, r *http.Request, chat bool) {
	req, digest, err := s.readGenRequest(r)
	if err != nil {
		apiError(w, 400, "BadRequestError", "", "invalid request body: "+err.Error())
		return
	}
	model := s.cfg.ServedNames[0]
	if req.Model != "" {
		found := false
		for _, n := range s.cfg.ServedNames {
			found = found || n == req.Model
		}
		if !found {
			apiError(w, 404, "NotFoundError", "model", fmt.Sprintf("The model `%s` does not exist. Valid aliases: %s.", req.Model, strings.Join(s.cfg.ServedNames, ", ")))
			return
		}
		model = req.Model
	}
	switch {
	case chat && len(req.Messages) == 0:
		apiError(w, 400, "BadRequestError", "messages", "messages must be a non-empty list")
		return
	case !chat && !req.Prompt.set:
		apiError(w, 400, "BadRequestError", "prompt", "Either prompt or prompt_embeds must be provided and non-empty.")
		return
	}
	// Admission control's first check, before the response starts
	// (docs/vllm.md#admission-control): a request refused here is HTTP 503,
	// streaming or not.
	if reason := s.adm.preflight(); reason != "" {
		refuseHTTP(w, reason)
		return
	}
	prompt, hash, chain := req.promptTokens(chat, digest)
	if prompt == 0 {
		apiError(w, 400, "BadRequestError", "prompt", "Prompt cannot be empty")
		return
	}
	if req.Prompt.maxID >= vocabSize {
		apiError(w, 400, "BadRequestError", "", fmt.Sprintf("Token id %d is out of vocabulary", req.Prompt.maxID))
		return
	}
	maxTokens := req.requestedTokens(chat, s.maxLen-prompt)
	if msg, refused := s.lengthCheck(prompt, maxTokens); refused {
		apiError(w, 400, "BadRequestError", "input_tokens", msg)
		return
	}
	// vLLM 0.32 shortens the output to the room the prompt leaves
	// (get_max_tokens, entrypoints/serve/utils/api_utils.py): a prompt of
	// exactly max_model_len leaves none, which max_tokens' check refuses.
	maxTokens = min(maxTokens, s.maxLen-prompt)
	if maxTokens < 1 {
		apiError(w, 400, "BadRequestError", "max_tokens", fmt.Sprintf("max_tokens must be at least 1, got %d. (parameter=max_tokens, value=%[1]d)", maxTokens))
		return
	}
	if req.MinTokens != nil && *req.MinTokens > maxTokens {
		apiError(w, 400, "BadRequestError", "",
			fmt.Sprintf("min_tokens must be less than or equal to max_tokens=%d, got %d.", maxTokens, *req.MinTokens))
		return
	}
	if msg, param, bad := req.rejectSampling(s.cfg.GenerationDefaults, s.info.numSpeculative > 0); bad {
		apiError(w, 400, "BadRequestError", param, msg)
		return
	}
	if s.simulatedError() {
		s.log.printf("APIServer", "ERROR", "serving.py:1", "simulated server error (--sim-error-rate %g)", s.cfg.ErrorRate)
		apiError(w, 500, "InternalServerError", "", "simulated server error (--sim-error-rate)")
		return
	}
	if s.preflighted != nil {
		s.preflighted()
	}
	// The second check, as the request is added to the engine: a
	// streaming request refused here has had its 200, and gets the error
	// event instead of tokens.
	h, reason := s.adm.add(prompt)
	if reason != "" {
		if req.Stream {
			refuseInStream(w, reason)
		} else {
			refuseHTTP(w, reason)
		}
		return
	}
	defer h.finish()
	er, eng, id := s.admit(req, chat, digest, prompt, maxTokens, hash, chain)
	eng.submit(er)
	if req.Stream {
		includeUsage := req.StreamOptions != nil && req.StreamOptions.IncludeUsage
		continuous := includeUsage && req.StreamOptions.ContinuousUsageStats && !s.cfg.NoContinuousUsage
		c := newChunker(chat, id, time.Now().Unix(), model, prompt, continuous).withFingerprint(s.fingerprint)
		c.details = s.cfg.PromptTokensDetails
		s.stream(w, r, eng, er, c, includeUsage, h)
		return
	}
	s.complete(w, r, eng, er, chat, id, model, prompt, h)
}

// lengthCheck is the renderer's check of a prompt's length against
// max_model_len (vllm/renderers/params.py, _token_len_check): the message
// of the 400 it answers and true, or false. vLLM 0.32 refuses only a
// prompt longer than max_model_len itself; builds before it
// (--sim-refuse-over-length) also a prompt whose max_tokens does not fit
// beside it. "at least" qualifies a count one over the limit, where the
// tokenizer may have cut the prompt (vLLM words it so for token IDs too).
func (s *server) lengthCheck(prompt, maxTokens int) (string, bool) {
	qualifier := func(limit int) string {
		if prompt == limit+1 {
			return "at least "
		}
		return ""
	}
	if s.cfg.RefuseOverLength {
		if prompt+maxTokens <= s.maxLen {
			return "", false
		}
		q := qualifier(s.maxLen - maxTokens)
		return fmt.Sprintf("This model's maximum context length is %d tokens. However, you requested %d output tokens and your prompt contains %s%d input tokens, for a total of %[3]s%[5]d tokens. Please reduce the length of the input prompt or the number of requested output tokens. (parameter=input_tokens, value=%[4]d)",
			s.maxLen, maxTokens, q, prompt, prompt+maxTokens), true
	}
	if prompt <= s.maxLen {
		return "", false
	}
	return fmt.Sprintf("This model's maximum context length is %d tokens. However, your prompt contains %s%d input tokens, which exceeds this limit even without any output tokens. Please reduce the length of the input prompt. (parameter=input_tokens, value=%[3]d)",
		s.maxLen, qualifier(s.maxLen), prompt), true
}

// finishReason is the finish_reason of a response that has sent sent of
// er's tokens: "" until the last, then "stop" when it ended at its EOS,
// else "length".
func finishReason(er *request, sent int) string {
	switch {
	case sent < er.limit:
		return ""
	case er.eos:
		return "stop"
	}
	return "length"
}

// visibleTokens is how many of the first sent tokens render as text: an
// EOS token does not (vLLM skips special tokens when detokenizing).
func visibleTokens(er *request, sent int) int {
	if er.eos && sent == er.limit {
		return sent - 1
	}
	return sent
}

// seed is the request's seed field as an integer (0 when absent or not
// an integer).
func (f *samplingFields) seed() uint64 {
	var v int64
	if f.Seed != nil && json.Unmarshal(f.Seed, &v) == nil {
		return uint64(v)
	}
	return 0
}

// pickEngine chooses the data-parallel engine for a new request: the
// lowest load score, the lowest rank on a tie (vLLM's DP load balancer).
func (s *server) pickEngine() *engine {
	best, bestLoad := s.engs[0], s.engs[0].load()
	for _, e := range s.engs[1:] {
		if l := e.load(); l < bestLoad {
			best, bestLoad = e, l
		}
	}
	return best
}

// abort tells the engine the client is gone.
func (s *server) abort(eng *engine, er *request) {
	er.aborted.Store(true)
	eng.poke()
}

// stream writes er's tokens as vLLM's SSE chunks as they are generated. It
// never blocks the engine: tokens generated while a write is in flight are
// merged into the next chunk (vLLM's RequestOutputCollector does the same).
// Its admission h leaves the prefill count at the first tokens and the
// unfinished count before the last chunk is written.
func (s *server) stream(w http.ResponseWriter, r *http.Request, eng *engine, er *request, c *chunker, includeUsage bool, h *admitted) {
	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.WriteHeader(200)
	if flusher != nil {
		flusher.Flush()
	}
	buf := make([]byte, 0, 4096)
	sent, chunks := 0, 0
	cfg := s.cfg
	for sent < er.limit {
		select {
		case <-er.notify:
		case <-r.Context().Done():
			s.abort(eng, er)
			return
		case <-eng.stopped:
			return
		}
		n := int(er.pending.Swap(0))
		if n == 0 {
			continue
		}
		h.firstOutput()
		buf = buf[:0]
		if c.chat && sent == 0 {
			buf = c.role(buf)
		}
		per := n
		if cfg.OneTokenChunks {
			per = 1
		}
		for n > 0 {
			k := min(per, n)
			if sent < er.reasoning {
				k = min(k, er.reasoning-sent) // the reasoning ends at a chunk's end
			}
			errLine := `data: {"error":{"message":"simulated mid-stream error (--sim-midstream-error-after)","type":"InternalServerError","param":null,"code":500}}` + "\n\n"
			if cfg.FlatErrors {
				// vLLM builds before the nested shape sent the ErrorResponse itself.
				errLine = `data: {"object":"error","message":"simulated mid-stream error (--sim-midstream-error-after)","type":"InternalServerError","param":null,"code":500}` + "\n\n"
			}
			if s.streamFault(w, flusher, buf, chunks, errLine, r.Context().Done(), func() { s.abort(eng, er) }) {
				return
			}
			sent += k
			n -= k
			chunks++
			buf = c.content(buf, k, sent, finishReason(er, sent), sent == er.limit && !includeUsage, sent <= er.reasoning)
		}
		if sent == er.limit {
			h.finish()
			if includeUsage {
				buf = c.final(buf, sent, int(er.cachedTokens.Load()))
			}
			buf = append(buf, doneChunk...)
		}
		if !s.flush(w, flusher, buf) {
			s.abort(eng, er)
			return
		}
	}
}

// streamFault applies the stream fault due before chunk number chunks,
// then aborts the request (abort) and reports true: --sim-stall-after
// flushes what is pending and holds the connection open, sending nothing,
// until the client leaves (done); --sim-midstream-error-after sends
// errLine and [DONE]; --sim-truncate-after flushes and ends without
// [DONE]. It reports false when none is due.
func (s *server) streamFault(w http.ResponseWriter, f http.Flusher, buf []byte, chunks int, errLine string, done <-chan struct{}, abort func()) bool {
	cfg := s.cfg
	switch {
	case cfg.StallAfter > 0 && chunks >= cfg.StallAfter:
		s.flush(w, f, buf)
		<-done
	case cfg.MidstreamErrAfter > 0 && chunks >= cfg.MidstreamErrAfter:
		buf = append(buf, errLine...)
		buf = append(buf, doneChunk...)
		s.flush(w, f, buf)
	case cfg.TruncateAfter > 0 && chunks >= cfg.TruncateAfter:
		s.flush(w, f, buf)
	default:
		return false
	}
	abort()
	return true
}

// flush writes b (if any) and flushes it to the client; it reports false
// when the client is gone.
func (s *server) flush(w http.ResponseWriter, f http.Flusher, b []byte) bool {
	if len(b) > 0 {
		if _, err := w.Write(b); err != nil {
			return false
		}
	}
	if f != nil {
		f.Flush()
	}
	return true
}

// complete answers a non-streaming request once every token is generated,
// its admission h done before the answer is written.
func (s *server) complete(w http.ResponseWriter, r *http.Request, eng *engine, er *request, chat bool, id, model string, prompt int, h *admitted) {
	got := 0
	for got < er.limit {
		select {
		case <-er.notify:
			got += int(er.pending.Swap(0))
			if got > 0 {
				h.firstOutput()
			}
		case <-r.Context().Done():
			s.abort(eng, er)
			return
		case <-eng.stopped:
			apiError(w, 500, "InternalServerError", "", "server shutting down")
			return
		}
	}
	h.finish()
	text := strings.Repeat(genText, visibleTokens(er, got))
	var logprobs any
	if er.ask.on {
		toks := greedyOutput(s.cfg, er.hash, visibleTokens(er, got), er.ask.topK)
		text = greedyText(toks)
		if chat {
			logprobs = chatLogprobs(toks, er.ask.topK)
		} else {
			logprobs = completionLogprobs(toks, er.ask.topK)
		}
	}
	var details any
	if s.cfg.PromptTokensDetails {
		details = map[string]any{"cached_tokens": er.cachedTokens.Load()}
	}
	usage := map[string]any{"prompt_tokens": prompt, "total_tokens": prompt + got, "completion_tokens": got, "prompt_tokens_details": details,
		"completion_tokens_details": nil}
	finish := finishReason(er, got)
	// vLLM 0.32.0's keys (testdata/surface/vllm-0.32.0-cpu.json): what the
	// simulator does not produce is null, as vLLM writes it.
	body := map[string]any{"id": id, "object": "text_completion", "created": time.Now().Unix(), "model": model, "usage": usage,
		"service_tier": nil, "system_fingerprint": s.fingerprint, "kv_transfer_params": nil, "ec_transfer_params": nil, "metrics": nil}
	choice := map[string]any{"index": 0, "logprobs": logprobs, "finish_reason": finish, "stop_reason": nil, "token_ids": nil, "routed_experts": nil}
	if chat {
		body["object"] = "chat.completion"
		maps.Copy(body, map[string]any{"prompt_logprobs": nil, "prompt_token_ids": nil, "prompt_text": nil})
		choice["message"] = map[string]any{"role": "assistant", "content": text, "refusal": nil, "annotations": nil, "audio": nil,
			"function_call": nil, "reasoning": nil}
	} else {
		maps.Copy(choice, map[string]any{"text": text, "prompt_logprobs": nil, "prompt_token_ids": nil})
	}
	body["choices"] = []any{choice}
	writeJSON(w, 200, body)
}

func (s *server) tokenize(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Prompt              *string                    `json:"prompt"`
		Messages            []chatMessage              `json:"messages"`
		AddGenerationPrompt *bool                      `json:"add_generation_prompt"`
		ChatTemplateKwargs  map[string]json.RawMessage `json:"chat_template_kwargs"`
		ReturnTokenStrs     bool                       `json:"return_token_strs"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		apiError(w, 400, "BadRequestError", "", "invalid request body: "+err.Error())
		return
	}
	var text string
	switch {
	case req.Prompt != nil:
		text = *req.Prompt
	case req.Messages != nil:
		text = chatTemplate(req.Messages, req.AddGenerationPrompt == nil || *req.AddGenerationPrompt, req.ChatTemplateKwargs)
	default:
		apiError(w, 400, "BadRequestError", "", "either prompt or messages is required")
		return
	}
	ids := tokenize(text)
	var strs []string
	if req.ReturnTokenStrs {
		for _, id := range ids {
			strs = append(strs, detokenize([]int{id}))
		}
	}
	writeJSON(w, 200, map[string]any{"count": len(ids), "max_model_len": s.maxLen, "tokens": ids, "token_strs": strs})
}

func (s *server) detokenize(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Tokens []int `json:"tokens"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		apiError(w, 400, "BadRequestError", "", "invalid request body: "+err.Error())
		return
	}
	writeJSON(w, 200, map[string]string{"prompt": detokenize(req.Tokens)})
}

func (s *server) metrics(w http.ResponseWriter, r *http.Request) {
	var b bytes.Buffer
	snaps := make([]stats, len(s.engs))
	for i, e := range s.engs {
		snaps[i] = e.snapshot()
	}
	writeMetrics(&b, s.info, snaps, s.adm.counts())
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	io.Copy(w, &b)
}

// systemFingerprint is the system_fingerprint of vLLM's answers in its
// default mode ("full", vllm/entrypoints/serve/utils/fingerprint.py):
// vllm-VERSION, tpN and dpN when above 1, and 8 hex digits of the
// configuration's hash (here an FNV hash of what the simulator was given).
func systemFingerprint(cfg *Config, version string) string {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s|%q|%d|%s|%d|%d|%v", cfg.Model, cfg.ServedNames, cfg.MaxModelLen, cfg.KVCacheDtype, cfg.TensorParallel, cfg.DataParallel, cfg.Speculative)
	parts := []string{"vllm-" + version}
	if cfg.TensorParallel > 1 {
		parts = append(parts, "tp"+strconv.Itoa(cfg.TensorParallel))
	}
	if cfg.DataParallel > 1 {
		parts = append(parts, "dp"+strconv.Itoa(cfg.DataParallel))
	}
	return strings.Join(append(parts, fmt.Sprintf("%016x", h.Sum64())[:8]), "-")
}

// newID returns 32 random hex digits, like vLLM's request ids.
func newID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// simulatedError draws whether this request fails with --sim-error-rate.
func (s *server) simulatedError() bool {
	if s.cfg.ErrorRate <= 0 {
		return false
	}
	s.rngMu.Lock()
	defer s.rngMu.Unlock()
	return s.errorRNG.Float64() < s.cfg.ErrorRate
}

// engineRequest is the engines' request of a generation request with its
// prompt (tokens, hash and block chain) and max_tokens: the model stops at
// a seeded EOS unless ignore_eos, never before min_tokens.
func (s *server) engineRequest(req *genRequest, prompt, maxTokens int, hash uint64, chain *blockChain, reasoning bool) *request {
	er := &request{promptTokens: prompt, maxTokens: maxTokens, hash: hash, chain: *chain, notify: make(chan struct{}, 1), ask: req.logprobsAsk()}
	er.chain.clip()
	er.cachedTokens.Store(-1)
	minTokens := 0
	if req.MinTokens != nil {
		minTokens = *req.MinTokens
	}
	ignoreEOS := req.IgnoreEOS != nil && *req.IgnoreEOS
	natural := naturalLength(hash, s.cfg.Seed, req.seed(), s.cfg.eosMean())
	if !reasoning {
		er.limit, er.eos = outputLimit(maxTokens, minTokens, ignoreEOS, natural)
		return er
	}
	// Of the prompt, not its cache_salt: a run's salt does not change how
	// long the model thinks.
	share := reasoningShare(req.textHash, s.cfg.Seed, req.seed(), s.cfg.reasoningShare())
	if ignoreEOS {
		er.limit, er.eos = outputLimit(maxTokens, minTokens, true, natural)
		er.reasoning = min(er.limit, int(math.Round(share*float64(er.limit))))
		return er
	}
	// The answer is the model's natural length; the reasoning before it
	// makes share of the whole.
	thought := maxTokens
	if share < 1 {
		thought = int(math.Round(float64(natural) * share / (1 - share)))
	}
	er.limit, er.eos = outputLimit(maxTokens, minTokens, false, min(thought+natural, maxTokens+1))
	er.reasoning = min(thought, er.limit)
	return er
}
