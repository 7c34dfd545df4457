package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	openai "github.com/sashabaranov/go-openai"
	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/result"
)

// neutralText is tokenized once and tiled to build prompts of exact lengths.
const neutralText = `The history of measurement is the history of agreement. Merchants, builders and astronomers
each needed units that others would accept, and over centuries they settled on lengths, weights and
intervals of time that could be reproduced anywhere. A good measurement states what was counted, how
it was counted, and how certain the count is. It can be repeated by someone else with the same
result, and it changes only when the thing measured changes. Tables of such numbers let people plan
bridges, harvests and voyages, and compare this year with the last without arguing about the method.`

// Safe token IDs used when /tokenize is missing: ordinary vocabulary in
// every tokenizer of 32K entries or more, away from special tokens.
const (
	safeIDBase  = 1000
	safeIDRange = 20000
)

// promptIDs returns the base token pattern: /tokenize of neutralText
// (tokenized), or a safe ID range when the server does not tokenize.
func promptIDs(ctx context.Context, c *apiClient) (ids []int, maxModelLen int, tokenized bool) {
	ids, mml, err := c.tokenize(ctx, neutralText)
	if err == nil && len(ids) >= 16 {
		return ids, mml, true
	}
	ids = make([]int, 4096)
	for i := range ids {
		ids[i] = safeIDBase + (i*7919)%safeIDRange
	}
	return ids, 0, false
}

// completionBody encodes a streaming /v1/completions request with a
// token-ID prompt of n tokens tiled from ids. It is built once per prompt
// and reused for every request with that prompt. go-openai's
// CompletionRequest is not used: it drops temperature 0 (omitempty), has no
// ignore_eos, min_tokens, continuous_usage_stats or cache_salt, and would
// re-encode a 250K-token prompt for every request.
func completionBody(model string, ids []int, n, maxTokens, minTokens int, salt string) []byte {
	b := make([]byte, 0, n*6+512)
	b = append(b, `{"model":`...)
	b = strconv.AppendQuote(b, model)
	b = append(b, `,"prompt":[`...)
	for i := 0; i < n; i++ {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(ids[i%len(ids)]), 10)
	}
	b = append(b, `],"max_tokens":`...)
	b = strconv.AppendInt(b, int64(maxTokens), 10)
	if minTokens > 0 {
		b = append(b, `,"min_tokens":`...)
		b = strconv.AppendInt(b, int64(minTokens), 10)
	}
	b = append(b, `,"ignore_eos":true,"temperature":0,"stream":true,"stream_options":{"include_usage":true,"continuous_usage_stats":true}`...)
	if salt != "" {
		b = append(b, `,"cache_salt":`...)
		b = strconv.AppendQuote(b, salt)
	}
	return append(b, '}')
}

// maxCalibrationRounds bounds the /tokenize round trips of one chat prompt
// calibration (a secant update usually lands within 2–4; bisection bounds the
// rest: 40 rounds cover text lengths up to 2^40 bytes).
const maxCalibrationRounds = 40

// chatPrompt is a chat prompt calibrated through /tokenize: the messages
// (JSON, encoded once) whose rendered prompt has tokens tokens.
type chatPrompt struct {
	messages json.RawMessage
	tokens   int
}

// chatMessages encodes one user message with go-openai's message type.
func chatMessages(text string) json.RawMessage {
	b, err := json.Marshal([]openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: text}})
	if err != nil { // a plain string message always encodes
		panic(err)
	}
	return b
}

// tiledText is neutralText repeated and cut to n bytes (it is ASCII, so any
// cut is valid text).
func tiledText(n int) string {
	if n <= 0 {
		return ""
	}
	unit := neutralText + "\n"
	return strings.Repeat(unit, n/len(unit)+1)[:n]
}

