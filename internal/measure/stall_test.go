package measure

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestStallTimer: after a chunk the idle timeout replaces the first
// chunk's, and the cancellation says which inactivity it allowed. The
// first timeout is an hour, so only the reset can end the wait in time;
// the 5 s bound is for a loaded machine, not the decision.
func TestStallTimer(t *testing.T) {
	ctx, s, stop := newStallTimer(context.Background(), time.Hour)
	defer stop()
	s.chunk(10 * time.Millisecond)
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("not cancelled 5 s after a chunk allowing 10 ms of silence")
	}
	var st errStalled
	if cause := context.Cause(ctx); !errors.As(cause, &st) || st.after != 10*time.Millisecond {
		t.Errorf("cause %v, want the stall after 10ms", cause)
	}
}
