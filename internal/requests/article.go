package requests

import (
	"context"
	"fmt"
	"math"

	openai "github.com/sashabaranov/go-openai"

	"github.com/slogate/slogate/internal/warning"
)

// DefaultInstruction follows the document when the spec gives no
// instruction: a request for a long, detailed article, so the model writes
// real prose for the whole max_output (the seed reports' method,
// docs/method.md#workload).
const DefaultInstruction = `Using the reference document above, write an extremely detailed and very long article about the subjects it covers. Go through every topic in depth: explain the history, the methods and the reasoning behind them, describe the people, places and tools involved, give concrete examples, compare the ideas with one another, and discuss what they mean today and what might come next. Organise the article into many sections with headings, write in full paragraphs rather than lists, and keep writing for as long as you can: do not summarise briefly and do not stop early.`

// separator sits between the (cut) document and the instruction.
const separator = "\n\n"

// maxFitRounds bounds the /tokenize round trips of one article prompt: a
// secant step usually lands within 2–4; bisection bounds the rest (40
// rounds cover documents up to 2^40 bytes).
const maxFitRounds = 40

// sampleBytes is how much of the document is tokenized once to learn its
// bytes per token (and, for random prompts, the vocabulary range).
const sampleBytes = 256 << 10

// userMessage is the article's one user message.
func userMessage(content string) []openai.ChatCompletionMessage {
	return []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: content}}
}

// content is the user message: header, the document cut to cut bytes, the
// instruction.
func (b *Builder) content(header string, cut int) string {
	return header + b.doc.prefix(cut) + separator + b.instruction
}

func (b *Builder) tokenizeChat(ctx context.Context, msgs []openai.ChatCompletionMessage) ([]int, error) {
	b.calls++
	ids, err := b.tok.TokenizeChat(ctx, msgs, true, b.opts.ChatTemplateKwargs)
	if err != nil {
		return nil, fmt.Errorf("sizing the article prompt through the chat template: %w", err)
	}
	return ids, nil
}

// learn tokenizes the start of the document once: its bytes per token
// seed the first guess of every search, its IDs the vocabulary range.
func (b *Builder) learn(ctx context.Context) error {
	if b.sampleIDs != nil {
		return nil
	}
	sample := b.doc.prefix(min(sampleBytes, len(b.doc.base)))
	b.calls++
	ids, err := b.tok.TokenizeText(ctx, sample)
	if err != nil {
		return fmt.Errorf("tokenizing the document: %w", err)
	}
	if len(ids) == 0 {
		return fmt.Errorf("the tokenizer returned no token for %d bytes of the document", len(sample))
	}
	b.sampleIDs = ids
	b.charsPerToken = float64(len(sample)) / float64(len(ids))
	return nil
}

// article fits the document cut so that the rendered chat prompt (header,
// document, instruction, chat template and generation prompt) is exactly n
// tokens. It searches the cut length: the first guess from the overhead
// (the prompt with no document) and the document's bytes per token, then
// secant steps, bisection when a step leaves the bracket. The next stream's
// search starts from this one's cut (distinct headers differ by a token or
// two). When no cut renders to exactly n (a tokenizer merging across the
// cut), it returns the closest count below n with a warning.
func (b *Builder) article(ctx context.Context, n int, header string) (Prompt, error) {
	if err := b.learn(ctx); err != nil {
		return Prompt{}, err
	}
	type point struct{ cut, tokens int }
	var prev *point
	cut := 0
	if b.lastCut > 0 && b.cacheN == n && len(b.cache) > 0 {
		cut = b.lastCut // a further stream of the same context
	} else {
		msgs := userMessage(b.content(header, 0))
		ids, err := b.tokenizeChat(ctx, msgs)
		if err != nil {
			return Prompt{}, err
		}
		o := len(ids)
		switch {
		case o == n:
			return Prompt{Messages: msgs, Tokens: ids}, nil
		case o > n:
			return Prompt{}, fmt.Errorf("the chat template and the instruction alone render to %d tokens, more than the %d asked for: shorten the instruction or measure a longer context", o, n)
		}
		prev = &point{0, o}
		cut = int(math.Round(float64(n-o) * b.charsPerToken))
	}

	lo, hi := 0, -1 // cuts known to give fewer / more than n tokens
	var best Prompt
	bestTokens := -1
	for round := 0; round < maxFitRounds; round++ {
		if err := ctx.Err(); err != nil {
			return Prompt{}, err
		}
		cut = b.doc.boundary(max(cut, 0))
		msgs := userMessage(b.content(header, cut))
		ids, err := b.tokenizeChat(ctx, msgs)
		if err != nil {
			return Prompt{}, err
		}
		k := len(ids)
		switch {
		case k == n:
			b.lastCut = cut
			return Prompt{Messages: msgs, Tokens: ids, Warnings: b.continued(cut)}, nil
		case k < n:
			if k > bestTokens {
				best, bestTokens = Prompt{Messages: msgs, Tokens: ids}, k
				b.lastCut = cut
			}
			lo = max(lo, cut)
		default:
			if hi < 0 || cut < hi {
				hi = cut
			}
		}
		if hi >= 0 && b.doc.boundary(hi-1) <= lo {
			break // adjacent cuts: n falls between them
		}
		slope := b.charsPerToken
		if prev != nil && k != prev.tokens && (cut-prev.cut)*(k-prev.tokens) > 0 {
			slope = float64(cut-prev.cut) / float64(k-prev.tokens)
		}
		prev = &point{cut, k}
		next := cut + int(math.Round(float64(n-k)*slope))
		if next == cut {
			next += sign(n - k)
		}
		if next <= lo || (hi >= 0 && next >= hi) {
			if hi < 0 {
				next = max(2*lo, lo+1)
			} else {
				next = lo + (hi-lo)/2
			}
		}
		cut = next
	}
	if bestTokens < 0 {
		return Prompt{}, fmt.Errorf("no cut of the document renders to %d tokens or fewer", n)
	}
	best.Warnings = append(b.continued(b.lastCut), warning.New(warning.PromptShort,
		fmt.Sprintf("no cut of the document renders to exactly %d tokens through the chat template; the closest below, %d tokens, is used", n, bestTokens), "",
		map[string]float64{warning.FigAskedTokens: float64(n), warning.FigTokens: float64(bestTokens)}))
	return best, nil
}

// continued warns when a user's document was continued past its end to
// reach the cut (the built-in corpus is meant to be continued).
func (b *Builder) continued(cut int) []warning.Warning {
	if !b.userDoc || cut <= len(b.doc.base) {
		return nil
	}
	return []warning.Warning{warning.New(warning.DocumentContinued,
		fmt.Sprintf("the document (%d bytes) is shorter than the prompt needs (%d bytes)", len(b.doc.base), cut),
		"it is continued with its paragraphs re-ordered and their sentences rotated",
		map[string]float64{warning.FigDocumentBytes: float64(len(b.doc.base)), warning.FigNeededBytes: float64(cut)})}
}

func sign(x int) int {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}
