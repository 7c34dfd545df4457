package requests

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
)

// vocabRange is the range random token IDs are drawn from: the smallest to
// the largest ID the tokenizer gave for ordinary text, less the special
// tokens the chat template uses.
type vocabRange struct {
	lo, hi  int
	special map[int]bool
}

// minVocabRange is the fewest IDs the ordinary range may hold: fewer says
// the tokenizer did not tokenize the sample as text. A byte-level
// tokenizer's range over English text is the printable ASCII bytes and
// the newline, 10 to 122, 113 IDs (docs/vllm.md#cpu-build's test model).
const minVocabRange = 64

// learnVocab finds the ordinary-token range: the IDs of the document's
// sample as plain text bound it (special tokens such as <|im_start|> sit
// outside the ordinary range in the usual vocabularies, or are never
// produced by plain text); the IDs a chat rendering adds that plain text
// never gave are special and excluded even inside the range. A server
// without a chat template (a base model) has none to exclude.
func (b *Builder) learnVocab(ctx context.Context) error {
	if b.vocab != nil {
		return nil
	}
	if err := b.learn(ctx); err != nil {
		return err
	}
	v := &vocabRange{lo: slices.Min(b.sampleIDs), hi: slices.Max(b.sampleIDs), special: map[int]bool{}}
	if v.hi-v.lo+1 < minVocabRange {
		return fmt.Errorf("the tokenizer gave token IDs from %d to %d only for %d tokens of text: too narrow a range for random prompts", v.lo, v.hi, len(b.sampleIDs))
	}
	plain := map[int]bool{}
	for _, id := range b.sampleIDs {
		plain[id] = true
	}
	const probe = "Hello"
	b.calls++
	if ids, err := b.tok.TokenizeChat(ctx, userMessage(probe), true, nil); err == nil {
		b.calls++
		if own, err := b.tok.TokenizeText(ctx, probe); err == nil {
			for _, id := range own {
				plain[id] = true
			}
			for _, id := range ids {
				if !plain[id] {
					v.special[id] = true
				}
			}
		}
	}
	b.vocab = v
	return nil
}

// random returns stream's random prompt of n token IDs, drawn uniformly
// from the ordinary-token range with a generator seeded by the workload's
// seed, the context and the stream (like vLLM's random dataset): the same
// seed gives the same prompts on every run.
func (b *Builder) random(ctx context.Context, n, stream int) (Prompt, error) {
	if err := b.learnVocab(ctx); err != nil {
		return Prompt{}, err
	}
	rng := rand.New(rand.NewPCG(b.opts.Seed, uint64(n)<<24^uint64(stream)))
	return Prompt{Tokens: b.randomIDs(rng, n)}, nil
}

// randomIDs draws n token IDs uniformly from the ordinary-token range
// (learnVocab first).
func (b *Builder) randomIDs(rng *rand.Rand, n int) []int {
	v := b.vocab
	ids := make([]int, n)
	span := v.hi - v.lo + 1
	for i := range ids {
		id := v.lo + rng.IntN(span)
		for v.special[id] {
			id = v.lo + rng.IntN(span)
		}
		ids[i] = id
	}
	return ids
}

// otherID is an ordinary-token ID other than id (learnVocab first): the
// next one up the range, wrapping.
func (b *Builder) otherID(id int) int {
	v := b.vocab
	span := v.hi - v.lo + 1
	next := id
	for range span {
		next = v.lo + (next-v.lo+1)%span
		if next != id && !v.special[next] {
			return next
		}
	}
	return id
}
