package sim

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

// chainOf is the block chain of ids.
func chainOf(ids []int) blockChain {
	var c blockChain
	for _, id := range ids {
		c.add(id)
	}
	return c
}

func seq(from, n int) []int {
	ids := make([]int, n)
	for i := range ids {
		ids[i] = from + i
	}
	return ids
}

func TestBlockChain(t *testing.T) {
	a := chainOf(seq(1000, 100))
	b := chainOf(append(seq(1000, 40), seq(5000, 60)...))
	if len(a.blocks) != 6 || a.nTail != 4 || a.tokens() != 100 {
		t.Fatalf("100 tokens: %d full blocks, %d in the tail; want 6 and 4", len(a.blocks), a.nTail)
	}
	shared := 0
	for shared < 6 && a.blocks[shared] == b.blocks[shared] {
		shared++
	}
	if shared != 2 {
		t.Errorf("prompts sharing 40 tokens share %d leading blocks, want 2 (full blocks only)", shared)
	}
	for i := shared; i < 6; i++ {
		if a.blocks[i] == b.blocks[i] {
			t.Errorf("block %d equal after the prompts diverged: keys must chain over every earlier block", i)
		}
	}
	// A later block with the same tokens but another history differs.
	c := chainOf(append(seq(9000, 16), seq(1016, 16)...))
	if c.blocks[1] == a.blocks[1] {
		t.Error("block 1 with block 0 different has the same key")
	}
	// extend continues the chain as if the tokens had been in the sequence.
	ext := a.extend(genTokenID, 60)
	whole := chainOf(append(seq(1000, 100), seqOf(genTokenID, 60)...))
	if len(ext) != 4 || ext[0] != whole.blocks[6] || ext[3] != whole.blocks[9] {
		t.Errorf("extend gave %d keys, want the 4 blocks 6…9 of the whole sequence", len(ext))
	}
	salted := chainOf(seq(1000, 100))
	saltChain(salted.blocks, "tenant")
	for i := range salted.blocks {
		if salted.blocks[i] == a.blocks[i] {
			t.Errorf("salted block %d has the unsalted key", i)
		}
	}
}

func seqOf(id, n int) []int {
	ids := make([]int, n)
	for i := range ids {
		ids[i] = id
	}
	return ids
}

// TestPartialHitPrefillsTheRest: a prompt that shares its first 8,000
// tokens with a cached one prefills only the other 2,000, as
// T(10,000) − T(8,000) at the flat rate: 20 ms of the cold 100 ms; a
// shared head of fewer tokens than the warm TTFT's worth still waits
// the warm TTFT.
func TestPartialHitPrefillsTheRest(t *testing.T) {
	e := newEngine(engineParams{numBlocks: 1 << 20, runCap: 16, prefixCache: true, acceptLen: 1, stepScale: 1, profAccept: 1,
		tbt: time.Millisecond, ttft: 5 * time.Millisecond, prefillTPS: 100_000, seed: 1})
	e.virtual = true
	req := func(ids []int) *request {
		r := newRequest(len(ids), 10, 0)
		r.chain = chainOf(ids)
		return r
	}
	a := req(seq(1000, 10_000))
	e.submit(a)
	if got := ttftOf(t, e, a); got != 100*time.Millisecond {
		t.Fatalf("cold TTFT %v, want 100ms", got)
	}
	b := req(append(seq(1000, 8_000), seq(70_000, 2_000)...))
	e.submit(b)
	if got := ttftOf(t, e, b); got != 20*time.Millisecond {
		t.Errorf("8,000 cached tokens of 10,000: TTFT %v, want 20ms (2,000 tokens at 100,000 tok/s)", got)
	}
	if got := b.cachedTokens.Load(); got != 8_000 {
		t.Errorf("cached tokens %d, want 8000", got)
	}
	c := req(append(seq(1000, 9_990), seq(80_000, 10)...))
	e.submit(c)
	if got := ttftOf(t, e, c); got != 5*time.Millisecond {
		t.Errorf("9,984 cached tokens: TTFT %v, want the warm 5ms floor", got)
	}
	if e.st.prefixQueries != 30_000 || e.st.prefixHits != 8_000+9_984 {
		t.Errorf("queries %d hits %d, want 30000 and %d", e.st.prefixQueries, e.st.prefixHits, 8_000+9_984)
	}
}

