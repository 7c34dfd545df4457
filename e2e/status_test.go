package e2e

import (
	"testing"
	"time"

	res "github.com/slogate/slogate/result"
)

// Statuses before and after the run (docs/method.md#over-capacity,
// docs/method.md#statuses).

// dp2 is a simulator with two data-parallel engines of 100,000 tokens each
// (200,000 in all).
const dp2 = `"-dp", "2", "--sim-kv-tokens", "100000", "--sim-tbt", "5ms", "--sim-ttft", "20ms", "--sim-prefill-tps", "1000000"`

// TestOverCapacityPerEngine: under data parallelism a request lives in one
// engine's pool. 8K × 23 needs 23 × 8,448 = 194,304 tokens, within the
// 200,000 of both engines, but the busiest engine holds ⌈23 ÷ 2⌉ = 12
// requests: 101,376 tokens > its 100,000, so it is over capacity; 8K × 20
// (10 per engine, 84,480 tokens) fits and is measured.
func TestOverCapacityPerEngine(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	defer noLeftovers(t, mark)
	o := runFault(t, mark, 2*time.Minute, "-sim", faultSpec(t, freePort(t), "", dp2, `
measure {
  duration   = "1s"
  max_output = 256
}
matrix "decode" {
  contexts    = ["8K"]
  concurrency = [20, 23]
}
`))
	if o.r.Code != 0 || o.results == nil {
		t.Fatalf("want exit 0\n%s", o.dump())
	}
	if s := o.results.Server; s.KVCacheTokens != 200000 || s.KVCacheEngines != 2 {
		t.Errorf("server: kv_cache_tokens %d over %d engines, want 200000 over 2", s.KVCacheTokens, s.KVCacheEngines)
	}
	cells := decodeCells(t, o, 2)
	const want = "⌈23 ÷ 2⌉ = 12 per engine × (8192 + 256) = 101376 tokens > one engine's KV cache 100000 tokens (200000 over 2 engines)"
	if c := cells["ctx=8K/conc=23"]; c.Status != res.StatusOverCapacity || c.Reason != want {
		t.Errorf("8K × 23: status %s (%s), want over_capacity: %s", c.Status, c.Reason, want)
	}
	if c := cells["ctx=8K/conc=20"]; c.Status != res.StatusValid || c.TotalTPS <= 0 {
		t.Errorf("8K × 20: status %s (%s), total_tps %.1f; want valid and measured (10 per engine fit)", c.Status, c.Reason, c.TotalTPS)
	}
}
