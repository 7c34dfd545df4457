package ratesearch

import (
	"math"
	"testing"

	"github.com/slogate/slogate/internal/stats"
)

// TestShareBounds checks the Clopper–Pearson bounds against published
// values: R's binom.test (whose interval is Clopper–Pearson's), its
// documentation's example of Mendel's peas (682 of 925: 0.7076683 to
// 0.7654066) and 5 of 10 (0.187086 to 0.812914), and the closed forms of
// the edges (k = 0: hi = 1 − α^(1/n); k = n: lo = α^(1/n)).
func TestShareBounds(t *testing.T) {
	tests := []struct {
		name         string
		k, n         int
		alpha        float64
		wantLo, want float64
	}{
		{name: "R binom.test docs: 682 of 925", k: 682, n: 925, alpha: 0.025, wantLo: 0.7076683, want: 0.7654066},
		{name: "5 of 10", k: 5, n: 10, alpha: 0.025, wantLo: 0.187086, want: 0.812914},
		{name: "none of 10", k: 0, n: 10, alpha: 0.025, wantLo: 0, want: 1 - math.Pow(0.025, 0.1)},
		{name: "all of 300, one-sided 5 %", k: 300, n: 300, alpha: 0.05, wantLo: math.Pow(0.05, 1.0/300), want: 1},
		{name: "no trials", k: 0, n: 0, alpha: 0.05, wantLo: 0, want: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lo, hi := ShareBounds(tt.k, tt.n, tt.alpha)
			if math.Abs(lo-tt.wantLo) > 5e-7 || math.Abs(hi-tt.want) > 5e-7 {
				t.Errorf("ShareBounds(%d, %d, %g) = [%.7f, %.7f], want [%.7f, %.7f]", tt.k, tt.n, tt.alpha, lo, hi, tt.wantLo, tt.want)
			}
		})
	}
}

// TestOrderBounds checks the order statistics bounding a quantile against
// the textbook cases: the median of 10 samples is bounded by the 2nd and
// 9th (a 97.85 % interval, Conover, Practical Nonparametric Statistics,
// table A3), and a p99's one-sided 95 % upper bound needs 299 samples
// (1 − 0.99^299 ≥ 0.95 > 1 − 0.99^298): the largest of 299, none of 298.
func TestOrderBounds(t *testing.T) {
	tests := []struct {
		name           string
		n              int
		q, alpha       float64
		wantLo, wantHi int
	}{
		{name: "median of 10", n: 10, q: 0.5, alpha: 0.025, wantLo: 2, wantHi: 9},
		{name: "p99 of 299", n: 299, q: 0.99, alpha: 0.05, wantLo: 293, wantHi: 299},
		{name: "p99 of 298: no upper bound", n: 298, q: 0.99, alpha: 0.05, wantHi: 299, wantLo: 292},
		{name: "median of 3: neither side", n: 3, q: 0.5, alpha: 0.05, wantLo: 0, wantHi: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lo, hi := OrderBounds(tt.n, tt.q, tt.alpha)
			if lo != tt.wantLo || hi != tt.wantHi {
				t.Errorf("OrderBounds(%d, %g, %g) = %d, %d; want %d, %d", tt.n, tt.q, tt.alpha, lo, hi, tt.wantLo, tt.wantHi)
			}
		})
	}
}

// TestPercentileBounds: the bounds are the order statistics of the sorted
// samples, infinite where too few, and a sample of +Inf (a request that
// never finished) is the slowest.
func TestPercentileBounds(t *testing.T) {
	xs := []float64{10, 3, 7, 1, 9, 2, 8, 4, 6, 5}
	if lo, hi := PercentileBounds(xs, 0.5, 0.025); lo != 2 || hi != 9 {
		t.Errorf("median bounds of 1…10 = [%v, %v], want [2, 9]", lo, hi)
	}
	if lo, hi := PercentileBounds(xs[:3], 0.5, 0.05); !math.IsInf(lo, -1) || !math.IsInf(hi, 1) {
		t.Errorf("median bounds of 3 samples = [%v, %v], want [-Inf, +Inf]", lo, hi)
	}
	inf := append([]float64{math.Inf(1)}, xs[1:]...)
	if _, hi := PercentileBounds(inf, 0.5, 0.025); hi != 9 {
		t.Errorf("upper bound with a +Inf sample = %v, want 9", hi)
	}
	if p := stats.Percentile(xs, 0.99); math.Abs(p-9.91) > 1e-9 {
		t.Errorf("stats.Percentile(1…10, 0.99) = %v, want 9.91 (numpy's linear)", p)
	}
}

