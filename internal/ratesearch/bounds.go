// Package ratesearch is the decision code of a rate search
// (docs/method.md#rate-search): the confidence bounds of a probe's metrics,
// a probe's decision against its objective, the bisection over request rate
// that finds the highest rate meeting it with bounds of the true capacity,
// and the rule that tells capacity lost between two searches. It is pure:
// the runner measures, through an injected probe function; no clock, no IO.
package ratesearch

import (
	"math"
	"sort"

	"gonum.org/v1/gonum/mathext"
)

// Bounds use the exact tails of the binomial distribution, not a normal
// approximation: a probe's windows have a few hundred requests and the
// objectives sit in the tails (a 95 % share, a p99), where Wilson's
// interval, whose coverage oscillates below the nominal level for shares
// near 1 (Brown, Cai & DasGupta 2001, Statistical Science 16(2)), would
// spend the error budget the search splits over its probes. gonum gives
// the regularized incomplete beta function (go-moremath's fails to
// converge above about 10⁵ trials); its inverse is found here by
// bisection, which the function's monotonicity in x makes exact to 1e-15.

// ShareBounds is the Clopper–Pearson bound (Clopper & Pearson 1934) of a
// share of k successes in n trials: lo and hi are each a one-sided bound
// at level alpha (together a 1 − 2·alpha interval). lo is 0 when k is 0,
// hi 1 when k is n; [0, 1] when n is 0.
func ShareBounds(k, n int, alpha float64) (lo, hi float64) {
	if n <= 0 {
		return 0, 1
	}
	k = min(max(k, 0), n)
	return shareBoundsReal(float64(k), float64(n), alpha)
}

// shareBoundsReal is ShareBounds for counts that need not be whole (an
// effective sample: k and n divided by a design effect), through the
// same beta quantiles.
func shareBoundsReal(k, n float64, alpha float64) (lo, hi float64) {
	if n <= 0 {
		return 0, 1
	}
	lo, hi = 0, 1
	if k > 0 {
		// P(X ≥ k | p) = I_p(k, n−k+1) = alpha.
		lo = invBetaInc(alpha, k, n-k+1)
	}
	if k < n {
		// P(X ≤ k | p) = 1 − I_p(k+1, n−k) = alpha.
		hi = invBetaInc(1-alpha, k+1, n-k)
	}
	return lo, hi
}

// invBetaInc is the x in [0, 1] where I_x(a, b) = y, by bisection of
// gonum's regularized incomplete beta, which holds to counts of many
// millions (a probe of max_windows windows, or the projection of
// Settings.WindowsToDecide), where go-moremath's continued fraction stops
// converging above about 10⁵. Not gonum's InvRegIncBeta: its inverse goes
// wrong in the far tails (no request of 1,000 good at α 10⁻⁷ gave an
// upper bound of 0.999998, not 0.016; TestBoundsInTheFarTails).
func invBetaInc(y, a, b float64) float64 {
	lo, hi := 0.0, 1.0
	for range 200 {
		mid := (lo + hi) / 2
		if mathext.RegIncBeta(a, b, mid) < y {
			lo = mid
		} else {
			hi = mid
		}
		if hi-lo < 1e-15 {
			break
		}
	}
	return (lo + hi) / 2
}

// binomialCDF is P(X ≤ k) for X ~ Binomial(n, p).
func binomialCDF(k, n int, p float64) float64 {
	switch {
	case k < 0:
		return 0
	case k >= n:
		return 1
	case p <= 0:
		return 1
	case p >= 1:
		return 0
	}
	return mathext.RegIncBeta(float64(n-k), float64(k+1), 1-p)
}

// OrderBounds gives the order statistics that bound the q-quantile
// (0 < q < 1) of a continuous distribution from n samples, each a
// one-sided bound at level alpha, distribution-free (the number of
// samples below the quantile is Binomial(n, q); David & Nagaraja, Order
// Statistics, 3rd ed., §7.1): the 1-based ranks lo and hi with
// P(X₍lo₎ ≤ ξ_q) ≥ 1 − alpha and P(X₍hi₎ ≥ ξ_q) ≥ 1 − alpha. lo is 0 when
// even the smallest sample is no such bound (too few samples), hi n+1 when
// even the largest is none.
func OrderBounds(n int, q, alpha float64) (lo, hi int) {
	// P(Bin(n, q) ≤ k−1) grows with k: each rank is found by bisection,
	// so that a projection of millions of samples (Settings.WindowsToDecide)
	// costs a few dozen CDFs.
	// hi: the smallest k in [1, n] with P(Bin(n, q) ≤ k−1) ≥ 1 − alpha;
	// n + 1 when none.
	a, b := 0, n+1 // the answer is in (a, b]
	for b-a > 1 {
		k := (a + b) / 2
		if binomialCDF(k-1, n, q) >= 1-alpha {
			b = k
		} else {
			a = k
		}
	}
	hi = b
	// lo: the largest k in [1, n] with P(Bin(n, q) ≥ k) ≥ 1 − alpha, that
	// is P(Bin(n, q) ≤ k−1) ≤ alpha; 0 when none.
	a, b = 0, n+1 // the answer is in [a, b)
	for b-a > 1 {
		k := (a + b) / 2
		if binomialCDF(k-1, n, q) <= alpha {
			a = k
		} else {
			b = k
		}
	}
	lo = a
	return lo, hi
}

// PercentileBounds is the q-quantile's distribution-free bounds from the
// samples (OrderBounds), each one-sided at level alpha: −Inf or +Inf where
// the samples are too few to bound that side. xs is not modified; +Inf
// samples (a request that never finished) count as the slowest.
func PercentileBounds(xs []float64, q, alpha float64) (lo, hi float64) {
	return percentileBounds(xs, q, alpha, 1)
}

// percentileBounds is PercentileBounds with a design effect deff (1 or
// less than 0: independent samples): the ranks are those of n ÷ deff
// samples, scaled back to n (outward); a deff below 1 projects more
// samples of the same distribution (Settings.WindowsToDecide).
func percentileBounds(xs []float64, q, alpha, deff float64) (lo, hi float64) {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	l, h := OrderBounds(len(s), q, alpha)
	if deff > 0 && deff != 1 && len(s) > 0 {
		ne := int(math.Floor(float64(len(s)) / deff))
		le, he := OrderBounds(ne, q, alpha)
		scale := float64(len(s)) / float64(max(ne, 1))
		l = int(math.Floor(float64(le) * scale))
		h = len(s) + 1
		if he <= ne {
			h = min(len(s), int(math.Ceil(float64(he)*scale)))
		}
	}
	lo, hi = math.Inf(-1), math.Inf(1)
	if l >= 1 {
		lo = s[l-1]
	}
	if h <= len(s) {
		hi = s[h-1]
	}
	return lo, hi
}