// TestPartialHitNeverSlowerThanMiss: a prompt whose head is cached
// prefills only the rest, so its first token comes sooner than the same
// prompt's uncached by the prefill it skips, and is no longer floored at
// the warm TTFT (50 ms here): a conversation's later turn, its history
// cached, came at the warm TTFT, slower than its uncached first turn.
func TestPartialHitNeverSlowerThanMiss(t *testing.T) {
	tests := []struct {
		name     string
		shared   int           // tokens shared with the cached 2,000-token prompt
		extra    int           // new tokens after them
		want     time.Duration // TTFT at 100,000 tok/s
		wantMiss time.Duration // the same prompt uncached
	}{
		{name: "next turn: 2,000 cached, 400 new", shared: 2_000, extra: 400, want: 4 * time.Millisecond, wantMiss: 24 * time.Millisecond},
		{name: "half cached", shared: 1_000, extra: 1_000, want: 10080 * time.Microsecond, wantMiss: 20 * time.Millisecond},
		{name: "one block cached", shared: 16, extra: 2_000, want: 20 * time.Millisecond, wantMiss: 20160 * time.Microsecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			params := func(cache bool) engineParams {
				return engineParams{numBlocks: 1 << 20, runCap: 16, prefixCache: cache, acceptLen: 1, stepScale: 1, profAccept: 1,
					tbt: 10 * time.Microsecond, ttft: 50 * time.Millisecond, prefillTPS: 100_000, seed: 1}
			}
			req := func(ids []int) *request {
				r := newRequest(len(ids), 10, 0)
				r.chain = chainOf(ids)
				return r
			}
			prompt := append(seq(1000, tt.shared), seq(90_000, tt.extra)...)
			e := newEngine(params(true))
			e.virtual = true
			first := req(seq(1000, 2_000))
			e.submit(first)
			ttftOf(t, e, first)
			hit := req(prompt)
			e.submit(hit)
			got := ttftOf(t, e, hit)
			cold := newEngine(params(false))
			cold.virtual = true
			miss := req(prompt)
			cold.submit(miss)
			gotMiss := ttftOf(t, cold, miss)
			if d := got - tt.want; d < -20*time.Microsecond || d > 20*time.Microsecond {
				t.Errorf("hit TTFT %v, want %v (the %d uncached tokens' prefill)", got, tt.want, len(prompt)-int(hit.cachedTokens.Load()))
			}
			if d := gotMiss - tt.wantMiss; d < -20*time.Microsecond || d > 20*time.Microsecond {
				t.Errorf("miss TTFT %v, want %v", gotMiss, tt.wantMiss)
			}
			if got > gotMiss {
				t.Errorf("hit TTFT %v slower than the miss's %v", got, gotMiss)
			}
		})
	}
}

// TestEvictionUnderKVPressure: cached blocks no request holds give way,
// least recently used first, to what running requests occupy.
func TestEvictionUnderKVPressure(t *testing.T) {
	// 100 blocks; three prompts of 30 blocks each, run one after the other.
	e := newEngine(engineParams{numBlocks: 100, runCap: 16, prefixCache: true, acceptLen: 1, stepScale: 1, profAccept: 1,
		tbt: time.Millisecond, ttft: 5 * time.Millisecond, prefillTPS: 100_000, seed: 1})
	e.virtual = true
	run := func(hash uint64, tokens, out int) *request {
		r := newRequest(tokens, out, hash)
		e.submit(r)
		for r.generated < r.limit {
			if busy, _ := e.iterate(context.Background()); !busy && r.generated < r.limit {
				t.Fatalf("engine idle with prompt %d unfinished (%d of %d tokens)", hash, r.generated, r.limit)
			}
		}
		e.iterate(context.Background()) // publish: trim to the free room
		return r
	}
	for h := uint64(1); h <= 3; h++ {
		run(h, 480, 1)
	}
	if got := len(e.cache.index); got != 90 {
		t.Fatalf("%d blocks cached after three 30-block prompts in 100 blocks, want 90", got)
	}
	// A request occupying 61 blocks leaves room for 39 cached ones: the
	// two prompts used longest ago go (the evicted ones' tails first).
	r := newRequest(960, 30, 4)
	e.submit(r)
	for range 1000 {
		if r.generated > 0 {
			break
		}
		e.iterate(context.Background())
	}
	if r.generated == 0 {
		t.Fatal("the 960-token request never started")
	}
	e.iterate(context.Background())
	if hit := run(3, 480, 1).cachedTokens.Load(); hit != 464 {
		t.Errorf("most recent prompt: %d cached tokens after the pressure, want 464 (29 blocks)", hit)
	}
	if hit := run(1, 480, 1).cachedTokens.Load(); hit != 0 {
		t.Errorf("least recent prompt: %d cached tokens after the pressure, want 0 (evicted)", hit)
	}
}

