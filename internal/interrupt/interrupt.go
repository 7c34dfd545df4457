// Package interrupt turns the user's signals into the run's cancellation: a
// first SIGINT or SIGTERM cancels the context with an error carrying exit
// code 130 or 143 (the server is stopped and what was measured is written);
// a second one closes the force channel, so the server's process group is
// killed at once instead of waiting out its grace period.
package interrupt

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/views"
)

// Messages are what Notify says on the first and on the second signal,
// after "slogate: SIGTERM: " and "slogate: " respectively.
type Messages struct {
	First, Second string
}

// RunMessages are the messages of a command that stops the server it
// measures (`slogate run`), the default.
var RunMessages = Messages{
	First:  "stopping the server and writing what was measured (signal again to kill the server now)",
	Second: "second signal: killing the server's process group now",
}

// Notify returns ctx cancelled on the first SIGINT or SIGTERM, its cause
// an exit error for the signal, and carrying the channel Force returns.
// Messages (RunMessages unless SetMessages changed them) go to stderr. The
// signals stay caught for the process's life.
func Notify(parent context.Context, stderr io.Writer) context.Context {
	ctx, cancel := context.WithCancelCause(parent)
	force := make(chan struct{})
	ctx = context.WithValue(ctx, forceKey{}, (<-chan struct{})(force))
	msgs := new(atomic.Pointer[Messages])
	msgs.Store(&RunMessages)
	ctx = context.WithValue(ctx, messagesKey{}, msgs)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		n := 0
		for sig := range sigs {
			if n++; n == 2 {
				// The server may ignore SIGTERM or take its time: a second
				// signal skips the grace period and kills its group now.
				views.WriteSecondSignal(stderr, msgs.Load().Second)
				close(force)
				continue
			}
			if n > 2 {
				continue
			}
			// Named as the README's exit codes and kill(1) name them: Go's
			// os.Interrupt prints as "interrupt".
			code, name := exit.SIGINT, "SIGINT"
			if sig == syscall.SIGTERM {
				code, name = exit.SIGTERM, "SIGTERM"
			}
			views.WriteSignal(stderr, name, msgs.Load().First)
			cancel(exit.With(code, fmt.Errorf("interrupted by %s", name)))
		}
	}()
	return ctx
}

// forceKey carries the channel closed on a second signal.
type forceKey struct{}

// messagesKey carries what Notify says on a signal.
type messagesKey struct{}

// SetMessages replaces what ctx's Notify says on a signal: a command that
// is itself the server (`slogate sim`, whose stderr is a run's server.log)
// says it shuts down, not that it stops a server and writes what was
// measured. A context without Notify is left alone.
func SetMessages(ctx context.Context, m Messages) {
	if p, ok := ctx.Value(messagesKey{}).(*atomic.Pointer[Messages]); ok {
		p.Store(&m)
	}
}

// Force returns the channel Notify closes when the user signals a second
// time, or nil (never fires) for a context without one.
func Force(ctx context.Context) <-chan struct{} {
	ch, _ := ctx.Value(forceKey{}).(<-chan struct{})
	return ch
}
