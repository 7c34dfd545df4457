package runner

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	openai "github.com/sashabaranov/go-openai"

	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/vllmfake"
	"github.com/slogate/slogate/lifecycle"
	"github.com/slogate/slogate/result"
	"github.com/slogate/slogate/spec"
	"github.com/slogate/slogate/vocab"
	"github.com/slogate/slogate/workload"
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
	hiPrompt   = workload.Prompt{Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}}, Tokens: []int{1, 2, 3}}
)

// TestRequestBody: a request sends the prompt (token IDs on completions,
// the messages on chat), the lengths, ignore_eos, the workload's sampling
// fields exactly as written and nothing else (no temperature unless the
// spec sets it), chat_template_kwargs on chat only, stream_options and the
// cache_salt when given.
func TestRequestBody(t *testing.T) {
	prompt := workload.Prompt{Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "a \"quoted\"\nline"}}, Tokens: []int{7, 8, 9}}
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

func chatSpecConfig(t *testing.T, url string, conc ...int) Config {
	sp := smallSpec(conc...)
	sp.Measure.Endpoint = "chat"
	sp.Prefill.Contexts = []int{1000}
	sp.Matrices[0].Contexts = []int{1000}
	return testConfig(t, url, sp, "")
}

func TestRunChatEndpoint(t *testing.T) {
	f := vllmfake.Server{Tokens: 100000, PerChunk: 2, Gap: 2 * time.Millisecond, KVBlocks: 1000, MaxModelLen: 8192}
	s := f.Start(t)
	cfg := chatSpecConfig(t, s.URL, 1, 2)
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Measure.Endpoint != "chat" || len(res.Warnings) != 0 {
		t.Errorf("measure %+v, warnings %q", res.Measure, res.Warnings)
	}
	if len(res.Prefill) != 1 || res.Prefill[0].Status != vocab.StatusValid || res.Prefill[0].TPS <= 0 {
		t.Errorf("prefill = %+v", res.Prefill)
	}
	if len(res.Decode) != 2 {
		t.Fatalf("decode = %+v", res.Decode)
	}
	for _, c := range res.Decode {
		if c.Status != vocab.StatusValid || c.OutputTokens <= 0 || c.TokenSource != result.TokenSourceUsage || len(c.Warnings) != 0 {
			t.Errorf("cell %s = %+v", c.Ref().Name(), c)
		}
		if c.TBTMs < 0.5 || c.TBTMs > 5 { // 2 ms per 2-token chunk
			t.Errorf("cell %s tbt_ms = %v, want about 1 ms", c.Ref().Name(), c.TBTMs)
		}
	}
	body := f.LastBody.Load().(map[string]any)
	msgs, _ := body["messages"].([]any)
	if body["max_completion_tokens"] != 4096.0 || body["min_tokens"] != 4096.0 || body["ignore_eos"] != true ||
		body["temperature"] != nil || body["cache_salt"] == nil || body["prompt"] != nil || len(msgs) != 1 {
		t.Fatalf("last request body = %v", body)
	}
	content := msgs[0].(map[string]any)["content"].(string)
	if got := 20 + (len(content)+3)/4; got != 1000 {
		t.Errorf("the chat prompt renders to %d tokens, want 1000", got)
	}
}

func TestRunChatClosestBelowIsACellWarning(t *testing.T) {
	f := vllmfake.Server{Tokens: 100000, Gap: 2 * time.Millisecond, KVBlocks: 1000, ChatCount: func(s string) int { return 20 + 3*((len(s)+11)/12) }}
	s := f.Start(t)
	res, err := Run(context.Background(), chatSpecConfig(t, s.URL, 1))
	if err != nil {
		t.Fatal(err)
	}
	const want = "prompt at 1000: no cut of the document renders to exactly 1000 tokens through the chat template; the closest below, 998 tokens, is used"
	if diff := cmp.Diff([]string{want}, res.Warnings); diff != "" {
		t.Errorf("run warnings (-want +got):\n%s", diff)
	}
	if len(res.Decode) != 1 || !cmp.Equal([]string{want}, res.Decode[0].Warnings) {
		t.Errorf("decode = %+v, want the shortfall as a cell warning", res.Decode)
	}
}

func TestRunChatNeedsTokenize(t *testing.T) {
	tests := []struct {
		name string
		fake *vllmfake.Server
		want string
	}{
		{name: "no /tokenize", fake: &vllmfake.Server{Tokens: 10, NoTokenize: true},
			want: "sizes its prompts through POST /tokenize with messages (the server's chat template), which failed at %s: the server does not serve it"},
		{name: "/tokenize without messages", fake: &vllmfake.Server{Tokens: 10, NoChatTokenize: true},
			want: "which failed at %s: POST /tokenize with messages answered 400"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.fake.Start(t)
			res, err := Run(context.Background(), chatSpecConfig(t, s.URL, 1))
			want := strings.ReplaceAll(tc.want, "%s", s.URL)
			if exit.Code(err) != exit.Infra || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), `workload { prompt = "random" } on measure.endpoint = "completions"`) {
				t.Fatalf("err = %v, want exit 3 containing %q and suggesting completions", err, want)
			}
			if len(res.Decode) != 0 || tc.fake.Requests.Load() != 0 {
				t.Errorf("measured %+v with %d requests, want nothing", res.Decode, tc.fake.Requests.Load())
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
