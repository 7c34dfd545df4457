// Package vllmfake is an httptest stand-in for vLLM's HTTP surface that the
// tests of lifecycle, measure and runner share (docs/vllm.md): exact control
// over every stream, and a transport that serves it in process on an
// injected clock. It is for tests only; slogate sim is the simulator.
// Its own tests hold its /metrics families to the real vLLM 0.32.0's
// recorded surface and pin each option's stream.
package vllmfake

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Server is an httptest stand-in for vLLM's HTTP surface (docs/vllm.md),
// with exact control over the stream: tokens per chunk, gap between chunks,
// and how usage is reported.
type Server struct {
	Model    string
	Tokens   int           // completion tokens per request
	PerChunk int           // tokens per chunk
	Gap      time.Duration // between chunks
	// PrefixCache reports, in the final usage's
	// prompt_tokens_details.cached_tokens, the whole 16-token blocks a
	// token-ID prompt shares with an earlier one from its start, as
	// vLLM's prefix cache serves them (nothing is evicted).
	PrefixCache bool
	prompts     [][]int
	promptsMu   sync.Mutex
	// Burst sends chunks Burst at a time, back to back, with Gap between
	// bursts: a speculative step's tokens one chunk each, as llama-server
	// sends them (0 or 1: every chunk after Gap).
	Burst        int
	FirstDelay   time.Duration // before the first chunk, the request running
	Usage        string        // "continuous" (default), "final" or "none"
	KVBlocks     int           // cache_config_info num_gpu_blocks (block size 16, the total over engines); 0 = absent
	KVSizeTokens int           // cache_config_info kv_cache_size_tokens (per engine); 0 = KVBlocks × 16 ÷ Engines
	NoKVSize     bool          // kv_cache_size_tokens "None": a build before vLLM PR #42206
	Engines      int           // cache_config_info series, one per engine (default 1)
	Status       int           // answer /v1/completions with this HTTP status when set
	MidError     bool          // send an error event after the first chunk
	FailNow      atomic.Bool   // from now on, send an error event after the next chunk
	Truncate     bool          // close after the first chunk without [DONE]
	StallAfter   int           // stop sending (without closing) after this many chunks
	// Hold, when set, keeps each completion request open after its last
	// token until the test sends on it (one send ends one request), so
	// a test decides when requests end instead of the clock.
	Hold         chan struct{}
	Waiting      float64       // reported num_requests_waiting
	MetricsDelay time.Duration // before answering /metrics
	// GeneratedScale, when set, multiplies the generation_tokens_total
	// it reports: a server whose counter saw more (or fewer) tokens than
	// the client read.
	GeneratedScale float64
	// TTFTScale, when set, makes /metrics write
	// vllm:time_to_first_token_seconds, one observation a first chunk
	// sent, its sum the time from each request's arrival to its first
	// chunk as sent times TTFTScale: 1 a server whose clock agrees with the
	// stream, 0.2 one that timed its first tokens 5× faster than it sent
	// them (as a client that read them late would see it).
	TTFTScale float64
	ttftNs    atomic.Int64 // the arrivals' times to their first chunks, summed
	// ITLScale, when set, makes /metrics write
	// vllm:inter_token_latency_seconds, one observation a chunk after a
	// request's first (vLLM's, a token each without speculation), its sum
	// the gaps between the chunks as sent times ITLScale: 1 a server whose
	// clock agrees with the stream, 0.25 one that timed its tokens 4×
	// faster than it sent them. The TTFT histogram is written beside it.
	ITLScale float64
	firsts   atomic.Int64 // first chunks sent
	itlNs    atomic.Int64 // the gaps between a request's chunks, summed
	// WaitingAt, when set, gives num_requests_waiting for the nth /metrics
	// request (1-based) that found Full generation requests running, each
	// sent its first chunk; n counts polls, not time, so load cannot shift
	// which poll reports the queue. Before the first such poll: Waiting.
	WaitingAt    func(n int64) float64
	Full         int64
	FullPolls    atomic.Int64
	Running      atomic.Int64
	Streaming    atomic.Int64 // running requests sent their first chunk (counted just before it is written)
	Generated    atomic.Int64
	Requests     atomic.Int64
	LastBody     atomic.Value // the last completion request body
	NoTokenize   bool
	MaxModelLen  int
	AuthRequired string
	// ChatCount is the token count /tokenize gives a chat prompt with this
	// user message (default: 20 template tokens + one per 4 bytes).
	ChatCount func(content string) int
	// NoChatTokenize answers /tokenize with messages 400 (prompt still works).
	NoChatTokenize bool
	// Reasoning makes chat streams send their first half as delta.reasoning.
	Reasoning     bool
	TokenizeCalls atomic.Int64   // /tokenize requests with messages
	mux           *http.ServeMux // the handler, set by Start

	// MaxUnfinished, when set, refuses a generation request that would
	// make more than it unfinished, as vLLM's --max-num-queued-reqs does
	// (docs/vllm.md#admission-control): HTTP 503 with vLLM's body, or
	// with RejectInStream HTTP 200, the error event and [DONE]. A request
	// leaves the count before its last chunk is written. Rejected counts
	// the refusals; /metrics writes them as
	// vllm:admission_rejections_total, plus CounterSkew (a server whose
	// counter disagrees with its answers).
	MaxUnfinished  int64
	RejectInStream bool
	Rejected       atomic.Int64
	CounterSkew    int64
	unfinished     atomic.Int64
}

