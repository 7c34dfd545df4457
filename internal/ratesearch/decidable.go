package ratesearch

import (
	"strings"

	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/vocab"
)

// QuantileSamples is the fewest samples whose order statistics bound the
// q-quantile (0 < q < 1) on both sides, each one-sided at level alpha
// (OrderBounds: a lower rank of 1 or more, an upper rank of n or less).
// Fewer leave a side unbounded, so that no objective on that percentile
// can be decided both ways, whatever the samples' values
// (docs/method.md#undecidable-percentiles): the largest of n samples
// bounds the q-quantile from above only when qⁿ ≤ alpha (a p99 at 5 %:
// 299 samples), the smallest from below only when (1 − q)ⁿ ≤ alpha. 0
// when q or alpha is out of range.
func QuantileSamples(q, alpha float64) int {
	if !(q > 0 && q < 1) || !(alpha > 0 && alpha < 1) {
		return 0
	}
	bounded := func(n int) bool {
		lo, hi := OrderBounds(n, q, alpha)
		return lo >= 1 && hi <= n
	}
	hi := 1
	for !bounded(hi) {
		hi *= 2
		if hi > 1<<40 {
			return 0
		}
	}
	lo := hi / 2 // not bounded at lo (or lo is 0), bounded at hi
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if bounded(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// MetricQuantile says whether traffic metric name is a quantile of a
// per-request latency whose bounds a probe computes from the requests'
// own values (ttft_ms, e2e_ms, tbt_ms, tpot_ms: the median; their _p90,
// _p99 and the naming rule's percentiles), with the distribution and the
// quantile (0.5, 0.99).
func MetricQuantile(name string) (base string, q float64, ok bool) {
	m, found := metric.Lookup(vocab.PhaseTraffic, name)
	if !found {
		return "", 0, false
	}
	switch {
	case m.Samples != "" && m.PercentileOf == "":
		base, q = m.Stored(), 0.5
	case m.PercentileOf != "":
		base = m.PercentileOf
		q = m.Percentile / 100
		if q == 0 {
			suffix := strings.TrimPrefix(name, base+"_")
			for _, p := range []float64{90, 99} {
				if suffix == metric.PercentileSuffix(p) {
					q = p / 100
				}
			}
		}
	default:
		return "", 0, false
	}
	switch base {
	case metric.TTFTMs, metric.E2EMs, metric.TBTMs, metric.TPOTMs:
		return base, q, q > 0 && q < 1
	}
	return "", 0, false
}

// BoundedMetrics is how many of an objective's metrics a probe bounds
// (goodput_share and goodput_rps, a share; a latency quantile,
// MetricQuantile): the look's level is split among them (Decide).
func BoundedMetrics(names []string) int {
	n := 0
	for _, name := range names {
		if _, _, ok := MetricQuantile(name); ok || name == metric.GoodputShare || name == metric.GoodputRPS {
			n++
		}
	}
	return n
}

// QuantileAlpha is the one-sided level each bound of a metric gets at a
// look of a search over s whose objective bounds bounded metrics: the
// look's level (LookAlpha) split evenly among them, as Decide splits it.
func (s Settings) QuantileAlpha(bounded int) float64 {
	a := s.LookAlpha()
	if bounded > 1 {
		a /= float64(bounded)
	}
	return a
}
