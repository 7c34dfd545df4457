package ratesearch

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/vocab"
)

// TestPairedCapacity: regressed when a metric is worse with confidence,
// within tolerance when every metric is at least as good, inconclusive
// otherwise (saying how many windows would decide it, or that one window
// bounds nothing); a lower-is-better metric's positive difference is
// worse; the level is split evenly over the metrics. The intervals'
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
		name     string
		metrics  []PairedMetric
		alpha    float64
		want     vocab.Outcome
		prefix   string   // the sentence's start
		contains []string // and what it says
		// intervals, when set, are the wanted intervals.
		intervals []PairedInterval
	}{
		{
			name:     "regressed: worse with confidence",
			metrics:  []PairedMetric{share(-0.03, -0.04, -0.02, -0.035, -0.025)},
			want:     vocab.Fail,
			prefix:   "capacity lost: at 4.75 req/s (the baseline's 5 req/s less 5%), on the baseline's 5 windows,",
			contains: []string{"goodput_share worse by 0.03 (", "at one-sided 5%)"},
		},
		{
			name:     "within tolerance: at least as good",
			metrics:  []PairedMetric{share(0.01, 0.02, 0.03)},
			want:     vocab.Pass,
			prefix:   "within tolerance: at 4.75 req/s",
			contains: []string{"goodput_share better by 0.02 (+0.003141 to +0.03686 at one-sided 5%)"},
			intervals: []PairedInterval{{
				Metric: metric.GoodputShare, Mean: 0.02, Lower: 0.02 - t2*0.01/math.Sqrt(3),
				Upper: 0.02 + t2*0.01/math.Sqrt(3), Windows: 3, Alpha: 0.05,
			}},
		},
		{
			name:     "inconclusive: the spread too wide",
			metrics:  []PairedMetric{share(-0.12, 0.07, -0.04, 0.1, -0.06)},
			want:     vocab.Inconclusive,
			prefix:   "at 4.75 req/s",
			contains: []string{"neither worse nor at least as good with confidence", "goodput_share worse by 0.01", "about 232 windows a side (check_windows) would decide it"},
		},
		{
			name:     "inconclusive: mean 0",
			metrics:  []PairedMetric{share(0.01, -0.01, 0.01, -0.01)},
			want:     vocab.Inconclusive,
			contains: []string{"more windows a side (check_windows) would decide it"},
		},
		{
			name:     "inconclusive: one window bounds nothing",
			metrics:  []PairedMetric{share(-0.2)},
			want:     vocab.Inconclusive,
			contains: []string{"on the baseline's 1 window,", "(unbounded to unbounded", "two windows a side at least would bound it (check_windows)"},
			intervals: []PairedInterval{{
				Metric: metric.GoodputShare, Mean: -0.2, Lower: math.Inf(-1), Upper: math.Inf(1), Windows: 1, Alpha: 0.05,
			}},
		},
		{
			name:     "lower is better: a positive difference is worse",
			metrics:  []PairedMetric{ttft(10, 20, 30)},
			want:     vocab.Fail,
			prefix:   "capacity lost: at ",
			contains: []string{"ttft_ms_p99 worse by 20 ("},
			intervals: []PairedInterval{{
				Metric: metric.TTFTMsP99, Mean: -20, Lower: -20 - t2*10/math.Sqrt(3),
				Upper: -20 + t2*10/math.Sqrt(3), Windows: 3, Alpha: 0.05,
			}},
		},
		{
			name:     "lower is better: a negative difference is better",
			metrics:  []PairedMetric{ttft(-10, -20, -30)},
			want:     vocab.Pass,
			contains: []string{"ttft_ms_p99 better by 20 ("},
		},
		{
			name:     "higher is better: the same positive difference is better",
			metrics:  []PairedMetric{share(10, 20, 30)},
			want:     vocab.Pass,
			contains: []string{"goodput_share better by 20 ("},
		},
		{
			name:     "one metric at the whole level",
			metrics:  []PairedMetric{borderline},
			want:     vocab.Fail,
			prefix:   "capacity lost: at ",
			contains: []string{"goodput_share worse by 0.01 (", "at one-sided 5%)"},
			intervals: []PairedInterval{{
				Metric: metric.GoodputShare, Mean: -0.01, Lower: -0.01 - 1.833113*0.005,
				Upper: -0.01 + 1.833113*0.005, Windows: 10, Alpha: 0.05,
			}},
		},
		{
			name:     "Bonferroni: two metrics each at half the level",
			metrics:  []PairedMetric{borderline, ttft(-9, -11, -9, -11, -9, -11, -9, -11, -9, -11)},
			want:     vocab.Inconclusive,
			contains: []string{"goodput_share worse by 0.01 (", "at one-sided 2.5%)", "ttft_ms_p99 better by"},
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
			name:     "two metrics: the worse one named",
			metrics:  []PairedMetric{share(0.01, 0.02, 0.03, 0.02, 0.02), ttft(10, 20, 30, 20, 20)},
			want:     vocab.Fail,
			prefix:   "capacity lost: at ",
			contains: []string{"the candidate's ttft_ms_p99 is worse", "ttft_ms_p99 worse by 20 ("},
		},
		{
			name:     "no metric",
			want:     vocab.Inconclusive,
			prefix:   "the paired check read no metric",
			contains: []string{},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			alpha := tc.alpha
			if alpha == 0 {
				alpha = 0.05
			}
			got, ivs, why := PairedCapacity(tc.metrics, alpha, 4.75, 5, 0.05)
			if got != tc.want {
				t.Errorf("outcome %v, want %v: %s", got, tc.want, why)
			}
			if !strings.HasPrefix(why, tc.prefix) {
				t.Errorf("sentence %q, want it to start %q", why, tc.prefix)
			}
			for _, s := range tc.contains {
				if !strings.Contains(why, s) {
					t.Errorf("sentence %q, want it to say %q", why, s)
				}
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
