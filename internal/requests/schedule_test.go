package requests

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	openai "github.com/sashabaranov/go-openai"

	"github.com/slogate/slogate/internal/warning"
	"github.com/slogate/slogate/internal/workload"
)

// pairTokenizer counts as slogate's simulator does: one token per two
// bytes of text (the last byte alone when odd), so the fixtures' drop
// reasons are the ones the e2e tests see.
type pairTokenizer struct{ calls int }

func (p *pairTokenizer) TokenizeText(ctx context.Context, text string) ([]int, error) {
	p.calls++
	ids := make([]int, 0, (len(text)+1)/2)
	for i := 0; i < len(text); i += 2 {
		id := int(text[i]) << 8
		if i+1 < len(text) {
			id |= int(text[i+1])
		}
		ids = append(ids, 256+id)
	}
	return ids, nil
}

func (p *pairTokenizer) TokenizeChat(ctx context.Context, messages []openai.ChatCompletionMessage, gen bool, kw map[string]any) ([]int, error) {
	var b strings.Builder
	for _, m := range messages {
		b.WriteString("<" + m.Role + ">" + m.Content + "</>")
	}
	return p.TokenizeText(ctx, b.String())
}

func plan(t *testing.T, tok Tokenizer, opts workload.Options, cfg ScheduleConfig) *Schedule {
	t.Helper()
	p, err := NewScheduler(tok, opts, nil).Schedule(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPlanShareGPT replays the ShareGPT fixture as vLLM's ShareGPTDataset
// would: the prompt is a kept entry's first turn, the output its second
// turn's token count, the entries the filter must drop counted by reason,
// and the kept entries reused in order with a warning when the plan needs
// more.
func TestPlanShareGPT(t *testing.T) {
	path := filepath.Join(datasets, "sharegpt.json")
	d, err := ReadDataset(path, "")
	if err != nil {
		t.Fatal(err)
	}
	byIndex := map[int]workload.Entry{}
	for _, e := range d.Entries {
		byIndex[e.Index] = e
	}
	opts := workload.Options{Prompt: workload.DatasetPrompt, DatasetPath: path, Seed: 3, IgnoreEOS: true}
	p := plan(t, &pairTokenizer{}, opts, ScheduleConfig{Requests: 20})
	want := Dropped{TooFewTurns: 2, PromptTooShort: 1, OutputTooShort: 1, PromptTooLong: 1, TotalTooLong: 1}
	if p.Dropped != want || p.Usable != 8 || p.Examined != 12 || p.Reused != 12 {
		t.Errorf("dropped %+v, usable %d, examined %d, reused %d; want %+v, 8, 12, 12", p.Dropped, p.Usable, p.Examined, p.Reused, want)
	}
	reuse := map[string]float64{warning.FigKept: 8, warning.FigRequests: 20, warning.FigDropped: 6, warning.FigReused: 12}
	if len(p.Warnings) != 1 || p.Warnings[0].Code != warning.DatasetReused || !cmp.Equal(p.Warnings[0].Figures, reuse) {
		t.Errorf("warnings %+v, want the reuse warning with figures %v", p.Warnings, reuse)
	}
	seen := map[int]bool{}
	for i, r := range p.Requests {
		e, ok := byIndex[r.Entry]
		if !ok {
			t.Fatalf("request %d sends entry %d, which is not in the file", i, r.Entry)
		}
		if strings.HasPrefix(jsonID(t, d, e), "drop") {
			t.Errorf("request %d sends dropped entry %d", i, r.Entry)
		}
		ref := (len(e.Reference) + 1) / 2
		if r.Text != e.Prompt || r.Messages[0].Content != e.Prompt || r.OutputTokens != ref || r.ReferenceTokens != ref ||
			r.PromptTokens != (len(e.Prompt)+1)/2 || r.Line != e.Line || r.Tokens != nil || r.Conversation != i || r.Turn != 0 || r.PrefixGroup != -1 {
			t.Errorf("request %d = %+v; want entry %d's prompt with %d output tokens", i, r, r.Entry, ref)
		}
		if i < 8 {
			seen[r.Entry] = true
		} else if r.Entry != p.Requests[i-8].Entry {
			t.Errorf("request %d sends entry %d; reuse in order sends request %d's entry %d", i, r.Entry, i-8, p.Requests[i-8].Entry)
		}
	}
	if len(seen) != 8 {
		t.Errorf("the first 8 requests send %d distinct entries, want 8", len(seen))
	}

	// A shorter plan is the longer one's start; another seed another order.
	short := plan(t, &pairTokenizer{}, opts, ScheduleConfig{Requests: 5})
	if diff := cmp.Diff(p.Requests[:5], short.Requests); diff != "" {
		t.Errorf("a 5-request plan is not the 20-request plan's start (-want +got):\n%s", diff)
	}
	if short.Reused != 0 || len(short.Warnings) != 0 || short.Examined >= 12 {
		t.Errorf("a 5-request plan reused %d, warned %q, examined %d entries", short.Reused, short.Warnings, short.Examined)
	}
	opts.Seed = 4
	other := plan(t, &pairTokenizer{}, opts, ScheduleConfig{Requests: 8})
	if slices.EqualFunc(other.Requests, p.Requests[:8], func(a, b Request) bool { return a.Entry == b.Entry }) {
		t.Errorf("seeds 3 and 4 send the entries in the same order")
	}
}

// jsonID is the fixture entry's "id" (the fixture names each entry keep-N
// or drop-REASON).
func jsonID(t *testing.T, d *workload.Dataset, e workload.Entry) string {
	t.Helper()
	src := readFile(t, d.Path)
	lines := strings.Split(src, "\n")
	for _, l := range lines[e.Line-1 : min(len(lines), e.Line+3)] {
		if _, id, ok := strings.Cut(l, `"id": "`); ok {
			return strings.TrimSuffix(strings.TrimSpace(id), `",`)
		}
	}
	t.Fatalf("no id near line %d", e.Line)
	return ""
}

// TestPlanShareGPTFixedOutput: a fixed output_tokens replaces the
// reference's count, and the output minimum is not checked (vLLM's
// skip_min_output_len_check), even for a fixed length below it.
func TestPlanShareGPTFixedOutput(t *testing.T) {
	opts := workload.Options{Prompt: workload.DatasetPrompt, DatasetPath: filepath.Join(datasets, "sharegpt.json"), OutputTokens: workload.FixedLength(3)}
	p := plan(t, &pairTokenizer{}, opts, ScheduleConfig{Requests: 9})
	if p.Dropped.OutputTooShort != 0 || p.Usable != 9 {
		t.Errorf("dropped %+v, usable %d; want the short output kept (9 usable)", p.Dropped, p.Usable)
	}
	for _, r := range p.Requests {
		if r.OutputTokens != 3 || r.ReferenceTokens != 0 {
			t.Errorf("request %d: output %d, reference %d; want 3 and uncounted", r.Index, r.OutputTokens, r.ReferenceTokens)
		}
	}
}

// TestPlanDatasetPrefix: behind shared prefixes a dataset prompt is sent
// as token IDs, the group's P tokens then the prompt's own, so exactly G
// distinct heads of P tokens; its text is the prefix's text then the prompt.
func TestPlanDatasetPrefix(t *testing.T) {
	tok := &pairTokenizer{}
	path := filepath.Join(datasets, "sharegpt.json")
	d, err := ReadDataset(path, "")
	if err != nil {
		t.Fatal(err)
	}
	prompts := map[int]string{}
	for _, e := range d.Entries {
		prompts[e.Index] = e.Prompt
	}
	opts := workload.Options{Prompt: workload.DatasetPrompt, DatasetPath: path, Prefix: workload.Prefix{Groups: 3, Tokens: 32}}
	p := plan(t, tok, opts, ScheduleConfig{Requests: 12})
	heads := map[string]bool{}
	for _, r := range p.Requests {
		own, _ := tok.TokenizeText(context.Background(), prompts[r.Entry])
		heads[fmt.Sprint(r.Tokens[:32])] = true
		if r.PrefixGroup != r.Index%3 || !strings.HasPrefix(r.Text, fmt.Sprintf("Shared context %d:", r.PrefixGroup+1)) || !strings.HasSuffix(r.Text, "\n\n"+prompts[r.Entry]) ||
			len(r.Tokens) != r.PromptTokens || !slices.Equal(r.Tokens[32:], own) {
			t.Errorf("request %d: group %d, text %.30q, %d tokens (%d planned)", r.Index, r.PrefixGroup, r.Text, len(r.Tokens), r.PromptTokens)
		}
	}
	if len(heads) != 3 {
		t.Errorf("%d distinct 32-token heads, want 3", len(heads))
	}
}

// TestPlanJSONL: a line's output_tokens, else vLLM's custom default 256.
func TestPlanJSONL(t *testing.T) {
	opts := workload.Options{Prompt: workload.DatasetPrompt, DatasetPath: filepath.Join(datasets, "prompts.jsonl")}
	p := plan(t, &pairTokenizer{}, opts, ScheduleConfig{Requests: 5})
	got := map[int]int{}
	for _, r := range p.Requests {
		got[r.Line] = r.OutputTokens
	}
	if diff := cmp.Diff(map[int]int{1: 256, 2: 64, 3: 32, 4: 256, 5: 128}, got); diff != "" {
		t.Errorf("output tokens by line (-want +got):\n%s", diff)
	}
}

// TestPlanMaxModelLen: a dataset request longer than the server allows is
// an error naming its line, before anything is sent.
func TestPlanMaxModelLen(t *testing.T) {
	path := filepath.Join(datasets, "prompts.jsonl")
	_, err := NewScheduler(&pairTokenizer{}, workload.Options{Prompt: workload.DatasetPrompt, DatasetPath: path}, nil).Schedule(context.Background(), ScheduleConfig{Requests: 5, MaxModelLen: 280})
	var de *workload.DatasetError
	if !errors.As(err, &de) || de.Line == 0 || !strings.Contains(de.Error(), "exceed the server's max_model_len 280: shorten or remove the line, lower output_tokens, or raise max_model_len") {
		t.Fatalf("error %v, want a workload.DatasetError at a line over max_model_len, with a JSONL line's remedy (no filter: max_total_tokens is ShareGPT's)", err)
	}
}

// TestPlanNoneKept: a filter that keeps no entry is a dataset error that
// counts the entries and the drops by reason.
func TestPlanNoneKept(t *testing.T) {
	tests := []struct {
		name   string
		filter workload.Filter
		want   string
	}{
		{name: "prompts too short", filter: workload.Filter{MinPromptTokens: 100000, MinOutputTokens: 4, MaxPromptTokens: 1024, MaxTotalTokens: 2048},
			want: "no entry passes the filter (12 entries: 12 with fewer than 100000 prompt tokens, 0 with fewer than 4 output tokens, 0 with more than 1024 prompt tokens, 0 with more than 2048 tokens in all, 2 with fewer than two turns)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := workload.Options{Prompt: workload.DatasetPrompt, DatasetPath: filepath.Join(datasets, "sharegpt.json"), Filter: tt.filter}
			_, err := NewScheduler(&pairTokenizer{}, opts, nil).Schedule(context.Background(), ScheduleConfig{Requests: 5})
			var de *workload.DatasetError
			if !errors.As(err, &de) || !de.Empty || de.Why() != tt.want {
				t.Errorf("error %v, want an empty *workload.DatasetError saying %q", err, tt.want)
			}
		})
	}
}

// TestPlanMessages: each user message of a conversation is a turn, sent
// after the previous one; the first turn carries the system message; the
// output is the dataset answer's length (vLLM's multi-turn max_tokens).
func TestPlanMessages(t *testing.T) {
	opts := workload.Options{Prompt: workload.DatasetPrompt, DatasetPath: filepath.Join(datasets, "messages.jsonl"), Seed: 1}
	p := plan(t, &pairTokenizer{}, opts, ScheduleConfig{Requests: 5})
	type turn struct {
		Conv, Turn int
		Roles      []string
		First      string
		Out        int
	}
	var got []turn
	for _, r := range p.Requests {
		var roles []string
		for _, m := range r.Messages {
			roles = append(roles, m.Role)
		}
		got = append(got, turn{r.Conversation, r.Turn, roles, r.Messages[len(r.Messages)-1].Content[:12], r.OutputTokens})
	}
	// Seed 1 keeps "baking" (3 turns) before "bridges" (2 turns).
	want := []turn{
		{0, 0, []string{"system", "user"}, "Why did my b", 56},
		{0, 1, []string{"user"}, "How long sho", 42},
		{0, 2, []string{"user"}, "Can I prove ", 42},
		{3, 0, []string{"user"}, "What keeps a", 49},
		{3, 1, []string{"user"}, "What happens", 66},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("turns (-want +got):\n%s", diff)
	}
	capped := plan(t, &pairTokenizer{}, workload.Options{Prompt: workload.DatasetPrompt, DatasetPath: opts.DatasetPath, Seed: 1, Turns: 1}, ScheduleConfig{Requests: 2})
	if capped.Requests[1].Turn != 0 || capped.Requests[1].Conversation != 1 {
		t.Errorf("turns = 1: request 1 is turn %d of conversation %d, want a second conversation's first turn", capped.Requests[1].Turn, capped.Requests[1].Conversation)
	}
}

// TestPlanRandomPrefix: 4 groups of 256 tokens give exactly 4 distinct
// 256-token heads, each request's prompt its prefix plus its own input.
func TestPlanRandomPrefix(t *testing.T) {
	tok := &fakeTokenizer{}
	opts := workload.Options{Prompt: workload.Random, Seed: 9, Prefix: workload.Prefix{Groups: 4, Tokens: 256},
		InputTokens: workload.Length{Distribution: workload.Uniform, Min: 100, Max: 300}, OutputTokens: workload.FixedLength(16)}
	p := plan(t, tok, opts, ScheduleConfig{Requests: 40})
	heads := map[string]int{}
	for _, r := range p.Requests {
		head := fmt.Sprint(r.Tokens[:256])
		heads[head]++
		if r.PrefixGroup != r.Index%4 || len(r.Tokens) < 356 || len(r.Tokens) > 556 || r.PromptTokens != len(r.Tokens) {
			t.Errorf("request %d: group %d, %d tokens", r.Index, r.PrefixGroup, len(r.Tokens))
		}
		if slices.Equal(r.Tokens[256:], p.Requests[(r.Index+4)%40].Tokens[256:]) {
			t.Errorf("requests %d and %d share their suffix", r.Index, (r.Index+4)%40)
		}
	}
	if len(heads) != 4 {
		t.Errorf("%d distinct 256-token heads, want 4", len(heads))
	}
	for h, n := range heads {
		if n != 10 {
			t.Errorf("a head is sent %d times, want 10 (%.20s…)", n, h)
		}
	}
}

// TestPlanArticleDistribution: an article workload with a normal input
// distribution realises every drawn length exactly through the chat
// template, and 400 draws have the asked mean and spread.
func TestPlanArticleDistribution(t *testing.T) {
	tok := &fakeTokenizer{}
	in := workload.Length{Distribution: workload.Normal, Mean: 1000, Stddev: 200, Min: 400, Max: 1600}
	opts := workload.Options{Prompt: workload.Article, Seed: 5, InputTokens: in, OutputTokens: workload.FixedLength(64), Distinct: true}
	p := plan(t, tok, opts, ScheduleConfig{Requests: 400, Endpoint: "chat"})
	var lens []float64
	for _, r := range p.Requests {
		want := in.Sample(rand.New(rand.NewPCG(5, uint64(r.Index)<<4|streamInput)))
		if r.PromptTokens != want || len(r.Tokens) != want {
			t.Fatalf("request %d: %d tokens, want the drawn %d", r.Index, r.PromptTokens, want)
		}
		lens = append(lens, float64(r.PromptTokens))
	}
	mean, sd := meanStddev(lens)
	if math.Abs(mean-1000) > 30 || math.Abs(sd-200) > 20 {
		t.Errorf("mean %.1f, stddev %.1f; want 1000 ± 3 %% and 200 ± 10 %%", mean, sd)
	}
}

func meanStddev(xs []float64) (float64, float64) {
	var s, s2 float64
	for _, x := range xs {
		s += x
	}
	m := s / float64(len(xs))
	for _, x := range xs {
		s2 += (x - m) * (x - m)
	}
	return m, math.Sqrt(s2 / float64(len(xs)-1))
}

// TestPlanTurns: a generated 3-turn conversation: the first turn an
// article of its length, later turns text of theirs.
func TestPlanTurns(t *testing.T) {
	tok := &fakeTokenizer{}
	opts := workload.Options{Prompt: workload.Article, Turns: 3, InputTokens: workload.FixedLength(300), OutputTokens: workload.FixedLength(20)}
	p := plan(t, tok, opts, ScheduleConfig{Requests: 6, Endpoint: "chat"})
	for _, r := range p.Requests {
		if r.Conversation != r.Index-r.Index%3 || r.Turn != r.Index%3 || r.PromptTokens != 300 || len(r.Messages) != 1 {
			t.Errorf("request %d: conversation %d turn %d, %d tokens, %d messages", r.Index, r.Conversation, r.Turn, r.PromptTokens, len(r.Messages))
		}
		if r.Turn > 0 && !strings.HasPrefix(r.Text, "Question ") {
			t.Errorf("request %d's turn text starts %.20q", r.Index, r.Text)
		}
	}
	if p.Requests[0].Messages[0].Content == p.Requests[3].Messages[0].Content {
		t.Errorf("two conversations open with the same message")
	}
}

// TestSentReuseWarning: the reuse warning a cell reports counts the
// requests it sent, not those planned, and is absent when none repeated
// (a window closed before the dataset's entries ran out).
func TestSentReuseWarning(t *testing.T) {
	path := filepath.Join(datasets, "sharegpt.json")
	opts := workload.Options{Prompt: workload.DatasetPrompt, DatasetPath: path, Seed: 3, IgnoreEOS: true}
	p := plan(t, &pairTokenizer{}, opts, ScheduleConfig{Requests: 64})
	tests := []struct {
		name           string
		sent, repeats  int
		want           bool // a dataset_reused warning
		wantFigRequest float64
	}{
		{name: "fewer sent than the entries", sent: 6, repeats: 0},
		{name: "the entries sent once each", sent: 8, repeats: 0},
		{name: "some sent again", sent: 11, repeats: 3, wantFigRequest: 11, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, ok := p.SentReuseWarning(tt.sent, tt.repeats)
			if !tt.want {
				if ok {
					t.Errorf("warned %q, want no warning", w)
				}
				return
			}
			figs := map[string]float64{warning.FigKept: 8, warning.FigRequests: tt.wantFigRequest, warning.FigDropped: 6, warning.FigReused: float64(tt.repeats)}
			if !ok || w.Code != warning.DatasetReused || !cmp.Equal(w.Figures, figs) {
				t.Errorf("warning %v %q (figures %v), want dataset_reused with figures %v", ok, w, w.Figures, figs)
			}
		})
	}
	generated := plan(t, &fakeTokenizer{}, workload.Options{Prompt: workload.Random, Seed: 1, InputTokens: workload.FixedLength(8), OutputTokens: workload.FixedLength(4)}, ScheduleConfig{Requests: 4})
	if w, ok := generated.SentReuseWarning(10, 6); ok {
		t.Errorf("a plan without a dataset warned %q", w)
	}
}

