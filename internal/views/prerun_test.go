package views

import (
	"testing"
	"time"

	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/vocab"
)

// TestPreRunCheckWords: the pre-run check's findings, each sentence in
// full.
func TestPreRunCheckWords(t *testing.T) {
	tests := []struct {
		name          string
		words         func() (string, string)
		summary, want string
	}{
		{name: "traffic tail, two rates short",
			words:   TrafficTail{Label: "steady", Window: 30 * time.Second, Rates: []float64{8, 4}, Lowest: 4, Held: 120, Need: 299}.Words,
			summary: "traffic steady: at 4 req/s its 30s window holds about 120 requests, and a p99 needs 299 to be compared",
			want:    "the p99s of its cells at 8, 4 req/s will be inconclusive against the baseline; a window of 74.8s or more at 4 req/s decides them"},
		{name: "traffic tail, a fractional rate",
			words:   TrafficTail{Label: "chat", Window: time.Minute, Rates: []float64{2.5}, Lowest: 2.5, Held: 150, Need: 459}.Words,
			summary: "traffic chat: at 2.5 req/s its 1m0s window holds about 150 requests, and a p99 needs 459 to be compared",
			want:    "the p99s of its cells at 2.5 req/s will be inconclusive against the baseline; a window of 183.6s or more at 2.5 req/s decides them"},
		{name: "coarse search",
			words:   CoarseSearch{Name: "capacity", Precision: 0.05, Tolerance: 0.05, File: "spec.hcl", Line: 12}.Words,
			summary: "search capacity: precision 5% is more than half the tolerance 5%",
			want:    `a capacity change of the tolerance cannot be told from the search's precision: set precision = "2.5%" or less at spec.hcl:12`},
		{name: "power shortfall",
			words: func() (string, string) {
				return PowerShortfallWords(compare.PowerShortfall{Phase: vocab.PhaseDecode, Metric: "total_tps", Cells: 1, Of: 2, Candidate: 5,
					Noisiest: vocab.CellRef{Phase: vocab.PhaseDecode, Matrix: "decode", Context: 8192, Concurrency: 64}, Noise: 0.0512, Repeats: 5, Need: 9, Tolerance: 0.05})
			},
			summary: "decode total_tps",
			want:    "1 of 2 baseline cells cannot be decided within 5% with power 0.9 against 5 repeats; the noisiest, decode/ctx=8K/conc=64, has noise 5.1% over 5 repeats: 9 baseline repeats would be needed, or a wider -tolerance"},
		{name: "power shortfall, capped and beyond the estimate",
			words: func() (string, string) {
				return PowerShortfallWords(compare.PowerShortfall{Phase: vocab.PhasePrefill, Metric: "ttft_ms", Cells: 3, Of: 3, Candidate: 10,
					Noisiest: vocab.CellRef{Phase: vocab.PhasePrefill, Matrix: "prefill", Context: 32768}, Noise: 0.2, Repeats: 3, Capped: true, Tolerance: 0.1})
			},
			summary: "prefill ttft_ms",
			want:    "3 of 3 baseline cells cannot be decided within 10% with power 0.9 against 10 repeats, and no number of candidate repeats would (the baseline caps the power); the noisiest, prefill/ctx=32K, has noise 20.0% over 3 repeats: more than 100 baseline repeats would be needed, or a wider -tolerance"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			summary, detail := tt.words()
			if summary != tt.summary || detail != tt.want {
				t.Errorf("words:\n %q\n %q\nwant\n %q\n %q", summary, detail, tt.summary, tt.want)
			}
		})
	}
}
