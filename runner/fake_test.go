package runner

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

// fakeVLLM is an httptest stand-in for vLLM's HTTP surface (docs/vllm.md),
// with exact control over the stream: tokens per chunk, gap between chunks,
// and how usage is reported.
type fakeVLLM struct {
	model        string
	tokens       int           // completion tokens per request
	perChunk     int           // tokens per chunk
	gap          time.Duration // between chunks
	firstDelay   time.Duration // before the first chunk, the request running
	usage        string        // "continuous" (default), "final" or "none"
	kvBlocks     int           // cache_config_info num_gpu_blocks (block size 16, the total over engines); 0 = absent
	kvSizeTokens int           // cache_config_info kv_cache_size_tokens (per engine); 0 = kvBlocks × 16 ÷ engines
	noKVSize     bool          // kv_cache_size_tokens "None": a build before vLLM PR #42206
	engines      int           // cache_config_info series, one per engine (default 1)
	status       int           // answer /v1/completions with this HTTP status when set
	midError     bool          // send an error event after the first chunk
	failNow      atomic.Bool   // from now on, send an error event after the next chunk
	truncate     bool          // close after the first chunk without [DONE]
	stallAfter   int           // stop sending (without closing) after this many chunks
	waiting      float64       // reported num_requests_waiting
	metricsDelay time.Duration // before answering /metrics
	// waitingAt, when set, gives num_requests_waiting for the nth /metrics
	// request (1-based) that found `full` generation requests running, each
	// sent its first chunk; n counts polls, not time, so load cannot shift
	// which poll reports the queue. Before the first such poll: waiting.
	waitingAt    func(n int64) float64
	full         int64
	fullPolls    atomic.Int64
	running      atomic.Int64
	streaming    atomic.Int64 // running requests sent their first chunk (counted just before it is written)
	generated    atomic.Int64
	requests     atomic.Int64
	lastBody     atomic.Value // the last completion request body
	noTokenize   bool
	maxModelLen  int
	authRequired string
	// chatCount is the token count /tokenize gives a chat prompt with this
	// user message (default: 20 template tokens + one per 4 bytes).
	chatCount func(content string) int
	// noChatTokenize answers /tokenize with messages 400 (prompt still works).
	noChatTokenize bool
	// reasoning makes chat streams send their first half as delta.reasoning.
	reasoning     bool
	tokenizeCalls atomic.Int64   // /tokenize requests with messages
	mux           *http.ServeMux // the handler, set by start
}

