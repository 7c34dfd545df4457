package requests

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	openai "github.com/sashabaranov/go-openai"

	"github.com/slogate/slogate/internal/warning"
	"github.com/slogate/slogate/internal/workload"
)

// checkRendered checks that p's token IDs are exactly what the chat
// template renders of its messages (the exact tokens the chat endpoint
// would feed the model) and that the message ends with the instruction.
func checkRendered(t *testing.T, tok *fakeTokenizer, p Prompt, kwargs map[string]any, instruction string) {
	t.Helper()
	if len(p.Messages) != 1 || p.Messages[0].Role != "user" {
		t.Fatalf("messages %v, want one user message", p.Messages)
	}
	if !strings.HasSuffix(p.Messages[0].Content, "\n\n"+instruction) {
		t.Errorf("the message does not end with the instruction: …%q", tail(p.Messages[0].Content, 80))
	}
	want := (&fakeTokenizer{maxRun: tok.maxRun, perPiece: tok.perPiece}).tokenize(tok.render(p.Messages, true, kwargs), true)
	if !slices.Equal(p.Tokens, want) {
		t.Errorf("Tokens (%d) are not the rendered chat prompt of Messages (%d tokens)", len(p.Tokens), len(want))
	}
	if p.Tokens[0] != imStart || p.Tokens[len(p.Tokens)-1] == imEnd {
		t.Errorf("Tokens do not run from <|im_start|> to the generation prompt: first %d, last %d", p.Tokens[0], p.Tokens[len(p.Tokens)-1])
	}
}

func tail(s string, n int) string { return s[max(0, len(s)-n):] }

// TestArticleExact: the rendered prompt is exactly the context, at sizes
// that are multiples of nothing convenient, in a handful of calls.
func TestArticleExact(t *testing.T) {
	tests := []struct {
		name     string
		n        int
		maxCalls int // Tokenizer calls, the first (document sample) included
	}{
		{name: "just above the template and instruction", n: 200, maxCalls: 8},
		{name: "1K", n: 1000, maxCalls: 8},
		{name: "8K", n: 8192, maxCalls: 8},
		{name: "prime", n: 12347, maxCalls: 8},
		{name: "64K+1", n: 65537, maxCalls: 8},
		{name: "251K", n: 257024, maxCalls: 8},
		{name: "odd 300K", n: 299999, maxCalls: 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tok := &fakeTokenizer{}
			b := NewBuilder(tok, workload.Options{})
			ps, err := b.Prompts(context.Background(), tt.n, 64)
			if err != nil {
				t.Fatal(err)
			}
			if len(ps) != 1 {
				t.Fatalf("%d prompts for a shared workload, want 1", len(ps))
			}
			p := ps[0]
			if len(p.Tokens) != tt.n || len(p.Warnings) != 0 {
				t.Fatalf("%d tokens (warnings %q), want exactly %d", len(p.Tokens), p.Warnings, tt.n)
			}
			checkRendered(t, tok, p, nil, DefaultInstruction)
			if got := tok.chatCalls + tok.textCalls; got > tt.maxCalls || got != b.Calls() {
				t.Errorf("%d tokenizer calls (Builder says %d), want at most %d", got, b.Calls(), tt.maxCalls)
			}
			t.Logf("n=%d: %d tokenize calls, %d bytes sent", tt.n, b.Calls(), tok.bytesSent)
		})
	}
}

// TestArticleMillion: a 1M-token prompt, longer than the corpus many times
// over, is exact in few calls and sends little more than a few prompts'
// worth of text to the tokenizer.
func TestArticleMillion(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 4 MB prompts")
	}
	const n = 1 << 20
	tok := &fakeTokenizer{}
	b := NewBuilder(tok, workload.Options{})
	p, err := b.Prompt(context.Background(), n, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Tokens) != n {
		t.Fatalf("%d tokens, want %d", len(p.Tokens), n)
	}
	if len(p.Messages[0].Content) < 3*len(Corpus()) {
		t.Fatalf("a 1M-token prompt of %d bytes does not go past the corpus (%d bytes)", len(p.Messages[0].Content), len(Corpus()))
	}
	if b.Calls() > 8 {
		t.Errorf("%d tokenizer calls, want at most 8", b.Calls())
	}
	if sent, one := tok.bytesSent, len(p.Messages[0].Content); sent > 6*one {
		t.Errorf("sent %d bytes to the tokenizer, more than 6 prompts of %d", sent, one)
	}
	t.Logf("1M tokens: %d calls, %.1f prompts' worth of bytes sent", b.Calls(), float64(tok.bytesSent)/float64(len(p.Messages[0].Content)))
}

