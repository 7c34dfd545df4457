package measure

import (
	"context"
	"fmt"
	"time"

	"github.com/slogate/slogate/internal/numfmt"
)

// settleLimit bounds the wait for a server to finish the requests an
// earlier cell closed (docs/method.md#settle): a minute, as a traffic
// window's drain.
var settleLimit = trafficDrainMin

// settleGauges is one reading of the server's request gauges for settle:
// running and waiting, known false when the page lacked them.
type settleGauges struct {
	running, waiting float64
	known            bool
}

// settleClock is the time settle waits by: now and a sleep that ends
// early with ctx. Tests inject one that jumps.
type settleClock interface {
	now() time.Time
	sleep(ctx context.Context, d time.Duration) error
}

// wallClock is settleClock on the real clock.
type wallClock struct{}

func (wallClock) now() time.Time { return time.Now() }

func (wallClock) sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}

// settle waits, before a cell's first request, until the server runs and
// queues no request: where the engine notices a closed request only
// after abortLatency (llama-server), the requests an earlier cell closed
// at its end keep running and those it had queued still start, and a
// cell measured on that backlog would read as a slow server. A first
// reading of idle settles at once; a busy one is polled every poll until
// idle, and then must stay idle for abortLatency more, for the requests
// the server had not yet read (its HTTP workers were busy with the
// closed ones). It returns the time waited; an error when the server is
// still busy after limit (no cell is measured on a busy server), or when
// read fails. Gauges the page lacks settle at once: nothing to wait by.
func settle(ctx context.Context, read func(context.Context) (settleGauges, error), clock settleClock, poll, abortLatency, limit time.Duration) (time.Duration, error) {
	start := clock.now()
	g, err := read(ctx)
	if err != nil || !g.known || g.running+g.waiting == 0 {
		return 0, nil // a scrape that fails here is the cell's to report
	}
	var idleSince time.Time // zero while busy
	for {
		if err := clock.sleep(ctx, poll); err != nil {
			return clock.now().Sub(start), err
		}
		now := clock.now()
		g, err = read(ctx)
		switch {
		case err != nil:
			return now.Sub(start), fmt.Errorf("reading /metrics while waiting for the server to finish an earlier cell's requests: %w", err)
		case !g.known || g.running+g.waiting > 0:
			idleSince = time.Time{}
		case idleSince.IsZero():
			idleSince = now
		}
		if !idleSince.IsZero() && now.Sub(idleSince) >= abortLatency {
			return now.Sub(start), nil
		}
		if idleSince.IsZero() && now.Sub(start) >= limit {
			return now.Sub(start), fmt.Errorf("the server still ran %s and queued %s requests %s s after the client had closed all of its own, so the cell was not measured on a busy server (the engine notices a closed request only when it next polls it, every %s s)",
				numfmt.Shortest(g.running), numfmt.Shortest(g.waiting), numfmt.Shortest(limit.Seconds()), numfmt.Shortest(abortLatency.Seconds()))
		}
	}
}

// settleServer is settle on m's server, with the engine's abort latency;
// it does nothing for an engine that aborts at once. A wait that failed
// is the cell's error, why; err ends the run: the run's context ended, or
// the server is gone (lifecycle.Server.Gone).
func (m *Meter) settleServer(ctx context.Context) (waited time.Duration, why string, err error) {
	waited, failed := m.settleWait(ctx)
	switch {
	case failed == nil:
		return waited, "", nil
	case ctx.Err() != nil:
		return waited, "", context.Cause(ctx)
	}
	if gone := m.Server.Gone(ctx); gone != nil {
		return waited, "", gone
	}
	return waited, failed.Error(), nil
}

// settleWait runs settle on m's server's gauges.
func (m *Meter) settleWait(ctx context.Context) (time.Duration, error) {
	st := m.Server.Client.Engine().Status()
	if st.AbortLatency <= 0 {
		return 0, nil
	}
	read := func(ctx context.Context) (settleGauges, error) {
		s, _, err := m.Server.Client.Metrics(ctx)
		if err != nil {
			return settleGauges{}, err
		}
		waiting, deferred := waitingOf(s, st)
		return settleGauges{running: s.Running, waiting: waiting + deferred, known: s.HasRequests && !s.RunningLags}, nil
	}
	return settle(ctx, read, wallClock{}, 4*pollEvery, st.AbortLatency, settleLimit)
}
