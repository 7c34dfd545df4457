package ratesearch

import (
	"math"

	"gonum.org/v1/gonum/mathext"

	"github.com/slogate/slogate/internal/stats"
)

// Requests that queue together are not independent: on a queue at its
// capacity a window's share varies ~20 times the binomial's variance of
// its requests (docs/method.md#rate-search-error-rates), and bounds that
// count each request as independent claim far more than they have. A
// probe's windows, each warmed up after the previous one's requests
// ended, are independent replications: the spread of their values
// measures the variance the bounds must carry, whatever correlates the
// requests within a window.

// EstimateDesignEffect is the design effect d's bounds use at one-sided
// level alpha (docs/method.md#rate-search-statistics): DesignEffect when
// stated (above 0), 1 when d has no Windows (independent requests), +Inf
// with a single window (its spread cannot be told: it bounds nothing).
// From two windows on it is the between-window estimate
//
//	D̂ = Σ N_w·(f_w − p̄)² ÷ ((W − 1)·p̄·(1 − p̄))
//
// (f_w the window's share, or for a Quantile the share of its samples
// above the pooled quantile; p̄ the pooled one), scaled by (t_{W−1} ÷ z)²
// at alpha, Student's t of W − 1 degrees of freedom over the normal's, so
// that the bounds with N ÷ D requests are as wide as a t-bound over the
// windows' values; never below 1, the independent requests' exact bound.
// Windows all alike (each all good, say) show no spread: +Inf for two,
// 1 from three on.
func EstimateDesignEffect(d Data, alpha float64) float64 {
	if d.DesignEffect > 0 {
		return max(1, d.DesignEffect)
	}
	sp, dhat := spreadOf(d)
	return designEffectAt(sp, dhat, len(d.Windows), alpha)
}

// designEffectAt is the design effect of data whose windows' spread is
// sp (D̂ dhat when spreadSeen) over w windows at level alpha.
func designEffectAt(sp spread, dhat float64, w int, alpha float64) float64 {
	switch sp {
	case spreadNone:
		return 1
	case spreadOne:
		return math.Inf(1)
	case spreadAlike:
		// Windows all alike (each all good, say) show no spread: two such
		// can be chance on a queue at its capacity, where a fifth of the
		// windows meet an SLO with every request; from the third on (a
		// chance of 1 in 125 there) they count as independent.
		if w < minAlikeWindows {
			return math.Inf(1)
		}
		return 1
	}
	r := tQuantile(1-alpha, float64(w-1)) / stats.NormalQuantile(1-alpha)
	return max(1, dhat*r*r)
}

// spread is what a probe's windows show of their spread.
type spread int

const (
	// spreadSeen: the between-window estimate D̂ (EstimateDesignEffect).
	spreadSeen spread = iota
	// spreadNone: no windows given (the requests independent), or not a
	// Share or Quantile.
	spreadNone
	// spreadOne: one window, whose spread cannot be told.
	spreadOne
	// spreadAlike: windows all alike, no spread to see.
	spreadAlike
)

// spreadOf is d's windows' spread, with D̂ (before the t factor and the
// floor of 1) when seen.
func spreadOf(d Data) (spread, float64) {
	w := len(d.Windows)
	switch {
	case w == 0:
		return spreadNone, 0
	case w == 1:
		return spreadOne, 0
	}
	// The windows' counts of "successes" k_w of n_w: a Share's good
	// requests; a Quantile's samples above the pooled quantile.
	ks := make([]float64, w)
	ns := make([]float64, w)
	switch d.Kind {
	case Share:
		for i, win := range d.Windows {
			ks[i], ns[i] = float64(win.K), float64(win.N)
		}
	case Quantile:
		x := stats.Percentile(d.Samples, d.Q)
		at := 0
		for i, win := range d.Windows {
			end := min(at+win.N, len(d.Samples))
			for _, v := range d.Samples[at:end] {
				if v > x {
					ks[i]++
				}
			}
			ns[i] = float64(end - at)
			at = end
		}
	default:
		return spreadNone, 0
	}
	var k, n float64
	for i := range ks {
		k, n = k+ks[i], n+ns[i]
	}
	if n == 0 {
		return spreadNone, 0
	}
	p := k / n
	var ss float64
	for i := range ks {
		if ns[i] > 0 {
			f := ks[i] / ns[i]
			ss += ns[i] * (f - p) * (f - p)
		}
	}
	if p <= 0 || p >= 1 || ss == 0 {
		return spreadAlike, 0
	}
	return spreadSeen, ss / (float64(w-1) * p * (1 - p))
}

// minAlikeWindows is the fewest windows all alike that decide a probe
// (EstimateDesignEffect).
const minAlikeWindows = 3

// tQuantile is Student's t's p-quantile (0.5 < p < 1) of nu degrees of
// freedom, by bisection of its upper tail P(T > t) = I_{ν/(ν+t²)}(ν/2, ½) ÷ 2
// on a log scale. Not gonum's InvRegIncBeta: its inverse goes wrong in the
// far tails (ν = 99,999 at 1 − 10⁻⁷ gave 81.65, not 5.20), where the
// forward function holds (TestQuantiles, TestBoundsInTheFarTails).
func tQuantile(p, nu float64) float64 {
	tail := 1 - p
	lo, hi := 1e-9, 1e12
	for hi/lo > 1+1e-12 {
		mid := math.Sqrt(lo * hi)
		if mathext.RegIncBeta(nu/2, 0.5, nu/(nu+mid*mid))/2 > tail {
			lo = mid
		} else {
			hi = mid
		}
	}
	return math.Sqrt(lo * hi)
}
