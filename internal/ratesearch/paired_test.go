package ratesearch

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/vocab"
)

// TestPairedCapacity: regressed when a metric is worse with confidence,
// within tolerance when every metric is at least as good, inconclusive
// otherwise (with how many windows would decide it); a lower-is-better
// metric's positive difference is worse; the level is split evenly over
// the metrics. The words are views' (TestCapacityReason there). The intervals'
// bounds are Student's t's: t(9 df, 0.95) =
// 1.833113, t(9 df, 0.975) = 2.262157.
func TestPairedCapacity(t *testing.T) {
	t2 := 0.9 / math.Sqrt(0.095) // t(2 df, 0.95) = (2p − 1) ÷ √(2p(1 − p))
	share := func(ds ...float64) PairedMetric {
		return PairedMetric{Metric: metric.GoodputShare, HigherIsBetter: true, Diffs: ds}
	}
	ttft := func(ds ...float64) PairedMetric {
		return PairedMetric{Metric: metric.TTFTMsP99, Diffs: ds}
	}
	// borderline's mean is −0.01 and its t statistic −2.0 over 10
	// windows: worse at one-sided 5 %, not at 2.5 %.
	borderline := share(0.005, -0.025, 0.005, -0.025, 0.005, -0.025, 0.005, -0.025, 0.005, -0.025)
	for _, tc := range []struct {
		name    string
		metrics []PairedMetric
		alpha   float64
		want    vocab.Outcome
		rule    CapacityRule
		worse   int // the metric worse with confidence (PairedWorse)
		need    int // the windows that would decide an undecided check
		// intervals, when set, are the wanted intervals.
		intervals []PairedInterval
	}{
		{
			name:    "regressed: worse with confidence",
			metrics: []PairedMetric{share(-0.03, -0.04, -0.02, -0.035, -0.025)},
			want:    vocab.Fail,
			rule:    PairedWorse,
		},
		{
			name:    "within tolerance: at least as good",
			metrics: []PairedMetric{share(0.01, 0.02, 0.03)},
			want:    vocab.Pass,
			rule:    PairedAsGood,
			intervals: []PairedInterval{{
				Metric: metric.GoodputShare, Mean: 0.02, Lower: 0.02 - t2*0.01/math.Sqrt(3),
				Upper: 0.02 + t2*0.01/math.Sqrt(3), Windows: 3, Alpha: 0.05,
			}},
		},
		{
			name:    "inconclusive: the spread too wide",
			metrics: []PairedMetric{share(-0.12, 0.07, -0.04, 0.1, -0.06)},
			want:    vocab.Inconclusive,
			rule:    PairedUndecided, need: 232,
		},
		{
			name:    "inconclusive: mean 0",
			metrics: []PairedMetric{share(0.01, -0.01, 0.01, -0.01)},
			want:    vocab.Inconclusive,
			rule:    PairedUndecided,
		},
		{
			name:    "inconclusive: one window bounds nothing",
			metrics: []PairedMetric{share(-0.2)},
			want:    vocab.Inconclusive,
			rule:    PairedUndecided,
			intervals: []PairedInterval{{
				Metric: metric.GoodputShare, Mean: -0.2, Lower: math.Inf(-1), Upper: math.Inf(1), Windows: 1, Alpha: 0.05,
			}},
		},
		{
			name:    "lower is better: a positive difference is worse",
			metrics: []PairedMetric{ttft(10, 20, 30)},
			want:    vocab.Fail,
			rule:    PairedWorse,
			intervals: []PairedInterval{{
				Metric: metric.TTFTMsP99, Mean: -20, Lower: -20 - t2*10/math.Sqrt(3),
				Upper: -20 + t2*10/math.Sqrt(3), Windows: 3, Alpha: 0.05,
			}},
		},
		{
			name:    "lower is better: a negative difference is better",
			metrics: []PairedMetric{ttft(-10, -20, -30)},
			want:    vocab.Pass,
			rule:    PairedAsGood,
		},
		{
			name:    "higher is better: the same positive difference is better",
			metrics: []PairedMetric{share(10, 20, 30)},
			want:    vocab.Pass,
			rule:    PairedAsGood,
		},
		{
			name:    "one metric at the whole level",
			metrics: []PairedMetric{borderline},
			want:    vocab.Fail,
			rule:    PairedWorse,
			intervals: []PairedInterval{{
				Metric: metric.GoodputShare, Mean: -0.01, Lower: -0.01 - 1.833113*0.005,
				Upper: -0.01 + 1.833113*0.005, Windows: 10, Alpha: 0.05,
			}},
		},
		{
			name:    "Bonferroni: two metrics each at half the level",
			metrics: []PairedMetric{borderline, ttft(-9, -11, -9, -11, -9, -11, -9, -11, -9, -11)},
			want:    vocab.Inconclusive,
			rule:    PairedUndecided, need: 13,
			intervals: []PairedInterval{
				{
					Metric: metric.GoodputShare, Mean: -0.01, Lower: -0.01 - 2.262157*0.005,
					Upper: -0.01 + 2.262157*0.005, Windows: 10, Alpha: 0.025,
					// The fewest pairs k > 10 with t(k−1, 0.975)·sd/√k below
					// |mean| 0.01, sd 0.005·√10: 12 gives 2.201·0.01581/√12 =
					// 0.01005, 13 gives 2.179·0.01581/√13 = 0.00956.
					Need: 13,
				},
				{
					Metric: metric.TTFTMsP99, Mean: 10, Lower: 10 - 2.262157/3, Upper: 10 + 2.262157/3,
					Windows: 10, Alpha: 0.025,
				},
			},
		},
		{
			name:    "two metrics: the worse one named",
			metrics: []PairedMetric{share(0.01, 0.02, 0.03, 0.02, 0.02), ttft(10, 20, 30, 20, 20)},
			want:    vocab.Fail,
			rule:    PairedWorse, worse: 1,
		},
		{
			name: "no metric",
			want: vocab.Inconclusive,
			rule: PairedNoMetric,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			alpha := tc.alpha
			if alpha == 0 {
				alpha = 0.05
			}
			got, ivs := PairedCapacity(tc.metrics, alpha, 4.75, 5)
			worse := -1
			if tc.rule == PairedWorse {
				worse = tc.worse
			}
			if got.Outcome != tc.want || got.Rule != tc.rule || got.Worse != worse || got.NeedWindows != tc.need {
				t.Errorf("decision %+v, want %v by %s, worse %d, need %d", got, tc.want, tc.rule, worse, tc.need)
			}
			if got.Rate != 4.75 || got.BaselineRate != 5 {
				t.Errorf("rates %v and %v, want the check's 4.75 and the baseline's 5", got.Rate, got.BaselineRate)
			}
			if len(ivs) != len(tc.metrics) {
				t.Fatalf("%d intervals, want one a metric (%d)", len(ivs), len(tc.metrics))
			}
			for _, iv := range ivs {
				if want := alpha / float64(len(tc.metrics)); iv.Alpha != want {
					t.Errorf("%s at level %v, want alpha ÷ %d metrics = %v", iv.Metric, iv.Alpha, len(tc.metrics), want)
				}
			}
			if tc.intervals == nil {
				return
			}
			if d := cmp.Diff(tc.intervals, ivs, cmpopts.EquateApprox(0, 1e-6)); d != "" {
				t.Errorf("intervals (-want +got):\n%s", d)
			}
		})
	}
}
