package measure

import (
	"fmt"
	"time"

	"github.com/slogate/slogate/internal/engine"
	"github.com/slogate/slogate/internal/promread"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/warning"
)

// This file is where a decode cell's status is decided
// (docs/method.md#statuses); a cell whose streams failed is an error where
// the failure is seen (decode.go), and an error is never reported as slow.

// Polling and the thresholds of the status rules (docs/method.md#statuses).
const (
	// pollEvery is how often a decode cell reads /metrics during the
	// steady-state gate and the window. vLLM publishes its request gauges
	// once per engine step (tens of milliseconds), so a poll every 50 ms
	// sees each state that lasts a step or two; the rules below weigh
	// polls by the time between them, so the share of a window a state
	// held is measured, not guessed from a handful of polls.
	pollEvery = 50 * time.Millisecond
	// transitBound is how long a request just sent may be missing from the
	// server's running count: it reaches vLLM's engine core at the next
	// step boundary and shows in the stats at the end of the step that
	// schedules it (two engine steps, plus the HTTP hop). A restarted
	// stream's request younger than this explains a shortfall; one older
	// than this, without its first token, is not running and is not
	// reported waiting: the server is holding it somewhere.
	transitBound = time.Second
	// sustainedShare is the share of a window (or of a gate that timed
	// out) during which the server must have made requests wait for the
	// cell to be queued by the shortfall rule.
	sustainedShare = 0.25
	// holdGrace is how long the gate's conditions may fail before the
	// hold starts again: a restart's moment of fewer running lasts an
	// engine step or two.
	holdGrace = 250 * time.Millisecond
	// refusalGap is the longest pause between the server's refusals at
	// admission that still counts as it refusing throughout
	// (docs/method.md#rejections): a refused stream asks again after
	// rejectBackoff (50 ms), so a server that stays full refuses every few
	// tens of milliseconds, and one that took the ramp-up's burst late
	// refuses no more.
	refusalGap = time.Second
)

// slowScrape is the mean /metrics scrape time above which a cell warns that
// polling may perturb the server (docs/method.md#polling): at 20 scrapes a
// second, 5 ms each keeps the server's front end busy with /metrics a tenth
// of the time.
const slowScrape = 5 * time.Millisecond

// scrapeTimes gathers how long a cell's /metrics scrapes took.
type scrapeTimes struct {
	n         int
	sum, most time.Duration
}

func (s *scrapeTimes) add(d time.Duration) {
	s.n++
	s.sum += d
	s.most = max(s.most, d)
}

// record is the cell's Polling and, when the mean scrape exceeds
// slowScrape, its warning; nil and "" without scrapes.
func (s scrapeTimes) record() (*result.Polling, []warning.Warning) {
	if s.n == 0 {
		return nil, nil
	}
	mean := s.sum / time.Duration(s.n)
	p := &result.Polling{Scrapes: s.n, MeanMs: millis(mean), MaxMs: millis(s.most)}
	if mean <= slowScrape {
		return p, nil
	}
	return p, []warning.Warning{warning.New(warning.SlowScrape, "", "", map[string]float64{warning.FigMeanMs: p.MeanMs, warning.FigMaxMs: p.MaxMs, warning.FigScrapes: float64(s.n), warning.FigIntervalMs: millis(pollEvery)})}
}

// millis is d in milliseconds, to the microsecond.
func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// poll is one /metrics read of a decode (or traffic) cell together with what the client
// had at that moment: the input of the status rules, which are pure
// functions of a sequence of polls (their times injected, never read from
// the clock).
type poll struct {
	// at is when the poll was taken (the middle of the scrape), since any
	// fixed origin.
	at time.Duration
	// gauges: the server's request gauges were read; the fields below
	// from running to deferred are meaningful only then.
	gauges  bool
	running float64
	// waiting is the requests waiting for capacity
	// (promread.Snapshot.QueuedForCapacity, and the deferred ones where
	// the engine's deferred requests wait for capacity:
	// engine.Status.DeferredIsQueued); deferred those waiting on
	// something else (vLLM: a LoRA budget or a KV transfer; 0 where the
	// server does not say).
	waiting, deferred float64
	// allOutstanding: the client had all C requests outstanding on both
	// sides of the scrape.
	allOutstanding bool
	// inTransit is the client's requests sent less than transitBound ago
	// and without a first chunk: the server may not count them yet.
	inTransit int
	// runningLags: running is the state at the server's last gauge update
	// (SGLang), so a shortfall of it is not evidence of queueing
	// (promread.Snapshot.RunningLags); waiting still is.
	runningLags bool
	// decoding is the streams past their first token; started the slots
	// that have had a first token at least once.
	decoding, started int
	// refused is the client's requests the server had refused at
	// admission so far in the cell (docs/method.md#rejections).
	refused int64
}

