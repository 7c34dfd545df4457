package compare

import (
	"math"
	"testing"

	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/vocab"
)

// TestSignedRankOrder: the levels the exact signed-rank distribution
// attains, counted by hand: P(W ≤ 0) = 2⁻ⁿ, P(W ≤ 1) = 2·2⁻ⁿ, P(W ≤ 2) =
// 3·2⁻ⁿ, P(W ≤ 3) = 5·2⁻ⁿ (the subsets {}, {1}, {2}, {3}, {1,2}).
func TestSignedRankOrder(t *testing.T) {
	tests := []struct {
		name   string
		n      int
		alpha  float64
		k      int
		level  float64
		attain bool
	}{
		{name: "4 pairs cannot attain 0.05", n: 4, alpha: 0.05},
		{name: "5 pairs: the extreme, 1/32", n: 5, alpha: 0.05, k: 1, level: 1.0 / 32, attain: true},
		{name: "6 pairs: 3/64", n: 6, alpha: 0.05, k: 3, level: 3.0 / 64, attain: true},
		{name: "6 pairs at Pocock's 0.031: 1/64", n: 6, alpha: 0.031, k: 1, level: 1.0 / 64, attain: true},
		{name: "8 pairs: 10/256", n: 8, alpha: 0.05, k: 6, level: 10.0 / 256, attain: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k, level, ok := signedRankOrder(tc.n, tc.alpha)
			if ok != tc.attain || k != tc.k || math.Abs(level-tc.level) > 1e-12 {
				t.Errorf("signedRankOrder(%d, %g) = %d, %g, %v; want %d, %g, %v", tc.n, tc.alpha, k, level, ok, tc.k, tc.level, tc.attain)
			}
		})
	}
}

// TestBlocksDecide: paired blocks decide a throughput's change from the
// differences of each block, whatever the level of the block: a machine
// that slows by half between blocks does not move the decision.
func TestBlocksDecide(t *testing.T) {
	steps := []float64{100, 100, 50, 50, 50, 50} // the machine slowed after block 2
	pairs := func(ratio float64, jitter ...float64) (a, b []float64) {
		for i, s := range steps {
			a = append(a, s)
			b = append(b, s*ratio*(1+jitter[i]))
		}
		return a, b
	}
	tests := []struct {
		name   string
		ratio  float64
		jitter []float64
		want   Change
		// lower is the lower bound's ratio, the third smallest Walsh
		// average at 6 blocks: (d₂ + d₂)/2 = 0.99, (d₂ + d₄)/2, then
		// (d₂ + d₅)/2 = √0.99 ahead of d₄ = 0.995.
		lower float64
	}{
		{name: "identical, the machine slowed", ratio: 1, jitter: []float64{0.01, -0.01, 0.005, -0.005, 0, 0.002}, want: Unchanged, lower: math.Sqrt(0.99)},
		{name: "10% slower", ratio: 0.9, jitter: []float64{0.01, -0.01, 0.005, -0.005, 0, 0.002}, want: Regressed, lower: 0.9 * math.Sqrt(0.99)},
		{name: "one block split by the load: inconclusive, not regressed", ratio: 1, jitter: []float64{0.01, -0.01, -0.5, -0.005, 0, 0.002}, want: Inconclusive, lower: math.Sqrt(0.5 * 0.995)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, b := pairs(tc.ratio, tc.jitter...)
			got, ok := Blocks{Min: 6, Alpha: 0.05, Tolerance: 0.05}.Decide(a, b, true)
			if !ok {
				t.Fatal("6 blocks did not attain 0.05")
			}
			if got.Change != tc.want || math.Abs(got.Lower-tc.lower) > 1e-9 || got.Blocks != 6 || math.Abs(got.Level-3.0/64) > 1e-12 {
				t.Errorf("Decide = %v (lower %.6f, level %.4f, %d blocks), want %v (lower %.6f, level 3/64, 6 blocks)", got.Change, got.Lower, got.Level, got.Blocks, tc.want, tc.lower)
			}
		})
	}
	if _, ok := (Blocks{Min: 4}).Decide([]float64{1, 1, 1, 1}, []float64{1, 1, 1, 1}, true); ok {
		t.Error("4 blocks attained 0.05")
	}
}

// TestBlocksPolicy: an undecided metric under -inconclusive pass passes
// when its estimate is inside the tolerance and fails beyond it; one no
// block paired (every block left out) has no estimate and stays
// inconclusive under either policy: nothing measured it.
func TestBlocksPolicy(t *testing.T) {
	tps := metric.Metric{Name: "total_tps", HigherIsBetter: true}
	spread := []float64{0.9, 1.1, 0.95, 1.06, 0.97}
	vals := func(ratio float64) (a, b []float64) {
		for _, s := range spread {
			a = append(a, 100)
			b = append(b, 100*ratio*s)
		}
		return a, b
	}
	tests := []struct {
		name   string
		ratio  float64
		none   bool
		policy InconclusivePolicy
		want   vocab.Outcome
	}{
		{name: "undecided, estimate inside: fail policy", ratio: 1.0, policy: InconclusiveFail, want: vocab.Inconclusive},
		{name: "undecided, estimate inside: pass policy", ratio: 1.0, policy: InconclusivePass, want: vocab.Pass},
		{name: "undecided, estimate beyond: pass policy", ratio: 0.9, policy: InconclusivePass, want: vocab.Fail},
		{name: "no block paired: pass policy", none: true, policy: InconclusivePass, want: vocab.Inconclusive},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := vals(tt.ratio)
			if tt.none {
				a, b = nil, nil
			}
			s := Blocks{Min: 5, Max: 5, Tolerance: 0.05, Alpha: 0.05, Inconclusive: tt.policy}
			c := s.DecideCell(vocab.CellRef{Phase: vocab.PhaseDecode, Context: 1024, Concurrency: 1}, []metric.Metric{tps},
				map[string][]float64{"total_tps": a}, map[string][]float64{"total_tps": b})
			if c.Outcome != tt.want {
				t.Errorf("outcome %s (%+v); want %s", c.Outcome, c.Metrics[0].Test, tt.want)
			}
		})
	}
}