func TestNaturalLength(t *testing.T) {
	const n = 20_000
	var sum, sum2 float64
	seen := map[int]bool{}
	for i := range n {
		l := naturalLength(uint64(i)*0x9e3779b97f4a7c15, 1, 0, 256)
		if l < 1 {
			t.Fatalf("length %d", l)
		}
		sum += float64(l)
		sum2 += math.Log(float64(l)) * math.Log(float64(l))
		seen[l] = true
	}
	if mean := sum / n; math.Abs(mean-256) > 256*0.03 {
		t.Errorf("mean natural length %.1f over %d prompts, want 256 ± 3%%", mean, n)
	}
	if len(seen) < 500 {
		t.Errorf("only %d distinct lengths: not a distribution", len(seen))
	}
	if naturalLength(7, 1, 0, 256) != naturalLength(7, 1, 0, 256) {
		t.Error("the same request stops at different lengths")
	}
	if naturalLength(7, 1, 0, 256) == naturalLength(7, 2, 0, 256) && naturalLength(8, 1, 0, 256) == naturalLength(8, 2, 0, 256) {
		t.Error("--sim-seed does not change the lengths")
	}
	tests := []struct {
		name                 string
		maxTokens, minTokens int
		ignoreEOS            bool
		natural, wantLimit   int
		wantEOS              bool
	}{
		{"ignore_eos runs to max_tokens", 100, 0, true, 10, 100, false},
		{"stops at its EOS", 100, 0, false, 10, 10, true},
		{"EOS masked until min_tokens", 100, 50, false, 10, 51, true},
		{"EOS as the last allowed token is a stop", 100, 0, false, 100, 100, true},
		{"beyond max_tokens: length", 100, 0, false, 300, 100, false},
		{"min_tokens = max_tokens: length", 100, 100, false, 10, 100, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			limit, eos := outputLimit(tt.maxTokens, tt.minTokens, tt.ignoreEOS, tt.natural)
			if limit != tt.wantLimit || eos != tt.wantEOS {
				t.Errorf("limit %d eos %v, want %d %v", limit, eos, tt.wantLimit, tt.wantEOS)
			}
		})
	}
}

