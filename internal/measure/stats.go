package measure

import (
	"math"
	"slices"

	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/stats"
	"github.com/slogate/slogate/internal/vocab"
)

// percentile is stats.PercentileSorted of xs at the p-th percentile
// (0..100), xs sorted in place; 0 for an empty xs, as results.json writes
// a figure no request gave.
func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	if !slices.IsSorted(xs) {
		slices.Sort(xs)
	}
	return stats.PercentileSorted(xs, p/100)
}

func median(xs []float64) float64 { return percentile(xs, 50) }

// Round rounds v to d decimals for stable, readable JSON (0 for NaN and
// the infinities).
func Round(v float64, d int) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	m := math.Pow(10, float64(d))
	return math.Round(v*m) / m
}

// distribution is the samples of one latency distribution of a cell: the
// metric name of its median, its samples in ms, and the decimals its
// statistics keep in results.json.
type distribution struct {
	name     string
	xs       []float64
	decimals int
}

// storeDistribution stores d's statistics by the naming rule
// (docs/method.md#metric-names) through set: the median and each
// percentile of ps, the mean and the count. Without samples only the count
// (0) is stored: a percentile of nothing is absent, not 0 (the fields of
// the table, which cannot be absent, keep 0 as before).
func storeDistribution(phase vocab.Phase, d distribution, ps []float64, set func(metric.Metric, float64)) {
	count := metric.Must(phase, metric.CountName(d.name))
	set(count, float64(len(d.xs)))
	if len(d.xs) == 0 {
		return
	}
	for _, p := range append([]float64{50}, ps...) {
		set(metric.Must(phase, metric.PercentileName(d.name, p)), Round(percentile(d.xs, p), d.decimals))
	}
	var sum float64
	for _, x := range d.xs {
		sum += x
	}
	set(metric.Must(phase, metric.MeanName(d.name)), Round(sum/float64(len(d.xs)), d.decimals))
}
