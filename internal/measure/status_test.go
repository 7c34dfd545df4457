package measure

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slogate/slogate/internal/engine"
	"github.com/slogate/slogate/internal/engine/registry"
	"github.com/slogate/slogate/internal/lifecycle"
	"github.com/slogate/slogate/internal/promread"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/warning"
)

// TestCellStatus: queued only when the server made requests wait
// (docs/method.md#statuses); the client's restart gaps and deferred
// requests give a note.
func TestCellStatus(t *testing.T) {
	gateNote := warning.New(warning.GateTimedOut, "…", "…", map[string]float64{warning.FigTimeoutS: 30, warning.FigDecoding: 60, warning.FigConcurrency: 64})
	none := waitEvidence{preemptions: -1, terms: vllmStatus}
	with := func(f func(*waitEvidence)) waitEvidence { ev := none; f(&ev); return ev }
	short := func(held, observed time.Duration, intervals int) sustained {
		return sustained{held: held, observed: observed, intervals: intervals}
	}
	tests := []struct {
		name       string
		ev         waitEvidence
		activeAvg  float64
		want       vocab.Status
		wantReason string
		// wantNotes are the cell's notes by code and figures.
		wantNotes []warning.Warning
	}{
		{name: "all streams active", ev: none, activeAvg: 63.9, want: vocab.StatusValid},
		{name: "restart gaps are a note, not queued", ev: none, activeAvg: 55.2, want: vocab.StatusValid,
			wantNotes: []warning.Warning{{Code: warning.RestartGaps, Figures: map[string]float64{warning.FigActiveAvg: 55.2, warning.FigConcurrency: 64}}}},
		{name: "the gate found a queue", ev: with(func(e *waitEvidence) {
			e.gateQueued, e.gateReason = true, result.CellReason{Code: result.ReasonWaitingHold}
		}), activeAvg: 64,
			want: vocab.StatusQueued, wantReason: "the server reported requests waiting for capacity during the steady-state hold"},
		{name: "waiting for capacity during the window", ev: with(func(e *waitEvidence) { e.window.waiting = true }), activeAvg: 64,
			want: vocab.StatusQueued, wantReason: "the server reported requests waiting for capacity during the window"},
		{name: "waiting for capacity during the steady-state hold", ev: with(func(e *waitEvidence) { e.gateWaiting = true }), activeAvg: 64,
			want: vocab.StatusQueued, wantReason: "the server reported requests waiting for capacity during the steady-state hold"},
		{name: "deferred requests are a note", ev: with(func(e *waitEvidence) { e.window.deferred = 3 }), activeAvg: 64, want: vocab.StatusValid,
			wantNotes: []warning.Warning{{Code: warning.Deferred, Subject: vllmStatus.Deferred, Figures: map[string]float64{warning.FigDeferred: 3}}}},
		{name: "preemptions during the window", ev: with(func(e *waitEvidence) { e.preemptions = 3 }), activeAvg: 64,
			want: vocab.StatusQueued, wantReason: "the server preempted 3 requests during the window (vllm:num_preemptions_total)"},
		{name: "a single preemption is enough", ev: with(func(e *waitEvidence) { e.preemptions = 1 }), activeAvg: 64,
			want: vocab.StatusQueued, wantReason: "the server preempted 1 requests during the window (vllm:num_preemptions_total)"},
		{name: "no preemptions", ev: with(func(e *waitEvidence) { e.preemptions = 0 }), activeAvg: 64, want: vocab.StatusValid},
		{name: "fewer running than outstanding for a quarter of the window", ev: with(func(e *waitEvidence) { e.window.short = short(500*time.Millisecond, 2*time.Second, 10) }), activeAvg: 64,
			want: vocab.StatusQueued, wantReason: "the server ran fewer than 64 requests while 64 were outstanding (beyond those just sent) for 0.5s of the window's 2.0s"},
		{name: "just under a quarter of the window", ev: with(func(e *waitEvidence) { e.window.short = short(499*time.Millisecond, 2*time.Second, 10) }), activeAvg: 64, want: vocab.StatusValid},
		{name: "one short interval is a moment, whatever its share", ev: with(func(e *waitEvidence) { e.window.short = short(time.Second, 2*time.Second, 1) }), activeAvg: 64, want: vocab.StatusValid},
		{name: "waiting and preemptions are both in the reason", ev: with(func(e *waitEvidence) { e.window.waiting, e.preemptions = true, 2 }), activeAvg: 64,
			want: vocab.StatusQueued, wantReason: "the server reported requests waiting for capacity during the window; the server preempted 2 requests during the window (vllm:num_preemptions_total)"},
		{name: "a stable queue at the gate says it for the window too", ev: with(func(e *waitEvidence) {
			e.gateQueued, e.gateReason, e.window.waiting, e.window.short = true, result.CellReason{Code: result.ReasonStableQueue,
				Figures: map[string]float64{result.FigRunning: 24, result.FigConcurrency: 32, result.FigWaiting: 8}}, true, short(2*time.Second, 2*time.Second, 40)
		}), activeAvg: 24, want: vocab.StatusQueued, wantReason: "the server ran 24 of 32 requests; 8 waited",
			wantNotes: []warning.Warning{{Code: warning.RestartGaps, Figures: map[string]float64{warning.FigActiveAvg: 24, warning.FigConcurrency: 64}}}},
		{name: "the gate's note comes first", ev: with(func(e *waitEvidence) { e.gateNote = gateNote }), activeAvg: 55.2, want: vocab.StatusValid,
			wantNotes: []warning.Warning{gateNote, {Code: warning.RestartGaps, Figures: map[string]float64{warning.FigActiveAvg: 55.2, warning.FigConcurrency: 64}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, reasons, notes := cellStatus(tc.ev, tc.activeAvg, 64)
			if reason := wordsOf(reasons); got != tc.want || reason != tc.wantReason {
				t.Errorf("cellStatus = %s %q, want %s %q", got, reason, tc.want, tc.wantReason)
			}
			if diff := cmp.Diff(warning.Textless(tc.wantNotes), warning.Textless(notes)); diff != "" {
				t.Errorf("notes (-want +got):\n%s", diff)
			}
		})
	}
}

// polls builds a sequence of polls every 50 ms from t0 for C = c: each is
// f(i) applied to a poll where all C are outstanding, the server runs
// all C and every stream has started and decodes.
func polls(c, n int, f func(i int, p *poll)) []poll {
	out := make([]poll, n)
	for i := range out {
		p := poll{at: time.Duration(i) * 50 * time.Millisecond, gauges: true, running: float64(c), allOutstanding: true, decoding: c, started: c}
		if f != nil {
			f(i, &p)
		}
		out[i] = p
	}
	return out
}

// TestWindowEvidence: the window's shortfall is weighted by time and
// excuses the requests in transit; waiting counts when two polls in a row
// show it; a single poll is a moment.
func TestWindowEvidence(t *testing.T) {
	const c = 64
	tests := []struct {
		name          string
		polls         []poll
		wantWaiting   bool
		wantShortfall bool
		wantHeld      time.Duration
		wantDeferred  float64
	}{
		{name: "steady", polls: polls(c, 41, nil)},
		{name: "restart dips: fewer running, as many requests just sent", polls: polls(c, 41, func(i int, p *poll) {
			p.running, p.inTransit = c-2, 2
		})},
		{name: "every other poll a dip the transit does not cover: never two in a row", polls: polls(c, 41, func(i int, p *poll) {
			if i%2 == 1 {
				p.running = c - 1
			}
		})},
		{name: "a request held back for the whole window", polls: polls(c, 41, func(i int, p *poll) {
			p.running, p.inTransit = c-3, 2
		}), wantShortfall: true, wantHeld: 2 * time.Second},
		{name: "held back for a quarter of the window", polls: polls(c, 41, func(i int, p *poll) {
			if i >= 30 {
				p.running = c - 1
			}
		}), wantShortfall: true, wantHeld: 500 * time.Millisecond},
		{name: "held back for less than a quarter", polls: polls(c, 41, func(i int, p *poll) {
			if i >= 31 {
				p.running = c - 1
			}
		}), wantHeld: 450 * time.Millisecond},
		{name: "fewer running while the client had fewer outstanding is the client's", polls: polls(c, 41, func(i int, p *poll) {
			p.running, p.allOutstanding = c-1, false
		})},
		{name: "polls weigh by the time between them", polls: func() []poll {
			// 10 steady polls over 0.45 s, then one poll 1.5 s later and a
			// last 50 ms on, both short: 1.55 s of 2.0 s short… only the
			// last interval has a short poll at both ends: 50 ms.
			ps := polls(c, 12, nil)
			ps[10].at, ps[11].at = 1950*time.Millisecond, 2000*time.Millisecond
			ps[10].running, ps[11].running = c-1, c-1
			return ps
		}(), wantHeld: 50 * time.Millisecond},
		{name: "one poll waiting is a moment", polls: polls(c, 41, func(i int, p *poll) {
			if i == 7 {
				p.waiting = 1
			}
		})},
		{name: "two polls in a row waiting", polls: polls(c, 41, func(i int, p *poll) {
			if i == 7 || i == 8 {
				p.waiting = 1
			}
		}), wantWaiting: true},
		{name: "deferred requests are counted, not waiting", polls: polls(c, 41, func(i int, p *poll) {
			p.deferred = float64(i % 4)
		}), wantDeferred: 3},
		{name: "polls without gauges are left out", polls: polls(c, 41, func(i int, p *poll) {
			p.gauges, p.running = false, 0
		})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := windowEvidence(tc.polls, c)
			if f.waiting != tc.wantWaiting || f.short.shortfall() != tc.wantShortfall || f.short.held != tc.wantHeld || f.deferred != tc.wantDeferred {
				t.Errorf("waiting %v, shortfall %v (held %v of %v), deferred %g; want %v, %v (held %v), %g",
					f.waiting, f.short.shortfall(), f.short.held, f.short.observed, f.deferred, tc.wantWaiting, tc.wantShortfall, tc.wantHeld, tc.wantDeferred)
			}
		})
	}
}

