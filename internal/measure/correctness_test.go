package measure

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/slogate/slogate/internal/lifecycle"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/workload"
)

// greedyServer answers completions and chat requests: with legacy
// logprobs (completions), a content list with IDs (chat, llama.cpp's
// form), a 400 to any request with logprobs when refuse, and a 500 to the
// prompt "boom". It counts requests with logprobs.
func greedyServer(t *testing.T, refuse bool, asked *atomic.Int64) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		if body["temperature"] != 0.0 || body["seed"] != 0.0 || body["stream"] != false {
			t.Errorf("request not greedy: %v", body)
		}
		_, withLogprobs := body["logprobs"]
		if withLogprobs {
			asked.Add(1)
		}
		if refuse && withLogprobs {
			http.Error(w, `{"error": {"message": "logprobs is not supported"}}`, 400)
			return
		}
		if body["prompt"] == "boom" {
			http.Error(w, "internal", 500)
			return
		}
		var logprobs any
		if strings.HasSuffix(r.URL.Path, "/chat/completions") {
			if withLogprobs {
				logprobs = map[string]any{"content": []any{
					map[string]any{"id": 7, "token": " 4", "logprob": -0.1, "top_logprobs": []any{
						map[string]any{"id": 7, "token": " 4", "logprob": -0.1}, map[string]any{"id": 8, "token": " 5", "logprob": -2.3}}}}}
			}
			json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"content": " 4"}, "finish_reason": "length", "logprobs": logprobs}}})
			return
		}
		if withLogprobs {
			logprobs = map[string]any{"tokens": []string{" The", " answer", " is", " 4"}, "token_logprobs": []float64{-0.1, -0.2, -0.3, -0.4},
				"top_logprobs": []map[string]float64{{" The": -0.1, " A": -1.5}, {" answer": -0.2}, {" is": -0.3}, {" 4": -0.4, " 5": -0.9, " 3": -2}}}
		}
		json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"text": " The answer is 4", "finish_reason": "stop", "logprobs": logprobs}}})
	}))
}

func TestCorrectness(t *testing.T) {
	prompts := []workload.Item{{Line: 1, Prompt: "2 + 2 =", Answer: "4", HasAnswer: true}, {Line: 3, Prompt: "boom", Answer: "0", HasAnswer: true},
		{Line: 4, Prompt: "3 + 1 =", Answer: "5", HasAnswer: true}}
	chat := []workload.Item{{Line: 1, Prompt: "hi", Messages: []workload.Message{{Role: "user", Content: "hi"}}, Answer: "4", HasAnswer: true}}
	tests := []struct {
		name   string
		items  []workload.Item
		refuse bool
		check  func(t *testing.T, asked int64, c *resultView)
	}{
		{name: "completions with logprobs, a failed request, scores", items: prompts, check: func(t *testing.T, asked int64, c *resultView) {
			r := c.r
			if r.Prompts != 3 || r.Errors != 1 || r.Scored != 2 || r.Correct != 1 || len(r.UnavailableReasons) != 0 || r.Endpoint != "completions" {
				t.Errorf("block = %+v", r)
			}
			o := r.Outputs[0]
			if o.Line != 1 || o.Text != " The answer is 4" || len(o.Tokens) != 4 || o.Tokens[3].Top[1].Text != " 5" || o.Tokens[3].ID != -1 || *o.Correct != true || o.Extracted != "4" {
				t.Errorf("output = %+v", o)
			}
			if !strings.Contains(r.Outputs[1].Error, "HTTP 500") || r.Outputs[1].Line != 3 {
				t.Errorf("failed output = %+v", r.Outputs[1])
			}
			if *r.Outputs[2].Correct {
				t.Errorf("4 scored right against 5")
			}
		}},
		{name: "chat: the content list with IDs", items: chat, check: func(t *testing.T, asked int64, c *resultView) {
			o := c.r.Outputs[0]
			if c.r.Endpoint != "chat" || len(o.Tokens) != 1 || o.Tokens[0].ID != 7 || o.Tokens[0].Top[1].ID != 8 || !*o.Correct {
				t.Errorf("output = %+v", o)
			}
		}},
		{name: "a server that refuses logprobs: said, and the rest measured", items: prompts, refuse: true, check: func(t *testing.T, asked int64, c *resultView) {
			r := c.r
			if len(r.UnavailableReasons) != 1 || r.UnavailableReasons[0].Code != result.ReasonLogprobsRefused ||
				!strings.Contains(words(r.UnavailableReasons...), "logprobs: the server refused them (HTTP 400") || !strings.Contains(words(r.UnavailableReasons...), "no near tie can be told") {
				t.Errorf("unavailable = %v", r.UnavailableReasons)
			}
			if asked != 1 || r.Outputs[0].Text != " The answer is 4" || len(r.Outputs[0].Tokens) != 0 || r.Scored != 2 || r.Correct != 1 {
				t.Errorf("asked logprobs %d times; outputs %+v", asked, r.Outputs)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var asked atomic.Int64
			srv := greedyServer(t, tt.refuse, &asked)
			defer srv.Close()
			c := &spec.Correctness{Name: "g", DatasetText: "d.jsonl", Items: &workload.Items{Items: tt.items}, Chat: tt.items[0].Chat(),
				MaxOutput: 8, Logprobs: 5, Concurrency: 2, Scorer: "number"}
			r := Correctness(context.Background(), lifecycle.NewClient(srv.URL, "", "qwen"), c)
			tt.check(t, asked.Load(), &resultView{r})
		})
	}
}

func TestScore(t *testing.T) {
	tests := []struct {
		name, scorer, pattern, output, answer string
		right                                 bool
	}{
		{name: "exact", scorer: "exact", output: " Paris \n", answer: "Paris", right: true},
		{name: "exact differs", scorer: "exact", output: "Paris.", answer: "Paris"},
		{name: "contains", scorer: "contains", output: "It is Paris.", answer: "Paris", right: true},
		{name: "regex", scorer: "regex", pattern: `#### (\d+)`, output: "so #### 42 done", answer: "42", right: true},
		{name: "regex wrong", scorer: "regex", pattern: `#### (\d+)`, output: "so #### 41", answer: "42"},
		{name: "regex no match", scorer: "regex", pattern: `#### (\d+)`, output: "42", answer: "42"},
		{name: "number: the last", scorer: "number", output: "3 apples and 1,250.0 pears", answer: "1250", right: true},
		{name: "number wrong", scorer: "number", output: "7", answer: "8"},
		{name: "choice", scorer: "choice", output: "The answer is (B).", answer: "B", right: true},
		{name: "choice wrong", scorer: "choice", output: "A", answer: "B"},
		{name: "json", scorer: "json", output: `Here: {"b": [1, 2], "a": 1}`, answer: `{"a": 1, "b": [1, 2]}`, right: true},
		{name: "json differs", scorer: "json", output: `{"a": 2}`, answer: `{"a": 1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, _ := Score(tt.scorer, tt.pattern, tt.output, tt.answer); got != tt.right {
				t.Errorf("Score(%s, %q, %q) = %v, want %v", tt.scorer, tt.output, tt.answer, got, tt.right)
			}
		})
	}
}

type resultView struct{ r result.Correctness }