// TestArticleNotExact: when the tokenizer cannot reach the count (here
// every piece is 3 tokens), the closest count below is used, with a warning.
func TestArticleNotExact(t *testing.T) {
	tok := &fakeTokenizer{perPiece: 3}
	b := NewBuilder(tok, workload.Options{})
	const n = 8192 // 3 specials + 3 per piece: n % 3 == 2 is out of reach
	p, err := b.Prompt(context.Background(), n, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := len(p.Tokens)
	if got >= n || got < n-3 {
		t.Fatalf("%d tokens, want the closest count below %d (within 3)", got, n)
	}
	if want := map[string]float64{warning.FigAskedTokens: float64(n), warning.FigTokens: float64(got)}; len(p.Warnings) != 1 ||
		p.Warnings[0].Code != warning.PromptShort || !cmp.Equal(p.Warnings[0].Figures, want) {
		t.Errorf("warnings %+v, want one prompt_short quoting %v", p.Warnings, want)
	}
	checkRendered(t, tok, p, nil, DefaultInstruction)
	if b.Calls() > 20 {
		t.Errorf("%d calls to find the closest count, want at most 20", b.Calls())
	}
}

// TestArticleOptions: a user's document and instruction, and the chat
// template kwargs, reach the rendered prompt; a short document is
// continued with a warning.
func TestArticleOptions(t *testing.T) {
	doc := "The harbour at dawn is quiet. Boats rock on their moorings.\n\nA gull watches the nets. The tide turns slowly."
	const instruction = "Describe the harbour."
	kwargs := map[string]any{"enable_thinking": false}
	tok := &fakeTokenizer{}
	b := NewBuilder(tok, workload.Options{Document: doc, Instruction: instruction, ChatTemplateKwargs: kwargs})
	p, err := b.Prompt(context.Background(), 4096, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Tokens) != 4096 {
		t.Fatalf("%d tokens, want 4096", len(p.Tokens))
	}
	checkRendered(t, tok, p, kwargs, instruction)
	content := p.Messages[0].Content
	if !strings.HasPrefix(content, doc+"\n\n") || strings.HasPrefix(content[len(doc)+2:], doc[:40]) {
		t.Errorf("the message is not the document continued with a variation of it: %q…", content[:200])
	}
	if len(p.Warnings) != 1 || p.Warnings[0].Code != warning.DocumentContinued || p.Warnings[0].Figures[warning.FigDocumentBytes] != float64(len(doc)) {
		t.Errorf("warnings %+v, want one document_continued quoting the document's %d bytes", p.Warnings, len(doc))
	}
	// The think block of enable_thinking=false is part of the count.
	withThink := tok.tokenize(tok.render(p.Messages, true, kwargs), true)
	without := tok.tokenize(tok.render(p.Messages, true, nil), true)
	if len(withThink) != 4096 || len(without) >= 4096 {
		t.Errorf("chat_template_kwargs not passed to the template: %d tokens with, %d without", len(withThink), len(without))
	}

	r := b.Record()
	if r.DocumentSHA256 != sha256Hex(doc) || r.InstructionSHA256 != sha256Hex(instruction) {
		t.Errorf("record hashes %s %s do not hash the document and instruction given", r.DocumentSHA256, r.InstructionSHA256)
	}
}

// TestArticleTooShort: a context the template and instruction alone exceed
// is an error that says so.
func TestArticleTooShort(t *testing.T) {
	b := NewBuilder(&fakeTokenizer{}, workload.Options{})
	_, err := b.Prompt(context.Background(), 20, 0)
	if err == nil || !strings.Contains(err.Error(), "the chat template and the instruction alone render to") {
		t.Fatalf("err = %v, want the template-and-instruction error", err)
	}
}

// TestDistinct: every stream's prompt has the same length and differs
// from every other within its first tokens; stream i's prompt does not
// depend on how many streams were asked for, and is built once.
func TestDistinct(t *testing.T) {
	const n, streams = 8192, 64
	tok := &fakeTokenizer{}
	b := NewBuilder(tok, workload.Options{Distinct: true})
	ctx := context.Background()
	ps, err := b.Prompts(ctx, n, streams)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != streams {
		t.Fatalf("%d prompts, want %d", len(ps), streams)
	}
	// A prefix-cache block is 16 tokens: no two streams may share one.
	const head = 16
	seen := map[string]int{}
	for i, p := range ps {
		if len(p.Tokens) != n {
			t.Errorf("stream %d: %d tokens, want %d", i, len(p.Tokens), n)
		}
		checkRendered(t, tok, p, nil, DefaultInstruction)
		key := fmt.Sprint(p.Tokens[:head])
		if j, dup := seen[key]; dup {
			t.Errorf("streams %d and %d share their first %d tokens", j, i, head)
		}
		seen[key] = i
	}
	calls := b.Calls()
	if per := float64(calls) / streams; per > 3 {
		t.Errorf("%d tokenizer calls for %d streams (%.1f per stream), want at most 3 per stream", calls, streams, per)
	}
	t.Logf("%d distinct prompts of %d tokens: %d tokenize calls", streams, n, calls)

	again, err := b.Prompts(ctx, n, 8)
	if err != nil {
		t.Fatal(err)
	}
	if b.Calls() != calls {
		t.Errorf("asking again for 8 streams made %d more calls", b.Calls()-calls)
	}
	fresh, err := NewBuilder(&fakeTokenizer{}, workload.Options{Distinct: true}).Prompts(ctx, n, 8)
	if err != nil {
		t.Fatal(err)
	}
	for i := range again {
		if !slices.Equal(again[i].Tokens, ps[i].Tokens) || !slices.Equal(fresh[i].Tokens, ps[i].Tokens) {
			t.Errorf("stream %d's prompt depends on the number of streams asked for", i)
		}
	}
}

// TestRandom: random prompts are exact in length, in the ordinary range
// (no special token), mostly distinct IDs, reproducible from the seed and
// different per stream when distinct.
func TestRandom(t *testing.T) {
	ctx := context.Background()
	const n = 8192
	build := func(seed uint64, distinct bool, streams int) []Prompt {
		t.Helper()
		ps, err := NewBuilder(&fakeTokenizer{}, workload.Options{Prompt: workload.Random, Seed: seed, Distinct: distinct}).Prompts(ctx, n, streams)
		if err != nil {
			t.Fatal(err)
		}
		return ps
	}
	ps := build(7, true, 4)
	sample, _ := (&fakeTokenizer{}).TokenizeText(ctx, Corpus())
	lo, hi := slices.Min(sample), slices.Max(sample)
	for i, p := range ps {
		if len(p.Tokens) != n || p.Messages != nil {
			t.Fatalf("stream %d: %d tokens, messages %v; want %d tokens and no messages", i, len(p.Tokens), p.Messages, n)
		}
		distinct := map[int]bool{}
		for _, id := range p.Tokens {
			if id < lo || id > hi || id == imStart || id == imEnd {
				t.Fatalf("stream %d: token %d outside the ordinary range %d…%d", i, id, lo, hi)
			}
			distinct[id] = true
		}
		if share := float64(len(distinct)) / n; share < 0.9 {
			t.Errorf("stream %d: %.0f%% distinct IDs, want at least 90%% (not a short repetition)", i, 100*share)
		}
	}
	if slices.Equal(ps[0].Tokens[:64], ps[1].Tokens[:64]) {
		t.Error("distinct random streams share their first 64 tokens")
	}
	if again := build(7, true, 4); !slices.Equal(again[3].Tokens, ps[3].Tokens) {
		t.Error("the same seed gave a different prompt")
	}
	if other := build(8, true, 1); slices.Equal(other[0].Tokens[:64], ps[0].Tokens[:64]) {
		t.Error("another seed gave the same prompt")
	}
	if shared := build(7, false, 4); len(shared) != 1 {
		t.Errorf("%d prompts for a shared random workload, want 1", len(shared))
	}
}

// TestRecord: results.json's workload object, with the keys issue 11 names.
func TestRecord(t *testing.T) {
	tests := []struct {
		name string
		opts workload.Options
		want string
	}{
		{
			name: "default article",
			opts: workload.Options{},
			want: fmt.Sprintf(`{"prompt":"article","distinct":false,"sampling":{},"chat_template_kwargs":{},"document_sha256":%q,"instruction_sha256":%q}`,
				sha256Hex(Corpus()), sha256Hex(DefaultInstruction)),
		},
		{
			name: "random with sampling",
			opts: workload.Options{Prompt: workload.Random, Distinct: true, Seed: 42, Sampling: map[string]json.Number{"temperature": "0.6", "top_k": "20"}},
			want: `{"prompt":"random","distinct":true,"sampling":{"temperature":0.6,"top_k":20},"chat_template_kwargs":{},"random_seed":42}`,
		},
		{
			name: "article with kwargs",
			opts: workload.Options{Document: "d", Instruction: "i", ChatTemplateKwargs: map[string]any{"enable_thinking": false}},
			want: fmt.Sprintf(`{"prompt":"article","distinct":false,"sampling":{},"chat_template_kwargs":{"enable_thinking":false},"document_sha256":%q,"instruction_sha256":%q}`,
				sha256Hex("d"), sha256Hex("i")),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(NewBuilder(&fakeTokenizer{}, tt.opts).Record())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("record (-want +got):\n%s", diff)
			}
		})
	}
}

