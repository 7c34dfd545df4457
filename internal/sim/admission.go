package sim

import (
	"net/http"
	"sync"
)

// This file is vLLM's admission control (vLLM 0.29 on; docs/vllm.md#admission-control):
// --max-num-queued-reqs caps the unfinished requests (waiting and running),
// --max-num-queued-tokens the prompt tokens of those still in prefill, and a
// request over either is refused with 503 Service Unavailable instead of
// queued (AsyncLLM.check_admission, vllm/v1/engine/async_llm.py), counted in
// vllm:admission_rejections_total by reason.

// Admission reasons, vLLM's ADMISSION_REASONS (v1/metrics/loggers.py): the
// reason label of vllm:admission_rejections_total, in its order.
const (
	reasonQueuedReqs   = "max_num_queued_reqs"
	reasonQueuedTokens = "max_num_queued_tokens"
)

var admissionReasons = []string{reasonQueuedReqs, reasonQueuedTokens}

// The messages of vLLM's QueueOverflowError and MaxQueuedTokensError
// (vllm/exceptions.py), by reason.
var admissionMessages = map[string]string{
	reasonQueuedReqs:   "The engine is currently busy and cannot accept new requests. Please try again later or on a different instance.",
	reasonQueuedTokens: "The engine has reached its prefill token backlog limit. Please try again later or on a different instance.",
}

// admission is the API server's admission state: its unfinished requests
// (OutputProcessor.request_states: registered when added, removed when the
// engine finished or aborted them) and the prompt tokens of those still in
// prefill (get_num_queued_tokens: a request's prompt_len until its first
// output), and the requests refused so far by reason.
type admission struct {
	// maxReqs and maxTokens are the limits; -1 where the flag is unset.
	maxReqs, maxTokens int

	mu         sync.Mutex
	unfinished int
	prefilling int
	rejected   map[string]int64
}

// newAdmission is the admission of cfg's limits.
func newAdmission(cfg *Config) *admission {
	a := &admission{maxReqs: -1, maxTokens: -1, rejected: map[string]int64{}}
	if cfg.MaxNumQueuedReqs != nil {
		a.maxReqs = *cfg.MaxNumQueuedReqs
	}
	if cfg.MaxNumQueuedTokens != nil {
		a.maxTokens = *cfg.MaxNumQueuedTokens
	}
	return a
}

// refusal is check_admission for one more request (n = 1: the simulator
// serves no n > 1) under a.mu: the reason it is refused, counted, or ""
// when it is admitted. The request cap is checked first, as vLLM does: a
// request over both is counted once, for max_num_queued_reqs.
func (a *admission) refusal() string {
	reason := ""
	switch {
	case a.maxReqs >= 0 && a.unfinished+1 > a.maxReqs:
		reason = reasonQueuedReqs
	case a.maxTokens >= 0 && a.prefilling >= a.maxTokens:
		reason = reasonQueuedTokens
	default:
		return ""
	}
	a.rejected[reason]++
	return reason
}

// preflight is the check the serving layer makes before a response starts
// (OpenAIServing._preflight): "" when the request may go on.
func (a *admission) preflight() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.refusal()
}

// add is the check as the request is added to the engine (AsyncLLM's
// _add_request) and, when it passes, its registration with prompt tokens
// in prefill: the request's handle, or the reason it was refused.
func (a *admission) add(prompt int) (*admitted, string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if reason := a.refusal(); reason != "" {
		return nil, reason
	}
	a.unfinished++
	a.prefilling += prompt
	return &admitted{a: a, prompt: prompt}, ""
}

// counts are the requests refused so far by reason, every reason present.
func (a *admission) counts() map[string]int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make(map[string]int64, len(admissionReasons))
	for _, r := range admissionReasons {
		out[r] = a.rejected[r]
	}
	return out
}

// admitted is one request registered with the admission: it leaves the
// prefill count at its first output and the unfinished count when it
// finished or was aborted. It belongs to the request's handler.
type admitted struct {
	a               *admission
	prompt          int
	prefilled, done bool
}

// firstOutput notes the request's first output: its prompt is no longer
// in prefill.
func (h *admitted) firstOutput() {
	if h == nil || h.prefilled {
		return
	}
	h.prefilled = true
	h.a.mu.Lock()
	h.a.prefilling -= h.prompt
	h.a.mu.Unlock()
}

// finish removes the request: before its last output reaches the client,
// as vLLM's OutputProcessor drops a finished request's state before the
// stream yields its last chunk, so that a client sending its next request
// on [DONE] finds the slot free.
func (h *admitted) finish() {
	if h == nil || h.done {
		return
	}
	h.firstOutput()
	h.done = true
	h.a.mu.Lock()
	h.a.unfinished--
	h.a.mu.Unlock()
}

// refuseHTTP answers a refused request HTTP 503 with vLLM's body, as
// starlette's JSONResponse writes it: compact JSON, no newline after it.
func refuseHTTP(w http.ResponseWriter, reason string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusServiceUnavailable)
	w.Write([]byte(`{"error":{"message":"` + admissionMessages[reason] + `","type":"Service Unavailable","param":null,"code":503}}`))
}

// refuseInStream answers a refused streaming request whose stream started
// (HTTP 200) with vLLM's error event, written by json.dumps with its
// default separators (", " and ": "), then [DONE].
func refuseInStream(w http.ResponseWriter, reason string) {
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	w.Write([]byte(`data: {"error": {"message": "` + admissionMessages[reason] + `", "type": "Service Unavailable", "param": null, "code": 503}}` + "\n\n" + string(doneChunk)))
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}
