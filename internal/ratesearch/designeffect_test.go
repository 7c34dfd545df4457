package ratesearch

import (
	"math"
	"testing"

	"github.com/slogate/slogate/internal/stats"
)

// TestQuantiles checks the t and normal quantiles against R: qt(0.975,
// 1) = 12.7062, qt(0.999, 3) = 10.2145, qt(0.95, 30) = 1.6973,
// qnorm(0.999) = 3.0902.
func TestQuantiles(t *testing.T) {
	for _, tc := range []struct {
		name      string
		got, want float64
	}{
		{name: "t 0.975 of 1", got: tQuantile(0.975, 1), want: 12.7062},
		{name: "t 0.999 of 3", got: tQuantile(0.999, 3), want: 10.2145},
		{name: "t 0.95 of 30", got: tQuantile(0.95, 30), want: 1.6973},
		{name: "z 0.999", got: stats.NormalQuantile(0.999), want: 3.0902},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if math.Abs(tc.got-tc.want) > 5e-4 {
				t.Errorf("%v, want %v", tc.got, tc.want)
			}
		})
	}
}

// TestEstimateDesignEffect checks the between-window design effect: by
// hand for two and four windows, and its floors and special cases.
func TestEstimateDesignEffect(t *testing.T) {
	const alpha = 0.001
	// Two windows of 100 with 90 and 98 good: p̄ 0.94, Σ N(f − p̄)² =
	// 100·0.04²·2 = 0.32, D̂ = 0.32 ÷ (1·0.94·0.06) = 5.674; times
	// (qt(0.999, 1) ÷ qnorm(0.999))² = (318.309 ÷ 3.0902)².
	r1 := 318.3088 / 3.090232
	// Four windows of 200 with 180, 190, 196, 194 good: p̄ 0.95,
	// Σ N(f − p̄)² = 200·(0.05² + 0 + 0.03² + 0.02²) = 0.76, D̂ = 0.76 ÷
	// (3·0.95·0.05) = 5.3333; times (qt(0.999, 3) ÷ qnorm(0.999))².
	r3 := 10.21453 / 3.090232
	for _, tc := range []struct {
		name string
		d    Data
		want float64
	}{
		{name: "two windows", d: Data{Kind: Share, K: 188, N: 200, Windows: []Window{{90, 100}, {98, 100}}}, want: 0.32 / (0.94 * 0.06) * r1 * r1},
		{name: "four windows", d: Data{Kind: Share, K: 760, N: 800, Windows: []Window{{180, 200}, {190, 200}, {196, 200}, {194, 200}}}, want: 0.76 / (3 * 0.95 * 0.05) * r3 * r3},
		{name: "no windows: independent", d: Data{Kind: Share, K: 90, N: 100}, want: 1},
		{name: "stated", d: Data{Kind: Share, K: 90, N: 100, DesignEffect: 7, Windows: []Window{{90, 100}}}, want: 7},
		{name: "one window bounds nothing", d: Data{Kind: Share, K: 90, N: 100, Windows: []Window{{90, 100}}}, want: math.Inf(1)},
		{name: "two windows all good bound nothing", d: Data{Kind: Share, K: 200, N: 200, Windows: []Window{{100, 100}, {100, 100}}}, want: math.Inf(1)},
		{name: "three windows all good", d: Data{Kind: Share, K: 300, N: 300, Windows: []Window{{100, 100}, {100, 100}, {100, 100}}}, want: 1},
		{name: "three windows none good", d: Data{Kind: Share, K: 0, N: 300, Windows: []Window{{0, 100}, {0, 100}, {0, 100}}}, want: 1},
		{name: "two alike windows bound nothing", d: Data{Kind: Share, K: 180, N: 200, Windows: []Window{{90, 100}, {90, 100}}}, want: math.Inf(1)},
		{name: "three alike windows", d: Data{Kind: Share, K: 270, N: 300, Windows: []Window{{90, 100}, {90, 100}, {90, 100}}}, want: 1},
		// Two windows of 100 with 90 and 91 good: Σ N(f − p̄)² = 100·0.005²·2,
		// D̂ = 0.005 ÷ (0.905·0.095) = 0.058, below 1 but for t of 1 degree.
		{name: "close windows: t of 1 degree", d: Data{Kind: Share, K: 181, N: 200, Windows: []Window{{90, 100}, {91, 100}}}, want: 0.005 / (0.905 * 0.095) * r1 * r1},
		// Four windows of 1000 with 950, 951, 950, 951 good: D̂ = 1000·
		// 0.0005²·4 ÷ (3·0.9505·0.0495) = 0.00708, times (t₃ ÷ z)² 10.9:
		// below 1, the floor.
		{name: "close windows: floor 1", d: Data{Kind: Share, K: 3802, N: 4000, Windows: []Window{{950, 1000}, {951, 1000}, {950, 1000}, {951, 1000}}}, want: 1},
		{name: "exact", d: Data{Kind: Exact, Value: 3, Windows: []Window{{0, 1}, {0, 1}}}, want: 1},
		// Samples 1..10 and 11..20: the median 10.5; window 1 has none
		// above it, window 2 all 10: p̄ 0.5, Σ N(f − p̄)² = 10·0.25·2 = 5,
		// D̂ = 5 ÷ 0.25 = 20.
		{name: "no spread: two quantile windows alike", d: Data{Kind: Quantile, Q: 0.5, Samples: []float64{1, 2, 1, 2}, Windows: []Window{{N: 2}, {N: 2}}}, want: math.Inf(1)},
		{name: "quantile", d: Data{Kind: Quantile, Q: 0.5, Samples: seq(1, 20), Windows: []Window{{N: 10}, {N: 10}}}, want: 20 * r1 * r1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := EstimateDesignEffect(tc.d, alpha)
			if !(math.Abs(got-tc.want) <= 1e-3*tc.want) && got != tc.want {
				t.Errorf("design effect %v, want %v", got, tc.want)
			}
		})
	}
}

