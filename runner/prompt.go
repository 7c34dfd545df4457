package runner

import (
	"context"
	"strconv"
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

// promptIDs returns the base token pattern: /tokenize of neutralText, or a
// safe ID range. source says which.
func promptIDs(ctx context.Context, c *apiClient) (ids []int, maxModelLen int, source string) {
	ids, mml, err := c.tokenize(ctx, neutralText)
	if err == nil && len(ids) >= 16 {
		return ids, mml, "tokenize"
	}
	ids = make([]int, 4096)
	for i := range ids {
		ids[i] = safeIDBase + (i*7919)%safeIDRange
	}
	return ids, 0, "safe-range"
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
