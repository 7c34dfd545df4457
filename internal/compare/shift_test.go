package compare

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/aclements/go-moremath/stats"
)

// TestUDistribution checks the counting recurrence against go-moremath's
// stats.UDist (an independent implementation) for every size up to 9 a
// side, and against values worked by hand.
func TestUDistribution(t *testing.T) {
	for n := 1; n <= 9; n++ {
		for m := 1; m <= 9; m++ {
			cdf := uCDF(n, m)
			if len(cdf) != n*m+1 {
				t.Fatalf("%d+%d: %d values of U, want %d", n, m, len(cdf), n*m+1)
			}
			ref := stats.UDist{N1: n, N2: m}
			for u := range cdf {
				if want := ref.CDF(float64(u)); math.Abs(cdf[u]-want) > 1e-12 {
					t.Errorf("%d+%d: P(U ≤ %d) = %.15f, stats.UDist %.15f", n, m, u, cdf[u], want)
				}
			}
		}
	}
	hand := []struct {
		name string
		n, m int
		u    int
		want float64
	}{
		{"4+4: the two most extreme of 70 orderings", 4, 4, 1, 2.0 / 70},
		{"5+5: 12 of 252 orderings have U ≤ 4", 5, 5, 4, 12.0 / 252},
		{"3+3: the extreme is 1 of 20", 3, 3, 0, 1.0 / 20},
		{"1+4: each U is one of 5", 1, 4, 2, 3.0 / 5},
	}
	for _, tc := range hand {
		t.Run(tc.name, func(t *testing.T) {
			if got := uCDF(tc.n, tc.m)[tc.u]; math.Abs(got-tc.want) > 1e-15 {
				t.Errorf("P(U ≤ %d) = %v, want %v", tc.u, got, tc.want)
			}
		})
	}
}

func TestAttainable(t *testing.T) {
	tests := []struct {
		name  string
		n, m  int
		alpha float64
		k     int
		level float64 // ±1e-4; 0 when not attainable
	}{
		{"4 + 4 attains 0.0286 at α = 0.05 (coverage 97.1%)", 4, 4, 0.05, 2, 0.0286},
		{"5 + 5 attains 0.0476 (coverage 95.24%)", 5, 5, 0.05, 5, 0.0476},
		{"3 + 3 attains 0.05 only at the extreme", 3, 3, 0.05, 1, 0.05},
		{"3 + 3 cannot attain 0.049", 3, 3, 0.049, 0, 0},
		{"2 + 2 cannot attain 0.05", 2, 2, 0.05, 0, 0},
		{"one sample against 10 cannot attain 0.05", 1, 10, 0.05, 0, 0},
		{"one sample against 19 attains 0.05 at the extreme", 1, 19, 0.05, 1, 0.05},
		{"5 + 4 attains 0.0317", 5, 4, 0.05, 3, 4.0 / 126},
		{"no sample on a side", 0, 5, 0.05, 0, 0},
		{"60 + 60 by the normal approximation: 1800 − 1.645 × 190.5 − 0.5", 60, 60, 0.05, 1487, 0.05},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k, level, ok := attainable(tc.n, tc.m, tc.alpha)
			if ok != (tc.k > 0) {
				t.Fatalf("attainable = %v (k %d, level %v), want %v", ok, k, level, tc.k > 0)
			}
			if !ok {
				return
			}
			if k != tc.k || math.Abs(level-tc.level) > 1e-4 {
				t.Errorf("k %d at level %.5f, want k %d at %.4f", k, level, tc.k, tc.level)
			}
			if level > tc.alpha {
				t.Errorf("level %v above α %v", level, tc.alpha)
			}
		})
	}
}