// usageOf reads a non-streaming response's usage and finish reason.
func usageOf(t *testing.T, body string) (completion, cached int, hasDetails bool, finish string) {
	t.Helper()
	var resp struct {
		Choices []struct {
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage struct {
			CompletionTokens int `json:"completion_tokens"`
			Details          *struct {
				CachedTokens int `json:"cached_tokens"`
			} `json:"prompt_tokens_details"`
		} `json:"usage"`
	}
	if err := json.Unmarshal([]byte(body), &resp); err != nil || len(resp.Choices) != 1 {
		t.Fatalf("response %q: %v", body, err)
	}
	if d := resp.Usage.Details; d != nil {
		return resp.Usage.CompletionTokens, d.CachedTokens, true, resp.Choices[0].FinishReason
	}
	return resp.Usage.CompletionTokens, 0, false, resp.Choices[0].FinishReason
}

// TestServedPrefixCache: over HTTP, requests sharing a head hit its full
// blocks; cached_tokens is in usage only with --enable-prompt-tokens-details,
// in the final usage chunk of a stream too; a salt isolates.
func TestServedPrefixCache(t *testing.T) {
	ts := startTest(t, "m", "--sim-tbt", "1ms", "--enable-prompt-tokens-details")
	send := func(prompt []int, extra map[string]any) string {
		body := map[string]any{"prompt": prompt, "max_tokens": 2, "ignore_eos": true}
		for k, v := range extra {
			body[k] = v
		}
		return readAll(t, ts.post(t, "/v1/completions", "", body).Body)
	}
	head := seq(1000, 200)
	if _, cached, ok, _ := usageOf(t, send(append(head, seq(5000, 50)...), nil)); !ok || cached != 0 {
		t.Errorf("first request: cached %d (details %v), want 0 and details present", cached, ok)
	}
	if _, cached, _, _ := usageOf(t, send(append(head, seq(7000, 50)...), nil)); cached != 192 {
		t.Errorf("a request sharing 200 tokens: cached %d, want 192 (12 full blocks)", cached)
	}
	if _, cached, _, _ := usageOf(t, send(append(head, seq(7000, 50)...), map[string]any{"cache_salt": "other"})); cached != 0 {
		t.Errorf("salted: cached %d, want 0", cached)
	}
	stream := send(append(head, seq(9000, 50)...), map[string]any{"stream": true, "stream_options": map[string]any{"include_usage": true, "continuous_usage_stats": true}})
	if strings.Count(stream, `"prompt_tokens_details":{"cached_tokens":192}`) != 1 {
		t.Errorf("stream: want cached_tokens 192 once, on the final usage chunk:\n%s", stream)
	}
	waitMetric(t, ts, "vllm:prefix_cache_hits_total", 192*2)
	if q := value(t, scrape(t, ts), "vllm:prefix_cache_queries_total"); q != 250*4 {
		t.Errorf("queries %g, want 1000 (4 prompts of 250 tokens)", q)
	}

	plain := startTest(t, "m", "--sim-tbt", "1ms")
	body := readAll(t, plain.post(t, "/v1/completions", "", map[string]any{"prompt": head, "max_tokens": 2, "ignore_eos": true}).Body)
	if _, _, ok, _ := usageOf(t, body); ok {
		t.Errorf("without --enable-prompt-tokens-details: prompt_tokens_details present: %s", body)
	}
	stream = readAll(t, plain.post(t, "/v1/completions", "", map[string]any{"prompt": head, "max_tokens": 2, "ignore_eos": true,
		"stream": true, "stream_options": map[string]any{"include_usage": true}}).Body)
	if strings.Contains(stream, "prompt_tokens_details") || !strings.Contains(stream, `"choices":[],"usage"`) {
		t.Errorf("without --enable-prompt-tokens-details: want a final usage without prompt_tokens_details:\n%s", stream)
	}
}

// TestConversationHitsItsAnswers: a chat turn that sends the last answer
// back finds the answer's blocks cached, as a real model's answer, not only
// the earlier prompt's.
func TestConversationHitsItsAnswers(t *testing.T) {
	ts := startTest(t, "m", "--sim-tbt", "1ms", "--enable-prompt-tokens-details")
	user1 := strings.Repeat("What is the capital of France? ", 20)
	msgs := []map[string]string{{"role": "user", "content": user1}}
	chat := func(msgs []map[string]string, maxTokens int) (text string, cached int) {
		raw := readAll(t, ts.post(t, "/v1/chat/completions", "", map[string]any{"messages": msgs, "max_completion_tokens": maxTokens, "ignore_eos": true}).Body)
		var resp struct {
			Choices []struct {
				Message struct{ Content string } `json:"message"`
			} `json:"choices"`
		}
		json.Unmarshal([]byte(raw), &resp)
		_, cached, _, _ = usageOf(t, raw)
		return resp.Choices[0].Message.Content, cached
	}
	answer, _ := chat(msgs, 100)
	first := countTokens(chatTemplate(toChat(msgs), true, nil))
	msgs = append(msgs, map[string]string{"role": "assistant", "content": answer}, map[string]string{"role": "user", "content": "And of Spain?"})
	_, cached := chat(msgs, 10)
	// The first prompt and all but the last of the 100 answer tokens are
	// computed; the cache holds their full blocks.
	if want := (first + 99) / blockSize * blockSize; cached != want {
		t.Errorf("second turn: %d cached tokens, want %d (the first prompt's %d tokens and the answer's, in full blocks)", cached, want, first)
	}
}

func toChat(msgs []map[string]string) []chatMessage {
	var out []chatMessage
	for _, m := range msgs {
		c, _ := json.Marshal(m["content"])
		out = append(out, chatMessage{Role: m["role"], Content: c})
	}
	return out
}

// TestStopsAtEOS: without ignore_eos a request ends at its EOS: finish
// "stop", the EOS counted in completion_tokens and not in the text, the
// same length every time for the same prompt; with ignore_eos it runs to
// max_tokens.
func TestStopsAtEOS(t *testing.T) {
	ts := startTest(t, "m", "--sim-tbt", "100us", "--sim-eos-mean", "20")
	send := func(prompt []int, extra map[string]any) (int, string, string) {
		body := map[string]any{"prompt": prompt, "max_tokens": 1000}
		for k, v := range extra {
			body[k] = v
		}
		raw := readAll(t, ts.post(t, "/v1/completions", "", body).Body)
		var resp struct {
			Choices []struct{ Text string } `json:"choices"`
		}
		json.Unmarshal([]byte(raw), &resp)
		n, _, _, finish := usageOf(t, raw)
		return n, finish, resp.Choices[0].Text
	}
	lengths := map[int]bool{}
	for i := range 8 {
		n, finish, text := send(seq(100*i+1, 30), nil)
		if finish != "stop" || n >= 1000 || text != strings.Repeat(genText, n-1) {
			t.Fatalf("prompt %d: %d tokens, finish %q, text of %d tokens; want a stop before max_tokens, the EOS not in the text", i, n, finish, len(text)/len(genText))
		}
		if again, _, _ := send(seq(100*i+1, 30), nil); again != n {
			t.Errorf("prompt %d: %d tokens, then %d: the same request must stop at the same token", i, n, again)
		}
		lengths[n] = true
	}
	if len(lengths) < 3 {
		t.Errorf("8 prompts stopped at only %d lengths: %v", len(lengths), lengths)
	}
	if n, finish, _ := send(seq(1, 30), map[string]any{"ignore_eos": true}); n != 1000 || finish != "length" {
		t.Errorf("ignore_eos: %d tokens, finish %q; want 1000, length", n, finish)
	}
	if n, _, _ := send(seq(1, 30), map[string]any{"min_tokens": 500}); n != 501 {
		t.Errorf("min_tokens 500: %d tokens, want 501 (EOS right after the mask lifts)", n)
	}
	stops := 0.0
	for deadline := time.Now().Add(2 * time.Second); stops != 17 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		for _, m := range scrape(t, ts)["vllm:request_success_total"].GetMetric() {
			if labelMap(m)["finished_reason"] == "stop" {
				stops = m.GetCounter().GetValue()
			}
		}
	}
	if stops != 17 {
		t.Errorf(`request_success_total{finished_reason="stop"} %g, want 17`, stops)
	}
}

