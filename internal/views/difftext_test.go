package views

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// Regenerate the golden files with: go test ./internal/views -update
var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func decode(ctx, conc int, tps, ttft, tbt float64) result.DecodeCell {
	return result.DecodeCell{Matrix: "decode", Context: ctx, Concurrency: conc, Status: vocab.StatusValid, TotalTPS: tps, TTFTMs: ttft, TBTMs: tbt}
}

// runs returns two runs that exercise every kind of cell: unchanged,
// regressed and improved (both directions) by the tolerance rule, repeats
// without samples decided by the tolerance rule, a regression, unchanged
// cells and an inconclusive one decided by the interval of 5 samples a
// side, over capacity on both sides, lost (over capacity in B, absent from
// B), errored in B, and a cell only B measured.
func runs() (a, b *result.Results) {
	a = &result.Results{Schema: result.Schema, Server: result.Server{Name: "qwen"},
		Prefill: []result.PrefillCell{
			{Context: 8192, Status: vocab.StatusValid, TPS: 40000, TTFTMs: 204.8},
			{Context: 16384, Status: vocab.StatusValid, TPS: 38000, TTFTMs: 431.2},
		},
		Decode: []result.DecodeCell{
			decode(8192, 1, 408.2, 50, 2.4),
			decode(8192, 64, 6018.4, 300, 10.5),
			decode(16384, 1, 400, 80, 2.5),
			{Matrix: "decode", Context: 16384, Concurrency: 64, Status: vocab.StatusOverCapacity},
			decode(32768, 1, 380, 120, 2.6),
			decode(4096, 1, 420, 40, 2.3),
			decode(4096, 64, 6500, 250, 9.8),
			decode(65536, 1, 350, 200, 2.8),
		},
	}
	b = &result.Results{Schema: result.Schema, Server: result.Server{Name: "qwen"},
		Prefill: []result.PrefillCell{
			{Context: 8192, Status: vocab.StatusValid, TPS: 39000, TTFTMs: 210},
			{Context: 16384, Status: vocab.StatusValid, TPS: 30000, TTFTMs: 546.1},
		},
		Decode: []result.DecodeCell{
			decode(8192, 1, 410, 49, 2.4),
			decode(8192, 64, 5421.3, 340, 11.8),
			decode(16384, 1, 440, 70, 2.3),
			{Matrix: "decode", Context: 16384, Concurrency: 64, Status: vocab.StatusOverCapacity},
			{Matrix: "decode", Context: 32768, Concurrency: 1, Status: vocab.StatusError, Reason: "stream stalled"},
			decode(32768, 64, 5000, 900, 12),
			decode(4096, 1, 398, 40.2, 2.31),
			{Matrix: "decode", Context: 4096, Concurrency: 64, Status: vocab.StatusOverCapacity,
				Reason: "64 × (4096 + 4096) = 524288 tokens > KV cache 500000 tokens"},
		},
	}
	// Repeated on both sides without samples recorded (an older
	// results.json): the tolerance rule decides on the values (+10%:
	// improved); overlapping spreads are no longer "noise".
	a.Decode[2].Repeats, a.Decode[2].Spread = 3, map[string][2]float64{"total_tps": {380, 425}}
	b.Decode[2].Repeats, b.Decode[2].Spread = 3, map[string][2]float64{"total_tps": {415, 450}}
	// 4K×1 repeated 5 times on both sides: total_tps 5.2% lower, entirely
	// below A's samples but too close to the tolerance's edge for the
	// bounds to tell (inconclusive; the U test called it a regression);
	// ttft_ms and tbt_ms move within each other's samples, and the
	// intervals show them within the tolerance (were "not significant").
	// Prefill 16K repeated 5 times: 21% lower, regressed by its interval.
	a.Decode[5].Repeats, a.Decode[5].Samples = 5, map[string][]float64{
		"total_tps": {418, 420, 425, 416, 421}, "ttft_ms": {39, 40, 41, 40, 42}, "tbt_ms": {2.2, 2.3, 2.35, 2.3, 2.25}}
	b.Decode[6].Repeats, b.Decode[6].Samples = 5, map[string][]float64{
		"total_tps": {398, 397, 400, 394, 399}, "ttft_ms": {40.2, 39, 41.5, 40.5, 38}, "tbt_ms": {2.31, 2.2, 2.4, 2.28, 2.35}}
	a.Prefill[1].Repeats, a.Prefill[1].Samples = 5, map[string][]float64{"tps": {37800, 38000, 38200, 37900, 38100}}
	b.Prefill[1].Repeats, b.Prefill[1].Samples = 5, map[string][]float64{"tps": {29800, 30000, 30200, 29900, 30100}}
	return a, b
}

// TestRender compares the text rendering with testdata/diff.golden.
// Regenerate with: go test ./internal/views -update
func TestRender(t *testing.T) {
	a, b := runs()
	var buf bytes.Buffer
	if err := writeTables(&buf, compare.Build(a, b, compare.Policy{Tolerance: 0.05})); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "diff.golden")
	if *update {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/views -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), buf.String()); diff != "" {
		t.Errorf("rendering differs from %s (-want +got); if intended, run go test ./internal/views -update:\n%s", golden, diff)
	}
}

// TestFindingText: the reasons of lost and errored cells quote A's value and
// B's own reason (the capacity arithmetic).
func TestFindingText(t *testing.T) {
	a, b := runs()
	var got []string
	for _, f := range compare.Build(a, b, compare.Policy{Tolerance: 0.05}).Lost {
		got = append(got, FindingText(f))
	}
	want := []string{
		"decode/ctx=4K/conc=64: lost: over capacity (was 6,500.0 tok/s); 64 × (4096 + 4096) = 524288 tokens > KV cache 500000 tokens",
		"decode/ctx=32K/conc=1: error: stream stalled (was 380.0 tok/s)",
		"decode/ctx=64K/conc=1: lost: not measured (was 350.0 tok/s)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestMethodNote(t *testing.T) {
	const conf55 = 1 - 0.0476 // the confidence 5+5 repeats attain at α = 0.05
	tests := []struct {
		name   string
		method compare.Method
		want   string
	}{
		{"all tested", compare.Method{Tested: 2, Confidence: conf55, SizeA: 5, SizeB: 5, Alpha: 0.05, RepeatsNeeded: 3}, "Decisions are statistical: every cell's change has Hodges–Lehmann bounds, each one-sided at 95.2% confidence or more (α = 0.05, the level 5+5 repeats attain)"},
		{"none tested", compare.Method{Untested: 1, RepeatsA: 1, RepeatsB: 2, Alpha: 0.05, RepeatsNeeded: 3}, "Decisions are not statistical: the tolerance alone decided (1 run per cell in A, 2 runs in B: too few to attain α = 0.05); measure.repeat = 3 on both runs is the least that gives each cell an interval of its change at α = 0.05"},
		{"some tested", compare.Method{Tested: 1, Untested: 1, RepeatsA: 5, RepeatsB: 2, Confidence: conf55, SizeA: 5, SizeB: 5, Alpha: 0.05, RepeatsNeeded: 3}, "1 of 2 cell metrics were decided by the tolerance alone, not statistically (5 runs per cell in A, 2 runs in B"},
		{"nothing on both sides", compare.Method{Alpha: 0.05, RepeatsNeeded: 3}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := MethodNote(tc.method)
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Errorf("note %q, want it to contain %q", got, tc.want)
			}
		})
	}
}
