package judge

import (
	"testing"

	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/ratesearch"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// TestCellFinding: each case of a cell's comparison is named by its
// finding, an unmeasurable side first (it says more than an error).
func TestCellFinding(t *testing.T) {
	measured := compare.Side{Present: true, Status: vocab.StatusValid}
	tests := []struct {
		name string
		cr   compare.CellResult
		want result.Finding
	}{
		{name: "both measured", cr: compare.CellResult{A: measured, B: measured, Decided: vocab.Fail}, want: result.FindingCompared},
		{name: "this run's side unmeasurable", cr: compare.CellResult{A: measured, B: compare.Side{Present: true, Status: vocab.StatusUnmeasurable}, Decided: vocab.Inconclusive},
			want: result.FindingUnmeasurable},
		{name: "the baseline's side unmeasurable, this run errored", cr: compare.CellResult{A: compare.Side{Present: true, Status: vocab.StatusUnmeasurable},
			B: compare.Side{Present: true, Status: vocab.StatusError}, Decided: vocab.Error}, want: result.FindingUnmeasurable},
		{name: "not in the baseline", cr: compare.CellResult{B: measured, Decided: vocab.Skip}, want: result.FindingNotInBaseline},
		{name: "baseline cell not measured", cr: compare.CellResult{A: compare.Side{Present: true, Status: vocab.StatusOverCapacity}, B: measured, Decided: vocab.Skip},
			want: result.FindingBaselineUnmeasured},
		{name: "errored where the baseline measured", cr: compare.CellResult{A: measured, B: compare.Side{Present: true, Status: vocab.StatusError}, Decided: vocab.Error},
			want: result.FindingNotMeasured},
		{name: "lost to capacity", cr: compare.CellResult{A: measured, B: compare.Side{Present: true, Status: vocab.StatusOverCapacity}, Decided: vocab.Fail,
			Lost: &compare.Finding{Change: compare.Lost}}, want: result.FindingLost},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := cellFinding(&tt.cr); got != tt.want {
				t.Errorf("cellFinding = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestTrafficFinding: a traffic cell's cases, as a decode cell's.
func TestTrafficFinding(t *testing.T) {
	valid := &result.TrafficCell{Status: vocab.StatusValid}
	tests := []struct {
		name string
		tp   compare.TrafficPair
		want result.Finding
	}{
		{name: "both measured", tp: compare.TrafficPair{A: valid, B: valid, Decided: vocab.Pass}, want: result.FindingCompared},
		{name: "not in the baseline", tp: compare.TrafficPair{B: valid, Decided: vocab.Skip}, want: result.FindingNotInBaseline},
		{name: "baseline cell not measured", tp: compare.TrafficPair{A: &result.TrafficCell{Status: vocab.StatusError}, B: valid, Decided: vocab.Skip},
			want: result.FindingBaselineUnmeasured},
		{name: "errored", tp: compare.TrafficPair{A: valid, B: &result.TrafficCell{Status: vocab.StatusError}, Decided: vocab.Error}, want: result.FindingNotMeasured},
		{name: "lost", tp: compare.TrafficPair{A: valid, Decided: vocab.Fail}, want: result.FindingLost},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := trafficFinding(&tt.tp); got != tt.want {
				t.Errorf("trafficFinding = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestCapacityFinding: a rate search's cases by compare's rule.
func TestCapacityFinding(t *testing.T) {
	tests := []struct {
		name string
		rule ratesearch.CapacityRule
		want result.Finding
	}{
		{name: "this run's search stopped", rule: compare.SearchStopped, want: result.FindingNotMeasured},
		{name: "the baseline's search stopped", rule: compare.BaselineStopped, want: result.FindingBaselineUnmeasured},
		{name: "the searches differ", rule: compare.SearchesDiffer, want: result.FindingRefused},
		{name: "decided on bounds", rule: "", want: result.FindingCompared},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := compare.CapacityResult{Reason: ratesearch.CapacityDecision{Rule: tt.rule}}
			if got := capacityFinding(&r); got != tt.want {
				t.Errorf("capacityFinding = %q, want %q", got, tt.want)
			}
		})
	}
}