// waitingOf is a scrape's requests waiting for capacity and those deferred
// for another reason, as the status rules count them: the engine's
// deferred requests are waiting ones where they wait for capacity
// (engine.Status.DeferredIsQueued).
func waitingOf(s promread.Snapshot, st *engine.Status) (waiting, deferred float64) {
	if st.DeferredIsQueued {
		return s.QueuedForCapacity() + s.WaitingDeferred, 0
	}
	return s.QueuedForCapacity(), s.WaitingDeferred
}

// short says whether the server ran fewer requests than the client had
// outstanding, beyond those just sent: running + inTransit < C while all
// C were outstanding.
func (p poll) short(concurrency int) bool {
	return p.gauges && !p.runningLags && p.allOutstanding && p.running+float64(p.inTransit) < float64(concurrency)
}

// queueing says whether this poll shows requests waiting for capacity.
func (p poll) queueing() bool { return p.gauges && p.waiting > 0 }

// sustained measures how long a property of polls held, weighted by time:
// an interval between two consecutive polls with gauges counts when the
// property held at both of its ends (one poll alone is a moment: a request
// that waits one engine step, a restart read half-way). Observed is the
// time covered by those intervals, held the part of it the property held,
// intervals how many intervals it held in.
type sustained struct {
	observed, held time.Duration
	intervals      int
	last           *poll
	lastHeld       bool
}

// add takes the next poll and whether the property held at it.
func (s *sustained) add(p poll, holds bool) {
	if !p.gauges {
		return
	}
	if s.last != nil {
		d := p.at - s.last.at
		s.observed += d
		if holds && s.lastHeld {
			s.held += d
			s.intervals++
		}
	}
	cp := p
	s.last, s.lastHeld = &cp, holds
}

// share is held ÷ observed (0 when nothing was observed).
func (s sustained) share() float64 {
	if s.observed <= 0 {
		return 0
	}
	return float64(s.held) / float64(s.observed)
}

// windowFindings is what the window's polls show (windowEvidence).
type windowFindings struct {
	// waiting: requests waited for capacity in two polls in a row.
	waiting bool
	// short is the time the server ran fewer than C beyond the requests
	// in transit; of observed.
	short sustained
	// deferred is the most requests seen deferred in a poll.
	deferred float64
	// polls counts the polls with the request gauges.
	polls int
}

// windowEvidence applies the rules of docs/method.md#statuses to the
// window's polls, in order.
func windowEvidence(polls []poll, concurrency int) windowFindings {
	f := windowFindings{waiting: waitedInARow(polls)}
	for _, p := range polls {
		if !p.gauges {
			continue
		}
		f.polls++
		f.short.add(p, p.short(concurrency))
		f.deferred = max(f.deferred, p.deferred)
	}
	return f
}

// waitedInARow says whether requests waited for capacity in two polls in a
// row (polls without the request gauges are skipped): the waiting rule of
// decode and traffic cells alike. One poll alone is a moment — a request
// that waits one engine step — and at pollEvery a moment is seen often.
func waitedInARow(polls []poll) bool {
	var waiting sustained
	for _, p := range polls {
		waiting.add(p, p.queueing())
	}
	return waiting.intervals > 0
}

// shortfall says whether the server ran fewer than C (beyond the requests
// in transit) for a sustained share of the time observed.
func (s sustained) shortfall() bool {
	return s.intervals >= 2 && s.share() >= sustainedShare
}

