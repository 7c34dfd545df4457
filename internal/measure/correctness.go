package measure

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/slogate/slogate/internal/lifecycle"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/workload"
)

// A correctness block's requests (docs/method.md#correctness): each
// dataset line once, greedy, with the top-k logprobs, outside every timed
// window; every output kept as correctness.jsonl records it.

// CorrectnessSeed is the seed every correctness request sends (greedy
// needs none; a server that samples anyway is then repeatable).
const CorrectnessSeed = 0

// correctnessTimeout bounds one correctness request.
const correctnessTimeout = 10 * time.Minute

// Correctness sends block c's dataset lines to the server of client,
// c.Concurrency at a time, and returns the block as measured: its
// settings, each output (an error recorded in its output, and counted), the
// scores against the answers when c has a scorer, and its wall time. A
// server that refuses logprobs (HTTP 4xx to the first request, answered
// without them) is asked without logprobs from then on, and the block says
// so in UnavailableReasons (the caller words them into Unavailable): the
// outputs are still compared, without near ties.
func Correctness(ctx context.Context, client *lifecycle.Client, c *spec.Correctness) result.Correctness {
	start := time.Now()
	rec := result.Correctness{Name: c.Name, Dataset: c.DatasetText, Endpoint: "completions", MaxOutput: c.MaxOutput,
		Logprobs: c.Logprobs, Concurrency: c.Concurrency, Seed: CorrectnessSeed, Scorer: c.Scorer,
		MaxMismatch: c.MaxMismatch, Margin: c.Margin, NearTieGap: c.NearTieGap}
	if c.Chat {
		rec.Endpoint = "chat"
	}
	items := c.Items.Items
	rec.Prompts = len(items)
	rec.Outputs = make([]result.CorrectnessOutput, len(items))
	logprobs := c.Logprobs
	if len(items) > 0 && logprobs > 0 {
		// The first request tells whether the server gives logprobs.
		o, refused := greedyRequest(ctx, client, c, items[0], logprobs)
		if refused != "" {
			rec.UnavailableReasons = append(rec.UnavailableReasons, result.CellReason{Code: result.ReasonLogprobsRefused, Names: map[string]string{result.NameCause: refused}})
			logprobs = 0
			o, _ = greedyRequest(ctx, client, c, items[0], 0)
		}
		rec.Outputs[0] = o
		items = items[1:]
	}
	offset := rec.Prompts - len(items)
	next := make(chan int)
	var wg sync.WaitGroup
	for range max(c.Concurrency, 1) {
		wg.Go(func() {
			for i := range next {
				rec.Outputs[offset+i], _ = greedyRequest(ctx, client, c, items[i], logprobs)
			}
		})
	}
	for i := range items {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if ctx.Err() != nil {
		for i := range rec.Outputs {
			if rec.Outputs[i].Block == "" {
				it := c.Items.Items[i]
				rec.Outputs[i] = result.CorrectnessOutput{Block: c.Name, Line: it.Line, Prompt: it.Prompt, Answer: it.Answer, Error: "not sent: " + ctx.Err().Error()}
			}
		}
	}
	for i := range rec.Outputs {
		o := &rec.Outputs[i]
		if o.Error != "" {
			rec.Errors++
			continue
		}
		if c.Scorer != "" {
			it := c.Items.Items[i]
			right, got := Score(c.Scorer, c.Pattern, o.Text, it.Answer)
			o.Correct, o.Extracted = &right, got
			rec.Scored++
			if right {
				rec.Correct++
			}
		}
	}
	rec.ElapsedS = Round(time.Since(start).Seconds(), 3)
	return rec
}

// greedyRequest sends one item greedy with logprobs top-k (0: none) and
// reads its output. refused is set (the server's answer) when the server
// refused the request with a 4xx while logprobs were asked; a refusal at
// admission, its queue full, is sent again (openAdmitted).
func greedyRequest(ctx context.Context, client *lifecycle.Client, c *spec.Correctness, it workload.Item, logprobs int) (o result.CorrectnessOutput, refused string) {
	o = result.CorrectnessOutput{Block: c.Name, Line: it.Line, Prompt: it.Prompt, Answer: it.Answer}
	body := map[string]any{"model": client.Model(), "max_tokens": c.MaxOutput, "temperature": 0, "seed": CorrectnessSeed, "stream": false}
	path := "/v1/completions"
	if it.Chat() {
		path = "/v1/chat/completions"
		var msgs []map[string]string
		for _, m := range it.Messages {
			msgs = append(msgs, map[string]string{"role": m.Role, "content": m.Content})
		}
		body["messages"] = msgs
		if logprobs > 0 {
			body["logprobs"], body["top_logprobs"] = true, logprobs
		}
	} else {
		body["prompt"] = it.Prompt
		if logprobs > 0 {
			body["logprobs"] = logprobs
		}
	}
	raw, err := json.Marshal(body)
	if err != nil {
		o.Error = err.Error()
		return o, ""
	}
	ctx, cancel := context.WithTimeout(ctx, correctnessTimeout)
	defer cancel()
	rc, err := openAdmitted(ctx, client, path, raw)
	if err != nil {
		var se *lifecycle.StreamStatusError
		if errors.As(err, &se) && se.Code >= 400 && se.Code < 500 && logprobs > 0 {
			return o, fmt.Sprintf("HTTP %d: %s", se.Code, se.Body)
		}
		o.Error = err.Error()
		return o, ""
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, 64<<20))
	if err != nil {
		o.Error = "reading the answer: " + err.Error()
		return o, ""
	}
	if err := parseGreedy(b, &o); err != nil {
		o.Error = err.Error()
	}
	return o, ""
}

