package interrupt

import (
	"bytes"
	"context"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/slogate/slogate/internal/exit"
)

// lockedBuffer is a bytes.Buffer safe to read while Notify's goroutine writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestNotify: the first SIGTERM cancels with exit code 143 and says so; the
// second closes the force channel.
func TestNotify(t *testing.T) {
	var stderr lockedBuffer
	ctx := Notify(context.Background(), &stderr)
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
	if !strings.Contains(stderr.String(), "slogate: SIGTERM: stopping the server and writing what was measured") {
		t.Errorf("stderr %q does not say what happens", stderr.String())
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
	if !strings.Contains(stderr.String(), "second signal: killing the server's process group now") {
		t.Errorf("stderr %q does not announce the kill", stderr.String())
	}
}

// TestSetMessages: a command that is itself the server (slogate sim) says
// what it does on a signal instead of run's "stopping the server and
// writing what was measured", which ended every normal stop's server.log.
func TestSetMessages(t *testing.T) {
	var stderr lockedBuffer
	ctx := Notify(context.Background(), &stderr)
	SetMessages(context.Background(), Messages{First: "ignored"}) // no Notify: nothing to change
	SetMessages(ctx, Messages{First: "the simulator is shutting down", Second: "second signal: still shutting down"})
	syscall.Kill(os.Getpid(), syscall.SIGTERM)
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("SIGTERM did not cancel the context")
	}
	got := stderr.String()
	if !strings.Contains(got, "slogate: SIGTERM: the simulator is shutting down\n") || strings.Contains(got, "writing what was measured") {
		t.Errorf("stderr %q, want the set message only", got)
	}
	syscall.Kill(os.Getpid(), syscall.SIGTERM)
	select {
	case <-Force(ctx):
	case <-time.After(10 * time.Second):
		t.Fatal("the second SIGTERM did not close the force channel")
	}
	if got := stderr.String(); !strings.Contains(got, "slogate: second signal: still shutting down\n") {
		t.Errorf("stderr %q lacks the set second message", got)
	}
}
