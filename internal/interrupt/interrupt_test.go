package interrupt

import (
	"context"
	"os"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/slogate/slogate/internal/exit"
)

// reported collects the signals Notify reports, safe to read while its
// goroutine appends.
type reported struct {
	mu  sync.Mutex
	got []Signal
}

func (r *reported) add(s Signal) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, s)
}

func (r *reported) all() []Signal {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

// TestNotify: the first SIGTERM cancels with exit code 143 and is
// reported; the second closes the force channel and is reported as the
// second.
func TestNotify(t *testing.T) {
	var r reported
	ctx := Notify(context.Background(), r.add)
	if Force(context.Background()) != nil {
		t.Fatal("Force of a context without Notify is not nil")
	}
	syscall.Kill(os.Getpid(), syscall.SIGTERM)
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the first SIGTERM did not cancel the context")
	}
	if code := exit.Code(context.Cause(ctx)); code != exit.SIGTERM {
		t.Errorf("exit code %d, want %d", code, exit.SIGTERM)
	}
	if got := context.Cause(ctx).Error(); got != "interrupted by SIGTERM" {
		t.Errorf("cause %q, want %q", got, "interrupted by SIGTERM")
	}
	if got := r.all(); !slices.Equal(got, []Signal{{Name: "SIGTERM"}}) {
		t.Errorf("reported %+v, want the first SIGTERM", got)
	}
	select {
	case <-Force(ctx):
		t.Fatal("force closed after one signal")
	default:
	}
	syscall.Kill(os.Getpid(), syscall.SIGTERM)
	select {
	case <-Force(ctx):
	case <-time.After(10 * time.Second):
		t.Fatal("the second SIGTERM did not close the force channel")
	}
	if got := r.all(); !slices.Equal(got, []Signal{{Name: "SIGTERM"}, {Name: "SIGTERM", Second: true}}) {
		t.Errorf("reported %+v, want the first SIGTERM, then the second", got)
	}
}

// TestSetServer: a command that is itself the server (slogate sim) has
// its signals reported with Server set; a context without Notify is left
// alone.
func TestSetServer(t *testing.T) {
	var r reported
	ctx := Notify(context.Background(), r.add)
	SetServer(context.Background()) // no Notify: nothing to change
	SetServer(ctx)
	syscall.Kill(os.Getpid(), syscall.SIGINT)
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("SIGINT did not cancel the context")
	}
	if code := exit.Code(context.Cause(ctx)); code != exit.SIGINT {
		t.Errorf("exit code %d, want %d", code, exit.SIGINT)
	}
	syscall.Kill(os.Getpid(), syscall.SIGINT)
	select {
	case <-Force(ctx):
	case <-time.After(10 * time.Second):
		t.Fatal("the second SIGINT did not close the force channel")
	}
	if got := r.all(); !slices.Equal(got, []Signal{{Name: "SIGINT", Server: true}, {Name: "SIGINT", Second: true, Server: true}}) {
		t.Errorf("reported %+v, want both SIGINTs with Server set", got)
	}
}
