package sse

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	openai "github.com/sashabaranov/go-openai"
)

// vllmChunk is a content chunk shaped exactly as vLLM sends it with
// include_usage + continuous_usage_stats (docs/vllm.md#stream-format).
func vllmChunk(text string, completion int, finish string) string {
	fr := "null"
	if finish != "" {
		fr = `"` + finish + `"`
	}
	return fmt.Sprintf(`data: {"id":"cmpl-8e2f0c1d","object":"text_completion","created":1764489600,"model":"qwen","choices":[{"index":0,"text":%q,"logprobs":null,"finish_reason":%s,"stop_reason":null}],"usage":{"prompt_tokens":8192,"total_tokens":%d,"completion_tokens":%d}}`+"\n\n",
		text, fr, 8192+completion, completion)
}

// chatChunk is a /v1/chat/completions chunk shaped as vLLM sends it with
// continuous usage; delta is the raw delta object.
func chatChunk(delta string, completion int, finish string) string {
	fr := "null"
	if finish != "" {
		fr = `"` + finish + `"`
	}
	return fmt.Sprintf(`data: {"id":"chatcmpl-8e2f","object":"chat.completion.chunk","created":1764489600,"model":"qwen","choices":[{"index":0,"delta":%s,"logprobs":null,"finish_reason":%s}],"usage":{"prompt_tokens":8192,"total_tokens":%d,"completion_tokens":%d}}`+"\n\n",
		delta, fr, 8192+completion, completion)
}

const finalUsage = `data: {"id":"cmpl-8e2f0c1d","object":"text_completion","created":1764489600,"model":"qwen","choices":[],"usage":{"prompt_tokens":8192,"total_tokens":8200,"completion_tokens":8}}` + "\n\n"
const done = "data: [DONE]\n\n"

func readAll(t *testing.T, stream string) ([]Chunk, error) {
	t.Helper()
	r := NewReader(strings.NewReader(stream), 64) // a small buffer exercises long lines
	var out []Chunk
	for {
		c, err := r.Next()
		if err != nil {
			if err == io.EOF {
				return out, nil
			}
			return out, err
		}
		out = append(out, c)
	}
}

