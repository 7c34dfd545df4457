package runner

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/result/resulttest"
	"github.com/slogate/slogate/internal/vllmfake"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/warning"
)

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
		if c.Status != vocab.StatusValid || c.OutputTokens <= 0 || c.TokenSource != result.TokenSourceUsage || len(resulttest.UnexplainedWarnings(c)) != 0 {
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
	want := map[string]float64{warning.FigAskedTokens: 1000, warning.FigTokens: 998}
	if len(res.Warnings) != 1 || res.Warnings[0].Code != warning.PromptShort || !cmp.Equal(res.Warnings[0].Figures, want) {
		t.Errorf("run warnings %+v, want one prompt_short quoting %v", res.Warnings, want)
	}
	if len(res.Decode) != 1 {
		t.Fatalf("decode = %+v, want one cell", res.Decode)
	}
	if ws := resulttest.UnexplainedWarnings(res.Decode[0]); len(ws) != 1 || len(res.Warnings) != 1 || !ws[0].Equal(res.Warnings[0]) {
		t.Errorf("cell warnings %+v, want the run's shortfall warning as the cell's one warning", ws)
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
