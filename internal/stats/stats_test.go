package stats

import (
	"math"
	"slices"
	"testing"
)

// TestNormal pins Φ and Φ⁻¹ at the values the decisions use, to the
// digits of a printed table, and each as the other's inverse.
func TestNormal(t *testing.T) {
	tests := []struct {
		name string
		p, z float64
	}{
		{name: "median", p: 0.5, z: 0},
		{name: "one-sided 5%", p: 0.95, z: 1.6448536269514722},
		{name: "two-sided 5%", p: 0.975, z: 1.959963984540054},
		{name: "one-sided 1%", p: 0.99, z: 2.3263478740408408},
		{name: "lower tail", p: 0.05, z: -1.6448536269514722},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := NormalQuantile(tt.p); math.Abs(got-tt.z) > 1e-12 {
				t.Errorf("NormalQuantile(%v) = %v, want %v", tt.p, got, tt.z)
			}
			if got := NormalCDF(tt.z); math.Abs(got-tt.p) > 1e-12 {
				t.Errorf("NormalCDF(%v) = %v, want %v", tt.z, got, tt.p)
			}
		})
	}
	if !math.IsInf(NormalQuantile(1), 1) || !math.IsInf(NormalQuantile(0), -1) || !math.IsNaN(NormalQuantile(1.5)) {
		t.Errorf("NormalQuantile at 1, 0, 1.5 = %v, %v, %v; want +Inf, -Inf, NaN", NormalQuantile(1), NormalQuantile(0), NormalQuantile(1.5))
	}
}

// TestPercentile: numpy's linear rule (np.percentile of the same samples
// gives each want), one answer for an empty sample, and infinite samples
// (requests never answered) reached only past a rank.
func TestPercentile(t *testing.T) {
	inf := math.Inf(1)
	tests := []struct {
		name string
		xs   []float64
		q    float64
		want float64
	}{
		{name: "empty", xs: nil, q: 0.5, want: math.NaN()},
		{name: "one", xs: []float64{7}, q: 0.99, want: 7},
		{name: "median of an even sample", xs: []float64{4, 1, 3, 2}, q: 0.5, want: 2.5},
		{name: "median of an odd sample", xs: []float64{5, 1, 3}, q: 0.5, want: 3},
		{name: "p90 interpolates", xs: []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, q: 0.9, want: 9.1},
		{name: "p99 of 100", xs: seq(100), q: 0.99, want: 99.01},
		{name: "the bottom", xs: []float64{3, 1, 2}, q: 0, want: 1},
		{name: "the top", xs: []float64{3, 1, 2}, q: 1, want: 3},
		{name: "at a rank beside an infinite sample", xs: []float64{1, 2, inf}, q: 0.5, want: 2},
		{name: "past a rank towards an infinite sample", xs: []float64{1, 2, inf}, q: 0.9, want: inf},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Percentile(tt.xs, tt.q)
			if !(got == tt.want || math.IsNaN(got) && math.IsNaN(tt.want)) && math.Abs(got-tt.want) > 1e-9 {
				t.Errorf("Percentile(%v, %v) = %v, want %v", tt.xs, tt.q, got, tt.want)
			}
			f32 := make([]float32, len(tt.xs))
			for i, x := range tt.xs {
				f32[i] = float32(x)
			}
			slices.Sort(f32)
			if got32 := PercentileSorted(f32, tt.q); !(got32 == tt.want || math.IsNaN(got32) && math.IsNaN(tt.want)) && math.Abs(got32-tt.want) > 1e-4 {
				t.Errorf("PercentileSorted(float32 %v, %v) = %v, want %v", f32, tt.q, got32, tt.want)
			}
		})
	}
	xs := []float64{3, 1, 2}
	if Median(xs); xs[0] != 3 {
		t.Errorf("Percentile sorted its argument in place: %v", xs)
	}
}

func seq(n int) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = float64(i + 1)
	}
	return xs
}

// TestWilson: the interval against a published table.
func TestWilson(t *testing.T) {
	tests := []struct {
		name   string
		k, n   int
		lo, hi float64
	}{
		// Wilson 1927; the 95% interval of 8 of 10 is [0.490, 0.943]
		// (Newcombe 1998, table I).
		{name: "8 of 10", k: 8, n: 10, lo: 0.4902, hi: 0.9433},
		{name: "0 of 10", k: 0, n: 10, lo: 0, hi: 0.2775},
		{name: "10 of 10", k: 10, n: 10, lo: 0.7225, hi: 1},
		{name: "nothing scored", k: 0, n: 0, lo: 0, hi: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lo, hi := Wilson(tt.k, tt.n, 0.025)
			if math.Abs(lo-tt.lo) > 5e-4 || math.Abs(hi-tt.hi) > 5e-4 {
				t.Errorf("Wilson(%d, %d) = [%.4f, %.4f], want [%.4f, %.4f]", tt.k, tt.n, lo, hi, tt.lo, tt.hi)
			}
		})
	}
}
