package promread

import (
	"math"
	"testing"
)

// TestQueuedForCapacity: the capacity reason where the server has the
// breakdown, every waiting request where it has not.
func TestQueuedForCapacity(t *testing.T) {
	if got := (Snapshot{Waiting: 6, WaitingCapacity: 3, WaitingDeferred: 3, HasWaitingByReason: true}).QueuedForCapacity(); got != 3 {
		t.Errorf("with the breakdown: %g, want 3 (capacity)", got)
	}
	if got := (Snapshot{Waiting: 6}).QueuedForCapacity(); got != 6 {
		t.Errorf("without the breakdown: %g, want 6 (num_requests_waiting)", got)
	}
}

// TestDecodeRateSince: the server's own per-request decode rate over a
// window is the tokens its inter-token histogram counted over the waits it
// summed; none without both reads, with nothing observed, or after a
// restart.
func TestDecodeRateSince(t *testing.T) {
	at := func(tokens, sum float64) Snapshot {
		return Snapshot{ITL: SumCount{Sum: sum, Count: tokens, Has: true}, ITLTokens: tokens, HasITLTokens: true}
	}
	tests := []struct {
		name          string
		before, after Snapshot
		want          float64
		ok            bool
	}{
		{name: "200 tokens over 2 s of waits", before: at(100, 1), after: at(300, 3), want: 100, ok: true},
		{name: "speculation: more tokens than waits", before: Snapshot{ITL: SumCount{Sum: 1, Count: 10, Has: true}, ITLTokens: 30, HasITLTokens: true},
			after: Snapshot{ITL: SumCount{Sum: 2, Count: 20, Has: true}, ITLTokens: 60, HasITLTokens: true}, want: 30, ok: true},
		{name: "no tokens read before", before: Snapshot{ITL: SumCount{Has: true}}, after: at(300, 3)},
		{name: "nothing observed", before: at(300, 3), after: at(300, 3)},
		{name: "a restart", before: at(300, 3), after: at(10, 0.1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := tt.after.DecodeRateSince(tt.before)
			if ok != tt.ok || math.Abs(got-tt.want) > 1e-9 {
				t.Errorf("%g (%v), want %g (%v)", got, ok, tt.want, tt.ok)
			}
		})
	}
}