// TestGate: the steady-state gate over poll sequences with injected times:
// steady once the conditions hold for the hold (restart dips inside
// holdGrace or covered by the requests in transit do not restart it); a
// stable queue once requests wait throughout the hold at a plateau of
// running requests that have all been prefilled once; the ramp-up is
// neither.
func TestGate(t *testing.T) {
	const hold = 3 * time.Second
	tests := []struct {
		name       string
		c          int
		polls      []poll
		want       gateVerdict
		wantAt     time.Duration // when it decided
		wantReason string
	}{
		{name: "steady after the hold", c: 64, polls: polls(64, 100, nil), want: gateSteady, wantAt: hold},
		{name: "the hold starts when every stream has started", c: 64, polls: polls(64, 100, func(i int, p *poll) {
			if i < 10 {
				p.started = 60
			}
		}), want: gateSteady, wantAt: 500*time.Millisecond + hold},
		{name: "restart dips covered by requests in transit keep the hold", c: 64, polls: polls(64, 100, func(i int, p *poll) {
			p.running, p.inTransit = float64(60+i%4), 4-i%4
		}), want: gateSteady, wantAt: hold},
		{name: "a dip within holdGrace keeps the hold", c: 64, polls: polls(64, 100, func(i int, p *poll) {
			if i >= 20 && i < 25 {
				p.running = 63
			}
		}), want: gateSteady, wantAt: hold},
		{name: "a dip longer than holdGrace starts the hold again", c: 64, polls: polls(64, 200, func(i int, p *poll) {
			if i >= 20 && i < 27 {
				p.running = 63
			}
		}), want: gateSteady, wantAt: 27*50*time.Millisecond + hold},
		{name: "waiting for capacity breaks the hold: a stable queue instead", c: 128, polls: polls(128, 200, func(i int, p *poll) {
			// 128 streams over 64 seats; short outputs restart requests,
			// so the running count wobbles below its plateau and some
			// running requests are in their prefill.
			p.running, p.waiting, p.started, p.decoding = float64(64-i%3), float64(64+i%3), 64+i/10, 60
		}), want: gateQueue, wantAt: hold, wantReason: "the server ran 64 of 128 requests; 66 waited"},
		{name: "the ramp-up: running rises, the plateau starts again", c: 64, polls: polls(64, 200, func(i int, p *poll) {
			r := min(8+i, 64)
			p.running, p.waiting, p.started = float64(r), float64(64-r), r
		}), want: gateSteady, wantAt: 56*50*time.Millisecond + hold},
		{name: "a long first prefill is the ramp-up, not a queue", c: 16, polls: polls(16, 100, func(i int, p *poll) {
			p.running, p.waiting, p.started = 9, 7, 8 // the ninth is in its first prefill
		}), want: gateWaiting},
		{name: "a queue that empties for a poll starts again", c: 16, polls: polls(16, 100, func(i int, p *poll) {
			p.running, p.waiting, p.started = 8, 8, 8
			if i == 30 {
				p.waiting = 0
			}
		}), want: gateQueue, wantAt: 31*50*time.Millisecond + hold, wantReason: "the server ran 8 of 16 requests; 8 waited"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := newGate(tc.c, hold)
			got, at := gateWaiting, time.Duration(-1)
			for _, p := range tc.polls {
				if v := g.observe(p); v != gateWaiting {
					got, at = v, p.at
					break
				}
			}
			if got != tc.want || (got != gateWaiting && at != tc.wantAt) {
				t.Fatalf("verdict %d at %v, want %d at %v", got, at, tc.want, tc.wantAt)
			}
			if got == gateQueue && words(g.queueReason()) != tc.wantReason {
				t.Errorf("reason %q, want %q", words(g.queueReason()), tc.wantReason)
			}
		})
	}
}

