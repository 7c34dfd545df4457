package ratesearch

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/vocab"
)

// shareObjective is goodput_share >= min.
func shareObjective(min float64) Objective {
	return func(v map[string]float64) (bool, error) { return v[metric.GoodputShare] >= min, nil }
}

// TestDecide: met when the objective holds at the pessimistic ends (a
// share's lower bound, a latency's upper), failed when it fails at the
// optimistic ends, undecided between; the level is split over the bounded
// metrics.
func TestDecide(t *testing.T) {
	ttft := func(ms float64, n int) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = ms * float64(i+1) / float64(n)
		}
		return xs
	}
	both := func(v map[string]float64) (bool, error) {
		return v[metric.GoodputShare] >= 0.9 && v[metric.TTFTMsP99] <= 500, nil
	}
	tests := []struct {
		name  string
		data  []Data
		obj   Objective
		want  Decision
		point Decision
	}{
		{name: "share far above", data: []Data{{Metric: metric.GoodputShare, Kind: Share, K: 995, N: 1000}}, obj: shareObjective(0.95), want: Met, point: Met},
		{name: "share far below", data: []Data{{Metric: metric.GoodputShare, Kind: Share, K: 800, N: 1000}}, obj: shareObjective(0.95), want: Failed, point: Failed},
		{name: "share at the line", data: []Data{{Metric: metric.GoodputShare, Kind: Share, K: 955, N: 1000}}, obj: shareObjective(0.95), want: Undecided, point: Met},
		{name: "latency p99 well under", data: []Data{{Metric: metric.GoodputShare, Kind: Share, K: 1000, N: 1000}, {Metric: metric.TTFTMsP99, Kind: Quantile, Q: 0.99, Samples: ttft(400, 1000)}}, obj: both, want: Met, point: Met},
		{name: "latency p99 too few samples to bound", data: []Data{{Metric: metric.GoodputShare, Kind: Share, K: 100, N: 100}, {Metric: metric.TTFTMsP99, Kind: Quantile, Q: 0.99, Samples: ttft(400, 100)}}, obj: both, want: Undecided, point: Met},
		{name: "latency p99 over", data: []Data{{Metric: metric.GoodputShare, Kind: Share, K: 1000, N: 1000}, {Metric: metric.TTFTMsP99, Kind: Quantile, Q: 0.99, Samples: ttft(900, 1000)}}, obj: both, want: Failed, point: Failed},
		{name: "exact metric", data: []Data{{Metric: metric.Launched, Value: 10}}, obj: func(v map[string]float64) (bool, error) { return v[metric.Launched] >= 10, nil }, want: Met, point: Met},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j, err := Decide(tt.data, 0.01, tt.obj)
			if err != nil {
				t.Fatal(err)
			}
			if j.Decision != tt.want || j.Point != tt.point {
				t.Errorf("Decide = %s (point %s), want %s (point %s); intervals %+v", j.Decision, j.Point, tt.want, tt.point, j.Intervals)
			}
		})
	}
	j, _ := Decide([]Data{{Metric: metric.GoodputShare, Kind: Share, K: 1, N: 2}, {Metric: metric.TTFTMsP99, Kind: Quantile, Q: 0.99, Samples: []float64{1}}}, 0.01, both)
	if j.Alpha != 0.005 {
		t.Errorf("alpha of each of 2 bounded metrics = %v, want 0.005", j.Alpha)
	}
}

// capacityProbe is a server whose share meeting the SLO falls linearly
// from 1 at rate 0 to 0 at 2·c (so 0.95 at c·0.1): its windows give the
// expected count exactly, without noise, n requests a window.
func capacityProbe(c float64, n int, calls *[]float64) ProbeFunc {
	return func(rate float64, windows int) (Outcome, error) {
		*calls = append(*calls, rate)
		p := max(0, 1-rate/(2*c))
		total := n * windows
		return Outcome{
			Data:      []Data{{Metric: metric.GoodputShare, Kind: Share, K: int(math.Round(p * float64(total))), N: total}},
			Objective: shareObjective(0.95),
		}, nil
	}
}