// TestPlanRandomDial: a dialled hit rate makes each random prompt begin
// with whole blocks of one shared sequence and differ right after them,
// so that a prefix cache of the dial's block (or per token, block 1)
// serves exactly those tokens of every request after the first that an
// earlier one has cached: the share over the schedule is the dial within
// the first request's share, even for blocks as long as a prompt's share
// (the rounding is carried from request to request).
func TestPlanRandomDial(t *testing.T) {
	tests := []struct {
		name    string
		rate    float64
		block   int
		lengths workload.Length
		within  float64 // |planned − dial| bound
	}{
		{name: "0.2 in blocks of 16", rate: 0.2, block: 16, lengths: workload.FixedLength(512), within: 0.01},
		{name: "0.5 in blocks of 16", rate: 0.5, block: 16, lengths: workload.FixedLength(512), within: 0.01},
		{name: "0.8 in blocks of 16", rate: 0.8, block: 16, lengths: workload.FixedLength(512), within: 0.01},
		{name: "0.2 in blocks of 128 (vLLM CPU)", rate: 0.2, block: 128, lengths: workload.FixedLength(512), within: 0.01},
		{name: "0.8 in blocks of 128 (vLLM CPU)", rate: 0.8, block: 128, lengths: workload.FixedLength(960), within: 0.015},
		// 3 of a 512-token prompt's 4 blocks at most: its last token is
		// always computed.
		{name: "0.8 in blocks of 128 of 512-token prompts: 0.75 at most", rate: 0.8, block: 128, lengths: workload.FixedLength(512), within: 0.06},
		{name: "0.3 in blocks of 1K, prompts of 2K-4K", rate: 0.3, block: 1024, lengths: workload.Length{Distribution: workload.Uniform, Min: 2048, Max: 4096}, within: 0.03},
		{name: "0.6 per token, drawn lengths", rate: 0.6, block: 1, lengths: workload.Length{Distribution: workload.Uniform, Min: 200, Max: 400}, within: 0.01},
		{name: "0.8 in blocks of 16, drawn lengths", rate: 0.8, block: 16, lengths: workload.Length{Distribution: workload.Uniform, Min: 200, Max: 400}, within: 0.015},
		{name: "0 shares nothing", rate: 0, block: 16, lengths: workload.FixedLength(512), within: 0.001},
		{name: "1 shares all but the last block", rate: 1, block: 16, lengths: workload.FixedLength(512), within: 0.05},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := workload.Options{Prompt: workload.Random, Seed: 3, Prefix: workload.Prefix{HitRate: tt.rate, Block: tt.block},
				InputTokens: tt.lengths, OutputTokens: workload.FixedLength(8)}
			s := NewScheduler(&fakeTokenizer{}, opts, nil)
			p, err := s.Schedule(context.Background(), ScheduleConfig{Requests: 100})
			if err != nil {
				t.Fatal(err)
			}
			var hits, total, cached int // cached: the longest shared run an earlier request sent
			for i, r := range p.Requests {
				n := len(r.Tokens)
				k := 0
				for k < n && k < len(s.dialBase) && r.Tokens[k] == s.dialBase[k] {
					k++
				}
				if k%tt.block != 0 || k >= n {
					t.Fatalf("request %d: %d shared tokens of %d, not whole blocks of %d before the last token", i, k, n, tt.block)
				}
				// What a cache of the dial's block serves: the longest
				// common prefix with an earlier request, in whole blocks,
				// never the last token.
				best := 0
				for _, e := range p.Requests[:i] {
					c := 0
					for c < min(n, len(e.Tokens)) && e.Tokens[c] == r.Tokens[c] {
						c++
					}
					best = max(best, c)
				}
				hit := min(best/tt.block, (n-1)/tt.block) * tt.block
				if want := min(k, cached); hit != want && tt.block > 1 {
					t.Errorf("request %d: a cache serves %d tokens, want %d (%d shared, %d cached before)", i, hit, want, k, cached)
				}
				if best > k {
					t.Errorf("request %d matches an earlier one for %d tokens, beyond its %d shared", i, best, k)
				}
				cached = max(cached, k)
				hits += hit
				total += n
			}
			if got := float64(hits) / float64(total); math.Abs(got-tt.rate) > tt.within {
				t.Errorf("planned hit rate %.4f, dial %.2f (bound %.3f)", got, tt.rate, tt.within)
			}
			again := plan(t, &fakeTokenizer{}, opts, ScheduleConfig{Requests: 100})
			if !slices.EqualFunc(p.Requests, again.Requests, func(a, b Request) bool { return slices.Equal(a.Tokens, b.Tokens) }) {
				t.Error("the same seed planned other prompts")
			}
		})
	}
}

