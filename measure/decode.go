package measure

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/slogate/slogate/metric"
	"github.com/slogate/slogate/promread"
	"github.com/slogate/slogate/result"
	"github.com/slogate/slogate/vocab"
)

// Timeouts of the measurement method. Waits that depend on the amount of
// prefill work scale with it at an assumed slow prefill rate.
const (
	slowPrefillRate   = 2000.0  // tok/s assumed when bounding a first-token wait
	steadyPrefillRate = 10000.0 // tok/s: the steady-state timeout grows by C×ctx at this rate
	steadyMax         = 30 * time.Minute
)

// Variables so tests can shorten them: steadyBase is the steady-state
// gate's timeout before the hold and the prefill work are added;
// streamsExitTimeout bounds the wait for a cell's streams to end once
// cancelled.
var (
	steadyBase         = 30 * time.Second
	streamsExitTimeout = 10 * time.Second
)

// speculativeDidNotRun is the warning of a decode cell whose server has a
// speculative block but whose vllm:spec_decode_num_drafts_total did not
// move during the window: vLLM switches speculation off per request for
// some sampling settings (docs/method.md#workload).
const speculativeDidNotRun = "speculative decoding did not run in this cell (vllm:spec_decode_num_drafts_total did not move): check the server's --speculative-config and its log"