// openAdmitted POSTs a correctness request, sent again rejectBackoff
// after each refusal at admission (docs/method.md#rejections) for at most
// rejectedRetryFor: a refusal says the server is full, not that the item
// fails. The last refusal is returned as a rejection.
func openAdmitted(ctx context.Context, client *lifecycle.Client, path string, raw []byte) (io.ReadCloser, error) {
	deadline := time.Now().Add(rejectedRetryFor)
	for {
		rc, err := client.OpenStream(ctx, client.Base()+path, path, raw)
		err = asRejection(client.Engine(), err)
		if !isRejection(err) || ctx.Err() != nil || time.Now().After(deadline) {
			return rc, err
		}
		backoff(ctx)
	}
}

// greedyAnswer is the part of a completions or chat answer read: the
// text, the finish reason and the logprobs in either form (the
// completions API's legacy tokens/token_logprobs/top_logprobs, or the chat
// API's content list, which llama.cpp's server gives on both endpoints).
type greedyAnswer struct {
	Choices []struct {
		Text    *string `json:"text"`
		Message *struct {
			Content *string `json:"content"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
		Logprobs     *struct {
			Tokens        []string             `json:"tokens"`
			TokenLogprobs []*float64           `json:"token_logprobs"`
			TopLogprobs   []map[string]float64 `json:"top_logprobs"`
			Content       []struct {
				ID          *int    `json:"id"`
				Token       string  `json:"token"`
				Logprob     float64 `json:"logprob"`
				TopLogprobs []struct {
					ID      *int    `json:"id"`
					Token   string  `json:"token"`
					Logprob float64 `json:"logprob"`
				} `json:"top_logprobs"`
			} `json:"content"`
		} `json:"logprobs"`
	} `json:"choices"`
}

// parseGreedy fills o's text, finish reason and tokens from answer b.
func parseGreedy(b []byte, o *result.CorrectnessOutput) error {
	var a greedyAnswer
	if err := json.Unmarshal(b, &a); err != nil {
		return fmt.Errorf("the answer is not JSON: %v", err)
	}
	if len(a.Choices) == 0 {
		return fmt.Errorf("the answer has no choices")
	}
	ch := a.Choices[0]
	switch {
	case ch.Text != nil:
		o.Text = *ch.Text
	case ch.Message != nil && ch.Message.Content != nil:
		o.Text = *ch.Message.Content
	}
	o.Finish = ch.FinishReason
	o.Tokens = []result.Token{}
	lp := ch.Logprobs
	if lp == nil {
		return nil
	}
	idOf := func(p *int) int {
		if p == nil {
			return -1
		}
		return *p
	}
	for _, e := range lp.Content {
		t := result.Token{ID: idOf(e.ID), Text: e.Token, Logprob: e.Logprob}
		for _, x := range e.TopLogprobs {
			t.Top = append(t.Top, result.TopToken{ID: idOf(x.ID), Text: x.Token, Logprob: x.Logprob})
		}
		o.Tokens = append(o.Tokens, t)
	}
	for i, text := range lp.Tokens {
		t := result.Token{ID: -1, Text: text}
		if i < len(lp.TokenLogprobs) && lp.TokenLogprobs[i] != nil {
			t.Logprob = *lp.TokenLogprobs[i]
		}
		if i < len(lp.TopLogprobs) {
			for tok, l := range lp.TopLogprobs[i] {
				t.Top = append(t.Top, result.TopToken{ID: -1, Text: tok, Logprob: l})
			}
			sortTop(t.Top)
		}
		o.Tokens = append(o.Tokens, t)
	}
	return nil
}

// sortTop orders a position's top-k by logprob, highest first (the
// legacy form is a JSON object, whose order is lost), ties by text.
func sortTop(top []result.TopToken) {
	slices.SortFunc(top, func(a, b result.TopToken) int {
		if c := cmp.Compare(b.Logprob, a.Logprob); c != 0 {
			return c
		}
		return strings.Compare(a.Text, b.Text)
	})
}
