package ratesearch

import (
	"math"
	"testing"
)

// TestQuantileSamples: the fewest samples whose order statistics bound a
// quantile both ways are the closed forms of the binomial's tails (the
// largest sample bounds the q-quantile from above when qⁿ ≤ α, the
// smallest from below when (1 − q)ⁿ ≤ α), and one fewer leaves a side
// unbounded; the docs' figure for a p99 at 5 % (299) among them.
func TestQuantileSamples(t *testing.T) {
	tests := []struct {
		name     string
		q, alpha float64
		want     int
	}{
		{name: "p99 at 5%", q: 0.99, alpha: 0.05, want: 299},
		{name: "p99 at a search's look", q: 0.99, alpha: 0.05 / 40 / 2},
		{name: "p90 at a search's look", q: 0.90, alpha: 0.05 / 24 / 2},
		{name: "median at 5%", q: 0.5, alpha: 0.05, want: 5},
		{name: "p10: the lower side binds", q: 0.10, alpha: 0.01},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := QuantileSamples(tt.q, tt.alpha)
			want := int(math.Ceil(max(math.Log(tt.alpha)/math.Log(tt.q), math.Log(tt.alpha)/math.Log(1-tt.q))))
			if tt.want != 0 && want != tt.want {
				t.Fatalf("closed form %d, the case says %d", want, tt.want)
			}
			if got != want {
				t.Errorf("QuantileSamples(%v, %v) = %d, want %d", tt.q, tt.alpha, got, want)
			}
			if lo, hi := OrderBounds(got-1, tt.q, tt.alpha); lo >= 1 && hi <= got-1 {
				t.Errorf("%d samples bound it too (ranks %d, %d)", got-1, lo, hi)
			}
		})
	}
	if got := QuantileSamples(1, 0.05); got != 0 {
		t.Errorf("QuantileSamples(1, 0.05) = %d, want 0 (no such quantile)", got)
	}
}

// TestMetricQuantile: which traffic metrics a probe bounds as quantiles
// of the requests' own latencies, and how many an objective bounds.
func TestMetricQuantile(t *testing.T) {
	tests := []struct {
		name, metric string
		base         string
		q            float64
	}{
		{name: "TTFT p99", metric: "ttft_ms_p99", base: "ttft_ms", q: 0.99},
		{name: "e2e p90", metric: "e2e_ms_p90", base: "e2e_ms", q: 0.90},
		{name: "median TTFT", metric: "ttft_ms", base: "ttft_ms", q: 0.5},
		{name: "a share is no quantile", metric: "goodput_share"},
		{name: "a rate is no quantile", metric: "achieved_rps"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base, q, ok := MetricQuantile(tt.metric)
			if ok != (tt.base != "") || base != tt.base || q != tt.q {
				t.Errorf("MetricQuantile(%q) = %q, %v, %v; want %q, %v", tt.metric, base, q, ok, tt.base, tt.q)
			}
		})
	}
	if got := BoundedMetrics([]string{"goodput_share", "ttft_ms_p99", "achieved_rps"}); got != 2 {
		t.Errorf("BoundedMetrics = %d, want 2", got)
	}
}