func TestReader(t *testing.T) {
	u := func(choices int, compl int64, fin bool) Chunk {
		ch := Chunk{Choices: choices, HasUsage: true, PromptTokens: 8192, CompletionTokens: compl, Finished: fin, Text: choices > 0}
		if fin {
			ch.FinishReason = "length"
		}
		return ch
	}
	// Chat chunks as vLLM sends them (docs/vllm.md#chat): the role chunk with the
	// first token, reasoning under either field name, then content.
	chatStream := chatChunk(`{"role":"assistant","content":""}`, 0, "") +
		chatChunk(`{"reasoning":"Let me think"}`, 1, "") +
		chatChunk(`{"reasoning_content":" about it carefully"}`, 4, "") +
		chatChunk(`{"content":"The answer"}`, 6, "") +
		chatChunk(`{"content":"","reasoning":null}`, 7, "") +
		chatChunk(`{"content":" is 42."}`, 9, "length") +
		`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1764489600,"model":"qwen","choices":[],"usage":{"prompt_tokens":8192,"total_tokens":8201,"completion_tokens":9}}` + "\n\n" + done
	c := func(compl int64, fin, role, text bool) Chunk {
		ch := Chunk{Choices: 1, HasUsage: true, PromptTokens: 8192, CompletionTokens: compl, Finished: fin, Role: role, Text: text}
		if fin {
			ch.FinishReason = "length"
		}
		return ch
	}
	reasoning := func(ch Chunk) Chunk { ch.Reasoning = true; return ch }
	tests := []struct {
		name    string
		stream  string
		want    []Chunk
		wantErr string
	}{
		{
			name:   "continuous usage, one token per chunk",
			stream: vllmChunk("a", 1, "") + vllmChunk("b", 2, "") + vllmChunk("c", 3, "length") + finalUsage + done,
			want:   []Chunk{u(1, 1, false), u(1, 2, false), u(1, 3, true), {HasUsage: true, PromptTokens: 8192, CompletionTokens: 8}},
		},
		{
			name:   "multi-token chunks under speculative decoding",
			stream: vllmChunk("a b c d", 4, "") + vllmChunk("", 7, "") + vllmChunk("e", 8, "length") + done,
			want:   []Chunk{u(1, 4, false), {Choices: 1, HasUsage: true, PromptTokens: 8192, CompletionTokens: 7}, u(1, 8, true)},
		},
		{
			name:   "no per-chunk usage (usage null), final usage only",
			stream: `data: {"choices":[{"index":0,"text":"x","finish_reason":null}],"usage":null}` + "\n\n" + `data: {"choices":[{"index":0,"text":"y","finish_reason":"length"}]}` + "\n\n" + finalUsage + done,
			want:   []Chunk{{Choices: 1, Text: true}, {Choices: 1, Finished: true, FinishReason: "length", Text: true}, {HasUsage: true, PromptTokens: 8192, CompletionTokens: 8}},
		},
		{
			name:   "CRLF line ends, comments, no space after colon, retry field",
			stream: ": keep-alive\r\n\r\nretry: 100\r\ndata:" + `{"choices":[{"finish_reason":null}],"usage":{"completion_tokens":2}}` + "\r\n\r\ndata: [DONE]\r\n\r\n",
			want:   []Chunk{{Choices: 1, HasUsage: true, CompletionTokens: 2}},
		},
		{
			name:   "pretty-printed JSON with spaces",
			stream: "data: { \"choices\" : [ { \"finish_reason\" : \"stop\" } ] , \"usage\" : { \"completion_tokens\" : 5 , \"prompt_tokens\" : 1 } }\n\n" + done,
			want:   []Chunk{{Choices: 1, Finished: true, FinishReason: "stop", HasUsage: true, PromptTokens: 1, CompletionTokens: 5}},
		},
		{
			name:   "chat: role chunk, reasoning (both names), multi-token content, empty delta",
			stream: chatStream,
			want: []Chunk{c(0, false, true, false), reasoning(c(1, false, false, true)), reasoning(c(4, false, false, true)), c(6, false, false, true),
				c(7, false, false, false), c(9, true, false, true), {HasUsage: true, PromptTokens: 8192, CompletionTokens: 9}},
		},
		{
			// vLLM's reasoning parser sends the last reasoning and the
			// first answer in one delta (reasoning/basic_parsers.py): an
			// answer chunk; SGLang writes its null fields.
			name: "chat: reasoning and content in one delta, SGLang's nulls",
			stream: chatChunk(`{"role":null,"content":null,"reasoning_content":"hmm","tool_calls":null}`, 1, "") +
				chatChunk(`{"reasoning":"so","content":"Yes"}`, 2, "") + done,
			want: []Chunk{reasoning(c(1, false, false, true)), c(2, false, false, true)},
		},
		{
			name:   "chat without usage: role and content in one chunk",
			stream: `data: {"choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"},"logprobs":null,"finish_reason":null}]}` + "\n\n" + done,
			want:   []Chunk{{Choices: 1, Role: true, Text: true}},
		},
		{
			name:    "mid-stream error, then DONE",
			stream:  vllmChunk("a", 1, "") + `data: {"error":{"message":"engine dead","type":"InternalServerError","param":null,"code":500}}` + "\n\n" + done,
			want:    []Chunk{u(1, 1, false)},
			wantErr: "server error in stream: engine dead (InternalServerError)",
		},
		{
			name:    "truncated: connection closed without DONE",
			stream:  vllmChunk("a", 1, "") + vllmChunk("b", 2, ""),
			want:    []Chunk{u(1, 1, false), u(1, 2, false)},
			wantErr: ErrTruncated.Error(),
		},
		{
			name:    "truncated in the middle of an event",
			stream:  vllmChunk("a", 1, "") + `data: {"choices":[{"fin`,
			want:    []Chunk{u(1, 1, false)},
			wantErr: "stream event is not valid JSON",
		},
		{
			name:    "not JSON",
			stream:  "data: hello\n\n",
			wantErr: "stream event is not a JSON object",
		},
		{
			name:   "data after DONE is ignored",
			stream: done + vllmChunk("a", 1, ""),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readAll(t, tc.stream)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("chunks (-want +got):\n%s", diff)
			}
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("unexpected error %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("error = %v, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}

// TestMidStreamErrorIsAPIError: both shapes of docs/vllm.md#mid-stream-errors
// end the stream as an *APIError with the server's message.
func TestMidStreamErrorIsAPIError(t *testing.T) {
	tests := []struct {
		name, stream, wantMessage, wantType string
	}{
		{name: "nested", stream: `data: {"error":{"message":"boom","code":400}}` + "\n\n", wantMessage: "boom"},
		{name: "nested, older builds (object inside)", stream: `data: {"error":{"object":"error","message":"boom","type":"BadRequestError","param":null,"code":400}}` + "\n\n",
			wantMessage: "boom", wantType: "BadRequestError"},
		{name: "flat", stream: `data: {"object":"error","message":"engine dead","type":"InternalServerError","param":null,"code":500}` + "\n\ndata: [DONE]\n\n",
			wantMessage: "engine dead", wantType: "InternalServerError"},
		{name: "flat, escaped value", stream: `data: {"object":"\u0065rror","message":"x"}` + "\n\n", wantMessage: "x"},
		{name: "flat without a message stays readable", stream: `data: {"object":"error","code":500}` + "\n\n", wantMessage: `{"object":"error","code":500}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readAll(t, tc.stream)
			var ae *APIError
			if !errors.As(err, &ae) || ae.Message != tc.wantMessage || ae.Type != tc.wantType {
				t.Fatalf("got %#v, want an *APIError with message %q, type %q", err, tc.wantMessage, tc.wantType)
			}
		})
	}
}

// TestRecordedErrorStreams reads the hand-written vLLM streams with a
// mid-stream error (sim/testdata/streams, docs/vllm.md#mid-stream-errors):
// one chunk, then the error with the simulator's message.
func TestRecordedErrorStreams(t *testing.T) {
	for _, file := range []string{"completions_midstream_error.sse", "completions_midstream_error_flat.sse"} {
		t.Run(file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("..", "..", "..", "internal", "sim", "testdata", "streams", file))
			if err != nil {
				t.Fatal(err)
			}
			chunks, err := readAll(t, string(b))
			var ae *APIError
			if len(chunks) != 1 || !errors.As(err, &ae) || !strings.Contains(ae.Message, "simulated mid-stream error") {
				t.Fatalf("%d chunks, error %v; want 1 chunk and the simulator's mid-stream error", len(chunks), err)
			}
		})
	}
}

// TestScanAgreesWithJSON checks the fast path against encoding/json on
// awkward but valid payloads.
func TestScanAgreesWithJSON(t *testing.T) {
	payloads := []string{
		`{"usage":{"prompt_tokens":5},"usage":{"completion_tokens":3}}`,
		`{"usage":{"prompt_tokens":5},"usage":null}`,
		`{"choices":[null,{"finish_reason":"x","finish_reason":null}]}`,
		`{"choices":[{"text":"\"finish_reason\":\"stop\""}],"x":[1,-2.5e3,true,false,null,{}]}`,
		`{"Usage":{"completion_tokens":3}}`,
		`{"usage":{"COMPLETION_TOKENS":3}}`,
		`{"usage":{"completion_tokens":-3}}`,
		`{"usage":{"completion_tokens":3.0}}`,
		`{"choices":null}`,
		`{}`,
		`{"choices":[{"text":"a"}],"choices":[{"finish_reason":"stop"}]}`,
		`{"choices":[{"delta":{"content":"a"},"delta":{"role":"assistant"}}]}`,
		`{"choices":[{"delta":{"content":"a","content":""}}]}`,
		`{"choices":[{"delta":{"content":"a"},"delta":null}]}`,
		`{"choices":[{"delta":{"content":["a"],"reasoning":7,"role":null}}]}`,
		`{"choices":[{"delta":"x"}]}`,
		`{"choices":[{"Delta":{"content":"a"}}]}`,
		`{"choices":[{"delta":{"Content":"a"}}]}`,
		`{"choices":[{"delta":{"reasoning_Content":"a"}}]}`,
		`{"choices":[{"TEXT":"a"}]}`,
		`{"choices":[{"text":"\u0000"},{"text":""}]}`,
		`{"object":"text_completion","choices":[{"text":"a"}]}`,
		`{"object":"error","message":"m"}`,
		`{"object":"\u0065rror","message":"m"}`,
		`{"Object":"error","message":"m"}`,
		`{"object":"error","object":"text_completion","choices":[]}`,
		`{"object":"text_completion","object":"error","message":"m"}`,
		`{"object":null,"choices":[]}`,
		`{"object":7}`,
	}
	for _, p := range payloads {
		t.Run(p, func(t *testing.T) {
			got, gerr := Parse([]byte(p))
			want, werr := parseJSON([]byte(p))
			if (gerr == nil) != (werr == nil) {
				t.Fatalf("Parse error %v, encoding/json error %v", gerr, werr)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-json +Parse):\n%s", diff)
			}
		})
	}
}

func FuzzSSE(f *testing.F) {
	f.Add([]byte(vllmChunk("a", 1, "") + vllmChunk("b c", 3, "length") + finalUsage + done))
	f.Add([]byte(`data: {"error":{"message":"x"}}` + "\n\n"))
	f.Add([]byte(`data: {"object":"error","message":"x","code":500}` + "\n\n"))
	f.Add([]byte("data: {\"choices\":[{\"finish_reason\":null}]}\r\n\r\n: c\n\ndata: [DONE]"))
	f.Add([]byte(`data: {"usage":{"completion_tokens":12345678901234567890}}`))
	f.Add([]byte(chatChunk(`{"role":"assistant","content":""}`, 0, "") + chatChunk(`{"reasoning":"r","content":null}`, 2, "stop") + done))
	f.Add([]byte(`{"choices":[{"delta":{"content":"a"},"delta":{"role":"x"}}]}`))
	f.Add([]byte(llamaLast))
	f.Add([]byte(`{"choices":[],"timings":null,"Timings":{}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r := NewReader(bytes.NewReader(b), 16)
		for i := 0; i < len(b)+2; i++ {
			if _, err := r.Next(); err != nil {
				break
			}
		}
		// The fast path must agree with encoding/json on every valid object.
		if json.Valid(b) {
			got, gerr := Parse(b)
			want, werr := parseJSON(bytes.TrimSpace(b))
			if len(bytes.TrimSpace(b)) > 0 && bytes.TrimSpace(b)[0] == '{' {
				if (gerr == nil) != (werr == nil) || got != want {
					t.Fatalf("Parse = %+v, %v; encoding/json = %+v, %v", got, gerr, want, werr)
				}
			}
		}
	})
}

// recorded is a 1000-chunk stream as vLLM sends it (continuous usage).
func recorded(n int) []byte {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fin := ""
		if i == n {
			fin = "length"
		}
		b.WriteString(vllmChunk(" token", i, fin))
	}
	b.WriteString(finalUsage)
	b.WriteString(done)
	return []byte(b.String())
}

// BenchmarkReader measures the runner's stream reader in chunks per second
// per core (target ≥ 200,000).
func BenchmarkReader(b *testing.B) {
	data := recorded(1000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	chunks := 0
	for b.Loop() {
		r := NewReader(bytes.NewReader(data), 0)
		for {
			if _, err := r.Next(); err != nil {
				break
			}
			chunks++
		}
	}
	b.ReportMetric(float64(chunks)/b.Elapsed().Seconds(), "chunks/s")
}

// BenchmarkReaderChat is BenchmarkReader on a chat stream: the role chunk,
// then content deltas (the fast path also reads each delta).
func BenchmarkReaderChat(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(chatChunk(`{"role":"assistant","content":""}`, 0, ""))
	for i := 1; i <= 1000; i++ {
		fin := ""
		if i == 1000 {
			fin = "length"
		}
		sb.WriteString(chatChunk(`{"content":" token"}`, i, fin))
	}
	sb.WriteString(done)
	data := []byte(sb.String())
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	chunks := 0
	for b.Loop() {
		r := NewReader(bytes.NewReader(data), 0)
		for {
			if _, err := r.Next(); err != nil {
				break
			}
			chunks++
		}
	}
	b.ReportMetric(float64(chunks)/b.Elapsed().Seconds(), "chunks/s")
}

// BenchmarkGoOpenAI reads the same stream with go-openai's CompletionStream,
// through an HTTP doer that answers from memory, for the comparison in the
// package comment.
func BenchmarkGoOpenAI(b *testing.B) {
	data := recorded(1000)
	cfg := openai.DefaultConfig("k")
	cfg.BaseURL = "http://sim.invalid/v1"
	cfg.HTTPClient = memDoer(data)
	client := openai.NewClientWithConfig(cfg)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	chunks := 0
	for b.Loop() {
		st, err := client.CreateCompletionStream(context.Background(), openai.CompletionRequest{Model: "qwen", Prompt: "x", MaxTokens: 1000})
		if err != nil {
			b.Fatal(err)
		}
		for {
			if _, err := st.Recv(); err != nil {
				break
			}
			chunks++
		}
		st.Close()
	}
	b.ReportMetric(float64(chunks)/b.Elapsed().Seconds(), "chunks/s")
}

type memDoer []byte

func (m memDoer) Do(req *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body: io.NopCloser(bytes.NewReader(m)), Request: req}, nil
}

// llamaLast is the last chunk of a llama.cpp server's chat stream: the
// finish reason with an empty delta, the usage, and the request's own
// timings (speculative decoding on, 12 prompt tokens reused from its cache).
const llamaLast = `{"choices":[{"finish_reason":"length","index":0,"delta":{}}],"created":1764489600,"id":"chatcmpl-x","model":"m","system_fingerprint":"b6500","object":"chat.completion.chunk","usage":{"completion_tokens":16,"prompt_tokens":40,"total_tokens":56},"timings":{"cache_n":12,"prompt_n":28,"prompt_ms":31.5,"prompt_per_token_ms":1.125,"prompt_per_second":888.9,"predicted_n":16,"predicted_ms":120.25,"predicted_per_token_ms":7.515625,"predicted_per_second":133.06,"draft_n":20,"draft_n_accepted":11}}`

func TestTimings(t *testing.T) {
	tests := []struct {
		name string
		data string
		has  bool
		want Timings
	}{
		{name: "llama.cpp's last chunk", data: llamaLast, has: true,
			want: Timings{PromptN: 28, PromptMs: 31.5, PredictedN: 16, PredictedMs: 120.25, PredictedPerSecond: 133.06, DraftN: 20, DraftNAccepted: 11, CacheN: 12}},
		{name: "a vLLM chunk has none", data: strings.TrimSuffix(strings.TrimPrefix(vllmChunk("a", 1, ""), "data: "), "\n\n")},
		{name: "null is none", data: `{"choices":[],"timings":null}`},
		{name: "fields it does not have are 0", data: `{"choices":[],"timings":{"predicted_n":3}}`, has: true, want: Timings{PredictedN: 3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, path := range []struct {
				name  string
				parse func([]byte) (Chunk, error)
			}{{"scanner", Parse}, {"encoding/json", parseJSON}} {
				c, err := path.parse([]byte(tc.data))
				if err != nil || c.HasTimings != tc.has {
					t.Errorf("%s: HasTimings = %v, %v; want %v", path.name, c.HasTimings, err, tc.has)
				}
			}
			got, ok := ParseTimings([]byte(tc.data))
			if ok != tc.has || got != tc.want {
				t.Errorf("ParseTimings = %+v, %v; want %+v, %v", got, ok, tc.want, tc.has)
			}
		})
	}
}

// TestReaderReset: a reader reset onto a new stream reads it afresh,
// whatever the last one left: its [DONE], an event cut in the middle,
// bytes after [DONE].
func TestReaderReset(t *testing.T) {
	tests := []struct {
		name, before string
	}{
		{name: "after [DONE]", before: vllmChunk("a", 1, "length") + done},
		{name: "after a cut event", before: vllmChunk("a", 1, "")[:40]},
		{name: "after bytes past [DONE]", before: done + vllmChunk("x", 9, "")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := NewReader(strings.NewReader(tc.before), 64)
			for {
				if _, err := r.Next(); err != nil {
					break
				}
			}
			r.Reset(strings.NewReader(vllmChunk("b c", 2, "stop") + done))
			c, err := r.Next()
			if err != nil || c.CompletionTokens != 2 || c.FinishReason != "stop" {
				t.Fatalf("after Reset: %+v, %v; want the new stream's chunk", c, err)
			}
			if _, err := r.Next(); err != io.EOF {
				t.Errorf("after the new stream's [DONE]: %v, want io.EOF", err)
			}
		})
	}
}
