package compare

import (
	"math"
	"sync"

	"github.com/slogate/slogate/internal/stats"
)

// The exact null distribution of the Mann–Whitney U statistic, the one the
// shift interval (shift.go) and the sequential design's levels are read
// from.
//
// Written here rather than taken from a library: benchmath (what benchstat
// runs) exposes only the U test's two-sided p-value, no quantile of U and
// no shift interval. go-moremath's stats.UDist, which benchmath uses
// inside, has the same recurrence but rebuilds its table on every CDF
// call; the interval reads the lower tail of U for each pair of sample
// sizes, thousands of times a second in the error-rate simulation
// (decide_test.go), so one table per (n, m) is kept here. The tests check
// it against stats.UDist.

// uCounts[u] is the number of the C(n+m, n) orderings of n values of A and m
// of B (no ties) in which exactly u of the n·m pairs (a, b) have b < a.
// The standard recurrence (Mann & Whitney 1947): the largest of the n+m
// values is either an a, above all m b's (u − m pairs left among n−1 and
// m), or a b, below no a (u among n and m−1):
//
//	f(n, m, u) = f(n−1, m, u−m) + f(n, m−1, u),  f(n, 0, u) = f(0, m, u) = [u = 0].
//
// Counts are float64: C(200, 100) ≈ 9·10⁵⁸ is well inside its range and
// the ratios taken from them keep ~15 digits.
func uCounts(n, m int) []float64 {
	// prev[j] holds f(i−1, j, ·), cur[j] f(i, j, ·), for j = 0..m.
	prev := make([][]float64, m+1)
	for j := range prev {
		prev[j] = []float64{1} // f(0, j, u) = [u = 0]
	}
	for i := 1; i <= n; i++ {
		cur := make([][]float64, m+1)
		cur[0] = []float64{1} // f(i, 0, u) = [u = 0]
		for j := 1; j <= m; j++ {
			f := make([]float64, i*j+1)
			for u := range f {
				if u-j >= 0 && u-j < len(prev[j]) {
					f[u] += prev[j][u-j]
				}
				if u < len(cur[j-1]) {
					f[u] += cur[j-1][u]
				}
			}
			cur[j] = f
		}
		prev = cur
	}
	return prev[m]
}

var uCDFCache sync.Map // [2]int → []float64

// uCDF returns P(U ≤ u) for u = 0..n·m under the null hypothesis (A and B
// from one continuous distribution), cached per (n, m). U is symmetric:
// P(U ≤ u) = P(U ≥ n·m − u).
func uCDF(n, m int) []float64 {
	if n > m { // the distribution is the same with the sides swapped
		n, m = m, n
	}
	key := [2]int{n, m}
	if c, ok := uCDFCache.Load(key); ok {
		return c.([]float64)
	}
	counts := uCounts(n, m)
	total := 0.0
	for _, c := range counts {
		total += c
	}
	cdf := make([]float64, len(counts))
	acc := 0.0
	for u, c := range counts {
		acc += c
		cdf[u] = acc / total
	}
	cdf[len(cdf)-1] = 1
	uCDFCache.Store(key, cdf)
	return cdf
}

// attainable returns the largest one-sided level at or below alpha that the
// exact U distribution of n and m samples attains, and the order k (1-based)
// of the pairwise difference that bounds the shift at it: P(U ≤ k−1) =
// level ≤ alpha < P(U ≤ k). ok is false when even the extreme (k = 1, level
// 1 ÷ C(n+m, n)) is above alpha: one sample a side, 2 + 2, 3 + 3 below
// 0.05. Levels are discrete: 4 + 4 attains 0.0286 at α = 0.05, 5 + 5 0.0476.
func attainable(n, m int, alpha float64) (k int, level float64, ok bool) {
	if n < 1 || m < 1 {
		return 0, 0, false
	}
	if n*m > maxExact {
		return attainableNormal(n, m, alpha)
	}
	cdf := uCDF(n, m)
	// A relative slack so that 1/20 computed from counts equals the α = 0.05
	// typed by the user (3 + 3 attains 0.05 exactly at the extreme).
	lim := alpha * (1 + 1e-9)
	if cdf[0] > lim {
		return 0, 0, false
	}
	u := 0
	for u+1 < len(cdf) && cdf[u+1] <= lim {
		u++
	}
	return u + 1, math.Min(cdf[u], alpha), true
}

// maxExact is the largest n·m for which attainable reads the exact
// distribution (50 + 50); beyond it the normal approximation of U, whose
// steps are then finer than 10⁻⁴ around 0.05, keeps the table small.
const maxExact = 2500

// attainableNormal is attainable under the normal approximation of U with
// a continuity correction: mean nm/2, variance nm(n+m+1)/12.
func attainableNormal(n, m int, alpha float64) (k int, level float64, ok bool) {
	mu := float64(n*m) / 2
	sd := math.Sqrt(float64(n*m) * float64(n+m+1) / 12)
	u := math.Floor(mu + sd*stats.NormalQuantile(alpha) - 0.5)
	if u < 0 {
		return 0, 0, false
	}
	return int(u) + 1, stats.NormalCDF((u + 0.5 - mu) / sd), true
}