// TestSearch: the bisection brackets the rate where the share crosses the
// objective to the precision, its confident bounds either side of it, and
// the edge cases stop as stated.
func TestSearch(t *testing.T) {
	// share = 1 − rate/20 meets 0.95 up to rate 1.
	var calls []float64
	ans, err := Search(0.25, 4, 0.025, capacityProbe(10, 2000, &calls))
	if err != nil {
		t.Fatal(err)
	}
	if !ans.Found || ans.Rate > 1 || ans.Rate < 1/1.025 {
		t.Errorf("answer %v, want within 2.5 %% below the true 1", ans.Rate)
	}
	if !(ans.Lower <= 1 && ans.Lower > 0) || !(ans.Upper > 1) {
		t.Errorf("bounds [%v, %v] do not bracket the true 1", ans.Lower, ans.Upper)
	}
	if max := (Settings{Lo: 0.25, Hi: 4}).MaxProbes(); len(ans.Probes) > max {
		t.Errorf("%d probes, more than MaxProbes", len(ans.Probes))
	}
	if ans.Windows != len(calls) {
		t.Errorf("Windows %d, probe calls %d", ans.Windows, len(calls))
	}
	// Far from the objective, lo and hi decide on their first window.
	if ans.Probes[0].Windows != 1 || ans.Probes[1].Windows != 1 || ans.Probes[0].Decision != Met || ans.Probes[1].Decision != Failed {
		t.Errorf("lo and hi: %+v, %+v; want met and failed on one window each", ans.Probes[0], ans.Probes[1])
	}

	calls = nil
	none, _ := Search(2, 4, 0.025, capacityProbe(10, 2000, &calls))
	if none.Found || none.Rate != 0 || len(none.Probes) != 1 || none.Probes[0].Decision != Failed || none.Upper != 2 {
		t.Errorf("lo failing: %+v, want none found, one failed probe at lo, upper 2", none)
	}
	calls = nil
	all, _ := Search(0.1, 0.5, 0.025, capacityProbe(10, 2000, &calls))
	if !all.Found || all.Rate != 0.5 || all.Upper != 0 || len(all.Probes) != 2 {
		t.Errorf("hi meeting: %+v, want answer hi, upper unbounded, two probes", all)
	}

	// A client that cannot drive more than 0.6 req/s.
	lag := func(rate float64, w int) (Outcome, error) {
		if rate > 0.6 {
			return Outcome{Unmeasurable: "client lag"}, nil
		}
		return capacityProbe(10, 2000, &calls)(rate, w)
	}
	cl, _ := Search(0.25, 4, 0.025, lag)
	if !cl.Found || cl.Rate > 0.6 || cl.ClientLimit <= 0.6 || cl.Upper != 0 {
		t.Errorf("client limited: rate %v, client limit %v, upper %v; want an answer ≤ 0.6, the limit above it, upper unbounded", cl.Rate, cl.ClientLimit, cl.Upper)
	}
}

// TestSearchSaturated: a probe whose window stopped as saturated fails on
// its first window, whatever its data, and bounds the answer from above
// as a failed probe does (docs/method.md#saturation); the search does not
// stop.
func TestSearchSaturated(t *testing.T) {
	var calls []float64
	judged := 0
	// Every probe meets the objective, but the server saturates above 0.8.
	probe := func(rate float64, w int) (Outcome, error) {
		if rate > 0.8 {
			calls = append(calls, rate)
			return Outcome{Saturated: "past the server's capacity"}, nil
		}
		return capacityProbe(10, 2000, &calls)(rate, w)
	}
	s := Settings{Lo: 0.25, Hi: 4, Precision: 0.025, Judged: func(p Probe, final bool) {
		if p.Saturated && final {
			judged++
		}
	}}
	ans, err := s.Search(probe)
	if err != nil {
		t.Fatal(err)
	}
	if !ans.Found || ans.Rate > 0.8 || ans.Rate < 0.8/1.025 || ans.Upper <= 0.8 {
		t.Errorf("answer %v (upper %v), want within 2.5 %% below 0.8, bounded above", ans.Rate, ans.Upper)
	}
	saturated := 0
	for _, p := range ans.Probes {
		if p.Saturated {
			saturated++
			if p.Decision != Failed || p.Point != Failed || p.Windows != 1 || p.Reason != "past the server's capacity" {
				t.Errorf("saturated probe %+v: want failed on one window, with the reason", p)
			}
		}
	}
	if saturated == 0 || judged != saturated {
		t.Errorf("%d saturated probes, %d judged final; want some, each judged", saturated, judged)
	}
}