// TestPlanAgent plans the agentic fixture: every call once, session after
// session by start, each prompt exactly its recorded prompt_tokens and the
// session's earlier prompts its prefixes, the output the recorded
// completion_tokens, and the session starts and tool batches the recorded
// gaps ÷ speed.
func TestPlanAgent(t *testing.T) {
	tests := []struct {
		name   string
		file   string
		speed  float64
		starts []float64 // each request's session start, ms
		tools  []float64 // each request's tool batch before it, ms
	}{
		{name: "speed 1", file: "agent.jsonl", starts: []float64{0, 0, 0, 400, 400}, tools: []float64{0, 300, 500, 0, 250}},
		{name: "speed 2, gzip", file: "agent.jsonl.gz", speed: 2, starts: []float64{0, 0, 0, 200, 200}, tools: []float64{0, 150, 250, 0, 125}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := workload.Options{Prompt: workload.DatasetPrompt, DatasetPath: filepath.Join(datasets, tt.file), Trace: workload.Trace{Speed: tt.speed}}
			p := plan(t, &pairTokenizer{}, opts, ScheduleConfig{Requests: 1})
			var lengths, lines, convs, turns []int
			var starts, tools []float64
			for _, r := range p.Requests {
				lengths, lines, convs, turns = append(lengths, r.PromptTokens), append(lines, r.Line), append(convs, r.Conversation), append(turns, r.Turn)
				starts, tools = append(starts, r.Call.StartMs), append(tools, r.Call.ToolMs)
				if len(r.Tokens) != r.PromptTokens || r.OutputTokens != 10 || r.Call.RecordedMs != 200 {
					t.Errorf("request %d: %d IDs for %d prompt tokens, output %d, recorded %g ms; want equal, 10, 200", r.Index, len(r.Tokens), r.PromptTokens, r.OutputTokens, r.Call.RecordedMs)
				}
				if r.Turn > 0 {
					prev := p.Requests[r.Index-1]
					if !strings.HasPrefix(r.Text, prev.Text) || !slices.Equal(r.Tokens[:len(prev.Tokens)], prev.Tokens) {
						t.Errorf("request %d does not begin with its session's previous prompt", r.Index)
					}
				}
			}
			want := struct {
				Lengths, Lines, Convs, Turns []int
				Starts, Tools                []float64
			}{[]int{300, 420, 560, 200, 310}, []int{1, 3, 5, 2, 4}, []int{0, 0, 0, 3, 3}, []int{0, 1, 2, 0, 1}, tt.starts, tt.tools}
			got := want
			got.Lengths, got.Lines, got.Convs, got.Turns, got.Starts, got.Tools = lengths, lines, convs, turns, starts, tools
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
			if len(p.Warnings) != 0 || p.Reused != 0 {
				t.Errorf("warnings %v, %d reused; want none: a trace's calls are each sent once", p.Warnings, p.Reused)
			}
		})
	}
}

