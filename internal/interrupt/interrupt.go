// Package interrupt turns the user's signals into the run's cancellation: a
// first SIGINT or SIGTERM cancels the context with an error carrying exit
// code 130 or 143 (the server is stopped and what was measured is written);
// a second one closes the force channel, so the server's process group is
// killed at once instead of waiting out its grace period. It says nothing
// itself: each signal is reported as a Signal, which a view words
// (views.WriteSignal).
package interrupt

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"github.com/slogate/slogate/internal/exit"
)

// Signal is what a caught signal did, as values.
type Signal struct {
	// Name is the signal as kill(1) and the README's exit codes name it:
	// "SIGINT" or "SIGTERM" (Go's os.Interrupt prints as "interrupt").
	Name string
	// Second is set on the second signal: the server's process group is
	// killed now instead of waiting out its grace period.
	Second bool
	// Server is set when the command is itself the server (SetServer,
	// `slogate sim`): it shuts down, it stops no server of its own and
	// writes no measurements.
	Server bool
}

// Notify returns ctx cancelled on the first SIGINT or SIGTERM, its cause
// an exit error for the signal, and carrying the channel Force returns.
// report is called with each of the first two signals, from Notify's
// goroutine. The signals stay caught for the process's life.
func Notify(parent context.Context, report func(Signal)) context.Context {
	ctx, cancel := context.WithCancelCause(parent)
	force := make(chan struct{})
	ctx = context.WithValue(ctx, forceKey{}, (<-chan struct{})(force))
	server := new(atomic.Bool)
	ctx = context.WithValue(ctx, serverKey{}, server)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		n := 0
		for sig := range sigs {
			code, name := exit.SIGINT, "SIGINT"
			if sig == syscall.SIGTERM {
				code, name = exit.SIGTERM, "SIGTERM"
			}
			if n++; n == 2 {
				// The server may ignore SIGTERM or take its time: a second
				// signal skips the grace period and kills its group now.
				report(Signal{Name: name, Second: true, Server: server.Load()})
				close(force)
				continue
			}
			if n > 2 {
				continue
			}
			report(Signal{Name: name, Server: server.Load()})
			cancel(exit.With(code, fmt.Errorf("interrupted by %s", name)))
		}
	}()
	return ctx
}

// forceKey carries the channel closed on a second signal.
type forceKey struct{}

// serverKey carries whether the command is itself the server.
type serverKey struct{}

// SetServer marks ctx's command as itself the server (`slogate sim`,
// whose stderr is a run's server.log): its signals are reported with
// Server set, so that they say it shuts down, not that it stops a server
// and writes what was measured. A context without Notify is left alone.
func SetServer(ctx context.Context) {
	if p, ok := ctx.Value(serverKey{}).(*atomic.Bool); ok {
		p.Store(true)
	}
}

// Force returns the channel Notify closes when the user signals a second
// time, or nil (never fires) for a context without one.
func Force(ctx context.Context) <-chan struct{} {
	ch, _ := ctx.Value(forceKey{}).(<-chan struct{})
	return ch
}