// TestSearchUndecidedGoesOn: a probe that stays undecided measures the
// most windows and goes by its point estimate, marked undecided; it
// bounds nothing.
func TestSearchUndecidedGoesOn(t *testing.T) {
	// The share is exactly the objective at every rate: never decided.
	flat := func(rate float64, w int) (Outcome, error) {
		return Outcome{Data: []Data{{Metric: metric.GoodputShare, Kind: Share, K: 95 * w, N: 100 * w}}, Objective: shareObjective(0.95)}, nil
	}
	ans, err := Settings{Lo: 1, Hi: 2, MaxWindows: 3}.Search(flat)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range ans.Probes {
		got = append(got, string(p.Decision)+"/"+string(p.Point))
		if p.Windows != 3 {
			t.Errorf("probe at %v measured %d windows, want the cap 3", p.Rate, p.Windows)
		}
	}
	if diff := cmp.Diff([]string{"undecided/met", "undecided/met"}, got); diff != "" {
		t.Errorf("decisions (-want +got):\n%s", diff)
	}
	if ans.Rate != 2 || ans.Lower != 0 || ans.Upper != 0 {
		t.Errorf("answer %v in [%v, %v], want 2 by the point estimates, no confident bound", ans.Rate, ans.Lower, ans.Upper)
	}
}

// TestSearchInput: a reversed or non-positive range is refused.
func TestSearchInput(t *testing.T) {
	tests := []struct {
		name   string
		lo, hi float64
	}{
		{name: "reversed", lo: 4, hi: 1},
		{name: "zero", lo: 0, hi: 1},
		{name: "equal", lo: 1, hi: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Search(tt.lo, tt.hi, 0.025, func(float64, int) (Outcome, error) { return Outcome{}, nil })
			if err == nil || !strings.Contains(err.Error(), "0 < lo < hi") {
				t.Errorf("err = %v, want the range refused", err)
			}
		})
	}
}