// BenchmarkArticle251K builds a shared article prompt of 251K tokens from
// scratch (fake tokenizer included), as the runner does once per context.
// Regenerate the numbers in the report with:
//
//	go test ./workload -run '^$' -bench Article251K -benchmem
func BenchmarkArticle251K(b *testing.B) {
	ctx := context.Background()
	calls := 0
	for b.Loop() {
		bld := NewBuilder(&fakeTokenizer{}, workload.Options{})
		if _, err := bld.Prompt(ctx, 257024, 0); err != nil {
			b.Fatal(err)
		}
		calls = bld.Calls()
	}
	b.ReportMetric(float64(calls), "tokenize-calls/op")
}

// rangeTokenizer gives plain text the IDs lo … lo+width-1 in turn (256
// when width is 0), special left out, one a 4 bytes; a chat rendering is
// the text's IDs behind the special ID special.
type rangeTokenizer struct{ lo, special, width int }

func (r rangeTokenizer) TokenizeText(ctx context.Context, text string) ([]int, error) {
	width := r.width
	if width == 0 {
		width = 256
	}
	var ids []int
	for i := 0; len(ids) < max(len(text)/4, 1); i++ {
		if id := r.lo + i%width; id != r.special {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

func (r rangeTokenizer) TokenizeChat(ctx context.Context, messages []openai.ChatCompletionMessage, gen bool, kw map[string]any) ([]int, error) {
	ids, _ := r.TokenizeText(ctx, messages[0].Content)
	return append([]int{r.special}, ids...), nil
}

// TestRandomDrawsWholeRange: random prompts draw from the whole ordinary
// range, both of its ends included (the largest ID the tokenizer gave is
// drawn, not only those below it), and never a special token.
func TestRandomDrawsWholeRange(t *testing.T) {
	tests := []struct {
		name        string
		lo, special int
	}{
		{name: "special outside the range", lo: 1000, special: 151644},
		{name: "special inside the range", lo: 1000, special: 1100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const n = 8192 // each of 256 IDs is missed with probability (255/256)^8192 ≈ 1e-14
			p, err := NewBuilder(rangeTokenizer{lo: tt.lo, special: tt.special}, workload.Options{Prompt: workload.Random, Seed: 1}).Prompt(context.Background(), n, 0)
			if err != nil {
				t.Fatal(err)
			}
			seen := map[int]int{}
			for _, id := range p.Tokens {
				seen[id]++
			}
			hi := tt.lo + 255
			if seen[tt.lo] == 0 || seen[hi] == 0 {
				t.Errorf("lowest ID %d drawn %d times, highest %d drawn %d times in %d tokens: the range's ends must be drawable", tt.lo, seen[tt.lo], hi, seen[hi], n)
			}
			if seen[tt.special] > 0 {
				t.Errorf("special ID %d drawn %d times", tt.special, seen[tt.special])
			}
			for id := range seen {
				if id < tt.lo || id > hi {
					t.Errorf("ID %d outside the ordinary range %d…%d", id, tt.lo, hi)
				}
			}
		})
	}
}

// TestRandomVocabRange: random prompts take the ordinary range a
// byte-level tokenizer gives English text (IDs 10 to 122, the generated
// models of internal/hfmodel that vLLM's CPU build serves) and refuse a
// range too narrow to be a tokenizer's vocabulary, saying so.
func TestRandomVocabRange(t *testing.T) {
	tests := []struct {
		name    string
		lo      int
		width   int
		wantErr string
	}{
		{name: "byte-level printable range", lo: 10, width: 113},
		{name: "the fewest IDs taken", lo: 1000, width: minVocabRange},
		{name: "one fewer", lo: 1000, width: minVocabRange - 1, wantErr: "the tokenizer gave token IDs from 1000 to 1062 only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewBuilder(rangeTokenizer{lo: tt.lo, special: 1 << 20, width: tt.width}, workload.Options{Prompt: workload.Random, Seed: 1}).Prompt(context.Background(), 64, 0)
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("error %v, want %q", err, tt.wantErr)
			}
		})
	}
}
