package plan

import (
	"testing"

	"github.com/slogate/slogate/internal/numfmt"
)

// TestKVPoolOverCapacity: C × (ctx + max_output) against the capacity for
// one engine; ⌈C ÷ engines⌉ × (ctx + max_output) against one engine's pool
// under data parallelism (docs/method.md#over-capacity); with slots, one
// request's ctx + max_output against a slot's KV.
func TestKVPoolOverCapacity(t *testing.T) {
	tests := []struct {
		name         string
		pool         KVPool
		conc, ctx, o int
		want         bool
		wantText     string
	}{
		{name: "fits exactly", pool: KVPool{Tokens: 2048}, conc: 2, ctx: 1000, o: 24, want: false,
			wantText: "2 × (1000 + 24) = 2048 tokens ≤ KV cache 2048 tokens"},
		{name: "one token over", pool: KVPool{Tokens: 2048}, conc: 2, ctx: 1000, o: 25, want: true,
			wantText: "2 × (1000 + 25) = 2050 tokens > KV cache 2048 tokens"},
		{name: "unknown capacity never skips", pool: KVPool{}, conc: 1024, ctx: 1 << 20, o: 4096, want: false},
		{name: "seed qwen 251K x 128", pool: KVPool{Tokens: 33_000_000}, conc: 128, ctx: 257024, o: 4096, want: true},
		{name: "seed qwen 251K x 64", pool: KVPool{Tokens: 33_000_000}, conc: 64, ctx: 257024, o: 4096, want: false},
		{name: "engines 0 and 1 are one engine", pool: KVPool{Tokens: 2048, Engines: 0}, conc: 2, ctx: 1000, o: 25, want: true},
		{name: "DP 2: fits one engine", pool: KVPool{Tokens: 40000, Engines: 2}, conc: 4, ctx: 8192, o: 256, want: false,
			wantText: "⌈4 ÷ 2⌉ = 2 per engine × (8192 + 256) = 16896 tokens ≤ one engine's KV cache 20000 tokens (40000 over 2 engines)"},
		{name: "DP 2: an odd C puts one more on the busiest engine", pool: KVPool{Tokens: 40000, Engines: 2}, conc: 3, ctx: 9000, o: 1000, want: false,
			wantText: "⌈3 ÷ 2⌉ = 2 per engine × (9000 + 1000) = 20000 tokens ≤ one engine's KV cache 20000 tokens (40000 over 2 engines)"},
		{name: "DP 2: C × (ctx + out) fits the total, ⌈C ÷ 2⌉ × … exceeds one engine", pool: KVPool{Tokens: 40000, Engines: 2}, conc: 3, ctx: 9000, o: 1001, want: true,
			wantText: "⌈3 ÷ 2⌉ = 2 per engine × (9000 + 1001) = 20002 tokens > one engine's KV cache 20000 tokens (40000 over 2 engines)"},
		{name: "slots: a request fits its slot at any concurrency", pool: KVPool{Tokens: 4096, Slots: 2}, conc: 8, ctx: 1792, o: 256, want: false,
			wantText: "1792 + 256 = 2048 tokens a request ≤ a slot's KV cache 2048 tokens (4096 over 2 slots)"},
		{name: "slots: one token over a slot, though the pool holds it", pool: KVPool{Tokens: 4096, Slots: 2}, conc: 1, ctx: 1793, o: 256, want: true,
			wantText: "1793 + 256 = 2049 tokens a request > a slot's KV cache 2048 tokens (4096 over 2 slots)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.pool.OverCapacity(tc.conc, tc.ctx, tc.o); got != tc.want {
				t.Errorf("OverCapacity = %v, want %v", got, tc.want)
			}
			if tc.wantText != "" {
				if got := tc.pool.Arithmetic(tc.conc, tc.ctx, tc.o, nil); got != tc.wantText {
					t.Errorf("Arithmetic = %q\nwant         %q", got, tc.wantText)
				}
			}
		})
	}
	if got, want := (KVPool{Tokens: 24_000_000}).Arithmetic(128, 257024, 4096, numfmt.Int), "128 × (257,024 + 4,096) = 33,423,360 tokens > KV cache 24,000,000 tokens"; got != want {
		t.Errorf("Arithmetic with numfmt.Int = %q, want %q", got, want)
	}
}

// TestKVPoolWillQueue: max_num_seqs is per engine, so ⌈C ÷ engines⌉ against it.
func TestKVPoolWillQueue(t *testing.T) {
	tests := []struct {
		name       string
		pool       KVPool
		conc, seqs int
		want       string
	}{
		{name: "no cap", conc: 128, seqs: 0},
		{name: "at the cap", conc: 64, seqs: 64},
		{name: "over the cap", conc: 128, seqs: 64, want: "128 requests > max_num_seqs 64: 64 will wait"},
		{name: "DP 2 within the cap per engine", pool: KVPool{Engines: 2}, conc: 128, seqs: 64},
		{name: "DP 2 over the cap per engine", pool: KVPool{Engines: 2}, conc: 129, seqs: 64, want: "⌈129 ÷ 2⌉ = 65 requests per engine > max_num_seqs 64"},
		{name: "llama-server's slots named by its flag", pool: KVPool{Slots: 2, Knob: "--parallel"}, conc: 4, seqs: 2, want: "4 requests > --parallel 2: 2 will wait"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, why := tc.pool.WillQueue(tc.conc, tc.seqs)
			if got != (tc.want != "") || why != tc.want {
				t.Errorf("WillQueue = %v %q, want %q", got, why, tc.want)
			}
		})
	}
}
