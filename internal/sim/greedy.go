package sim

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Greedy outputs with logprobs, for correctness blocks
// (docs/method.md#correctness). A request that asks for logprobs gets an
// output that is a seeded function of its prompt (the prompt's hash),
// with the top-k at each position: two servers of one build agree exactly.
// --sim-drift P makes a share P of prompts diverge at a seeded position,
// half at a near tie (the runner-up, 0.04 below the top token there in
// every build, taken instead) and half at a mismatch (a token outside the
// top-k); --sim-accuracy A begins each output with " #### N", N the
// prompt's answer (AnswerFor) with probability A, seeded by the prompt,
// else N + 1. A request without logprobs is answered as before: " a"
// tokens.

// greedyWords are the texts of the sim's greedy tokens, each its own
// token (ID greedyBaseID + index), distinct so that tokens compare by text.
var greedyWords = strings.Fields("the of and to in is was for on that with as by at from his her an were are which this be or had not but have its first one new they after their who also has two been other more all time into she when only year")

const (
	greedyBaseID  = 5000 // the first greedy word's token ID
	answerMarkID  = 4990 // " ####"
	answerDigitID = 6000 // " N" for N in 0..999: 6000 + N
	driftTokenID  = 7000 // a drifted mismatch's token: outside every top-k
	// fragileGap is the logprob gap between the top token and the runner-up
	// at a prompt's fragile position: a near tie (within the default 0.1).
	fragileGap = 0.04
)

// logprobsAsk is what a request asked of logprobs: on, and the top-k.
type logprobsAsk struct {
	on   bool
	topK int
}

// logprobsAsk reads the request's logprobs fields: the completions API's
// "logprobs": k, or the chat API's "logprobs": true with "top_logprobs": k.
func (f *samplingFields) logprobsAsk() logprobsAsk {
	if f.Logprobs == nil || string(f.Logprobs) == "null" || string(f.Logprobs) == "false" {
		return logprobsAsk{}
	}
	if string(f.Logprobs) == "true" {
		var k int
		if f.TopLogprobs != nil {
			json.Unmarshal(f.TopLogprobs, &k)
		}
		return logprobsAsk{on: true, topK: k}
	}
	var k int
	if json.Unmarshal(f.Logprobs, &k) != nil {
		return logprobsAsk{}
	}
	return logprobsAsk{on: true, topK: k}
}

// greedyToken is one token of a greedy output with its top-k.
type greedyToken struct {
	id   int
	text string
	lp   float64
	top  []greedyAlt
}

type greedyAlt struct {
	id   int
	text string
	lp   float64
}

// tokenText is the text of a sim greedy token ID.
func tokenText(id int) string {
	switch {
	case id == answerMarkID:
		return " ####"
	case id >= driftTokenID:
		return " zz" + strconv.Itoa(id-driftTokenID)
	case id >= answerDigitID:
		return " " + strconv.Itoa(id-answerDigitID)
	}
	return " " + greedyWords[(id-greedyBaseID)%len(greedyWords)]
}

// unit is a seeded uniform in [0, 1) from the prompt's hash and a stream
// number.
func unit(hash uint64, stream uint64) float64 {
	return rand.New(rand.NewPCG(hash, stream^0x9e3779b97f4a7c15)).Float64()
}

// AnswerFor is the answer the sim gives a completions prompt when it is
// right (--sim-accuracy): a number from 0 to 999 seeded by the prompt's
// tokens, written as tests write a dataset's "answer".
func AnswerFor(prompt string) string {
	_, hash := textTokens(prompt, &blockChain{})
	return strconv.Itoa(answerOf(hash))
}

func answerOf(hash uint64) int { return int(hash % 1000) }

