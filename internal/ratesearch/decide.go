package ratesearch

import (
	"fmt"
	"math"

	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/stats"
	"github.com/slogate/slogate/internal/vocab"
)

// Decision is a probe's verdict against the search's objective, as
// results.json's probes store it.
type Decision string

// Decisions.
const (
	// Met: the objective holds with every metric at the pessimistic end of
	// its interval.
	Met Decision = "met"
	// Failed: the objective fails with every metric at the optimistic end
	// of its interval.
	Failed Decision = "failed"
	// Undecided: neither, after the most windows a probe may measure; the
	// search then goes on by the point estimate (Probe.Point).
	Undecided Decision = "undecided"
	// Unmeasurable: the client could not keep the probe's schedule (client
	// lag): the rate bounds the search from above, untested.
	Unmeasurable Decision = "unmeasurable"
)

// Kind says how a metric's interval follows from its data.
type Kind int

// Kinds of data.
const (
	// Exact is a value without sampling error the search knows of (a count,
	// the window's length, a mean): its interval is the point.
	Exact Kind = iota
	// Share is K successes of N requests (goodput_share: the window's
	// requests that met every SLO of those launched), times Scale when
	// Scale is not 0 (goodput_rps: the share times launched ÷ window
	// seconds); Clopper–Pearson bounds.
	Share
	// Quantile is the Q-quantile (0 < Q < 1) of Samples (ttft_ms_p99:
	// Q 0.99 of the requests' TTFTs, a request that never gave one +Inf);
	// order-statistic bounds.
	Quantile
)

// Data is what a probe measured of one metric the objective reads, raw, so
// that the search computes its interval at the level it has left to spend.
type Data struct {
	// Metric is the traffic metric's name (metric.GoodputShare); its
	// direction comes from the metric table.
	Metric string
	Kind   Kind
	// K and N: a Share's successes and trials; Scale its factor (0 = 1).
	K, N  int
	Scale float64
	// Samples and Q: a Quantile's samples and which quantile.
	Samples []float64
	Q       float64
	// Value: an Exact metric's value.
	Value float64
	// Windows are the counts of each window behind the pooled data, in
	// the order measured: a Share's K and N per window, a Quantile's
	// number of samples per window (N; Samples holds window 1's first).
	// With them the bounds estimate the design effect from the spread
	// between windows (EstimateDesignEffect); without them (nil) the
	// requests are taken as independent, or as DesignEffect states.
	Windows []Window
	// DesignEffect, when above 0, states how many times the variance of
	// a Share or a Quantile's count exceeds that of independent requests
	// (Kish's design effect; 1: independent), overriding Windows: the
	// bounds then count N ÷ DesignEffect requests.
	DesignEffect float64
}

// Window is one window's counts behind a probe's pooled data
// (Data.Windows).
type Window struct {
	// K: a Share's successes in the window (unused for a Quantile).
	K int
	// N: a Share's trials in the window, a Quantile's samples.
	N int
}

// Interval is one metric's value in a probe and its bounds, each one-sided
// at the level the probe's look spent on the metric.
type Interval struct {
	Metric              string
	Point, Lower, Upper float64
	// DesignEffect is the design effect the bounds used (1: independent
	// requests; +Inf: one window, whose spread cannot be told, bounds
	// nothing).
	DesignEffect float64
}

// higherIsBetter is the metric's direction by the traffic table; a name
// the table lacks is taken as higher is better only when it is a share.
func higherIsBetter(d Data) bool {
	if m, ok := metric.Lookup(vocab.PhaseTraffic, d.Metric); ok {
		return m.HigherIsBetter
	}
	return d.Kind == Share
}

// IntervalOf is d's point value and its bounds, each one-sided at level
// alpha.
func IntervalOf(d Data, alpha float64) Interval {
	deff := 1.0
	if d.Kind != Exact {
		deff = EstimateDesignEffect(d, alpha)
	}
	return intervalAt(d, alpha, deff)
}

