package measure

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/slogate/slogate/internal/engine/registry"
	"github.com/slogate/slogate/internal/promread"
	"github.com/slogate/slogate/internal/warning"
)

// TestKVCheck: the cross-check of docs/method.md#kv-capacity takes its
// samples only with the one stream resident, reads the usage of the engine
// holding it, and warns (naming the suspect source) beyond 25 %.
func TestKVCheck(t *testing.T) {
	// One 8K stream 1,000 tokens in; each engine holds 1,000,000 tokens.
	const ctx, perEngine = 8192, 1_000_000
	usage := func(engines ...float64) promread.Snapshot {
		s := promread.Snapshot{Running: 1, HasRequests: true, KVUsage: map[string]float64{}}
		for i, u := range engines {
			s.KVUsage[string(rune('0'+i))] = u
		}
		return s
	}
	resident := float64(ctx + 1000)
	tests := []struct {
		name        string
		snaps       []promread.Snapshot
		decoding    int64
		capacity    int64
		source      string
		wantSamples int
		wantImplied int64
		// wantRatio is the kv_capacity warning's capacity ÷ implied (0: no
		// warning); the warning is about the source.
		wantRatio    float64
		wantExpected float64
	}{
		{name: "one engine, capacity right", snaps: []promread.Snapshot{usage(resident / perEngine)}, decoding: 1,
			capacity: perEngine, source: "metrics", wantSamples: 1, wantImplied: perEngine, wantExpected: resident / perEngine},
		{name: "two engines: the one holding the stream, times two", snaps: []promread.Snapshot{usage(0, resident/perEngine)}, decoding: 1,
			capacity: 2 * perEngine, source: "metrics", wantSamples: 1, wantImplied: 2 * perEngine, wantExpected: resident / perEngine},
		{name: "the spec's value off by 2× warns", snaps: []promread.Snapshot{usage(resident / perEngine)}, decoding: 1,
			capacity: 2 * perEngine, source: "spec", wantSamples: 1, wantImplied: perEngine, wantExpected: resident / (2 * perEngine),
			wantRatio: 2},
		{name: "20 % off is within tolerance", snaps: []promread.Snapshot{usage(resident / perEngine)}, decoding: 1,
			capacity: perEngine * 6 / 5, source: "log", wantSamples: 1, wantImplied: perEngine, wantExpected: resident / (perEngine * 1.2)},
		{name: "30 % off on the estimate warns about hybrid models", snaps: []promread.Snapshot{usage(resident / perEngine)}, decoding: 1,
			capacity: perEngine * 13 / 10, source: "metrics-estimate", wantSamples: 1, wantImplied: perEngine, wantExpected: resident / (perEngine * 1.3),
			wantRatio: 1.3},
		{name: "unknown capacity: recorded, no warning", snaps: []promread.Snapshot{usage(resident / perEngine)}, decoding: 1,
			wantSamples: 1, wantImplied: perEngine},
		{name: "the median sample of three", snaps: []promread.Snapshot{usage(resident / perEngine), usage(resident / perEngine / 2), usage(resident / perEngine * 4)}, decoding: 1,
			capacity: perEngine, source: "metrics", wantSamples: 3, wantImplied: perEngine, wantExpected: resident / perEngine},
		{name: "not resident alone: two running, one waiting, client between requests", decoding: 1,
			snaps: []promread.Snapshot{
				{Running: 2, HasRequests: true, KVUsage: map[string]float64{"0": 0.1}},
				{Running: 1, Waiting: 1, HasRequests: true, KVUsage: map[string]float64{"0": 0.1}},
				{Running: 1, KVUsage: map[string]float64{"0": 0.1}},
				usage(0),
			}},
		{name: "the client's stream is not decoding", snaps: []promread.Snapshot{usage(resident / perEngine)}, decoding: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k := &kvCheck{context: ctx, terms: registry.For("vllm").Status()}
			for _, s := range tc.snaps {
				k.sample(s, 990, 1010, tc.decoding)
			}
			got, w := k.result("decode/ctx=8K/conc=1", tc.capacity, tc.source)
			if tc.wantSamples == 0 {
				if got != nil || w.Code != "" {
					t.Fatalf("check = %+v, %+v; want none", got, w)
				}
				return
			}
			if got == nil {
				t.Fatal("no check recorded")
			}
			if got.Samples != tc.wantSamples || got.ImpliedCapacityTokens != tc.wantImplied || got.ResidentTokens != ctx+1000 ||
				!near(got.ExpectedPerc, tc.wantExpected) || got.CapacityTokens != tc.capacity {
				t.Errorf("check = %+v, want %d samples, implied %d, resident %d, expected %.8f", got, tc.wantSamples, tc.wantImplied, ctx+1000, tc.wantExpected)
			}
			var want warning.Warning
			if tc.wantRatio > 0 {
				want = warning.Warning{Code: warning.KVCapacity, Subject: tc.source, Figures: map[string]float64{
					warning.FigImpliedTokens: float64(tc.wantImplied), warning.FigCapacityTokens: float64(tc.capacity), warning.FigRatio: tc.wantRatio}}
			}
			if diff := cmp.Diff(want, w.Textless()); diff != "" {
				t.Errorf("warning (-want +got):\n%s", diff)
			}
		})
	}
}