// busy is vLLM's QueueOverflowError message (vllm/exceptions.py).
const busy = "The engine is currently busy and cannot accept new requests. Please try again later or on a different instance."

// admit registers a request under MaxUnfinished: false when it is refused
// (counted); release takes it out of the count, once.
func (f *Server) admit() (release func(), ok bool) {
	if f.MaxUnfinished <= 0 {
		return func() {}, true
	}
	for {
		n := f.unfinished.Load()
		if n+1 > f.MaxUnfinished {
			f.Rejected.Add(1)
			return nil, false
		}
		if f.unfinished.CompareAndSwap(n, n+1) {
			var once sync.Once
			return func() { once.Do(func() { f.unfinished.Add(-1) }) }, true
		}
	}
}

// Start serves f until the test ends.
func (f *Server) Start(t testing.TB) *httptest.Server {
	t.Helper()
	if f.Model == "" {
		f.Model = "qwen"
	}
	if f.PerChunk == 0 {
		f.PerChunk = 1
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/health", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("/version", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `{"version":"0.0.fake"}`) })
	mux.HandleFunc("/v1/models", f.models)
	mux.HandleFunc("/tokenize", f.tokenize)
	mux.HandleFunc("/metrics", f.metrics)
	mux.HandleFunc("/v1/completions", func(w http.ResponseWriter, r *http.Request) { f.generate(w, r, false) })
	mux.HandleFunc("/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) { f.generate(w, r, true) })
	f.mux = mux
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// models answers /v1/models: the one model, behind AuthRequired's key.
func (f *Server) models(w http.ResponseWriter, r *http.Request) {
	if f.AuthRequired != "" && r.Header.Get("Authorization") != "Bearer "+f.AuthRequired {
		w.WriteHeader(401)
		fmt.Fprint(w, `{"error":"Unauthorized"}`)
		return
	}
	fmt.Fprintf(w, `{"object":"list","data":[{"id":%q,"object":"model","root":"/models/x","max_model_len":%d}]}`, f.Model, f.MaxModelLen)
}

// tokenize answers /tokenize: a prompt's count at 4 bytes a token, a chat
// message's by ChatCount.
func (f *Server) tokenize(w http.ResponseWriter, r *http.Request) {
	if f.NoTokenize {
		http.NotFound(w, r)
		return
	}
	var req struct {
		Prompt   string `json:"prompt"`
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
		AddGenerationPrompt bool `json:"add_generation_prompt"`
	}
	json.NewDecoder(r.Body).Decode(&req)
	// ids are count token IDs spread over an ordinary range.
	ids := func(count int) string {
		var b strings.Builder
		for i := range count {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprint(&b, 1000+(i*7919)%30000)
		}
		return b.String()
	}
	if len(req.Messages) > 0 {
		f.TokenizeCalls.Add(1)
		if f.NoChatTokenize || !req.AddGenerationPrompt || req.Messages[0].Role != "user" {
			w.WriteHeader(400)
			fmt.Fprint(w, `{"error":{"message":"chat template not available"}}`)
			return
		}
		count := f.ChatCount
		if count == nil {
			count = func(s string) int { return 20 + (len(s)+3)/4 }
		}
		n := count(req.Messages[0].Content)
		fmt.Fprintf(w, `{"count":%d,"max_model_len":%d,"tokens":[%s]}`, n, f.MaxModelLen, ids(n))
		return
	}
	n := (len(req.Prompt) + 3) / 4
	fmt.Fprintf(w, `{"count":%d,"max_model_len":%d,"tokens":[%s]}`, n, f.MaxModelLen, ids(n))
}

// metrics answers /metrics with the families vLLM writes that the options
// ask for, each named and labelled as vLLM 0.32.0's
// (TestMetricsAsRealVLLM).
func (f *Server) metrics(w http.ResponseWriter, r *http.Request) {
	time.Sleep(f.MetricsDelay)
	fmt.Fprintf(w, "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{engine=\"0\",model_name=%q} %d\n", f.Model, f.Running.Load())
	waiting := f.Waiting
	if f.WaitingAt != nil && f.Running.Load() >= f.Full && f.Streaming.Load() >= f.Full {
		waiting = f.WaitingAt(f.FullPolls.Add(1))
	}
	fmt.Fprintf(w, "# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting{engine=\"0\",model_name=%q} %g\n", f.Model, waiting)
	generated := f.Generated.Load()
	if f.GeneratedScale > 0 {
		generated = int64(float64(generated) * f.GeneratedScale)
	}
	fmt.Fprintf(w, "# TYPE vllm:generation_tokens_total counter\nvllm:generation_tokens_total{engine=\"0\",model_name=%q} %d\n", f.Model, generated)
	if f.ITLScale > 0 {
		n := f.Generated.Load() - f.firsts.Load()
		fmt.Fprintf(w, "# TYPE vllm:inter_token_latency_seconds histogram\nvllm:inter_token_latency_seconds_bucket{engine=\"0\",model_name=%q,le=\"+Inf\"} %d\nvllm:inter_token_latency_seconds_sum{engine=\"0\",model_name=%q} %g\nvllm:inter_token_latency_seconds_count{engine=\"0\",model_name=%q} %d\n",
			f.Model, n, f.Model, float64(f.itlNs.Load())/1e9*f.ITLScale, f.Model, n)
	}
	if f.TTFTScale > 0 || f.ITLScale > 0 {
		n := f.firsts.Load()
		fmt.Fprintf(w, "# TYPE vllm:time_to_first_token_seconds histogram\nvllm:time_to_first_token_seconds_bucket{engine=\"0\",model_name=%q,le=\"+Inf\"} %d\nvllm:time_to_first_token_seconds_sum{engine=\"0\",model_name=%q} %g\nvllm:time_to_first_token_seconds_count{engine=\"0\",model_name=%q} %d\n",
			f.Model, n, f.Model, float64(f.ttftNs.Load())/1e9*f.TTFTScale, f.Model, n)
	}
	if f.MaxUnfinished > 0 {
		fmt.Fprintf(w, "# TYPE vllm:admission_rejections_total counter\nvllm:admission_rejections_total{model_name=%q,reason=\"max_num_queued_reqs\"} %d\nvllm:admission_rejections_total{model_name=%q,reason=\"max_num_queued_tokens\"} 0.0\n",
			f.Model, f.Rejected.Load()+f.CounterSkew, f.Model)
	}
	if f.KVBlocks > 0 || f.KVSizeTokens > 0 {
		size := "None" // docs/vllm.md#cache-config-info: unset fields render as "None"
		switch {
		case f.NoKVSize:
		case f.KVSizeTokens > 0:
			size = fmt.Sprint(f.KVSizeTokens)
		default:
			size = fmt.Sprint(f.KVBlocks * 16 / max(f.Engines, 1))
		}
		fmt.Fprint(w, "# TYPE vllm:cache_config_info gauge\n")
		for e := range max(f.Engines, 1) {
			fmt.Fprintf(w, "vllm:cache_config_info{block_size=\"16\",engine=\"%d\",kv_cache_size_tokens=%q,num_gpu_blocks=\"%d\"} 1\n", e, size, f.KVBlocks)
		}
	}
}

// generate answers a completion (chat false) or chat completion request:
// refused under MaxUnfinished or Status, else streamed as the options say.
func (f *Server) generate(w http.ResponseWriter, r *http.Request, chat bool) {
	arrived := time.Now()
	f.Requests.Add(1)
	var body map[string]any
	json.NewDecoder(r.Body).Decode(&body)
	f.LastBody.Store(body)
	if f.Status != 0 {
		w.WriteHeader(f.Status)
		fmt.Fprint(w, `{"error":{"message":"overloaded"}}`)
		return
	}
	release, admitted := f.admit()
	if !admitted {
		if f.RejectInStream {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: {\"error\": {\"message\": %q, \"type\": \"Service Unavailable\", \"param\": null, \"code\": 503}}\n\ndata: [DONE]\n\n", busy)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, `{"error":{"message":%q,"type":"Service Unavailable","param":null,"code":503}}`, busy)
		return
	}
	defer release()
	max := f.Tokens
	limit := "max_tokens"
	if chat {
		limit = "max_completion_tokens"
	}
	if mt, ok := body[limit].(float64); ok && int(mt) < max {
		max = int(mt)
	}
	cached := 0
	if f.PrefixCache {
		cached = f.cachedPrefix(body["prompt"])
	}
	f.Running.Add(1)
	defer f.Running.Add(-1)
	w.Header().Set("Content-Type", "text/event-stream")
	fl := w.(http.Flusher)
	sent, chunks := 0, 0
	usage := func(n int) string {
		if f.Usage == "" || f.Usage == "continuous" {
			return fmt.Sprintf(`,"usage":{"prompt_tokens":10,"total_tokens":%d,"completion_tokens":%d}`, 10+n, n)
		}
		return ""
	}
	var lastChunk time.Time
	for sent < max {
		gap := f.Gap
		if f.Burst > 1 && chunks%f.Burst != 0 {
			gap = 0 // within a burst
		}
		if sent == 0 {
			gap += f.FirstDelay
		}
		if !pause(r.Context(), w, gap) {
			return
		}
		if chunks == 0 {
			f.Streaming.Add(1) // before the chunk: a client that has it sees the count
			f.firsts.Add(1)
			f.ttftNs.Add(int64(time.Since(arrived)))
			defer f.Streaming.Add(-1)
		} else {
			f.itlNs.Add(int64(time.Since(lastChunk)))
		}
		lastChunk = time.Now()
		k := min(f.PerChunk, max-sent)
		sent += k
		chunks++
		f.Generated.Add(int64(k))
		fin := "null"
		if sent == max {
			fin = `"length"`
		}
		switch {
		case !chat:
			fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"text_completion\",\"choices\":[{\"index\":0,\"text\":\"x\",\"finish_reason\":%s}]%s}\n\n", fin, usage(sent))
		default:
			if chunks == 1 { // vLLM: the role chunk, sent with the first token
				fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"logprobs\":null,\"finish_reason\":null}]%s}\n\n", usage(0))
			}
			field := "content"
			if f.Reasoning && sent <= max/2 {
				field = "reasoning"
			}
			fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{%q:\"x\"},\"logprobs\":null,\"finish_reason\":%s}]%s}\n\n", field, fin, usage(sent))
		}
		fl.Flush()
		if f.MidError || f.FailNow.Load() {
			fmt.Fprint(w, "data: {\"error\":{\"message\":\"engine died\",\"type\":\"InternalServerError\",\"code\":500}}\n\ndata: [DONE]\n\n")
			return
		}
		if f.Truncate {
			return
		}
		if f.StallAfter > 0 && chunks >= f.StallAfter {
			<-r.Context().Done()
			return
		}
	}
	if f.Hold != nil {
		select {
		case <-f.Hold:
		case <-r.Context().Done():
			return
		}
	}
	release() // vLLM drops a finished request before its last chunk
	if f.Usage != "none" {
		details := ""
		if f.PrefixCache {
			details = fmt.Sprintf(`,"prompt_tokens_details":{"cached_tokens":%d}`, cached)
		}
		fmt.Fprintf(w, "data: {\"id\":\"c\",\"choices\":[],\"usage\":{\"prompt_tokens\":10,\"total_tokens\":%d,\"completion_tokens\":%d%s}}\n\n", 10+sent, sent, details)
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	fl.Flush()
}

// pause waits d before the handler's next chunk, or, on a clockedWriter,
// adds d to the clock's advance at that chunk (no real wait). It is false
// when the request ended meanwhile.
func pause(ctx context.Context, w http.ResponseWriter, d time.Duration) bool {
	if cw, ok := w.(*clockedWriter); ok {
		cw.pending += d
		return ctx.Err() == nil
	}
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

// clockedTransport serves a handler in process, without a network or real
// waits: the response body arrives flush by flush, and the reader, before
// it returns a flush's bytes, advances clock by the pauses the handler took
// before that flush. A client stamping each chunk with clock then sees
// exactly the handler's pauses, however loaded the machine is: the gaps a
// test asserts cannot be stretched or squeezed by the scheduler.
type clockedTransport struct {
	h     http.Handler
	clock *atomic.Int64 // ns
}

// ClockedClient is an HTTP client of f's handler through a clocked
// transport: its pauses advance clock (ns) instead of passing in real time,
// so a load whose clock is clock.Load sees exactly the handler's gaps.
func (f *Server) ClockedClient(t testing.TB, clock *atomic.Int64) *http.Client {
	t.Helper()
	f.Start(t) // builds f.mux
	return &http.Client{Transport: clockedTransport{h: f.mux, clock: clock}}
}

func (tr clockedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	w := &clockedWriter{header: http.Header{}, status: http.StatusOK, headerDone: make(chan struct{}),
		flushes: make(chan clockedFlush), closed: make(chan struct{})}
	go func() {
		defer close(w.flushes)
		tr.h.ServeHTTP(w, req)
		w.Flush()
		w.writeHeader() // a handler that wrote nothing
	}()
	select {
	case <-w.headerDone:
	case <-req.Context().Done():
		return nil, req.Context().Err()
	}
	return &http.Response{StatusCode: w.status, Header: w.header, Request: req,
		Body: &clockedBody{w: w, ctx: req.Context(), clock: tr.clock}}, nil
}

// clockedFlush is what one Flush delivers: the bytes written since the
// last, and the pauses taken since.
type clockedFlush struct {
	data  []byte
	delay time.Duration
}

// clockedWriter is the handler's http.ResponseWriter and http.Flusher.
type clockedWriter struct {
	header     http.Header
	status     int
	headerDone chan struct{}
	wrote      bool
	buf        []byte
	pending    time.Duration
	flushes    chan clockedFlush
	closed     chan struct{} // the client closed the body
}

func (w *clockedWriter) Header() http.Header { return w.header }

func (w *clockedWriter) WriteHeader(code int) {
	if !w.wrote {
		w.status = code
		w.writeHeader()
	}
}

func (w *clockedWriter) writeHeader() {
	if !w.wrote {
		w.wrote = true
		close(w.headerDone)
	}
}

func (w *clockedWriter) Write(p []byte) (int, error) {
	w.writeHeader()
	w.buf = append(w.buf, p...)
	return len(p), nil
}

func (w *clockedWriter) Flush() {
	w.writeHeader()
	if len(w.buf) == 0 && w.pending == 0 {
		return
	}
	select {
	case w.flushes <- clockedFlush{data: w.buf, delay: w.pending}:
	case <-w.closed:
	}
	w.buf, w.pending = nil, 0
}

// clockedBody is the response body the client reads.
type clockedBody struct {
	w     *clockedWriter
	ctx   context.Context
	clock *atomic.Int64
	cur   []byte
	once  sync.Once
}

func (b *clockedBody) Read(p []byte) (int, error) {
	for len(b.cur) == 0 {
		select {
		case f, ok := <-b.w.flushes:
			if !ok {
				return 0, io.EOF
			}
			b.clock.Add(int64(f.delay))
			b.cur = f.data
		case <-b.ctx.Done():
			return 0, b.ctx.Err()
		}
	}
	n := copy(p, b.cur)
	b.cur = b.cur[n:]
	return n, nil
}

func (b *clockedBody) Close() error {
	b.once.Do(func() { close(b.w.closed) })
	return nil
}

// cachedPrefix is the whole 16-token blocks prompt (token IDs as JSON
// decoded them) shares from its start with an earlier prompt, which it
// then remembers.
func (f *Server) cachedPrefix(prompt any) int {
	list, _ := prompt.([]any)
	ids := make([]int, 0, len(list))
	for _, v := range list {
		n, _ := v.(float64)
		ids = append(ids, int(n))
	}
	f.promptsMu.Lock()
	defer f.promptsMu.Unlock()
	best := 0
	for _, p := range f.prompts {
		k := 0
		for k < len(p) && k < len(ids) && p[k] == ids[k] {
			k++
		}
		best = max(best, k)
	}
	f.prompts = append(f.prompts, ids)
	// vLLM never serves the last prompt token from the cache.
	return min(best, len(ids)-1) / 16 * 16
}