// Decode measures decode cell ref once, the sustained decode of
// docs/method.md#decode: C streams restarted as they finish, each sending
// its body of bodies (by stream, one when the prompt is shared); the
// steady-state gate; a fixed window; the metrics of the window. repeat is
// the run's number for requests.jsonl (0 when the cell runs once);
// crossCheckKV asks for the KV cross-check (docs/method.md#kv-capacity),
// which a cell of one stream takes. A cell that cannot be measured is an
// error cell; the error is the run's end (ctx's cause, a server gone).
func (m *Meter) Decode(ctx context.Context, ref vocab.CellRef, bodies [][]byte, repeat int, crossCheckKV bool) (result.DecodeCell, error) {
	concurrency := ref.Concurrency
	cell := result.DecodeCell{Matrix: ref.MatrixLabel(), Context: ref.Context, Concurrency: concurrency}
	window := m.Window
	cellCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	streams := newLoad(m.Server.Client, m.Prompts.Path(), bodies, concurrency, firstTokenTimeout(ref.Context, concurrency), m.StreamIdleTimeout)
	if m.clock != nil {
		streams.now = m.clock(streams)
	}
	streams.record, streams.meta = m.record, requestMeta{cell: ref.Name(), phase: vocab.PhaseDecode, repeat: repeat, promptTokens: int64(ref.Context)}
	streams.start(cellCtx)
	// stop cancels the streams and waits for them; false when they did not
	// end in time (their goroutines may still write the slots' stats).
	stop := func() bool {
		cancel()
		if !streams.wait(streamsExitTimeout) {
			m.warn(fmt.Sprintf("%s: streams did not close within %v", ref.Name(), streamsExitTimeout))
			return false
		}
		return true
	}
	fail := func(err error) (result.DecodeCell, error) {
		stop()
		if ctx.Err() != nil {
			return cell, context.Cause(ctx)
		}
		if terr := m.trouble(ctx, err); terr != nil {
			return cell, terr
		}
		cell.Status, cell.Reason = vocab.StatusError, err.Error()
		return cell, nil
	}
	progress := func(stage result.Stage, elapsed time.Duration, tps float64) {
		m.progress(Progress{Cell: ref, Stage: stage, Elapsed: elapsed, Window: window, TPS: tps,
			Active: int(streams.decoding.Load())})
	}

	// The steady-state gate (docs/method.md#steady-state-gate).
	ev := waitEvidence{preemptions: -1}
	var scrapes scrapeTimes
	g, err := m.steadyState(ctx, streams, concurrency, ref, progress, &scrapes)
	ev.gateQueued, ev.gateReason, ev.gateWaiting, ev.gateNote = g.queued, g.reason, g.waited, g.note
	var sf streamFailure
	switch {
	case errors.As(err, &sf):
		return fail(sf.err)
	case err != nil:
		stop()
		return cell, err
	}

	// The window (docs/method.md#window).
	before, beforeAt, beforeErr := m.Server.Client.Metrics(ctx)
	windowStart := streams.now()
	streams.windowStart.Store(windowStart)
	windowOpened := time.Now()
	var kvc *kvCheck // the KV cross-check (docs/method.md#kv-capacity)
	if concurrency == 1 && crossCheckKV {
		kvc = &kvCheck{context: ref.Context}
	}
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	endAt := time.NewTimer(window)
	defer endAt.Stop()
	lastProgress := time.Time{}
	var polls []poll // the window's, for the status rules
measuring:
	for {
		select {
		case <-ctx.Done():
			stop()
			return cell, context.Cause(ctx)
		case <-streams.failed:
			return fail(streams.failErr)
		case <-endAt.C:
			break measuring
		case <-tick.C:
			if err := m.Server.Exited(); err != nil {
				stop()
				return cell, err
			}
			complBefore := streams.completion.Load()
			p, s, err := m.takePoll(ctx, streams, concurrency, &scrapes)
			polls = append(polls, p)
			if err == nil && kvc != nil {
				kvc.sample(s, complBefore, streams.completion.Load(), streams.decoding.Load())
			}
			if time.Since(lastProgress) >= 500*time.Millisecond {
				el := time.Since(windowOpened)
				progress(result.StageMeasuring, el, float64(streams.windowTokens.Load())/el.Seconds())
				lastProgress = time.Now()
			}
		}
	}
	windowEnd := streams.now()
	streams.windowEnd.Store(windowEnd)
	ev.window = windowEvidence(polls, concurrency)
	after, afterAt, afterErr := m.Server.Client.Metrics(ctx)
	// Closing the connections aborts the requests (docs/method.md#window).
	if !stop() {
		// Streams still running may still be writing their slots' stats:
		// they are not read.
		cell.Status, cell.Reason = vocab.StatusError, fmt.Sprintf("streams did not stop within %v", streamsExitTimeout)
		return cell, nil
	}
	select {
	case <-streams.failed:
		// A stream failed as the window closed: the window is still complete.
	default:
	}

	stats := streams.stats()
	cell.MeasuredS = Round(stats.measuredS, 3)
	cell.OutputTokens = int64(stats.tokens + 0.5)
	cell.TotalTPS = Round(stats.tokens/stats.measuredS, 1)
	cell.PerRequestTPS = Round(stats.perRequestTPS, 1)
	cell.TTFTMs, cell.TTFTMsP90, cell.TTFTMsP99 = Round(stats.ttft[0], 1), Round(stats.ttft[1], 1), Round(stats.ttft[2], 1)
	cell.TBTMs, cell.TBTMsP90, cell.TBTMsP99 = Round(stats.tbt[0], 3), Round(stats.tbt[1], 3), Round(stats.tbt[2], 3)
	for _, d := range stats.dists {
		storeDistribution(vocab.PhaseDecode, d, m.Percentiles, func(m metric.Metric, v float64) { cell.SetValue(m, v) })
	}
	cell.ActiveAvg = Round(stats.activeAvg, 2)
	cell.Completed = stats.completed
	cell.TokenSource = stats.source
	if beforeErr == nil && afterErr == nil && before.HasGenerationTokens && after.HasGenerationTokens && afterAt.After(beforeAt) {
		v := Round((after.GenerationTokens-before.GenerationTokens)/afterAt.Sub(beforeAt).Seconds(), 1)
		cell.ServerTotalTPS = &v
		if cell.TotalTPS > 0 {
			if d := (v - cell.TotalTPS) / cell.TotalTPS; d > 0.02 || d < -0.02 {
				cell.Warnings = append(cell.Warnings, fmt.Sprintf("server_total_tps %.1f differs from total_tps %.1f by %+.1f%%", v, cell.TotalTPS, d*100))
			}
		}
	}
	if beforeErr == nil && afterErr == nil && before.HasSpeculative && after.HasSpeculative {
		drafts := after.SpeculativeDrafts - before.SpeculativeDrafts
		draftTokens := after.SpeculativeDraftTokens - before.SpeculativeDraftTokens
		accepted := after.SpeculativeAcceptedTokens - before.SpeculativeAcceptedTokens
		if draftTokens > 0 {
			v := Round(accepted/draftTokens, 4)
			cell.SpeculativeAcceptRate = &v
		}
		if drafts > 0 {
			v := Round(1+accepted/drafts, 3)
			cell.SpeculativeAcceptLen = &v
		}
	}
	if beforeErr == nil && afterErr == nil && m.Spec.Speculative != nil &&
		(!after.HasSpeculative || after.SpeculativeDrafts == before.SpeculativeDrafts) {
		cell.Warnings = append(cell.Warnings, speculativeDidNotRun)
	}
	if beforeErr == nil && afterErr == nil && before.HasPreemptions && after.HasPreemptions {
		n := int64(max(after.Preemptions-before.Preemptions, 0))
		cell.Preemptions, ev.preemptions = &n, n
	}
	if beforeErr != nil || afterErr != nil {
		cell.Warnings = append(cell.Warnings, "no /metrics around the window: server_total_tps not measured")
	}
	if kvc != nil {
		var warning string
		cell.KVUsageCheck, warning = kvc.result(ref.Name(), m.KVTokens, m.KVSource)
		if warning != "" {
			cell.Warnings = append(cell.Warnings, warning)
			m.logf("warning: %s", warning)
		}
	}
	var slow string
	if cell.Polling, slow = scrapes.record(); slow != "" {
		cell.Warnings = append(cell.Warnings, slow)
	}
	cell.Status, cell.Reason, cell.Notes = cellStatus(ev, stats.activeAvg, concurrency)
	return cell, nil
}

