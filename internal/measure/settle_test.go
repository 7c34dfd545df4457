package measure

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// fakeSettleClock is a settleClock whose sleep moves its time on at once.
type fakeSettleClock struct{ t time.Time }

func (c *fakeSettleClock) now() time.Time { return c.t }

func (c *fakeSettleClock) sleep(ctx context.Context, d time.Duration) error {
	c.t = c.t.Add(d)
	return ctx.Err()
}

// TestSettle: settle reads the gauges every poll (200 ms here) until
// the server is idle, and then for the abort latency (1 s) more; a
// reading of idle at once costs nothing, gauges the page lacks settle at
// once, a server busy past the limit (10 s) is an error that quotes the
// gauges, and a server busy again within the latency restarts it.
func TestSettle(t *testing.T) {
	busy := func(running, waiting float64) settleGauges {
		return settleGauges{running: running, waiting: waiting, known: true}
	}
	idle := busy(0, 0)
	tests := []struct {
		name     string
		readings []settleGauges // the last repeats
		wantWait time.Duration
		wantErr  string
	}{
		{name: "idle at once", readings: []settleGauges{idle}, wantWait: 0},
		{name: "no gauges", readings: []settleGauges{{}}, wantWait: 0},
		// Only queued at the first reading (the server had not yet taken
		// them into a batch), idle from 200 ms: settled at 1.2 s.
		{name: "queued only, then idle", readings: []settleGauges{busy(0, 3), idle}, wantWait: 1200 * time.Millisecond},
		// Busy at 0 and 200 ms, idle from 400 ms: settled at 1.4 s.
		{name: "busy, then idle for the latency", readings: []settleGauges{busy(2, 5), busy(1, 0), idle}, wantWait: 1400 * time.Millisecond},
		// Idle at 200 ms, busy again at 400 ms (a request the server
		// read late), idle from 600 ms: settled at 1.6 s.
		{name: "busy again within the latency", readings: []settleGauges{busy(2, 0), idle, busy(0, 1), idle}, wantWait: 1600 * time.Millisecond},
		{name: "busy past the limit", readings: []settleGauges{busy(2, 3)}, wantWait: 10 * time.Second,
			wantErr: "the server still ran 2 and queued 3 requests 10 s after the client had closed all of its own, so the cell was not measured on a busy server (the engine notices a closed request only when it next polls it, every 1 s)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := &fakeSettleClock{t: time.Unix(0, 0)}
			reads := 0
			read := func(context.Context) (settleGauges, error) {
				g := tt.readings[min(reads, len(tt.readings)-1)]
				reads++
				return g, nil
			}
			waited, err := settle(context.Background(), read, clock, 200*time.Millisecond, time.Second, 10*time.Second)
			if waited != tt.wantWait {
				t.Errorf("waited %v, want %v", waited, tt.wantWait)
			}
			if got := errText(err); got != tt.wantErr {
				t.Errorf("error %q, want %q", got, tt.wantErr)
			}
		})
	}
}

// TestSettleReadFails: a scrape that fails while the server is busy ends
// the wait with an error that says what it was waiting for; one that
// fails at once leaves the cell to report it.
func TestSettleReadFails(t *testing.T) {
	clock := &fakeSettleClock{t: time.Unix(0, 0)}
	reads := 0
	read := func(context.Context) (settleGauges, error) {
		reads++
		if reads == 1 {
			return settleGauges{running: 1, known: true}, nil
		}
		return settleGauges{}, errors.New("connection refused")
	}
	_, err := settle(context.Background(), read, clock, 200*time.Millisecond, time.Second, 10*time.Second)
	if want := "waiting for the server to finish an earlier cell's requests: connection refused"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want one containing %q", err, want)
	}
	fails := func(context.Context) (settleGauges, error) { return settleGauges{}, errors.New("connection refused") }
	if waited, err := settle(context.Background(), fails, clock, 200*time.Millisecond, time.Second, 10*time.Second); waited != 0 || err != nil {
		t.Errorf("a first scrape that fails: waited %v, error %v; want 0, nil", waited, err)
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