// waitEvidence is what the steady-state gate and the window saw of the
// server making requests wait (docs/method.md#statuses).
type waitEvidence struct {
	// gateQueued is the gate's own finding: a stable queue, or a timeout
	// with the server making requests wait (gateReason says which).
	gateQueued bool
	gateReason result.CellReason
	// gateNote says the gate timed out with no sign of waiting: a note on
	// a cell measured anyway (warning.GateTimedOut; no code: none).
	gateNote warning.Warning
	// gateWaiting: requests waited for capacity (in two polls in a row)
	// once the gate's conditions had first held (the ramp-up, when C
	// requests arrive at once and are admitted over a few engine steps,
	// does not count).
	gateWaiting bool
	// window is what the window's polls showed.
	window windowFindings
	// preemptions is Δ of the server's preemption counter over the
	// window; -1 unknown.
	preemptions int64
	// gateRefused says the server refused requests at admission
	// throughout the gate's hold, gateRefusal how; rejected is the
	// requests it refused inside the window (docs/method.md#rejections).
	gateRefused bool
	gateRefusal result.CellReason
	rejected    int
	// terms are the engine's names the notes and reasons quote.
	terms *engine.Status
}

// cellStatus decides a measured decode cell's status: queued only when the
// server made requests wait (docs/method.md#statuses), with the evidence in
// the reasons; valid otherwise. The client's own restart gaps lower
// active_avg and give a note, never the queued status; so do deferred
// requests where the engine's deferred requests do not wait for capacity
// (vLLM's wait on a LoRA budget or a KV transfer; engine.Status).
func cellStatus(ev waitEvidence, activeAvg float64, concurrency int) (status vocab.Status, reasons []result.CellReason, notes []warning.Warning) {
	if ev.gateNote.Code != "" {
		notes = append(notes, ev.gateNote)
	}
	if activeAvg < 0.95*float64(concurrency) {
		notes = append(notes, warning.New(warning.RestartGaps, fmt.Sprintf("%.1f of %d streams active on average", activeAvg, concurrency),
			"the client's restart gaps (a finished stream's next request before its first token), not server queueing",
			map[string]float64{warning.FigActiveAvg: Round(activeAvg, 2), warning.FigConcurrency: float64(concurrency)}))
	}
	if ev.window.deferred > 0 {
		notes = append(notes, warning.New(warning.Deferred, "", "", map[string]float64{warning.FigDeferred: ev.window.deferred}).About(ev.terms.Deferred))
	}
	// Refusals say it first: the server turned requests of the cell away,
	// so it did not run C whatever its gauges show
	// (docs/method.md#rejections). Then the first sign of a queue (a
	// stable queue at the gate also shows as waiting requests and a
	// shortfall in the window), and preemptions are added: they are a
	// different way of waiting.
	var why []result.CellReason
	c := float64(concurrency)
	switch {
	case ev.rejected > 0:
		why = append(why, result.CellReason{Code: result.ReasonRefusedWindow,
			Figures: map[string]float64{result.FigRefused: float64(ev.rejected), result.FigConcurrency: c}})
	case ev.gateRefused:
		why = append(why, ev.gateRefusal)
	}
	w := ev.window
	switch {
	case ev.gateQueued:
		why = append(why, ev.gateReason)
	case w.waiting:
		why = append(why, result.CellReason{Code: result.ReasonWaitingWindow})
	case ev.gateWaiting:
		why = append(why, result.CellReason{Code: result.ReasonWaitingHold})
	case w.short.shortfall():
		why = append(why, result.CellReason{Code: result.ReasonShortfall,
			Figures: map[string]float64{result.FigConcurrency: c, result.FigHeldS: w.short.held.Seconds(), result.FigObservedS: w.short.observed.Seconds()}})
	}
	if ev.preemptions > 0 {
		why = append(why, result.CellReason{Code: result.ReasonPreempted,
			Figures: map[string]float64{result.FigPreempted: float64(ev.preemptions)}, Names: map[string]string{result.NameCounter: ev.terms.Preemptions}})
	}
	if len(why) == 0 {
		return vocab.StatusValid, nil, notes
	}
	return vocab.StatusQueued, why, notes
}

