package runner

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
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
	tokenizeCalls atomic.Int64 // /tokenize requests with messages
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
			select {
			case <-r.Context().Done():
				return
			case <-time.After(gap):
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
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}
