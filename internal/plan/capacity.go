package plan

import (
	"fmt"
	"strconv"
)

// KVPool is the KV cache the over-capacity rule checks a decode cell
// against (docs/method.md#over-capacity). Under data parallelism each
// engine has its own pool and a request lives in one of them, so the rule
// is per engine: the requests of a cell spread over the engines, and the
// busiest engine holds ⌈C ÷ engines⌉ of them.
type KVPool struct {
	// Tokens is the capacity summed over the engines; ≤ 0 when unknown
	// (an unknown capacity never skips a cell).
	Tokens int64
	// Engines is the number of data-parallel engines Tokens is split over;
	// ≤ 1 means one.
	Engines int
	// Slots is the number of requests the server runs at once, each in KV
	// of its own of Tokens ÷ Slots (llama-server's slots with --parallel:
	// docs/llamacpp.md#kv-capacity); 0 when every request shares the pool.
	// With slots a request longer than one slot's KV does not fit whatever
	// the concurrency, and requests beyond Slots wait for a free slot,
	// holding no KV.
	Slots int
	// Knob is the engine's name of the cap on running requests in the
	// messages (engine.Syntax.MaxNumSeqsName: llama-server's
	// "--parallel"); "" for max_num_seqs.
	Knob string
}

// knob is the cap on running requests as the messages name it.
func (k KVPool) knob() string {
	if k.Knob == "" {
		return "max_num_seqs"
	}
	return k.Knob
}

// PerSlot is one slot's KV (0 without slots).
func (k KVPool) PerSlot() int64 {
	if k.Slots <= 0 {
		return 0
	}
	return k.Tokens / int64(k.Slots)
}

// engines is the number of engines, at least one.
func (k KVPool) engines() int { return max(k.Engines, 1) }

// PerEngine is one engine's capacity: the total ÷ the engines (vLLM's
// data-parallel engines are alike: each reports the same
// kv_cache_size_tokens).
func (k KVPool) PerEngine() int64 { return k.Tokens / int64(k.engines()) }

// PerEngineRequests is how many of C requests the busiest engine holds:
// ⌈C ÷ engines⌉ (vLLM's load balancer spreads them by its queue lengths).
func (k KVPool) PerEngineRequests(conc int) int {
	e := k.engines()
	return (max(conc, 0) + e - 1) / e
}

// Need is the tokens the busiest engine needs for C requests of ctx +
// maxOutput tokens each: ⌈C ÷ engines⌉ × (ctx + maxOutput).
func (k KVPool) Need(conc, ctx, maxOutput int) int64 {
	return int64(k.PerEngineRequests(conc)) * (int64(ctx) + int64(maxOutput))
}

// OverCapacity is the skip rule of docs/method.md#over-capacity: the
// busiest engine's ⌈C ÷ engines⌉ requests of ctx + max_output tokens each
// exceed one engine's capacity; with slots, one request's ctx + max_output
// exceed a slot's (llama-server cuts such a request short silently). An
// unknown capacity never skips.
func (k KVPool) OverCapacity(conc, ctx, maxOutput int) bool {
	if k.Slots > 0 {
		return k.Tokens > 0 && int64(ctx)+int64(maxOutput) > k.PerSlot()
	}
	return k.Tokens > 0 && k.Need(conc, ctx, maxOutput) > k.PerEngine()
}

// Arithmetic is the rule with the cell's numbers, each number written by
// num (nil writes plain digits): "2048 + 256 = 2304 tokens a request >
// a slot's KV cache 2048 tokens (8192 over 4 slots)" with slots;
// "64 × (262144 + 4096) = 17039360 tokens >
// KV cache 3468544 tokens" for one engine; "⌈64 ÷ 2⌉ = 32 per engine ×
// (8192 + 256) = 270336 tokens > one engine's KV cache 262144 tokens
// (524288 over 2 engines)" under data parallelism. It states the
// comparison as it is, so it reads right for a cell that fits too.
func (k KVPool) Arithmetic(conc, ctx, maxOutput int, num func(int64) string) string {
	if num == nil {
		num = func(v int64) string { return strconv.FormatInt(v, 10) }
	}
	cmp := ">"
	if !k.OverCapacity(conc, ctx, maxOutput) {
		cmp = "≤"
	}
	if k.Slots > 0 {
		return fmt.Sprintf("%s + %s = %s tokens a request %s a slot's KV cache %s tokens (%s over %d slots)", num(int64(ctx)), num(int64(maxOutput)),
			num(int64(ctx)+int64(maxOutput)), cmp, num(k.PerSlot()), num(k.Tokens), k.Slots)
	}
	need := num(k.Need(conc, ctx, maxOutput))
	if k.engines() == 1 {
		return fmt.Sprintf("%s × (%s + %s) = %s tokens %s KV cache %s tokens", num(int64(conc)), num(int64(ctx)), num(int64(maxOutput)), need, cmp, num(k.Tokens))
	}
	return fmt.Sprintf("⌈%s ÷ %d⌉ = %s per engine × (%s + %s) = %s tokens %s one engine's KV cache %s tokens (%s over %d engines)",
		num(int64(conc)), k.engines(), num(int64(k.PerEngineRequests(conc))), num(int64(ctx)), num(int64(maxOutput)), need, cmp,
		num(k.PerEngine()), num(k.Tokens), k.engines())
}

// WillQueue says whether C requests exceed the servers' cap on running
// requests: vLLM's max_num_seqs is per engine, so the busiest engine's
// ⌈C ÷ engines⌉ against it (maxNumSeqs ≤ 0: no cap known). The reason
// gives the numbers, naming the cap by Knob.
func (k KVPool) WillQueue(conc, maxNumSeqs int) (bool, string) {
	if maxNumSeqs <= 0 {
		return false, ""
	}
	per := k.PerEngineRequests(conc)
	if per <= maxNumSeqs {
		return false, ""
	}
	if k.engines() == 1 {
		return true, fmt.Sprintf("%d requests > %s %d: %d will wait", conc, k.knob(), maxNumSeqs, conc-maxNumSeqs)
	}
	return true, fmt.Sprintf("⌈%d ÷ %d⌉ = %d requests per engine > %s %d", conc, k.engines(), per, k.knob(), maxNumSeqs)
}
