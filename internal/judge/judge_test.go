package judge

import (
	"testing"

	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// TestDecide: each finding of a spec's rule has one outcome, in the order
// Pass < Skip < Inconclusive < Fail < Error, and only an unmeasured read
// is the infrastructure's Error; a finding the table does not know is an
// Error, never a pass.
func TestDecide(t *testing.T) {
	tests := []struct {
		name    string
		finding result.Finding
		want    vocab.Outcome
		infra   bool
	}{
		{name: "held", finding: result.FindingHeld, want: vocab.Pass},
		{name: "only searches left out", finding: result.FindingNothingToRead, want: vocab.Skip},
		{name: "undecided search", finding: result.FindingUndecided, want: vocab.Inconclusive},
		{name: "unmeasurable cells", finding: result.FindingUnmeasurable, want: vocab.Inconclusive},
		{name: "not held", finding: result.FindingNotHeld, want: vocab.Fail},
		{name: "over capacity", finding: result.FindingOverCapacity, want: vocab.Fail},
		{name: "saturated fails its SLO", finding: result.FindingSaturated, want: vocab.Fail},
		{name: "invalid rule is the spec's", finding: result.FindingInvalidRule, want: vocab.Error},
		{name: "not reported", finding: result.FindingNotReported, want: vocab.Error},
		{name: "unmeasured is the infrastructure's", finding: result.FindingUnmeasured, want: vocab.Error, infra: true},
		{name: "a comparison's finding is no rule's", finding: result.FindingCompared, want: vocab.Error},
		{name: "unknown", finding: "newer", want: vocab.Error},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, infra := Decide(tc.finding)
			if got != tc.want || infra != tc.infra {
				t.Errorf("Decide(%q) = %v, infra %v; want %v, infra %v", tc.finding, got, infra, tc.want, tc.infra)
			}
			var v result.Verdict
			Rule(&v, tc.finding)
			if v.Finding != tc.finding || v.Outcome != tc.want || v.Infra != tc.infra {
				t.Errorf("Rule: %+v", v)
			}
		})
	}
}

func TestExitCode(t *testing.T) {
	v := func(o vocab.Outcome, infra bool) result.Verdict { return result.Verdict{Outcome: o, Infra: infra} }
	tests := []struct {
		name     string
		verdicts []result.Verdict
		want     int
	}{
		{"none", nil, 0},
		{"all pass", []result.Verdict{v(vocab.Pass, false), v(vocab.Skip, false)}, 0},
		{"a fail", []result.Verdict{v(vocab.Pass, false), v(vocab.Fail, false)}, 1},
		{"spec error beats fail", []result.Verdict{v(vocab.Fail, false), v(vocab.Error, false)}, 2},
		{"infra beats spec error", []result.Verdict{v(vocab.Error, false), v(vocab.Error, true), v(vocab.Fail, false)}, 3},
		{"infra alone", []result.Verdict{v(vocab.Error, true)}, 3},
		{"infra flag on a fail is still a fail", []result.Verdict{v(vocab.Fail, true)}, 1},
		{"an inconclusive comparison alone is 4", []result.Verdict{v(vocab.Pass, false), v(vocab.Inconclusive, false)}, 4},
		{"a fail beats inconclusive", []result.Verdict{v(vocab.Inconclusive, false), v(vocab.Fail, false), v(vocab.Inconclusive, false)}, 1},
		{"infra beats inconclusive", []result.Verdict{v(vocab.Inconclusive, false), v(vocab.Error, true)}, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ExitCode(tc.verdicts); got != tc.want {
				t.Errorf("ExitCode = %d, want %d", got, tc.want)
			}
		})
	}
}