// warm caches the prompt newRequest(tokens, …, hash) would send, held by
// no request: a prompt some earlier request computed.
func (c *prefixCache) warm(tokens int, hash uint64) {
	c.release(c.hold(newRequest(tokens, 0, hash).chain.blocks, nil))
}

// TestFullHitNoSlowerThanMiss: for every profile, a lone full prefix-cache
// hit's first token (the warm TTFT) comes no later than the same prompt's
// cold prefill, at every context from 512 tokens to the largest a seed
// measured: below the seeds' smallest context the warm TTFT stayed at
// that context's (Qwen: 78 ms for a 1K prompt whose miss takes 22 ms).
func TestFullHitNoSlowerThanMiss(t *testing.T) {
	for _, name := range profileNames() {
		t.Run(name, func(t *testing.T) {
			m := buildModel(profiles[name])
			ctxs := []float64{512, 1024, 2048, 4096}
			for _, r := range m.warmTTFT {
				ctxs = append(ctxs, r.ctx)
			}
			for _, ctx := range ctxs {
				warm, cold := m.warmAt(ctx, 1), ctx/m.prefill.at(ctx, 1)
				if warm > cold {
					t.Errorf("%.0f tokens: full hit %.1f ms, miss %.1f ms", ctx, warm*1000, cold*1000)
				}
			}
		})
	}
}