// TestShiftOf: the estimate and bounds of a hand-worked case. Logs of A
// are 0..3, of B 10..13: the 16 differences are 7, 8, 8, 9, 9, 9, 10 (×4),
// 11 (×3), 12, 12, 13; 4 + 4 at α = 0.05 takes k = 2, so the bounds are
// the 2nd and the 15th, e⁸ and e¹², and the estimate the median e¹⁰.
func TestShiftOf(t *testing.T) {
	exps := func(xs ...float64) []float64 {
		for i := range xs {
			xs[i] = math.Exp(xs[i])
		}
		return xs
	}
	s, ok := shiftOf(exps(0, 1, 2, 3), exps(13, 11, 12, 10), 0.05)
	if !ok {
		t.Fatal("no shift for 4 + 4")
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"ratio", s.Ratio, math.Exp(10)}, {"lower", s.Lower, math.Exp(8)}, {"upper", s.Upper, math.Exp(12)}, {"level", s.Level, 2.0 / 70},
	} {
		if math.Abs(c.got/c.want-1) > 1e-12 {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if _, ok := shiftOf([]float64{1, 2, 3}, []float64{1, 2, 3}, 0.04); ok {
		t.Error("3 + 3 at α = 0.04 has a shift; it cannot attain the level")
	}
	if _, ok := shiftOf([]float64{1, 2, 3, 4}, []float64{1, 0, 3, 4}, 0.05); ok {
		t.Error("a zero sample has a log shift")
	}
}

// TestShiftCoverage: by Monte Carlo, each one-sided bound misses the true
// ratio as often as the attained level says (within 4 standard errors of
// the simulation), for normal and skewed noise: the interval is
// distribution-free.
func TestShiftCoverage(t *testing.T) {
	const cells = 4000
	noises := []struct {
		name string
		draw func(r *rand.Rand) float64 // a log value
	}{
		{"lognormal", func(r *rand.Rand) float64 { return 0.05 * r.NormFloat64() }},
		{"skewed (log of an exponential)", func(r *rand.Rand) float64 { return 0.05 * r.ExpFloat64() }},
	}
	for _, nz := range noises {
		for _, size := range [][2]int{{4, 4}, {5, 5}, {3, 8}, {10, 10}, {20, 6}} {
			t.Run(fmt.Sprintf("%s %d+%d", nz.name, size[0], size[1]), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(size[0]*100+size[1]), 7))
				ratio := 0.93
				lowMiss, highMiss := 0, 0
				var level float64
				for range cells {
					a, b := make([]float64, size[0]), make([]float64, size[1])
					for i := range a {
						a[i] = 100 * math.Exp(nz.draw(rng))
					}
					for i := range b {
						b[i] = 100 * ratio * math.Exp(nz.draw(rng))
					}
					s, ok := shiftOf(a, b, 0.05)
					if !ok {
						t.Fatal("no shift")
					}
					level = s.Level
					if s.Lower > ratio {
						lowMiss++
					}
					if s.Upper < ratio {
						highMiss++
					}
				}
				se := math.Sqrt(level * (1 - level) / cells)
				for side, miss := range map[string]int{"lower": lowMiss, "upper": highMiss} {
					rate := float64(miss) / cells
					if math.Abs(rate-level) > 4*se {
						t.Errorf("%s bound misses the true ratio in %.4f of cells, the attained level is %.4f (± %.4f)", side, rate, level, 4*se)
					}
				}
			})
		}
	}
}

func TestShiftDecide(t *testing.T) {
	tests := []struct {
		name         string
		lower, upper float64
		higher       bool
		want         Change
	}{
		{"throughput: the interval inside the tolerance", 0.97, 1.02, true, Unchanged},
		{"throughput: the lower bound at the edge is inside", 0.95, 1.0, true, Unchanged},
		{"throughput: straddles the edge", 0.93, 0.99, true, Inconclusive},
		{"throughput: entirely beyond", 0.85, 0.94, true, Regressed},
		{"throughput: entirely above +5%", 1.06, 1.10, true, Improved},
		{"throughput: better but not beyond the tolerance is unchanged", 1.04, 1.10, true, Unchanged},
		{"latency: inside", 0.98, 1.04, false, Unchanged},
		{"latency: the upper bound at the edge is inside", 1.0, 1.05, false, Unchanged},
		{"latency: straddles", 1.01, 1.07, false, Inconclusive},
		{"latency: entirely beyond", 1.06, 1.12, false, Regressed},
		{"latency: entirely below -5%", 0.85, 0.94, false, Improved},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := Shift{Lower: tc.lower, Upper: tc.upper, Ratio: (tc.lower + tc.upper) / 2}
			if got := s.Decide(0.05, tc.higher); got != tc.want {
				t.Errorf("[%v, %v]: %v, want %v", tc.lower, tc.upper, got, tc.want)
			}
		})
	}
}
