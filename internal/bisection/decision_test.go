package bisection

import (
	"math"
	"testing"

	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

var ref = vocab.CellRef{Phase: vocab.PhaseDecode, Matrix: "decode", Context: 8192, Concurrency: 4}

// run is a run of the one cell whose total_tps repeats are samples
// (status error when samples is nil).
func run(samples ...float64) *result.Results {
	r := &result.Results{Measure: result.Measure{Duration: "30s", DurationS: 30, MaxOutput: 4096, Endpoint: "completions", Repeat: len(samples)}}
	c := result.DecodeCell{Matrix: "decode", Context: ref.Context, Concurrency: ref.Concurrency, Status: vocab.StatusValid, Repeats: len(samples)}
	if samples == nil {
		c.Status, c.Reason, c.Repeats = vocab.StatusError, "stream stalled", 1
		r.Measure.Repeat = 5
	} else {
		c.TotalTPS = samples[len(samples)/2]
		c.Samples = map[string][]float64{"total_tps": samples}
	}
	r.Decode = []result.DecodeCell{c}
	return r
}

// tight is five repeats within ±0.2% of v.
func tight(v float64) []float64 {
	return []float64{v * 0.998, v * 0.999, v, v * 1.001, v * 1.002}
}

func TestDecide(t *testing.T) {
	good, bad := run(tight(1000)...), run(tight(800)...)
	tests := []struct {
		name    string
		good    *result.Results
		bad     *result.Results
		cand    *result.Results
		want    Outcome
		partial bool
	}{
		{name: "like good: after", good: good, bad: bad, cand: run(tight(1001)...), want: After},
		{name: "like bad: at or before", good: good, bad: bad, cand: run(tight(801)...), want: AtOrBefore},
		{name: "worse than both: partial, nearer bad", good: good, bad: bad, cand: run(tight(700)...), want: AtOrBefore, partial: true},
		{name: "within tolerance of both, nearer good: partial, after", good: run(tight(1000)...), bad: run(tight(920)...), cand: run(tight(962)...), want: After, partial: true},
		{name: "within tolerance of both, nearer bad: partial, at or before", good: run(tight(1000)...), bad: run(tight(920)...), cand: run(tight(958)...), want: AtOrBefore, partial: true},
		{name: "straddling the tolerance's edge against good: inconclusive", good: good, bad: bad, cand: run(880, 940, 960, 990, 1010), want: Inconclusive},
		{name: "the cell errored: skipped", good: good, bad: bad, cand: run(), want: Skipped},
	}
	p := compare.Policy{Tolerance: 0.05}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := Decide(compare.Build(tt.good, tt.cand, p), compare.Build(tt.bad, tt.cand, p), ref, []string{"total_tps"})
			if st.Outcome != tt.want || st.Partial != tt.partial {
				t.Fatalf("Decide = %s (partial %v), want %s (partial %v); metrics %+v", st.Outcome, st.Partial, tt.want, tt.partial, st.Metrics)
			}
		})
	}
}

func TestRegressed(t *testing.T) {
	p := compare.Policy{Tolerance: 0.05}
	if got := Regressed(compare.Build(run(tight(1000)...), run(tight(800)...), p)); len(got) != 1 || got[0].Metrics[0] != "total_tps" {
		t.Fatalf("Regressed = %+v, want the cell's total_tps", got)
	}
	if got := Regressed(compare.Build(run(tight(1000)...), run(tight(990)...), p)); len(got) != 0 {
		t.Fatalf("Regressed = %+v, want none within the tolerance", got)
	}
}

// TestDecideMetricUndecidedAgainstBad pins the steps whose comparison
// against bad is undecided: the candidate's side is then the nearer
// endpoint's, and a tie or a missing estimate is inconclusive, never a
// guess at good or bad.
func TestDecideMetricUndecidedAgainstBad(t *testing.T) {
	undecided := compare.Cell{Change: compare.Inconclusive, Delta: math.NaN()}
	tests := []struct {
		name   string
		vsGood compare.Cell
		vsBad  compare.Cell
		want   Outcome
	}{
		{name: "within good, no estimate against bad", vsGood: compare.Cell{Change: compare.Unchanged, Delta: 0.01}, vsBad: undecided, want: Inconclusive},
		{name: "within good, a tie", vsGood: compare.Cell{Change: compare.Unchanged, Delta: 0}, vsBad: compare.Cell{Change: compare.Inconclusive, Delta: 0}, want: Inconclusive},
		{name: "within good, nearer good", vsGood: compare.Cell{Change: compare.Unchanged, Delta: 0.01}, vsBad: compare.Cell{Change: compare.Inconclusive, Delta: 0.2}, want: After},
		{name: "within good, nearer bad", vsGood: compare.Cell{Change: compare.Improved, Delta: 0.2}, vsBad: compare.Cell{Change: compare.Inconclusive, Delta: -0.01}, want: Inconclusive},
		{name: "worse than good, no estimate against bad", vsGood: compare.Cell{Change: compare.Regressed, Delta: -0.2}, vsBad: undecided, want: Inconclusive},
		{name: "worse than good, nearer bad", vsGood: compare.Cell{Change: compare.Regressed, Delta: -0.2}, vsBad: compare.Cell{Change: compare.Inconclusive, Delta: 0.01}, want: AtOrBefore},
		{name: "worse than good, nearer good", vsGood: compare.Cell{Change: compare.Regressed, Delta: -0.06}, vsBad: compare.Cell{Change: compare.Inconclusive, Delta: 0.3}, want: Inconclusive},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := decideMetric("total_tps", tt.vsGood, tt.vsBad); got.Outcome != tt.want {
				t.Errorf("decideMetric = %s (partial %v), want %s", got.Outcome, got.Partial, tt.want)
			}
		})
	}
}

// TestRegressedFollowsDecided pins Regressed to the cells the comparison
// decided failed: a cell decided otherwise is not bisected, whatever its
// metrics' changes say.
func TestRegressedFollowsDecided(t *testing.T) {
	regressed := compare.MetricCell{Metric: metric.Metric{Name: "total_tps"}, Cell: compare.Cell{Change: compare.Regressed, Delta: -0.2}}
	for _, decided := range []vocab.Outcome{vocab.Pass, vocab.Skip, vocab.Inconclusive, vocab.Error} {
		c := &compare.Comparison{Cells: []compare.CellResult{{Ref: ref, Decided: decided, Metrics: []compare.MetricCell{regressed}}}}
		if got := Regressed(c); len(got) != 0 {
			t.Errorf("a cell decided %s: Regressed = %+v, want none", decided, got)
		}
	}
	c := &compare.Comparison{Cells: []compare.CellResult{{Ref: ref, Decided: vocab.Fail, Metrics: []compare.MetricCell{regressed}}}}
	if got := Regressed(c); len(got) != 1 || got[0].Changes[0] != -0.2 {
		t.Errorf("a cell decided failed: Regressed = %+v, want it with its change -0.2", got)
	}
}
