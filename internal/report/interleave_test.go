package report

import (
	"testing"

	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/vocab"
)

// TestLeftBlockText: each rule of a block left out of an interleaved
// cell's pairs, in words (the console, report.md and interleave.json's
// left_out say them).
func TestLeftBlockText(t *testing.T) {
	tests := []struct {
		name string
		l    compare.LeftBlock
		want string
	}{
		{name: "measured without numbers", l: compare.LeftBlock{Block: 3, Side: "B", Rule: compare.LeftNotMeasured, Status: vocab.StatusUnmeasurable, Reason: "the window held 12 output tokens"},
			want: "block 3: B unmeasurable: the window held 12 output tokens"},
		{name: "over capacity", l: compare.LeftBlock{Block: 1, Side: "A", Rule: compare.LeftNotMeasured, Status: vocab.StatusOverCapacity, Reason: "64 × (8192 + 256) > 500000"},
			want: "block 1: A over capacity"}, // its arithmetic is the cell's own line
		{name: "client limit", l: compare.LeftBlock{Block: 4, Side: "B", Rule: compare.LeftClientLimit, Rate: 10.5},
			want: "block 4: B unmeasurable: the client could not drive 10.5 req/s, within the answer's bounds"},
		{name: "no rate", l: compare.LeftBlock{Block: 3, Side: "B", Rule: compare.LeftNoRate, Rate: 2},
			want: "block 3: B met the objective at no rate (2 req/s decided failed)"},
		{name: "undecided", l: compare.LeftBlock{Block: 2, Side: "A", Rule: compare.LeftUndecided},
			want: "block 2: A undecided: no probe was decided to meet the objective with confidence"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := LeftBlockText(tt.l); got != tt.want {
				t.Errorf("LeftBlockText = %q, want %q", got, tt.want)
			}
		})
	}
}