// calibrateChat finds the user message whose chat prompt, as /tokenize
// renders it with the generation prompt, is n tokens. It searches the
// length of tiledText: secant updates (the first from the bytes-per-token
// estimate charsPerToken), bisection when an update leaves the bracket. When no length gives exactly
// n (a tokenizer merging across the cut), it returns the closest count
// below n; the caller reports it.
func calibrateChat(ctx context.Context, c *apiClient, n int, charsPerToken float64) (chatPrompt, error) {
	if charsPerToken <= 0 {
		charsPerToken = 4
	}
	lo, hi := 0, -1 // lengths known to give fewer / more than n tokens (lo = 0 is assumed)
	var best chatPrompt
	length := int(float64(n) * charsPerToken)
	prevLen, prevK := -1, 0
	slope := charsPerToken // bytes per token
	for round := 0; round < maxCalibrationRounds; round++ {
		if err := ctx.Err(); err != nil {
			return chatPrompt{}, err
		}
		msgs := chatMessages(tiledText(length))
		k, err := c.tokenizeChat(ctx, msgs)
		if err != nil {
			return chatPrompt{}, err
		}
		switch {
		case k == n:
			return chatPrompt{messages: msgs, tokens: k}, nil
		case k < n:
			if k > best.tokens {
				best = chatPrompt{messages: msgs, tokens: k}
			}
			lo = max(lo, length)
		default:
			if hi < 0 || length < hi {
				hi = length
			}
		}
		if hi >= 0 && hi-lo <= 1 {
			break
		}
		switch {
		case prevLen >= 0 && k != prevK:
			slope = float64(length-prevLen) / float64(k-prevK)
		case k > 0:
			slope = float64(length) / float64(k)
		}
		if slope <= 0 {
			slope = charsPerToken
		}
		prevLen, prevK = length, k
		next := length + int(math.Round(float64(n-k)*slope))
		if next == length || next <= lo || (hi >= 0 && next >= hi) {
			if hi < 0 {
				next = max(2*lo, lo+1)
			} else {
				next = lo + (hi-lo)/2
			}
		}
		length = next
	}
	if best.tokens == 0 {
		return chatPrompt{}, fmt.Errorf("no user message gives a chat prompt of %d tokens or fewer (the chat template alone is longer?)", n)
	}
	return best, nil
}

// chatBody encodes a streaming /v1/chat/completions request with the
// calibrated messages, built once per prompt and reused like
// completionBody. go-openai's ChatCompletionRequest is not used for the
// same reasons as its CompletionRequest (temperature 0 dropped by
// omitempty; no ignore_eos, min_tokens, continuous_usage_stats or
// cache_salt); its message type encodes the messages.
func chatBody(model string, messages json.RawMessage, maxTokens, minTokens int, salt string) []byte {
	b := make([]byte, 0, len(messages)+512)
	b = append(b, `{"model":`...)
	b = strconv.AppendQuote(b, model)
	b = append(b, `,"messages":`...)
	b = append(b, messages...)
	b = append(b, `,"max_completion_tokens":`...)
	b = strconv.AppendInt(b, int64(maxTokens), 10)
	if minTokens > 0 {
		b = append(b, `,"min_tokens":`...)
		b = strconv.AppendInt(b, int64(minTokens), 10)
	}
	b = append(b, `,"ignore_eos":true,"temperature":0,"stream":true,"stream_options":{"include_usage":true,"continuous_usage_stats":true}`...)
	if salt != "" {
		b = append(b, `,"cache_salt":`...)
		b = strconv.AppendQuote(b, salt)
	}
	return append(b, '}')
}

// cappedPromptTokens is the prompt length of a context: ctxLen, capped one
// token below max_model_len so that the prefill request can still emit its
// token.
func (r *run) cappedPromptTokens(ctxLen int) int {
	if r.maxModelLen > 0 && ctxLen > r.maxModelLen-1 {
		return r.maxModelLen - 1
	}
	return ctxLen
}

// prefillPromptTokens is the length of the prompt the prefill request of a
// context sends: the capped length, or for chat the calibrated prompt's
// length (calibrate runs first, in measureStep).
func (r *run) prefillPromptTokens(ctxLen int) int {
	if r.chat {
		return r.prompt.tokens
	}
	return r.cappedPromptTokens(ctxLen)
}

// calibrate sizes the chat prompt of a context (capped below max_model_len
// like the prefill prompt) through /tokenize.
func (r *run) calibrate(ctx context.Context, ctxLen int) error {
	n := r.cappedPromptTokens(ctxLen)
	p, err := calibrateChat(ctx, r.client, n, r.charsPerToken)
	if err != nil {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		return exit.Infraf("sizing the chat prompt of %s tokens through POST /tokenize: %v", result.FormatTokens(ctxLen), err)
	}
	r.prompt = p
	if p.tokens != n {
		r.warn(r.promptShortfall(ctxLen))
	}
	return nil
}

// promptShortfall says that no message renders to exactly the context.
func (r *run) promptShortfall(ctxLen int) string {
	return fmt.Sprintf("chat prompt at %s: no message renders to exactly %d tokens through the chat template; the closest below, %d tokens, is used",
		result.FormatTokens(ctxLen), ctxLen, r.prompt.tokens)
}

// genPath is the streaming endpoint measure.endpoint names.
func (r *run) genPath() string {
	if r.chat {
		return "/v1/chat/completions"
	}
	return "/v1/completions"
}

// requestBody encodes a streaming request for the current context's prompt
// of n tokens: token IDs for completions, the calibrated messages for chat.
func (r *run) requestBody(n, maxTokens, minTokens int, salt string) []byte {
	if r.chat {
		return chatBody(r.client.model, r.prompt.messages, maxTokens, minTokens, salt)
	}
	return completionBody(r.client.model, r.promptTokenIDs, n, maxTokens, minTokens, salt)
}
