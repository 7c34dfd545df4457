// Package requests builds the requests a spec's workload asks for
// (docs/method.md#workload): article chat prompts sized through the
// server's tokenizer to exactly a context length, random token-ID prompts,
// one prompt per stream when the workload is distinct (Builder), and a
// named workload's schedule of requests from its dataset or generated
// prompts (Scheduler). It reads dataset files (ReadDataset); the values it
// works from are package workload's. It does not speak HTTP: the caller
// supplies a Tokenizer (POST /tokenize).
package requests

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/slogate/slogate/internal/warning"
	"github.com/slogate/slogate/internal/workload"
)

// Tokenizer is the server's tokenizer, as POST /tokenize serves it.
type Tokenizer interface {
	// TokenizeChat renders messages through the model's chat template,
	// with the assistant's generation prompt when addGenerationPrompt,
	// passing chatTemplateKwargs to the template (nil: none), and returns
	// the rendered prompt's token IDs: exactly what /v1/chat/completions
	// would feed the model.
	TokenizeChat(ctx context.Context, messages []openai.ChatCompletionMessage, addGenerationPrompt bool, chatTemplateKwargs map[string]any) ([]int, error)
	// TokenizeText returns the token IDs of text, without special tokens
	// (add_special_tokens false).
	TokenizeText(ctx context.Context, text string) ([]int, error)
}

// Prompt is one prompt of n tokens.
type Prompt struct {
	// Messages is the article's one user message, for
	// /v1/chat/completions; nil for random prompts.
	Messages []openai.ChatCompletionMessage
	// Tokens are the prompt's token IDs, for /v1/completions: for an
	// article, the rendered chat prompt exactly as /tokenize returned it
	// (chat template and generation prompt included: send them as they are,
	// with no second template pass).
	Tokens []int
	// Warnings say how the prompt differs from what was asked (a count
	// below the context when no cut renders to it exactly, a user document
	// continued past its end); empty when it is exact.
	Warnings []warning.Warning
}

// Builder builds the prompts of one workload against one server's
// tokenizer. It keeps what it learned (characters per token, the
// vocabulary range, the last context's prompts) between calls; it is not
// safe for concurrent use.
type Builder struct {
	tok  Tokenizer
	opts workload.Options

	doc         *document
	instruction string
	userDoc     bool

	// charsPerToken is the document's bytes per token (0: not measured).
	charsPerToken float64
	sampleIDs     []int
	vocab         *vocabRange

	// The prompts of the last context asked for, by stream.
	cacheN  int
	cache   []Prompt
	lastCut int

	calls int
}

// New returns a Builder for opts over tok.
func NewBuilder(tok Tokenizer, opts workload.Options) *Builder {
	if opts.Prompt == "" {
		opts.Prompt = workload.Article
	}
	b := &Builder{tok: tok, opts: opts, instruction: opts.Instruction}
	if b.instruction == "" {
		b.instruction = DefaultInstruction
	}
	text := opts.Document
	if strings.TrimSpace(text) == "" {
		text = Corpus()
	} else {
		b.userDoc = true
	}
	b.doc = newDocument(text)
	return b
}

// Calls is the number of Tokenizer calls made so far.
func (b *Builder) Calls() int { return b.calls }

// Prompts returns the prompts of a decode cell at context n with streams
// concurrent streams: one per stream (stream i sends Prompts(…)[i] on every
// request, restarts included) when the workload is distinct, else one
// prompt every stream shares. Prompts of a context are built once: asking
// again for the same n with as many streams or fewer costs no Tokenizer
// call, and stream i's prompt does not depend on streams. The prompts are
// shared with the Builder's cache: read them, do not modify them.
func (b *Builder) Prompts(ctx context.Context, n, streams int) ([]Prompt, error) {
	if n <= 0 {
		return nil, fmt.Errorf("a prompt needs at least one token; asked for %d", n)
	}
	count := 1
	if b.opts.Distinct {
		count = max(streams, 1)
	}
	if n != b.cacheN {
		b.cacheN, b.cache = n, nil
	}
	for i := len(b.cache); i < count; i++ {
		p, err := b.build(ctx, n, i)
		if err != nil {
			return nil, err
		}
		b.cache = append(b.cache, p)
	}
	return b.cache[:count], nil
}

// Prompt returns stream's prompt at context n (stream is ignored unless
// the workload is distinct): the prompt of a prefill request, or of one
// stream of a decode cell.
func (b *Builder) Prompt(ctx context.Context, n, stream int) (Prompt, error) {
	if !b.opts.Distinct {
		stream = 0
	}
	ps, err := b.Prompts(ctx, n, stream+1)
	if err != nil {
		return Prompt{}, err
	}
	return ps[stream], nil
}

func (b *Builder) build(ctx context.Context, n, stream int) (Prompt, error) {
	if b.opts.Prompt == workload.Random {
		return b.random(ctx, n, stream)
	}
	header := ""
	if b.opts.Distinct {
		header = streamHeader(stream)
	}
	return b.article(ctx, n, header)
}

// streamHeader opens stream i's prompt when prompts are distinct: it
// differs between streams within the prompt's first tokens, so no two
// streams share a prefix-cache block.
func streamHeader(i int) string { return fmt.Sprintf("Reader %d:\n\n", i+1) }

// Record returns the workload's record for results.json.
func (b *Builder) Record() workload.Record {
	r := workload.Record{
		Prompt:             b.opts.Prompt,
		Distinct:           b.opts.Distinct,
		Sampling:           map[string]json.Number{},
		ChatTemplateKwargs: map[string]any{},
	}
	for k, v := range b.opts.Sampling {
		r.Sampling[k] = v
	}
	if len(b.opts.LogitBias) > 0 {
		r.LogitBias = map[string]json.Number{}
		for k, v := range b.opts.LogitBias {
			r.LogitBias[k] = v
		}
	}
	if b.opts.Prompt == workload.Random {
		seed := b.opts.Seed
		r.RandomSeed = &seed
		return r
	}
	for k, v := range b.opts.ChatTemplateKwargs {
		r.ChatTemplateKwargs[k] = v
	}
	r.DocumentSHA256 = sha256Hex(b.doc.base)
	r.InstructionSHA256 = sha256Hex(b.instruction)
	return r
}

func sha256Hex(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}
