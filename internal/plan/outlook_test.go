package plan

import (
	"testing"

	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/vocab"
)

// TestCellOutlook: the plan's status of a decode cell from the spec alone:
// over capacity by kv_cache_tokens over data_parallel_size engines, else
// queued above max_num_seqs per engine.
func TestCellOutlook(t *testing.T) {
	ip := func(v int) *int { return &v }
	kv := func(v int64) *int64 { return &v }
	d := func(ctx, c int) vocab.CellRef {
		return vocab.CellRef{Phase: vocab.PhaseDecode, Matrix: "decode", Context: ctx, Concurrency: c}
	}
	tests := []struct {
		name string
		srv  *spec.Server
		ref  vocab.CellRef
		want Outlook
	}{
		{name: "nothing known", srv: &spec.Server{}, ref: d(8192, 128)},
		{name: "over the spec's kv_cache_tokens", srv: &spec.Server{KVCacheTokens: kv(512 << 10)}, ref: d(8192, 128),
			want: Outlook{Status: vocab.StatusOverCapacity, Reason: "128 × (8192 + 256) = 1081344 tokens > KV cache 524288 tokens (from the spec's kv_cache_tokens)"}},
		{name: "fits the spec's kv_cache_tokens", srv: &spec.Server{KVCacheTokens: kv(512 << 10)}, ref: d(8192, 16)},
		{name: "DP 2: fits the total, not one engine", srv: &spec.Server{KVCacheTokens: kv(36000), DataParallelSize: ip(2)}, ref: d(9000, 3),
			want: Outlook{Status: vocab.StatusOverCapacity, Reason: "⌈3 ÷ 2⌉ = 2 per engine × (9000 + 256) = 18512 tokens > one engine's KV cache 18000 tokens (36000 over 2 engines) (from the spec's kv_cache_tokens)"}},
		{name: "DP 2: max_num_seqs is per engine", srv: &spec.Server{MaxNumSeqs: ip(64), DataParallelSize: ip(2)}, ref: d(8192, 128)},
		{name: "above max_num_seqs", srv: &spec.Server{MaxNumSeqs: ip(64)}, ref: d(8192, 128),
			want: Outlook{Status: vocab.StatusQueued, Reason: "128 requests > max_num_seqs 64: 64 will wait"}},
		{name: "--max-num-seqs in args", srv: &spec.Server{Args: []string{"--enforce-eager", "--max-num-seqs", "64"}}, ref: d(8192, 128),
			want: Outlook{Status: vocab.StatusQueued, Reason: "128 requests > max_num_seqs 64: 64 will wait"}},
		{name: "--max_num_seqs=N in args wins over the attribute", srv: &spec.Server{MaxNumSeqs: ip(256), Args: []string{"--max_num_seqs=32"}}, ref: d(8192, 128),
			want: Outlook{Status: vocab.StatusQueued, Reason: "128 requests > max_num_seqs 32: 96 will wait"}},
		{name: "args raise the attribute's cap", srv: &spec.Server{MaxNumSeqs: ip(64), Args: []string{"--max-num-seqs=256"}}, ref: d(8192, 128)},
		{name: "over capacity wins over queued", srv: &spec.Server{MaxNumSeqs: ip(64), KVCacheTokens: kv(512 << 10)}, ref: d(8192, 128),
			want: Outlook{Status: vocab.StatusOverCapacity, Reason: "128 × (8192 + 256) = 1081344 tokens > KV cache 524288 tokens (from the spec's kv_cache_tokens)"}},
		{name: "a prefill cell has none", srv: &spec.Server{KVCacheTokens: kv(1)}, ref: vocab.CellRef{Phase: vocab.PhasePrefill, Context: 8192}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := CellOutlook(tc.srv, 256, tc.ref); got != tc.want {
				t.Errorf("CellOutlook = %+v\nwant          %+v", got, tc.want)
			}
		})
	}
}