// TestGateTimedOut: a gate that times out is queued when its polls showed
// the server making requests wait for a quarter of the time observed;
// otherwise it gives a note that says why.
func TestGateTimedOut(t *testing.T) {
	tests := []struct {
		name  string
		polls []poll
		// wantReason is the queued cell's reason; wantNote, by code and
		// figures, the note of a cell measured anyway.
		wantReason string
		wantNote   *warning.Warning
	}{
		{name: "held back throughout", polls: polls(16, 601, func(i int, p *poll) { p.running, p.started, p.decoding = 12, 16, 12 }),
			wantReason: "steady state not reached within 33s (12 of 16 streams decoding; server running 12, waiting 0); the server made requests wait for 30.0s of the 30.0s observed; measured anyway"},
		{name: "streams not past their first token, the server running all", polls: polls(16, 601, func(i int, p *poll) { p.started, p.decoding = 12, 12 }),
			wantNote: &warning.Warning{Code: warning.GateTimedOut, Figures: map[string]float64{warning.FigTimeoutS: 33, warning.FigDecoding: 12, warning.FigConcurrency: 16,
				warning.FigRunning: 16, warning.FigWaiting: 0, warning.FigHeldS: 0, warning.FigObservedS: 30}}},
		{name: "no gauges", polls: polls(16, 601, func(i int, p *poll) { p.gauges, p.started, p.decoding = false, 12, 12 }),
			wantNote: &warning.Warning{Code: warning.GateTimedOut, Figures: map[string]float64{warning.FigTimeoutS: 33, warning.FigDecoding: 12, warning.FigConcurrency: 16}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := newGate(16, 3*time.Second)
			for _, p := range tc.polls {
				g.observe(p)
			}
			out := g.timedOut(33 * time.Second)
			reason := ""
			if out.queued {
				reason = words(out.reason)
			}
			if out.queued != (tc.wantReason != "") || reason != tc.wantReason {
				t.Errorf("queued %v %q\nwant   %v %q", out.queued, reason, tc.wantReason != "", tc.wantReason)
			}
			var note *warning.Warning
			if out.note.Code != "" {
				n := out.note.Textless()
				note = &n
			}
			if diff := cmp.Diff(tc.wantNote, note); diff != "" {
				t.Errorf("note (-want +got):\n%s", diff)
			}
		})
	}
}