// gateOutcome is what the steady-state gate found (steadyState).
type gateOutcome struct {
	// queued is set, with reason, when the server made requests wait at
	// the gate: a stable queue, or a timeout with the polls showing it.
	queued bool
	reason string
	// waited: the server reported waiting requests once the conditions had
	// first held (docs/method.md#statuses).
	waited bool
	// note says the gate timed out with no sign of the server making
	// requests wait; the cell is measured anyway.
	note string
}

// steadyState waits for docs/method.md#steady-state-gate, polling
// /metrics every pollEvery and handing each poll to a gate (status.go):
// the steady state held, a stable queue (queued, with why), or the timeout
// (queued when the gate's polls showed the server making requests wait,
// else a note). A stream failure returns its error.
func (m *Meter) steadyState(ctx context.Context, streams *load, concurrency int, ref vocab.CellRef, progress func(result.Stage, time.Duration, float64), scrapes *scrapeTimes) (g gateOutcome, err error) {
	hold := m.SteadyHold
	timeout := steadyBase + hold + time.Duration(float64(concurrency)*float64(ref.Context)/steadyPrefillRate*float64(time.Second))
	timeout = min(timeout, steadyMax)
	start := time.Now()
	deadline := start.Add(timeout)
	gt := newGate(concurrency, hold)
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return g, context.Cause(ctx)
		case <-streams.failed:
			return g, streamFailure{streams.failErr}
		case <-tick.C:
		}
		if err := m.Server.Exited(); err != nil {
			return g, err
		}
		p, _, _ := m.takePoll(ctx, streams, concurrency, scrapes)
		switch gt.observe(p) {
		case gateSteady:
			return gateOutcome{waited: gt.waited()}, nil
		case gateQueue:
			return gateOutcome{queued: true, reason: gt.queueReason(), waited: gt.waited()}, nil
		}
		if time.Now().After(deadline) {
			return gt.timedOut(timeout), nil
		}
		progress(result.StageWarmUp, time.Since(start), 0)
	}
}

// takePoll reads /metrics and what the client has at that moment (the
// status rules' input, docs/method.md#statuses); the poll's time is the
// middle of the scrape, since the streams' origin. The snapshot and the
// error are the scrape's; how long it took goes to scrapes.
func (m *Meter) takePoll(ctx context.Context, streams *load, concurrency int, scrapes *scrapeTimes) (poll, promread.Snapshot, error) {
	c := int64(concurrency)
	outBefore := streams.outstanding.Load()
	s, at, took, err := m.Server.Client.TimedMetrics(ctx)
	scrapes.add(took)
	sinceOrigin := at.Sub(streams.origin)
	p := poll{at: sinceOrigin, decoding: int(streams.decoding.Load()), started: int(streams.started.Load())}
	if err == nil && s.HasRequests {
		p.gauges = true
		p.running, p.waiting, p.deferred = s.Running, s.QueuedForCapacity(), s.WaitingDeferred
		p.allOutstanding = outBefore == c && streams.outstanding.Load() == c
		p.inTransit = streams.inTransit(int64(sinceOrigin), transitBound)
	}
	return p, s, err
}

// streamFailure is a stream's error surfacing from the steady-state wait:
// it makes the cell an error, unless the server itself is gone.
type streamFailure struct{ err error }

func (s streamFailure) Error() string { return s.err.Error() }