// TestOneWindowDecidesNothing: with Windows, a probe of one window is
// undecided whatever its share; it is decided once more windows show how
// much windows differ (three when all are alike).
func TestOneWindowDecidesNothing(t *testing.T) {
	obj := func(v map[string]float64) (bool, error) { return v["goodput_share"] >= 0.95, nil }
	for _, tc := range []struct {
		name string
		wins []Window
		want Decision
	}{
		{name: "one window all good", wins: []Window{{300, 300}}, want: Undecided},
		{name: "one window none good", wins: []Window{{0, 300}}, want: Undecided},
		{name: "two windows all good", wins: []Window{{300, 300}, {300, 300}}, want: Undecided},
		{name: "three windows all good", wins: []Window{{300, 300}, {300, 300}, {300, 300}}, want: Met},
		{name: "three windows none good", wins: []Window{{0, 300}, {0, 300}, {0, 300}}, want: Failed},
		{name: "two windows apart", wins: []Window{{300, 300}, {250, 300}}, want: Undecided},
		{name: "two windows far below: t of 1 degree", wins: []Window{{30, 300}, {40, 300}}, want: Undecided},
		{name: "three windows far below", wins: []Window{{30, 300}, {40, 300}, {35, 300}}, want: Failed},
		{name: "four windows just above", wins: []Window{{298, 300}, {299, 300}, {300, 300}, {297, 300}}, want: Undecided},
		{name: "four longer windows just above", wins: []Window{{998, 1000}, {999, 1000}, {1000, 1000}, {997, 1000}}, want: Met},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Data{Metric: "goodput_share", Kind: Share, Windows: tc.wins}
			for _, w := range tc.wins {
				d.K, d.N = d.K+w.K, d.N+w.N
			}
			j, err := Decide([]Data{d}, 0.001, obj)
			if err != nil {
				t.Fatal(err)
			}
			if j.Decision != tc.want {
				t.Errorf("decision %s, want %s (%+v)", j.Decision, tc.want, j.Intervals)
			}
		})
	}
}

func seq(a, b int) []float64 {
	var xs []float64
	for i := a; i <= b; i++ {
		xs = append(xs, float64(i))
	}
	return xs
}
