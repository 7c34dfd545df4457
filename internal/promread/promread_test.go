package promread

import "testing"

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