// TestInTransit: a stream's request counts as in transit while it has no
// first chunk and was sent less than the bound before.
func TestInTransit(t *testing.T) {
	l := newLoad(lifecycle.NewClient("http://127.0.0.1:1", "", "m"), "/v1/completions", [][]byte{nil}, 4, time.Second, time.Second)
	now := int64(10 * time.Second)
	l.awaiting[0].Store(now - int64(100*time.Millisecond)) // just sent
	l.awaiting[1].Store(now - int64(999*time.Millisecond)) // sent almost a bound ago
	l.awaiting[2].Store(now - int64(time.Second))          // a bound ago: held somewhere
	// l.awaiting[3] stays -1: past its first chunk, or between requests
	if got := l.inTransit(now, time.Second); got != 2 {
		t.Errorf("inTransit = %d, want 2 (the requests sent less than 1 s ago)", got)
	}
}

// TestScrapeTimes: a cell records the mean and the longest /metrics scrape
// and warns when the mean exceeds slowScrape (5 ms), a slow_scrape warning
// quoting the record's figures and the polling period; no scrape, no
// record.
func TestScrapeTimes(t *testing.T) {
	msd := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	tests := []struct {
		name    string
		scrapes []time.Duration
		want    *result.Polling
		warn    []warning.Warning
	}{
		{name: "none"},
		{name: "fast", scrapes: []time.Duration{msd(1), msd(2), msd(9)}, want: &result.Polling{Scrapes: 3, MeanMs: 4, MaxMs: 9}},
		{name: "at the bound", scrapes: []time.Duration{msd(5), msd(5)}, want: &result.Polling{Scrapes: 2, MeanMs: 5, MaxMs: 5}},
		{name: "slow", scrapes: []time.Duration{msd(4), msd(8.5)}, want: &result.Polling{Scrapes: 2, MeanMs: 6.25, MaxMs: 8.5},
			warn: []warning.Warning{{Code: warning.SlowScrape,
				Figures: map[string]float64{warning.FigMeanMs: 6.25, warning.FigMaxMs: 8.5, warning.FigScrapes: 2, warning.FigIntervalMs: 50}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var s scrapeTimes
			for _, d := range tc.scrapes {
				s.add(d)
			}
			got, warn := s.record()
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("record: (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.warn, warning.Textless(warn)); diff != "" {
				t.Errorf("warning (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLaggingRunningGauge: SGLang's running gauge is the state at its last
// update (promread.Snapshot.RunningLags), so fewer running than C is no
// shortfall there, while waiting requests still queue the cell; the same
// polls from a live gauge (vLLM's) are a shortfall.
func TestLaggingRunningGauge(t *testing.T) {
	polls := func(lags bool, waiting float64) []poll {
		var ps []poll
		for i := 0; i < 20; i++ {
			ps = append(ps, poll{at: time.Duration(i) * 50 * time.Millisecond, gauges: true, running: 1, waiting: waiting,
				allOutstanding: true, decoding: 2, started: 2, runningLags: lags})
		}
		return ps
	}
	tests := []struct {
		name    string
		lags    bool
		waiting float64
		want    vocab.Status
	}{
		{"live gauge: a shortfall", false, 0, vocab.StatusQueued},
		{"lagging gauge: no shortfall", true, 0, vocab.StatusValid},
		{"lagging gauge, requests waiting: queued", true, 1, vocab.StatusQueued},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := waitEvidence{preemptions: -1, terms: vllmStatus, window: windowEvidence(polls(tt.lags, tt.waiting), 2)}
			if got, reasons, _ := cellStatus(ev, 2, 2); got != tt.want {
				t.Errorf("status %s (%s), want %s", got, wordsOf(reasons), tt.want)
			}
		})
	}
}

// vllmStatus is vLLM's engine.Status: the terms a vLLM cell's notes and
// reasons quote.
var vllmStatus = registry.For("vllm").Status()

// TestWaitingOf: deferred requests are a note where the engine's wait on
// something else (vLLM's LoRA budget or KV transfer), and waiting for
// capacity where the engine says its deferred requests wait for it.
func TestWaitingOf(t *testing.T) {
	snap := promread.Snapshot{Waiting: 5, WaitingCapacity: 2, WaitingDeferred: 3, HasWaitingByReason: true}
	tests := []struct {
		name                  string
		status                *engine.Status
		wantWaiting, wantDefd float64
	}{
		{name: "vLLM: deferred is not capacity", status: vllmStatus, wantWaiting: 2, wantDefd: 3},
		{name: "deferred means queued", status: &engine.Status{DeferredIsQueued: true}, wantWaiting: 5, wantDefd: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, d := waitingOf(snap, tc.status)
			if w != tc.wantWaiting || d != tc.wantDefd {
				t.Errorf("waitingOf = %g waiting, %g deferred; want %g, %g", w, d, tc.wantWaiting, tc.wantDefd)
			}
		})
	}
}