// intervalAt is d's interval with design effect deff: its bounds count
// N ÷ deff requests (deff below 1 counts more than were measured: a
// projection of more windows, Settings.WindowsToDecide).
func intervalAt(d Data, alpha, deff float64) Interval {
	iv := Interval{Metric: d.Metric}
	if d.Kind != Exact {
		iv.DesignEffect = deff
	}
	switch d.Kind {
	case Share:
		scale := d.Scale
		if scale == 0 {
			scale = 1
		}
		lo, hi := ShareBounds(d.K, d.N, alpha)
		if deff != 1 && deff > 0 && d.N > 0 {
			n := float64(d.N) / deff
			lo, hi = shareBoundsReal(float64(d.K)/deff, n, alpha)
		}
		p := 0.0
		if d.N > 0 {
			p = float64(d.K) / float64(d.N)
		}
		iv.Point, iv.Lower, iv.Upper = p*scale, lo*scale, hi*scale
	case Quantile:
		iv.Point = stats.Percentile(d.Samples, d.Q)
		iv.Lower, iv.Upper = percentileBounds(d.Samples, d.Q, alpha, deff)
		if len(d.Samples) == 0 {
			iv.Point = math.NaN()
		}
	default:
		iv.Point, iv.Lower, iv.Upper = d.Value, d.Value, d.Value
	}
	return iv
}

// Objective evaluates the search's objective with each metric the value
// given (the runner fills a traffic cell with them and evaluates the HCL
// expression over it).
type Objective func(values map[string]float64) (bool, error)

// Judgement is a decision with the intervals and the level behind it.
type Judgement struct {
	Decision Decision
	// Point is the objective at the point estimates: Met or Failed.
	Point     Decision
	Intervals []Interval
	// Alpha is the one-sided level of each metric's bounds.
	Alpha float64
}

// Decide judges the objective from the metrics' data at one-sided level
// alpha overall: each of the metrics with bounds gets alpha ÷ their number
// (Bonferroni), so that all of them hold together with probability at
// least 1 − alpha. Met when the objective holds with every metric at its
// pessimistic end (the worse side by its direction), Failed when it fails
// with every metric at its optimistic end, else Undecided. This reading is
// right for objectives monotone in each metric's direction (goodput at
// least, latency at most), which a search's objective is.
func Decide(data []Data, alpha float64, obj Objective) (Judgement, error) {
	return decide(data, alpha, obj, func(i int, a float64) float64 { return EstimateDesignEffect(data[i], a) })
}

// decide is Decide with the design effect of data[i] at level alpha given
// by deff(i, alpha).
func decide(data []Data, alpha float64, obj Objective, deff func(i int, alpha float64) float64) (Judgement, error) {
	bounded := 0
	for _, d := range data {
		if d.Kind != Exact {
			bounded++
		}
	}
	a := alpha
	if bounded > 1 {
		a = alpha / float64(bounded)
	}
	j := Judgement{Alpha: a}
	pess, opt, point := map[string]float64{}, map[string]float64{}, map[string]float64{}
	for i, d := range data {
		iv := intervalAt(d, a, 1)
		if d.Kind != Exact {
			iv = intervalAt(d, a, deff(i, a))
		}
		j.Intervals = append(j.Intervals, iv)
		point[d.Metric] = iv.Point
		if higherIsBetter(d) {
			pess[d.Metric], opt[d.Metric] = iv.Lower, iv.Upper
		} else {
			pess[d.Metric], opt[d.Metric] = iv.Upper, iv.Lower
		}
	}
	okPoint, err := obj(point)
	if err != nil {
		return j, fmt.Errorf("objective at the point estimates: %w", err)
	}
	j.Point = Failed
	if okPoint {
		j.Point = Met
	}
	okPess, err := obj(pess)
	if err != nil {
		return j, fmt.Errorf("objective at the pessimistic ends: %w", err)
	}
	okOpt, err := obj(opt)
	if err != nil {
		return j, fmt.Errorf("objective at the optimistic ends: %w", err)
	}
	switch {
	case okPess:
		j.Decision = Met
	case !okOpt:
		j.Decision = Failed
	default:
		j.Decision = Undecided
	}
	return j, nil
}