// TestKVCheckSkipsRestartsDuringTheScrape: a sample counts only when the
// stream's token count moved little while /metrics was read.
func TestKVCheckSkipsRestartsDuringTheScrape(t *testing.T) {
	k := &kvCheck{context: 8192}
	s := promread.Snapshot{Running: 1, HasRequests: true, KVUsage: map[string]float64{"0": 0.01}}
	k.sample(s, 1000, 3, 1)    // the stream restarted
	k.sample(s, 0, 0, 1)       // no token yet
	k.sample(s, 1000, 1100, 1) // a slow scrape
	if len(k.samples) != 0 {
		t.Errorf("%d samples kept, want 0", len(k.samples))
	}
}

func near(a, b float64) bool { return a-b < 1e-7 && b-a < 1e-7 }

// TestKVCheckWholeBlocks: a stream holds whole blocks, so where the server
// states its block size the check compares the usage with the blocks'
// tokens. The figures are vLLM 0.32.0's CPU build's (128-token blocks, 1
// GiB of KV cache = 524,288 tokens): one 256-token stream 34 tokens in
// holds 290 tokens in 3 blocks, 384 tokens, 0.0732 % of the cache. Without
// the block size the same sample implies 395,947 tokens and warns (1.32×).
func TestKVCheckWholeBlocks(t *testing.T) {
	const capacity = 524_288
	tests := []struct {
		name        string
		tokenBlock  int64
		wantImplied int64
		wantWarning bool
	}{
		{name: "128-token blocks", tokenBlock: 128, wantImplied: capacity},
		{name: "block unknown, or not the token unit (hybrid)", tokenBlock: 0, wantImplied: 395_947, wantWarning: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			snap := promread.Snapshot{Running: 1, HasRequests: true, KVUsage: map[string]float64{"0": 384.0 / capacity},
				KV: promread.KVCacheInfo{BlockSize: 128, TokenBlock: tc.tokenBlock}}
			k := &kvCheck{context: 256, terms: registry.For("vllm").Status()}
			k.sample(snap, 30, 38, 1)
			got, w := k.result("decode/ctx=256/conc=1", capacity, "metrics")
			if got == nil || got.ResidentTokens != 290 || got.ImpliedCapacityTokens != tc.wantImplied {
				t.Fatalf("check = %+v, want 290 tokens resident, implied %d", got, tc.wantImplied)
			}
			if (w.Code != "") != tc.wantWarning {
				t.Errorf("warning %+v, want one: %v", w, tc.wantWarning)
			}
		})
	}
}