// gate is the steady-state gate's state (docs/method.md#steady-state-gate),
// fed one poll at a time by observe: the hold of the steady conditions, a
// stable queue, and what a timeout needs to decide.
type gate struct {
	concurrency int
	hold        time.Duration
	haveHeld    bool          // the conditions hold now (heldSince is set)
	heldSince   time.Duration // since when
	failing     bool          // the conditions fail now, failingSince since when
	failingFrom time.Duration
	everHeld    bool // the conditions have held once: the ramp-up is over
	// A queue: since when requests have waited (queueing), at most how
	// many ran and waited since then.
	queueing         bool
	queueSince       time.Duration
	plateau, waitMax float64
	// waited: requests waited for capacity, in two polls in a row, once
	// the conditions had first held.
	waitedRun sustained
	// evidence measures, over the whole gate, the time the server made
	// requests wait (waiting, or fewer running beyond those in transit).
	evidence sustained
	last     poll
	polls    int
	// Refusals at admission: since when the server has refused requests
	// (refusing), the last poll that saw a new one, and the client's count
	// of them at that poll.
	refusing                   bool
	refusingSince, lastRefusal time.Duration
	refusedSeen                int64
}

// newGate is a gate for C streams and the given hold.
func newGate(concurrency int, hold time.Duration) *gate {
	return &gate{concurrency: concurrency, hold: hold}
}

// gateVerdict is what one poll decided: nothing yet, the steady state
// held, or a stable queue (with its reason).
type gateVerdict int

const (
	gateWaiting gateVerdict = iota
	gateSteady
	gateQueue
	// gateRefused: the server refused requests at admission throughout
	// the hold (docs/method.md#rejections).
	gateRefused
)

// observe feeds the next poll to the gate and says whether it decided.
//
// Steady: the client has had a first token on every stream and the server
// runs all C — counting the requests in transit, which a restart makes
// for a moment — with none waiting for capacity, held for the hold; the
// conditions may fail for up to holdGrace without starting the hold again.
//
// A stable queue: requests wait for capacity in every poll for the hold,
// while the number the server runs stays at its plateau (it does not rise:
// the server is not still admitting the ramp-up) and every request it
// runs has been prefilled once (started ≥ running: a long prompt still in
// its first prefill is the ramp-up, not a queue).
//
// Refusals: the server refused requests at admission, with no pause
// longer than refusalGap, for the hold: it will not run C (a burst
// refused at the ramp-up and admitted on the next try is over within a
// pause, and the gate goes on).
func (g *gate) observe(p poll) gateVerdict {
	g.polls++
	g.last = p
	switch {
	case p.refused > g.refusedSeen:
		if !g.refusing {
			g.refusing, g.refusingSince = true, p.at
		}
		g.lastRefusal, g.refusedSeen = p.at, p.refused
	case g.refusing && p.at-g.lastRefusal > refusalGap:
		g.refusing = false
	}
	c := float64(g.concurrency)
	g.evidence.add(p, p.queueing() || p.short(g.concurrency))
	if g.everHeld {
		g.waitedRun.add(p, p.queueing())
	}
	clientOK := p.started == g.concurrency
	serverOK := !p.gauges || ((p.runningLags || p.running+float64(p.inTransit) >= c) && p.waiting == 0)
	switch {
	case clientOK && serverOK:
		g.failing = false
		if !g.haveHeld {
			g.haveHeld, g.heldSince, g.everHeld = true, p.at, true
		}
	case g.haveHeld:
		if !g.failing {
			g.failing, g.failingFrom = true, p.at
		}
		if p.at-g.failingFrom > holdGrace {
			g.haveHeld, g.failing = false, false
		}
	}
	if g.haveHeld && !g.failing && p.at-g.heldSince >= g.hold {
		return gateSteady
	}
	if g.refusing && p.at-g.refusingSince >= g.hold {
		return gateRefused
	}
	if p.queueing() && p.running > 0 && float64(p.started) >= p.running {
		if !g.queueing || p.running > g.plateau {
			g.queueing, g.queueSince, g.plateau, g.waitMax = true, p.at, p.running, 0
		}
		g.waitMax = max(g.waitMax, p.waiting)
		if p.at-g.queueSince >= g.hold {
			return gateQueue
		}
	} else {
		g.queueing = false
	}
	return gateWaiting
}