// greedyOutput is the greedy output of n tokens for the prompt of hash,
// with topK alternatives at each position, under cfg's --sim-drift and
// --sim-accuracy.
func greedyOutput(cfg *Config, hash uint64, n, topK int) []greedyToken {
	topK = max(topK, 1)
	// The structure of every position is the prompt's and the position's,
	// the same in every build: its top-k tokens and their logprobs, and
	// the prompt's fragile position, whose runner-up is a near tie.
	drift, nearTie := false, false
	if cfg.Drift > 0 && unit(hash, 2) < cfg.Drift {
		drift, nearTie = true, unit(hash, 3) < 0.5
	}
	var toks []greedyToken
	if cfg.Answers {
		ans := answerOf(hash)
		if unit(hash, 4) >= cfg.Accuracy {
			ans = (ans + 1) % 1000
		}
		for _, id := range []int{answerMarkID, answerDigitID + ans} {
			toks = append(toks, greedyToken{id: id, text: tokenText(id), lp: -0.01, top: []greedyAlt{{id, tokenText(id), -0.01}}})
		}
	}
	// The fragile position is after the answer's tokens.
	fragile := len(toks) + int(unit(hash, 1)*float64(max(n-len(toks), 1)))
	diverged := false
	for pos := len(toks); pos < n; pos++ {
		r := rand.New(rand.NewPCG(hash, uint64(pos)))
		if diverged {
			r = rand.New(rand.NewPCG(hash^0xd1f7, uint64(pos)))
		}
		var alts []greedyAlt
		lp := -0.05 - 0.3*r.Float64()
		gap := 0.5 + 2*r.Float64()
		if pos == fragile {
			gap = fragileGap
		}
		used := map[int]bool{}
		for k := 0; k < max(topK, 2); k++ {
			id := greedyBaseID + r.IntN(len(greedyWords))
			for used[id] {
				id = greedyBaseID + (id-greedyBaseID+1)%len(greedyWords)
			}
			used[id] = true
			alts = append(alts, greedyAlt{id, tokenText(id), lp})
			if k == 0 {
				lp -= gap
			} else {
				lp -= 0.5
			}
		}
		t := greedyToken{id: alts[0].id, text: alts[0].text, lp: alts[0].lp, top: alts[:topK]}
		if drift && pos == fragile {
			diverged = true
			if nearTie {
				// The runner-up wins by a hair: the top two swap.
				a, b := alts[0], alts[1]
				mid := (a.lp + b.lp) / 2
				b.lp, a.lp = mid+fragileGap/2, mid-fragileGap/2
				top := append([]greedyAlt{b, a}, alts[2:]...)
				t = greedyToken{id: b.id, text: b.text, lp: b.lp, top: top[:max(topK, 2)]}
			} else {
				id := driftTokenID + int(hash%1000)
				x := greedyAlt{id, tokenText(id), alts[0].lp}
				top := append([]greedyAlt{x}, alts[2:]...)
				t = greedyToken{id: id, text: x.text, lp: x.lp, top: top[:min(topK, len(top))]}
			}
		}
		toks = append(toks, t)
	}
	return toks
}

// greedyText is the output's text.
func greedyText(toks []greedyToken) string {
	var b strings.Builder
	for _, t := range toks {
		b.WriteString(t.text)
	}
	return b.String()
}

// completionLogprobs is the completions API's logprobs object (vLLM's and
// SGLang's legacy form): tokens, token_logprobs, top_logprobs (token →
// logprob), text_offset.
func completionLogprobs(toks []greedyToken, topK int) map[string]any {
	tokens, lps, offs := []string{}, []float64{}, []int{}
	tops := []map[string]float64{}
	off := 0
	for _, t := range toks {
		tokens, lps, offs = append(tokens, t.text), append(lps, round6(t.lp)), append(offs, off)
		off += len(t.text)
		m := map[string]float64{}
		if topK > 0 {
			for _, a := range t.top {
				m[a.text] = round6(a.lp)
			}
		}
		tops = append(tops, m)
	}
	out := map[string]any{"tokens": tokens, "token_logprobs": lps, "text_offset": offs, "top_logprobs": tops}
	if topK == 0 {
		out["top_logprobs"] = nil
	}
	return out
}

// chatLogprobs is the chat API's logprobs object: content, one entry a
// token with its top_logprobs.
func chatLogprobs(toks []greedyToken, topK int) map[string]any {
	content := []any{}
	for _, t := range toks {
		top := []any{}
		if topK > 0 {
			for _, a := range t.top {
				top = append(top, map[string]any{"token": a.text, "logprob": round6(a.lp), "bytes": bytesOf(a.text)})
			}
		}
		content = append(content, map[string]any{"token": t.text, "logprob": round6(t.lp), "bytes": bytesOf(t.text), "top_logprobs": top})
	}
	return map[string]any{"content": content}
}

func round6(f float64) float64 { return math.Round(f*1e6) / 1e6 }

// bytesOf is a token's UTF-8 bytes as the OpenAI API lists them.
func bytesOf(s string) []int {
	out := make([]int, len(s))
	for i := range len(s) {
		out[i] = int(s[i])
	}
	return out
}
