package measure

import (
	"strings"
	"testing"

	"github.com/slogate/slogate/internal/engine/registry"
	"github.com/slogate/slogate/internal/promread"
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
		name         string
		snaps        []promread.Snapshot
		decoding     int64
		capacity     int64
		source       string
		wantSamples  int
		wantImplied  int64
		wantWarning  string
		wantExpected float64
	}{
		{name: "one engine, capacity right", snaps: []promread.Snapshot{usage(resident / perEngine)}, decoding: 1,
			capacity: perEngine, source: "metrics", wantSamples: 1, wantImplied: perEngine, wantExpected: resident / perEngine},
		{name: "two engines: the one holding the stream, times two", snaps: []promread.Snapshot{usage(0, resident/perEngine)}, decoding: 1,
			capacity: 2 * perEngine, source: "metrics", wantSamples: 1, wantImplied: 2 * perEngine, wantExpected: resident / perEngine},
		{name: "the spec's value off by 2× warns", snaps: []promread.Snapshot{usage(resident / perEngine)}, decoding: 1,
			capacity: 2 * perEngine, source: "spec", wantSamples: 1, wantImplied: perEngine, wantExpected: resident / (2 * perEngine),
			wantWarning: "is 2.00× that: the spec's kv_cache_tokens is suspect"},
		{name: "20 % off is within tolerance", snaps: []promread.Snapshot{usage(resident / perEngine)}, decoding: 1,
			capacity: perEngine * 6 / 5, source: "log", wantSamples: 1, wantImplied: perEngine, wantExpected: resident / (perEngine * 1.2)},
		{name: "30 % off on the estimate warns about hybrid models", snaps: []promread.Snapshot{usage(resident / perEngine)}, decoding: 1,
			capacity: perEngine * 13 / 10, source: "metrics-estimate", wantSamples: 1, wantImplied: perEngine, wantExpected: resident / (perEngine * 1.3),
			wantWarning: "num_gpu_blocks × block_size is suspect (wrong for hybrid models"},
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
			got, warning := k.result("decode/ctx=8K/conc=1", tc.capacity, tc.source)
			if tc.wantSamples == 0 {
				if got != nil || warning != "" {
					t.Fatalf("check = %+v, %q; want none", got, warning)
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
			if (tc.wantWarning == "") != (warning == "") || !strings.Contains(warning, tc.wantWarning) {
				t.Errorf("warning = %q, want %q", warning, tc.wantWarning)
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
