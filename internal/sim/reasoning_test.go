package sim

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestReasoningStreams: launched with --reasoning-parser, a chat stream
// sends its first tokens as reasoning, in the field the imitated engine
// uses (vLLM 0.32 "reasoning", SGLang "reasoning_content"), then its
// answer as content; the share is seeded (the same request reasons as
// long twice), --sim-reasoning-share 2 reasons through the whole output,
// and without the parser, or on /v1/completions, nothing is reasoning.
func TestReasoningStreams(t *testing.T) {
	const maxTokens = 40
	chat := map[string]any{"model": "m", "messages": []map[string]string{{"role": "user", "content": "why?"}},
		"max_tokens": maxTokens, "ignore_eos": true, "stream": true}
	free := map[string]any{"model": "m", "messages": []map[string]string{{"role": "user", "content": "why?"}},
		"max_tokens": 4000, "stream": true}
	completion := map[string]any{"model": "m", "prompt": []int{1, 2, 3}, "max_tokens": maxTokens, "ignore_eos": true, "stream": true}
	vllm := func(args ...string) func(t *testing.T, body any) *http.Response {
		return func(t *testing.T, body any) *http.Response {
			ts := startTest(t, append([]string{"m", "--served-model-name", "m", "--sim-tbt", "1ms", "--sim-one-token-chunks"}, args...)...)
			path := "/v1/completions"
			if _, ok := body.(map[string]any)["messages"]; ok {
				path = "/v1/chat/completions"
			}
			return ts.post(t, path, "", body)
		}
	}
	sglang := func(args ...string) func(t *testing.T, body any) *http.Response {
		return func(t *testing.T, body any) *http.Response {
			ts := startSGLangTest(t, true, append([]string{"m", "--sim-tbt", "1ms", "--sim-one-token-chunks"}, args...)...)
			return ts.do(t, "POST", "/v1/chat/completions", "", body)
		}
	}
	tests := []struct {
		name  string
		post  func(t *testing.T, body any) *http.Response
		body  map[string]any
		field string // the delta's reasoning field
		// first is the first reasoning delta as sent; lo and hi bound the
		// reasoning tokens.
		first  string
		lo, hi int
		// answer, when set, is the answer's text chunks.
		answer int
	}{
		{name: "vLLM: delta.reasoning, half the output on average", post: vllm("--reasoning-parser", "qwen3"), body: chat,
			field: "reasoning", first: `"delta":{"reasoning":" a"}`, lo: maxTokens / 4, hi: maxTokens * 3 / 4},
		{name: "SGLang: delta.reasoning_content, its nulls written", post: sglang("--reasoning-parser", "qwen3"), body: chat,
			field: "reasoning_content", first: `"delta":{"role":null,"content":null,"reasoning_content":" a","tool_calls":null}`, lo: maxTokens / 4, hi: maxTokens * 3 / 4},
		{name: "share 2: reasoning to max_tokens, no answer", post: vllm("--reasoning-parser", "qwen3", "--sim-reasoning-share", "2"), body: chat,
			field: "reasoning", first: `"delta":{"reasoning":" a"}`, lo: maxTokens, hi: maxTokens},
		{name: "share 0.1: a short reasoning", post: sglang("--reasoning-parser", "qwen3", "--sim-reasoning-share", "0.1"), body: chat,
			field: "reasoning_content", first: `"reasoning_content":" a"`, lo: 2, hi: 6},
		{name: "no reasoning parser: content only", post: vllm(), body: chat, field: "reasoning"},
		// Without ignore_eos the answer keeps its natural length (here 6
		// tokens, the EOS last, without text) and the reasoning before it
		// makes its share of the whole: the output grows as it does.
		{name: "the model stops: the answer as without reasoning", post: vllm("--sim-eos-mean", "20"), body: free, field: "reasoning", answer: 5},
		{name: "the model stops: reasoning on top of the same answer", post: vllm("--sim-eos-mean", "20", "--reasoning-parser", "qwen3"), body: free,
			field: "reasoning", first: `"delta":{"reasoning":" a"}`, lo: 4, hi: 8, answer: 5},
		{name: "the model stops, a longer reasoning: the same answer", post: vllm("--sim-eos-mean", "20", "--reasoning-parser", "qwen3", "--sim-reasoning-share", "0.9"), body: free,
			field: "reasoning", first: `"delta":{"reasoning":" a"}`, lo: 20, hi: 40, answer: 5},
		{name: "completions: no reasoning", post: vllm("--reasoning-parser", "qwen3"), body: completion, field: "reasoning"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var counts []int
			for range 2 {
				resp := tc.post(t, tc.body)
				lines := sseLines(t, resp.Body)
				reasoning, answer, firstSeen := 0, 0, false
				for _, l := range lines {
					if l == "[DONE]" {
						continue
					}
					var ch struct {
						Choices []struct {
							Text  *string            `json:"text"`
							Delta map[string]*string `json:"delta"`
						} `json:"choices"`
					}
					if err := json.Unmarshal([]byte(l), &ch); err != nil {
						t.Fatalf("%v: %s", err, l)
					}
					for _, c := range ch.Choices {
						switch {
						case c.Delta[tc.field] != nil && *c.Delta[tc.field] != "":
							if answer > 0 {
								t.Fatalf("reasoning after the answer began: %s", l)
							}
							if reasoning == 0 && !strings.Contains(l, tc.first) {
								t.Errorf("first reasoning chunk %s, want it to hold %s", l, tc.first)
							}
							reasoning++
							firstSeen = true
						case c.Delta["content"] != nil && *c.Delta["content"] != "", c.Text != nil && *c.Text != "":
							answer++
						}
					}
				}
				if tc.body["ignore_eos"] == true && reasoning+answer != maxTokens {
					t.Errorf("%d reasoning + %d answer chunks, want %d tokens one a chunk", reasoning, answer, maxTokens)
				}
				if tc.answer > 0 && answer != tc.answer {
					t.Errorf("%d answer chunks, want %d (the model's own answer, reasoning or not)", answer, tc.answer)
				}
				if tc.hi > 0 && !firstSeen {
					t.Errorf("no reasoning chunk")
				}
				counts = append(counts, reasoning)
			}
			if counts[0] != counts[1] || counts[0] < tc.lo || counts[0] > tc.hi {
				t.Errorf("reasoning tokens %v, want the same twice, in [%d, %d]", counts, tc.lo, tc.hi)
			}
		})
	}
}
