package runner

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/result"
)

func TestCalibrateChat(t *testing.T) {
	tests := []struct {
		name      string
		count     func(content string) int // nil: 20 template tokens + one per 4 bytes
		n         int
		want      int
		maxRounds int64
		wantErr   string
	}{
		{name: "exact, small context", n: 100, want: 100, maxRounds: 4},
		{name: "exact, 4K", n: 4096, want: 4096, maxRounds: 4},
		{name: "exact, 251K", n: 257024, want: 257024, maxRounds: 4},
		{name: "estimate off by 3x still converges",
			count: func(s string) int { return 50 + (len(s)+11)/12 }, n: 8192, want: 8192, maxRounds: 5},
		{name: "non-linear tokenizer (longer words further in)",
			count: func(s string) int { return 30 + len(s)/3 + len(s)*len(s)/4_000_000 }, n: 32768, want: 32768, maxRounds: 7},
		{name: "no exact length: the closest count below",
			count: func(s string) int { return 20 + 2*((len(s)+7)/8) }, n: 4097, want: 4096, maxRounds: 12},
		{name: "template alone is longer than the context",
			count: func(s string) int { return 5000 + len(s) }, n: 4096, wantErr: "no user message gives a chat prompt of 4096 tokens or fewer"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeVLLM{chatCount: tc.count}
			s := f.start(t)
			c := newAPIClient(s.URL, "", "qwen")
			p, err := calibrateChat(context.Background(), c, tc.n, float64(len(neutralText))/90)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.tokens != tc.want {
				t.Errorf("tokens = %d, want %d", p.tokens, tc.want)
			}
			// The messages are what the count was measured on.
			var msgs []struct{ Role, Content string }
			if err := json.Unmarshal(p.messages, &msgs); err != nil || len(msgs) != 1 || msgs[0].Role != "user" {
				t.Fatalf("messages %s: %v", p.messages, err)
			}
			count := tc.count
			if count == nil {
				count = func(s string) int { return 20 + (len(s)+3)/4 }
			}
			if got := count(msgs[0].Content); got != tc.want {
				t.Errorf("the returned message renders to %d tokens, want %d", got, tc.want)
			}
			t.Logf("%d /tokenize round trips", f.tokenizeCalls.Load())
			if calls := f.tokenizeCalls.Load(); calls > tc.maxRounds {
				t.Errorf("%d /tokenize round trips, want at most %d", calls, tc.maxRounds)
			}
		})
	}
}

func TestChatRequestTokenAccounting(t *testing.T) {
	tests := []struct {
		name         string
		fake         *fakeVLLM
		tokens       float64
		decodeTokens float64
		gaps         int
		source       result.TokenSource
	}{
		// The role chunk (0 tokens) gives the TTFT; the first token chunk
		// after it is not a decode gap.
		{name: "per-chunk usage, role chunk, reasoning then content, multi-token chunks",
			fake: &fakeVLLM{tokens: 10, perChunk: 3, reasoning: true}, tokens: 10, decodeTokens: 7, gaps: 3, source: result.TokenSourceUsage},
		{name: "final usage only: the role chunk is not a token",
			fake: &fakeVLLM{tokens: 10, perChunk: 2, usage: "final"}, tokens: 10, decodeTokens: 8, gaps: 4, source: result.TokenSourceFinalUsage},
		{name: "no usage: one token per content chunk, none for the role chunk",
			fake: &fakeVLLM{tokens: 10, perChunk: 2, usage: "none", reasoning: true}, tokens: 5, decodeTokens: 4, gaps: 4, source: result.TokenSourceChunks},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.fake.gap = time.Millisecond
			s := tc.fake.start(t)
			c := newAPIClient(s.URL, "", "qwen")
			l := newLoad(c, "/v1/chat/completions", chatBody("qwen", chatMessages("hi"), 100, 100, ""), 1, 5*time.Second, 300*time.Millisecond)
			l.windowStart.Store(0)
			st := &l.slots[0]
			started := false
			if err := l.request(context.Background(), st, &started); err != nil {
				t.Fatal(err)
			}
			l.windowEnd.Store(l.now())
			st.source = l.stats().source
			if st.tokens != tc.tokens || st.decodeTokens != tc.decodeTokens || len(st.gaps) != tc.gaps || st.source != tc.source {
				t.Errorf("tokens %v decodeTokens %v gaps %d source %q; want %v %v %d %q",
					st.tokens, st.decodeTokens, len(st.gaps), st.source, tc.tokens, tc.decodeTokens, tc.gaps, tc.source)
			}
			if len(st.spans) != 1 || !st.spans[0].finished || len(st.ttfts) != 1 || !started {
				t.Errorf("spans %+v ttfts %v started %v; want one finished request", st.spans, st.ttfts, started)
			}
			for _, g := range st.gaps { // every gap spans a 1 ms server pause
				if g < 0.3 {
					t.Errorf("gaps %v: a gap below 0.3 ms counts the role chunk as a token", st.gaps)
					break
				}
			}
		})
	}
}