func (f *fakeVLLM) start(t *testing.T) *httptest.Server {
	t.Helper()
	if f.model == "" {
		f.model = "qwen"
	}
	if f.perChunk == 0 {
		f.perChunk = 1
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/health", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("/version", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `{"version":"0.0.fake"}`) })
	mux.HandleFunc("/v1/models", func(w http.ResponseWriter, r *http.Request) {
		if f.authRequired != "" && r.Header.Get("Authorization") != "Bearer "+f.authRequired {
			w.WriteHeader(401)
			fmt.Fprint(w, `{"error":"Unauthorized"}`)
			return
		}
		fmt.Fprintf(w, `{"object":"list","data":[{"id":%q,"object":"model","root":"/models/x","max_model_len":%d}]}`, f.model, f.maxModelLen)
	})
	mux.HandleFunc("/tokenize", func(w http.ResponseWriter, r *http.Request) {
		if f.noTokenize {
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
			f.tokenizeCalls.Add(1)
			if f.noChatTokenize || !req.AddGenerationPrompt || req.Messages[0].Role != "user" {
				w.WriteHeader(400)
				fmt.Fprint(w, `{"error":{"message":"chat template not available"}}`)
				return
			}
			count := f.chatCount
			if count == nil {
				count = func(s string) int { return 20 + (len(s)+3)/4 }
			}
			n := count(req.Messages[0].Content)
			fmt.Fprintf(w, `{"count":%d,"max_model_len":%d,"tokens":[%s]}`, n, f.maxModelLen, ids(n))
			return
		}
		n := (len(req.Prompt) + 3) / 4
		fmt.Fprintf(w, `{"count":%d,"max_model_len":%d,"tokens":[%s]}`, n, f.maxModelLen, ids(n))
	})
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(f.metricsDelay)
		fmt.Fprintf(w, "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{engine=\"0\",model_name=%q} %d\n", f.model, f.running.Load())
		waiting := f.waiting
		if f.waitingAt != nil && f.running.Load() >= f.full && f.streaming.Load() >= f.full {
			waiting = f.waitingAt(f.fullPolls.Add(1))
		}
		fmt.Fprintf(w, "# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting{engine=\"0\",model_name=%q} %g\n", f.model, waiting)
		fmt.Fprintf(w, "# TYPE vllm:generation_tokens_total counter\nvllm:generation_tokens_total{engine=\"0\",model_name=%q} %d\n", f.model, f.generated.Load())
		if f.kvBlocks > 0 || f.kvSizeTokens > 0 {
			size := "None" // docs/vllm.md#cache-config-info: unset fields render as "None"
			switch {
			case f.noKVSize:
			case f.kvSizeTokens > 0:
				size = fmt.Sprint(f.kvSizeTokens)
			default:
				size = fmt.Sprint(f.kvBlocks * 16 / max(f.engines, 1))
			}
			fmt.Fprint(w, "# TYPE vllm:cache_config_info gauge\n")
			for e := range max(f.engines, 1) {
				fmt.Fprintf(w, "vllm:cache_config_info{block_size=\"16\",engine=\"%d\",kv_cache_size_tokens=%q,num_gpu_blocks=\"%d\"} 1\n", e, size, f.kvBlocks)
			}
		}
	})
	generate := func(w http.ResponseWriter, r *http.Request, chat bool) {
		f.requests.Add(1)
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		f.lastBody.Store(body)
		if f.status != 0 {
			w.WriteHeader(f.status)
			fmt.Fprint(w, `{"error":{"message":"overloaded"}}`)
			return
		}
		max := f.tokens
		limit := "max_tokens"
		if chat {
			limit = "max_completion_tokens"
		}
		if mt, ok := body[limit].(float64); ok && int(mt) < max {
			max = int(mt)
		}
		f.running.Add(1)
		defer f.running.Add(-1)
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher)
		sent, chunks := 0, 0
		usage := func(n int) string {
			if f.usage == "" || f.usage == "continuous" {
				return fmt.Sprintf(`,"usage":{"prompt_tokens":10,"total_tokens":%d,"completion_tokens":%d}`, 10+n, n)
			}
			return ""
		}
		for sent < max {
			gap := f.gap
			if sent == 0 {
				gap += f.firstDelay
			}
			if !pause(r.Context(), w, gap) {
				return
			}
			if chunks == 0 {
				f.streaming.Add(1) // before the chunk: a client that has it sees the count
				defer f.streaming.Add(-1)
			}
			k := min(f.perChunk, max-sent)
			sent += k
			chunks++
			f.generated.Add(int64(k))
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
				if f.reasoning && sent <= max/2 {
					field = "reasoning"
				}
				fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{%q:\"x\"},\"logprobs\":null,\"finish_reason\":%s}]%s}\n\n", field, fin, usage(sent))
			}
			fl.Flush()
			if f.midError || f.failNow.Load() {
				fmt.Fprint(w, "data: {\"error\":{\"message\":\"engine died\",\"type\":\"InternalServerError\",\"code\":500}}\n\ndata: [DONE]\n\n")
				return
			}
			if f.truncate {
				return
			}
			if f.stallAfter > 0 && chunks >= f.stallAfter {
				<-r.Context().Done()
				return
			}
		}
		if f.usage != "none" {
			fmt.Fprintf(w, "data: {\"id\":\"c\",\"choices\":[],\"usage\":{\"prompt_tokens\":10,\"total_tokens\":%d,\"completion_tokens\":%d}}\n\n", 10+sent, sent)
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
		fl.Flush()
	}
	mux.HandleFunc("/v1/completions", func(w http.ResponseWriter, r *http.Request) { generate(w, r, false) })
	mux.HandleFunc("/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) { generate(w, r, true) })
	f.mux = mux
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
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

// clockedClient is a client of f's handler through a clockedTransport, and
// the clock to give the load (l.now = clock.Load).
func (f *fakeVLLM) clockedClient(t *testing.T, clock *atomic.Int64) *apiClient {
	t.Helper()
	f.start(t) // builds f.mux
	c := newAPIClient("http://fake.invalid", "", f.model)
	c.http = &http.Client{Transport: clockedTransport{h: f.mux, clock: clock}}
	return c
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
