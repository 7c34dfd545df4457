package measure

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	openai "github.com/sashabaranov/go-openai"

	"github.com/slogate/slogate/internal/lifecycle"
	"github.com/slogate/slogate/internal/requests"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/vllmfake"
	"github.com/slogate/slogate/internal/workload"
)

func TestChatRequestTokenAccounting(t *testing.T) {
	tests := []struct {
		name         string
		fake         *vllmfake.Server
		tokens       float64
		decodeTokens float64
		gaps         []float32 // ms per token: each chunk spans one 1 ms pause
		source       result.TokenSource
	}{
		// The role chunk (0 tokens) gives the TTFT; the first token chunk
		// after it is not a decode gap.
		{name: "per-chunk usage, role chunk, reasoning then content, multi-token chunks",
			fake: &vllmfake.Server{Tokens: 10, PerChunk: 3, Reasoning: true}, tokens: 10, decodeTokens: 7,
			gaps: []float32{1.0 / 3, 1.0 / 3, 1}, source: result.TokenSourceUsage},
		{name: "final usage only: the role chunk is not a token",
			fake: &vllmfake.Server{Tokens: 10, PerChunk: 2, Usage: "final"}, tokens: 10, decodeTokens: 8,
			gaps: []float32{0.5, 0.5, 0.5, 0.5}, source: result.TokenSourceFinalUsage},
		{name: "no usage: one token per content chunk, none for the role chunk",
			fake: &vllmfake.Server{Tokens: 10, PerChunk: 2, Usage: "none", Reasoning: true}, tokens: 5, decodeTokens: 4,
			gaps: []float32{1, 1, 1, 1}, source: result.TokenSourceChunks},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// The fake's 1 ms pauses advance the load's clock as the chunks
			// are read (clockedTransport): gaps are exact, not real time.
			tc.fake.Gap = time.Millisecond
			var clock atomic.Int64
			c := clockedClient(t, tc.fake, &clock)
			l := newLoad(c, "/v1/chat/completions", [][]byte{chatFields.body(hiPrompt, 100, 100, "")}, 1, 5*time.Second, 300*time.Millisecond)
			l.now = clock.Load
			l.windowStart.Store(0)
			st := &l.slots[0]
			started := false
			if err := l.request(context.Background(), st, l.bodies[0], &started); err != nil {
				t.Fatal(err)
			}
			l.windowEnd.Store(l.now())
			st.source = l.stats().source
			if st.tokens != tc.tokens || st.decodeTokens != tc.decodeTokens || st.source != tc.source {
				t.Errorf("tokens %v decodeTokens %v source %q; want %v %v %q",
					st.tokens, st.decodeTokens, st.source, tc.tokens, tc.decodeTokens, tc.source)
			}
			// Exact: a gap of 0 would be the role chunk counted as a token
			// (it comes with the first token chunk), one more gap too.
			if diff := cmp.Diff(tc.gaps, st.gaps); diff != "" {
				t.Errorf("gaps in ms per token (-want +got):\n%s", diff)
			}
			if len(st.spans) != 1 || !st.spans[0].finished || len(st.ttfts) != 1 || !started {
				t.Errorf("spans %+v ttfts %v started %v; want one finished request", st.spans, st.ttfts, started)
			}
			if len(st.ttfts) == 1 && st.ttfts[0] != 1 {
				t.Errorf("TTFT %v ms, want 1 (the first pause)", st.ttfts[0])
			}
		})
	}
}

var (
	chatFields = requestFields{model: "qwen", chat: true}
	hiPrompt   = requests.Prompt{Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}}, Tokens: []int{1, 2, 3}}
)

// TestRequestBody: a request sends the prompt (token IDs on completions,
// the messages on chat), the lengths, ignore_eos, the workload's sampling
// fields exactly as written and nothing else (no temperature unless the
// spec sets it), chat_template_kwargs on chat only, stream_options and the
// cache_salt when given.
func TestRequestBody(t *testing.T) {
	prompt := requests.Prompt{Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "a \"quoted\"\nline"}}, Tokens: []int{7, 8, 9}}
	custom := &spec.Workload{Options: workload.Options{Sampling: map[string]json.Number{"top_p": "0.95", "temperature": "0.60", "repetition_penalty": "1"},
		ChatTemplateKwargs: map[string]any{"enable_thinking": false}}}
	stream := map[string]any{"include_usage": true, "continuous_usage_stats": true}
	msgs := []any{map[string]any{"role": "user", "content": "a \"quoted\"\nline"}}
	tests := []struct {
		name     string
		chat     bool
		workload *spec.Workload
		min      int
		salt     string
		want     map[string]any
		raw      string // a substring of the encoded body
	}{
		{name: "completions, default workload", workload: &spec.Workload{}, min: 4096, salt: "salt-1",
			want: map[string]any{"model": "qwen", "prompt": []any{7.0, 8.0, 9.0}, "max_tokens": 4096.0, "min_tokens": 4096.0,
				"ignore_eos": true, "stream": true, "stream_options": stream, "cache_salt": "salt-1"}},
		{name: "chat, default workload, no salt, no min_tokens", chat: true,
			want: map[string]any{"model": "qwen", "messages": msgs, "max_completion_tokens": 4096.0,
				"ignore_eos": true, "stream": true, "stream_options": stream}},
		{name: "chat with sampling and chat_template_kwargs", chat: true, workload: custom, min: 4096, salt: "s",
			want: map[string]any{"model": "qwen", "messages": msgs, "max_completion_tokens": 4096.0, "min_tokens": 4096.0,
				"ignore_eos": true, "temperature": 0.6, "top_p": 0.95, "repetition_penalty": 1.0,
				"chat_template_kwargs": map[string]any{"enable_thinking": false}, "stream": true, "stream_options": stream, "cache_salt": "s"},
			raw: `"repetition_penalty":1,"temperature":0.60,"top_p":0.95,`},
		{name: "completions with sampling: no chat_template_kwargs", workload: custom, min: 4096,
			want: map[string]any{"model": "qwen", "prompt": []any{7.0, 8.0, 9.0}, "max_tokens": 4096.0, "min_tokens": 4096.0,
				"ignore_eos": true, "temperature": 0.6, "top_p": 0.95, "repetition_penalty": 1.0, "stream": true, "stream_options": stream}},
		{name: "completions with logit_bias", workload: &spec.Workload{Options: workload.Options{LogitBias: map[string]json.Number{"50256": "-100", "7": "2.5"}}},
			want: map[string]any{"model": "qwen", "prompt": []any{7.0, 8.0, 9.0}, "max_tokens": 4096.0,
				"ignore_eos": true, "logit_bias": map[string]any{"50256": -100.0, "7": 2.5}, "stream": true, "stream_options": stream},
			raw: `"logit_bias":{"50256":-100,"7":2.5}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := newRequestFields("qwen", tc.chat, tc.workload).body(prompt, 4096, tc.min, tc.salt)
			var got map[string]any
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatalf("%s: %v", b, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
			if !strings.Contains(string(b), tc.raw) {
				t.Errorf("body %s does not contain %s (the numbers as written)", b, tc.raw)
			}
		})
	}
}

// clockedClient is a client of f's handler served in process, whose pauses
// advance clock instead of passing in real time (vllmfake.Server.ClockedClient).
func clockedClient(t *testing.T, f *vllmfake.Server, clock *atomic.Int64) *lifecycle.Client {
	t.Helper()
	h := f.ClockedClient(t, clock) // starts f: its model is set after this
	return lifecycle.NewClientOver(h, "http://fake.invalid", "", f.Model)
}