// TestPlanAgentHash: two plans of one agentic trace and seed have one
// trace_schedule hash, and another speed changes it (its times do).
func TestPlanAgentHash(t *testing.T) {
	hash := func(speed float64) string {
		opts := workload.Options{Prompt: workload.DatasetPrompt, DatasetPath: filepath.Join(datasets, "agent.jsonl"), Trace: workload.Trace{Speed: speed}}
		return plan(t, &pairTokenizer{}, opts, ScheduleConfig{Requests: 1}).TraceSHA256
	}
	tests := []struct {
		name string
		a, b float64
		same bool
	}{
		{name: "same trace and speed", a: 1, b: 1, same: true},
		{name: "another speed", a: 1, b: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := hash(tt.a), hash(tt.b)
			if len(a) != 64 || (a == b) != tt.same {
				t.Errorf("hashes %q and %q; want 64 hex digits, the same: %v", a, b, tt.same)
			}
		})
	}
}

// TestPlanAgentSessionOrder: a trace listed session by session, a session
// starting before the file's first line, is planned whole: every session,
// each at its start since the trace's earliest call.
func TestPlanAgentSessionOrder(t *testing.T) {
	tests := []struct {
		name     string
		lines    string
		sessions []string
		starts   []float64 // each request's session start, ms
		fileLine []int
	}{
		{name: "a later session first", lines: `{"session_id": "late", "turn": 1, "timestamp_ms": 1000, "duration_ms": 100, "prompt_tokens": 50, "completion_tokens": 10}
{"session_id": "early", "turn": 1, "timestamp_ms": 0, "duration_ms": 100, "prompt_tokens": 60, "completion_tokens": 10}
{"session_id": "early", "turn": 2, "timestamp_ms": 500, "duration_ms": 100, "prompt_tokens": 70, "completion_tokens": 10}
`, sessions: []string{"early", "early", "late"}, starts: []float64{0, 0, 1000}, fileLine: []int{2, 3, 1}},
		{name: "in time order", lines: `{"session_id": "a", "turn": 1, "timestamp_ms": 0, "duration_ms": 100, "prompt_tokens": 50, "completion_tokens": 10}
{"session_id": "b", "turn": 1, "timestamp_ms": 200, "duration_ms": 100, "prompt_tokens": 60, "completion_tokens": 10}
`, sessions: []string{"a", "b"}, starts: []float64{0, 200}, fileLine: []int{1, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "agent.jsonl")
			if err := os.WriteFile(path, []byte(tt.lines), 0o644); err != nil {
				t.Fatal(err)
			}
			opts := workload.Options{Prompt: workload.DatasetPrompt, DatasetPath: path}
			p := plan(t, &pairTokenizer{}, opts, ScheduleConfig{Requests: 1})
			var sessions []string
			var starts []float64
			var lines []int
			for _, r := range p.Requests {
				sessions, starts, lines = append(sessions, r.Call.Session), append(starts, r.Call.StartMs), append(lines, r.Line)
			}
			if !slices.Equal(sessions, tt.sessions) || !slices.Equal(starts, tt.starts) || !slices.Equal(lines, tt.fileLine) {
				t.Errorf("planned sessions %v starting at %v ms from lines %v; want %v at %v from %v", sessions, starts, lines, tt.sessions, tt.starts, tt.fileLine)
			}
		})
	}
}