// queueReason is the reason of a stable queue: "the server ran 64 of 128
// requests; 64 waited".
func (g *gate) queueReason() result.CellReason {
	return result.CellReason{Code: result.ReasonStableQueue,
		Figures: map[string]float64{result.FigRunning: g.plateau, result.FigConcurrency: float64(g.concurrency), result.FigWaiting: g.waitMax}}
}

// refusalReason is the reason of a gate ended by refusals: "the server
// refused requests at admission throughout the steady-state gate's 3.0s
// (40 refused): it did not run 64".
func (g *gate) refusalReason() result.CellReason {
	return result.CellReason{Code: result.ReasonRefusedGate, Figures: map[string]float64{
		result.FigHeldS: (g.last.at - g.refusingSince).Seconds(), result.FigRefused: float64(g.refusedSeen), result.FigConcurrency: float64(g.concurrency)}}
}

// waited says whether requests waited for capacity (in two polls in a
// row) once the conditions had first held.
func (g *gate) waited() bool { return g.waitedRun.intervals > 0 }

// timedOut is the outcome of a gate whose timeout passed: queued when its
// polls showed the server making requests wait for a sustained share of
// the gate (the ramp-up, when C requests arrive at once, is a few seconds
// of a timeout of 30 s or more); otherwise a note on a cell measured
// anyway, saying why the gate timed out.
func (g *gate) timedOut(timeout time.Duration) gateOutcome {
	p := g.last
	out := gateOutcome{waited: g.waited()}
	ev := g.evidence
	if ev.shortfall() {
		figures := map[string]float64{result.FigTimeoutS: timeout.Round(time.Second).Seconds(), result.FigDecoding: float64(p.decoding),
			result.FigConcurrency: float64(g.concurrency), result.FigHeldS: ev.held.Seconds(), result.FigObservedS: ev.observed.Seconds()}
		if p.gauges {
			figures[result.FigRunning], figures[result.FigWaiting] = p.running, p.waiting
		}
		out.queued = true
		out.reason = result.CellReason{Code: result.ReasonGateTimedOut, Figures: figures}
		return out
	}
	// The note's words: report.WarningText (Meter.worded).
	figures := map[string]float64{warning.FigTimeoutS: timeout.Round(time.Second).Seconds(),
		warning.FigDecoding: float64(p.decoding), warning.FigConcurrency: float64(g.concurrency)}
	if p.gauges {
		figures[warning.FigRunning], figures[warning.FigWaiting] = p.running, p.waiting
	}
	if ev.observed > 0 {
		figures[warning.FigHeldS], figures[warning.FigObservedS] = ev.held.Seconds(), ev.observed.Seconds()
	}
	out.note = warning.New(warning.GateTimedOut, "", "", figures)
	return out
}

// trafficStatus is the status of a measured traffic cell: queued when the
// server refused some of the window's requests at admission
// (docs/method.md#rejections), when it reported waiting requests in two
// polls in a row during the window (waitedInARow, the rule of cellStatus),
// when arrivals found the outstanding cap reached (the client, not the
// server, held them back) or when some of the window's requests had not
// finished by the drain timeout; valid otherwise.
func trafficStatus(polls []poll, capHits, maxOutstanding, unfinished, rejected, launched int) (vocab.Status, []result.CellReason) {
	queued := func(code result.ReasonCode, figures map[string]float64) (vocab.Status, []result.CellReason) {
		return vocab.StatusQueued, []result.CellReason{{Code: code, Figures: figures}}
	}
	switch {
	case rejected > 0:
		return queued(result.ReasonTrafficRefused, map[string]float64{result.FigRefused: float64(rejected), result.FigLaunched: float64(launched)})
	case waitedInARow(polls):
		return queued(result.ReasonWaitedInARow, nil)
	case capHits > 0:
		return queued(result.ReasonCapHits, map[string]float64{result.FigCapHits: float64(capHits), result.FigMaxOutstanding: float64(maxOutstanding)})
	case unfinished > 0:
		return queued(result.ReasonUnfinished, map[string]float64{result.FigUnfinished: float64(unfinished)})
	}
	return vocab.StatusValid, nil
}
