package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/result"
)

// greedyPost sends a greedy completions (or chat) request with logprobs to
// base and reads the output as the correctness block records it.
func greedyPost(t *testing.T, base, prompt string, chat bool, topK int) result.CorrectnessOutput {
	t.Helper()
	body := map[string]any{"model": "m", "max_tokens": 12, "temperature": 0, "seed": 0, "ignore_eos": true}
	path := "/v1/completions"
	if chat {
		path = "/v1/chat/completions"
		body["messages"] = []map[string]string{{"role": "user", "content": prompt}}
		body["logprobs"], body["top_logprobs"] = true, topK
	} else {
		body["prompt"] = prompt
		body["logprobs"] = topK
	}
	raw, _ := json.Marshal(body)
	resp, err := http.Post(base+path, "application/json", bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("HTTP %d: %s", resp.StatusCode, b)
	}
	var r struct {
		Choices []struct {
			Text    string `json:"text"`
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
			Logprobs struct {
				Tokens        []string             `json:"tokens"`
				TokenLogprobs []float64            `json:"token_logprobs"`
				TopLogprobs   []map[string]float64 `json:"top_logprobs"`
				Content       []struct {
					Token       string  `json:"token"`
					Logprob     float64 `json:"logprob"`
					Bytes       []int   `json:"bytes"`
					TopLogprobs []struct {
						Token   string  `json:"token"`
						Logprob float64 `json:"logprob"`
					} `json:"top_logprobs"`
				} `json:"content"`
			} `json:"logprobs"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	c := r.Choices[0]
	o := result.CorrectnessOutput{Line: 1, Text: c.Text + c.Message.Content}
	for i, tok := range c.Logprobs.Tokens {
		x := result.Token{ID: -1, Text: tok, Logprob: c.Logprobs.TokenLogprobs[i]}
		for text, lp := range c.Logprobs.TopLogprobs[i] {
			x.Top = append(x.Top, result.TopToken{ID: -1, Text: text, Logprob: lp})
		}
		o.Tokens = append(o.Tokens, x)
	}
	for _, e := range c.Logprobs.Content {
		if bytesToString(e.Bytes) != e.Token {
			t.Errorf("bytes %v do not spell %q", e.Bytes, e.Token)
		}
		x := result.Token{ID: -1, Text: e.Token, Logprob: e.Logprob}
		for _, a := range e.TopLogprobs {
			x.Top = append(x.Top, result.TopToken{ID: -1, Text: a.Token, Logprob: a.Logprob})
		}
		o.Tokens = append(o.Tokens, x)
	}
	return o
}

func bytesToString(b []int) string {
	var s strings.Builder
	for _, c := range b {
		s.WriteByte(byte(c))
	}
	return s.String()
}

// TestGreedyOutputs: with logprobs, each persona's output is a seeded
// function of the prompt (identical builds agree exactly); --sim-drift
// makes prompts diverge, at near ties and at mismatches as the correctness
// comparison tells them; --sim-accuracy answers AnswerFor's number.
func TestGreedyOutputs(t *testing.T) {
	personas := []struct {
		name  string
		start func(t *testing.T, args ...string) string
	}{
		{name: "vllm", start: func(t *testing.T, args ...string) string {
			return startTest(t, append([]string{"m", "--sim-tbt", "1us", "--sim-ttft", "1us"}, args...)...).URL
		}},
		{name: "sglang", start: func(t *testing.T, args ...string) string {
			return startSGLangTest(t, true, append([]string{"--model-path", "m", "--sim-tbt", "1us", "--sim-ttft", "1us"}, args...)...).URL
		}},
	}
	prompts := make([]string, 40)
	for i := range prompts {
		prompts[i] = fmt.Sprintf("Question %d: what is %d + %d?", i, i, 2*i)
	}
	for _, p := range personas {
		for _, chat := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s chat=%v", p.name, chat), func(t *testing.T) {
				a, b := p.start(t), p.start(t)
				drifted := p.start(t, "--sim-drift", "1")
				var exact, ties, mismatches int
				for i, pr := range prompts {
					oa, ob := greedyPost(t, a, pr, chat, 5), greedyPost(t, b, pr, chat, 5)
					if len(oa.Tokens) != 12 || len(oa.Tokens[0].Top) != 5 || oa.Text == strings.Repeat(genText, 12) {
						t.Fatalf("prompt %d: %d tokens, top %d, text %q", i, len(oa.Tokens), len(oa.Tokens[0].Top), oa.Text)
					}
					if g := compare.Agree(oa, ob, compare.DefaultNearTieGap); g.Kind != compare.Exact {
						t.Fatalf("prompt %d: identical builds %v at %d (%+v)", i, g.Kind, g.Position, g.Why)
					}
					switch g := compare.Agree(oa, greedyPost(t, drifted, pr, chat, 5), compare.DefaultNearTieGap); g.Kind {
					case compare.Exact:
						exact++
					case compare.NearTie:
						ties++
					case compare.Mismatch:
						mismatches++
					}
				}
				if exact != 0 || ties < 10 || mismatches < 10 {
					t.Errorf("--sim-drift 1 over %d prompts: %d exact, %d near ties, %d mismatches; want none exact, about half each", len(prompts), exact, ties, mismatches)
				}
			})
		}
	}
	t.Run("accuracy", func(t *testing.T) {
		right := 0
		base := startTest(t, "m", "--sim-tbt", "1us", "--sim-ttft", "1us", "--sim-accuracy", "0.7").URL
		for _, pr := range prompts {
			o := greedyPost(t, base, pr, false, 1)
			if strings.HasPrefix(o.Text, " #### "+AnswerFor(pr)+" ") {
				right++
			} else if !strings.HasPrefix(o.Text, " #### ") {
				t.Fatalf("output %q does not begin with the answer", o.Text)
			}
		}
		if right < 18 || right > 38 {
			t.Errorf("--sim-accuracy 0.7: %d of %d right", right, len(prompts))
		}
	})
}