// TestPlanAgentDropOverLength: with drop_over_length, a session with a
// call over the server's max_model_len is left out whole and its calls
// counted; without it the call is an error at its line.
func TestPlanAgentDropOverLength(t *testing.T) {
	tests := []struct {
		name       string
		drop       bool
		sessions   []string
		starts     []float64
		overLength int
		err        string
	}{
		// agent.jsonl: s-a's calls have 300, 420 and 560 prompt tokens,
		// s-b's 200 and 310, each with 10 output tokens.
		{name: "dropped", drop: true, sessions: []string{"s-b", "s-b"}, starts: []float64{400, 400}, overLength: 3},
		{name: "an error", err: "agent.jsonl:3: the prompt (420 tokens) and its output (10 tokens) exceed the server's max_model_len 400"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := workload.Options{Prompt: workload.DatasetPrompt, DatasetPath: filepath.Join(datasets, "agent.jsonl"), Trace: workload.Trace{DropOverLength: tt.drop}}
			s, err := NewScheduler(&pairTokenizer{}, opts, nil).Schedule(context.Background(), ScheduleConfig{Requests: 1, MaxModelLen: 400})
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("got %v; want an error saying %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var sessions []string
			var starts []float64
			for _, r := range s.Requests {
				sessions, starts = append(sessions, r.Call.Session), append(starts, r.Call.StartMs)
			}
			if !slices.Equal(sessions, tt.sessions) || !slices.Equal(starts, tt.starts) || s.Dropped.OverLength != tt.overLength ||
				s.Examined != 5 || s.Usable != len(tt.sessions) || len(s.Arrivals) != 1 {
				t.Errorf("sessions %v at %v ms, %d over length, %d examined, %d usable, arrivals %v; want %v at %v, %d, 5, %d, one",
					sessions, starts, s.Dropped.OverLength, s.Examined, s.Usable, s.Arrivals, tt.sessions, tt.starts, tt.overLength, len(tt.sessions))
			}
		})
	}
}