// TestCapacity: regressed when the candidate's upper bound is below the
// baseline's lower bound by more than the tolerance, within tolerance when
// its lower bound is within it of the baseline's answer, else
// inconclusive, with the precision that would decide it when a finer
// search would (half the answer's gap from the line, under the searches'
// precision). The words are views' (TestCapacityReason there).
func TestCapacity(t *testing.T) {
	base := Bounds{Found: true, Rate: 10, Lower: 9.6, Upper: 10.4, Precision: 0.025}
	tests := []struct {
		name     string
		b        Bounds
		want     vocab.Outcome
		rule     CapacityRule
		deciding float64 // DecidingPrecision
	}{
		{name: "lost a third", b: Bounds{Found: true, Rate: 6.6, Lower: 6.3, Upper: 6.9, Precision: 0.025}, want: vocab.Fail, rule: BoundsBelow},
		{name: "just past the tolerance", b: Bounds{Found: true, Rate: 8.9, Lower: 8.5, Upper: 9.1, Precision: 0.025}, want: vocab.Fail, rule: BoundsBelow},
		{name: "same", b: base, want: vocab.Pass, rule: BoundsWithin},
		{name: "lower bound at the line", b: Bounds{Found: true, Rate: 9.8, Lower: 9.5, Upper: 10.1, Precision: 0.025}, want: vocab.Pass, rule: BoundsWithin},
		{name: "upper below the lower bound, within the tolerance", b: Bounds{Found: true, Rate: 9.1, Lower: 8.9, Upper: 9.3, Precision: 0.025}, want: vocab.Inconclusive, rule: BoundsStraddle, deciding: 0.02},
		{name: "answer over the line, lower bound under it", b: Bounds{Found: true, Rate: 9.8, Lower: 9.2, Upper: 10.3, Precision: 0.025}, want: vocab.Inconclusive, rule: BoundsStraddle, deciding: 0.015},
		{name: "straddles", b: Bounds{Found: true, Rate: 9.3, Lower: 8.9, Upper: 9.7, Precision: 0.025}, want: vocab.Inconclusive, rule: BoundsStraddle, deciding: 0.01},
		// Half the answer's gap from the line no finer than the searches'
		// precision, or no gap at all: a finer search would not move it.
		{name: "far above the line, lower bound under it", b: Bounds{Found: true, Rate: 12, Lower: 9, Upper: 14, Precision: 0.025}, want: vocab.Inconclusive, rule: BoundsStraddle},
		{name: "answer on the line", b: Bounds{Found: true, Rate: 9.5, Lower: 9, Upper: 10, Precision: 0.025}, want: vocab.Inconclusive, rule: BoundsStraddle},
		{name: "none met, not confidently", b: Bounds{Precision: 0.025}, want: vocab.Inconclusive, rule: NoRateMet},
		{name: "none met, lo failed with confidence", b: Bounds{Upper: 2, Precision: 0.025}, want: vocab.Fail, rule: BoundsBelow},
		{name: "unbounded above", b: Bounds{Found: true, Rate: 9.3, Lower: 8, Precision: 0.025}, want: vocab.Inconclusive, rule: BoundsStraddle, deciding: 0.01},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Capacity(base, tt.b, 0.05)
			if got.Outcome != tt.want || got.Rule != tt.rule || math.Abs(got.DecidingPrecision-tt.deciding) > 1e-12 {
				t.Errorf("Capacity = %+v, want %s by %s deciding at %v", got, tt.want, tt.rule, tt.deciding)
			}
			if got.Rule != BoundsWithin && got.Rule != BoundsBelow && got.Line != 9.5 {
				t.Errorf("tolerance line %v, want the baseline's 10 less 5%% = 9.5", got.Line)
			}
			if tt.deciding > 0 && got.SearchPrecision != 0.025 {
				t.Errorf("searches' precision %v, want 0.025", got.SearchPrecision)
			}
		})
	}
	if got := Capacity(Bounds{}, base, 0.05); got.Outcome != vocab.Skip || got.Rule != NoBaselineAnswer {
		t.Errorf("baseline without an answer: %+v, want skip by %s", got, NoBaselineAnswer)
	}
}

// TestLookAlpha: the error is split over the most probes (lo, hi and the
// bisection's steps) and the most windows of each.
func TestLookAlpha(t *testing.T) {
	s := Settings{Lo: 1, Hi: 16}
	// ln 16 / ln 1.025 = 112.3: 7 halvings, plus lo and hi.
	if got := s.MaxProbes(); got != 9 {
		t.Errorf("MaxProbes = %d, want 9", got)
	}
	if got, want := s.LookAlpha(), 0.05/36; math.Abs(got-want) > 1e-15 {
		t.Errorf("LookAlpha = %v, want 0.05 ÷ (9 probes × 4 windows) = %v", got, want)
	}
}

// TestBetween: a bisection's probe rate is the geometric midpoint rounded
// to 3 significant digits, more only when needed to stay strictly inside.
func TestBetween(t *testing.T) {
	tests := []struct {
		name       string
		a, b, want float64
	}{
		{name: "three digits", a: 8, b: 40, want: 17.9},
		{name: "below 1", a: 0.25, b: 4, want: 1},
		{name: "close ends need more digits", a: 21.0, b: 21.1, want: 21.05},
		{name: "very close", a: 1.0001, b: 1.0003, want: 1.0002},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := between(tt.a, tt.b); math.Abs(got-tt.want) > 1e-12 {
				t.Errorf("between(%v, %v) = %v, want %v", tt.a, tt.b, got, tt.want)
			}
		})
	}
}
