package ratesearch

import (
	"math"

	"github.com/aclements/go-moremath/mathx"
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
	w := len(d.Windows)
	switch {
	case w == 0:
		return 1
	case w == 1:
		return math.Inf(1)
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
		x := Percentile(d.Samples, d.Q)
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
		return 1
	}
	var k, n float64
	for i := range ks {
		k, n = k+ks[i], n+ns[i]
	}
	if n == 0 {
		return 1
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
		// Windows all alike (each all good, say) show no spread: two such
		// can be chance on a queue at its capacity, where a fifth of the
		// windows meet an SLO with every request; from the third on (a
		// chance of 1 in 125 there) they count as independent.
		if w < minAlikeWindows {
			return math.Inf(1)
		}
		return 1
	}
	dhat := ss / (float64(w-1) * p * (1 - p))
	r := tQuantile(1-alpha, float64(w-1)) / zQuantile(1-alpha)
	return max(1, dhat*r*r)
}

// minAlikeWindows is the fewest windows all alike that decide a probe
// (EstimateDesignEffect).
const minAlikeWindows = 3

// zQuantile is the standard normal's p-quantile (0.5 < p < 1).
func zQuantile(p float64) float64 {
	return math.Sqrt2 * math.Erfinv(2*p-1)
}

// tQuantile is Student's t's p-quantile (0.5 < p < 1) of nu degrees of
// freedom, by bisection of its upper tail P(T > t) = I_{ν/(ν+t²)}(ν/2, ½) ÷ 2
// on a log scale.
func tQuantile(p, nu float64) float64 {
	tail := 1 - p
	lo, hi := 1e-9, 1e12
	for hi/lo > 1+1e-12 {
		mid := math.Sqrt(lo * hi)
		if mathx.BetaInc(nu/(nu+mid*mid), nu/2, 0.5)/2 > tail {
			lo = mid
		} else {
			hi = mid
		}
	}
	return math.Sqrt(lo * hi)
}