func TestChatBody(t *testing.T) {
	var got map[string]any
	if err := json.Unmarshal(chatBody("qwen", chatMessages("a \"quoted\"\nline"), 4096, 4096, "salt-1"), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"model":                 "qwen",
		"messages":              []any{map[string]any{"role": "user", "content": "a \"quoted\"\nline"}},
		"max_completion_tokens": 4096.0, "min_tokens": 4096.0, "ignore_eos": true, "temperature": 0.0, "stream": true,
		"stream_options": map[string]any{"include_usage": true, "continuous_usage_stats": true},
		"cache_salt":     "salt-1",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("chat body (-want +got):\n%s", diff)
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
	f := fakeVLLM{tokens: 100000, perChunk: 2, gap: 2 * time.Millisecond, kvBlocks: 1000, maxModelLen: 8192}
	s := f.start(t)
	cfg := chatSpecConfig(t, s.URL, 1, 2)
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Measure.Endpoint != "chat" || len(res.Warnings) != 0 {
		t.Errorf("measure %+v, warnings %q", res.Measure, res.Warnings)
	}
	if len(res.Prefill) != 1 || res.Prefill[0].Status != result.StatusValid || res.Prefill[0].TPS <= 0 {
		t.Errorf("prefill = %+v", res.Prefill)
	}
	if len(res.Decode) != 2 {
		t.Fatalf("decode = %+v", res.Decode)
	}
	for _, c := range res.Decode {
		if c.Status != result.StatusValid || c.OutputTokens <= 0 || c.TokenSource != result.TokenSourceUsage || len(c.Warnings) != 0 {
			t.Errorf("cell %s = %+v", c.Ref().Name(), c)
		}
		if c.TBTMs < 0.5 || c.TBTMs > 5 { // 2 ms per 2-token chunk
			t.Errorf("cell %s tbt_ms = %v, want about 1 ms", c.Ref().Name(), c.TBTMs)
		}
	}
	body := f.lastBody.Load().(map[string]any)
	msgs, _ := body["messages"].([]any)
	if body["max_completion_tokens"] != 4096.0 || body["min_tokens"] != 4096.0 || body["ignore_eos"] != true ||
		body["temperature"] != 0.0 || body["cache_salt"] == nil || body["prompt"] != nil || len(msgs) != 1 {
		t.Fatalf("last request body = %v", body)
	}
	content := msgs[0].(map[string]any)["content"].(string)
	if got := 20 + (len(content)+3)/4; got != 1000 {
		t.Errorf("the chat prompt renders to %d tokens, want 1000", got)
	}
}

func TestRunChatClosestBelowIsACellWarning(t *testing.T) {
	f := fakeVLLM{tokens: 100000, gap: 2 * time.Millisecond, kvBlocks: 1000, chatCount: func(s string) int { return 20 + 3*((len(s)+11)/12) }}
	s := f.start(t)
	res, err := Run(context.Background(), chatSpecConfig(t, s.URL, 1))
	if err != nil {
		t.Fatal(err)
	}
	const want = "chat prompt at 1000: no message renders to exactly 1000 tokens through the chat template; the closest below, 998 tokens, is used"
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
		fake *fakeVLLM
		want string
	}{
		{name: "no /tokenize", fake: &fakeVLLM{tokens: 10, noTokenize: true}, want: "which %s does not serve"},
		{name: "/tokenize without messages", fake: &fakeVLLM{tokens: 10, noChatTokenize: true}, want: "POST /tokenize with messages, which failed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.fake.start(t)
			res, err := Run(context.Background(), chatSpecConfig(t, s.URL, 1))
			want := strings.ReplaceAll(tc.want, "%s", s.URL)
			if exit.Code(err) != exit.Infra || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), `endpoint = "completions"`) {
				t.Fatalf("err = %v, want exit 3 containing %q and suggesting completions", err, want)
			}
			if len(res.Decode) != 0 || tc.fake.requests.Load() != 0 {
				t.Errorf("measured %+v with %d requests, want nothing", res.Decode, tc.fake.requests.Load())
			}
		})
	}
}