// TestDesignEffect: with a design effect D, a share's bounds are those of
// N ÷ D requests (380 of 400 at D 4 bound like 95 of 100), a quantile's
// ranks those of n ÷ D samples scaled back (outward).
func TestDesignEffect(t *testing.T) {
	lo, hi := IntervalOf(Data{Metric: "goodput_share", Kind: Share, K: 380, N: 400, DesignEffect: 4}, 0.025).Lower, IntervalOf(Data{Metric: "goodput_share", Kind: Share, K: 380, N: 400, DesignEffect: 4}, 0.025).Upper
	wantLo, wantHi := ShareBounds(95, 100, 0.025)
	if math.Abs(lo-wantLo) > 1e-9 || math.Abs(hi-wantHi) > 1e-9 {
		t.Errorf("D 4: [%v, %v], want 95 of 100's [%v, %v]", lo, hi, wantLo, wantHi)
	}
	xs := make([]float64, 40)
	for i := range xs {
		xs[i] = float64(i + 1)
	}
	// n/D = 10 samples: the median's ranks (2, 9) become (8, 36) of 40.
	if lo, hi := percentileBounds(xs, 0.5, 0.025, 4); lo != 8 || hi != 36 {
		t.Errorf("median of 1…40 at D 4: [%v, %v], want [8, 36]", lo, hi)
	}
	if lo, hi := percentileBounds(xs, 0.5, 0.025, 1); lo != 14 || hi != 27 {
		t.Errorf("median of 1…40 at D 1: [%v, %v], want the order statistics [14, 27]", lo, hi)
	}
}

// TestBoundsAtMillions: a probe of many long windows pools millions of
// requests (max_windows up to 1,000; WindowsToDecide projects more): the
// share's bounds and the order statistics hold there, as the normal
// approximation says, where go-moremath's incomplete beta panicked
// ("failed to converge") above about 10⁵.
func TestBoundsAtMillions(t *testing.T) {
	const n, alpha = 10_000_000, 0.001
	z := stats.NormalQuantile(1 - alpha)
	half := z * math.Sqrt(0.95*0.05/n)
	lo, hi := ShareBounds(n*95/100, n, alpha)
	if math.Abs(lo-(0.95-half)) > half/50 || math.Abs(hi-(0.95+half)) > half/50 {
		t.Errorf("ShareBounds(0.95 of %d) = [%v, %v], want 0.95 ∓ %v (the normal's, within 2 %%)", n, lo, hi, half)
	}
	const m, q = 1_000_000, 0.99
	l, h := OrderBounds(m, q, alpha)
	ranks := z * math.Sqrt(m*q*(1-q))
	if math.Abs(float64(l)-(m*q-ranks)) > ranks/20 || math.Abs(float64(h)-(m*q+ranks)) > ranks/20 {
		t.Errorf("OrderBounds(%d, %v) = [%d, %d], want %v ∓ %.0f (the normal's, within 5 %%)", m, q, l, h, m*q, ranks)
	}
}

// TestBoundsInTheFarTails: at the small levels a search of many windows a
// probe spends (LookAlpha ≈ 5·10⁻⁶ at 10 probes × 1,000 windows, smaller
// again in WindowsToDecide's projections), the shares with a closed form
// hold it: none of n good has the upper bound 1 − α^(1/n), all n good the
// lower bound α^(1/n). gonum's InvRegIncBeta gave 0.999998 and 0.9375
// here. And Student's t of many degrees of freedom is the normal's.
func TestBoundsInTheFarTails(t *testing.T) {
	tests := []struct {
		name  string
		n     int
		alpha float64
	}{
		{name: "1,000 at 1e-7", n: 1000, alpha: 1e-7},
		{name: "10,000 at 1e-9", n: 10000, alpha: 1e-9},
		{name: "100,000 at 8e-7", n: 100000, alpha: 8e-7},
		{name: "2.5 million at 1e-7", n: 2500000, alpha: 1e-7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			edge := math.Pow(tt.alpha, 1/float64(tt.n))
			if _, hi := ShareBounds(0, tt.n, tt.alpha); math.Abs(hi-(1-edge)) > 1e-9 {
				t.Errorf("none of %d good: upper bound %v, want 1 − α^(1/n) = %v", tt.n, hi, 1-edge)
			}
			if lo, _ := ShareBounds(tt.n, tt.n, tt.alpha); math.Abs(lo-edge) > 1e-9 {
				t.Errorf("all %d good: lower bound %v, want α^(1/n) = %v", tt.n, lo, edge)
			}
		})
	}
	if got, want := tQuantile(1-1e-7, 99999), stats.NormalQuantile(1-1e-7); math.Abs(got-want) > 0.01 {
		t.Errorf("t quantile 1 − 1e-7 of 99,999 degrees of freedom %v, want about the normal's %v", got, want)
	}
}
