package measure

import (
	"context"
	"errors"
	"time"

	"github.com/slogate/slogate/internal/event"
	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/promread"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/warning"
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

// Decode measures decode cell ref once, the sustained decode of
// docs/method.md#decode: C streams restarted as they finish, each sending
// its body of bodies (by stream, one when the prompt is shared); the
// steady-state gate; a fixed window; the metrics of the window. repeat is
// the run's number for requests.jsonl (0 when the cell runs once);
// crossCheckKV asks for the KV cross-check (docs/method.md#kv-capacity),
// which a cell of one stream takes. A cell that cannot be measured is an
// error cell; the error is the run's end (ctx's cause, a server gone).
func (m *Meter) Decode(ctx context.Context, ref vocab.CellRef, bodies [][]byte, repeat int, crossCheckKV bool) (result.DecodeCell, error) {
	if why := m.awakeCheck(ctx); why != nil {
		return result.DecodeCell{Matrix: ref.MatrixLabel(), Context: ref.Context, Concurrency: ref.Concurrency, Status: vocab.StatusError,
			Reason: m.reasonText([]result.CellReason{*why}), Reasons: []result.CellReason{*why}}, nil
	}
	settled, why, err := m.settleServer(ctx)
	if err != nil {
		return result.DecodeCell{}, err
	}
	if why != "" {
		return result.DecodeCell{Matrix: ref.MatrixLabel(), Context: ref.Context, Concurrency: ref.Concurrency, Status: vocab.StatusError, Reason: why, SettleS: Round(settled.Seconds(), 3)}, nil
	}
	// The server's rejection counter before the cell's first request and
	// after its last (docs/method.md#rejections).
	rejBefore, rejBeforeOK := m.counterBefore(ctx)
	d := m.startStreams(ctx, ref, bodies, repeat)
	defer d.cancel()
	d.cell.SettleS = Round(settled.Seconds(), 3)
	if err := d.awaitSteadyState(); err != nil {
		return d.end(err)
	}
	around, err := d.measureWindow(crossCheckKV && ref.Concurrency == 1)
	if err != nil {
		return d.end(err)
	}
	// Closing the connections aborts the requests (docs/method.md#window).
	if !d.stop() {
		// Streams still running may still be writing their slots' stats:
		// they are not read.
		d.cell.Status = vocab.StatusError
		d.cell.Reasons = []result.CellReason{{Code: result.ReasonStreamsNotStopped, Figures: map[string]float64{result.FigTimeoutS: streamsExitTimeout.Seconds()}}}
		d.cell.Reason = d.m.reasonText(d.cell.Reasons)
		return d.cell, nil
	}
	select {
	case <-d.streams.failed:
		// A stream failed as the window closed: the window is still complete.
	default:
	}
	stats := d.streams.stats()
	d.storeClientMetrics(stats)
	d.storeServerCounters(around)
	d.storeKVCheck()
	var gap []warning.Warning
	d.cell.Rejections, gap = m.cellRejections(ctx, rejBefore, rejBeforeOK,
		rejectionCount{refused: int(d.streams.refused.Load()), unanswered: int(d.streams.unanswered.Load())})
	d.cell.Warnings = append(d.cell.Warnings, gap...)
	var slow []warning.Warning
	d.cell.Polling, slow = d.scrapes.record()
	d.cell.Warnings = append(d.cell.Warnings, slow...)
	d.ev.rejected = stats.rejected
	d.cell.Status, d.cell.Reasons, d.cell.Notes = cellStatus(d.ev, stats.activeAvg, ref.Concurrency)
	d.cell.Reason = ""
	if d.cell.Reasons != nil {
		d.cell.Reason = d.m.reasonText(d.cell.Reasons)
	}
	if judgeMeasurable(&d.cell) {
		d.cell.Reason = d.m.reasonText(d.cell.Reasons)
	}
	d.cell.Warnings, d.cell.Notes = m.worded(d.cell.Warnings), m.worded(d.cell.Notes)
	return d.cell, nil
}

// decodeRun is one decode cell being measured (Meter.Decode): its streams,
// and what its gate, its window and its /metrics scrapes saw.
type decodeRun struct {
	m   *Meter
	ctx context.Context // the run's: its end ends the cell
	ref vocab.CellRef
	// cell is the cell as measured so far.
	cell    result.DecodeCell
	streams *load
	cancel  context.CancelFunc // closes the streams
	ev      waitEvidence
	scrapes scrapeTimes
	kvc     *kvCheck // the KV cross-check (docs/method.md#kv-capacity); nil without
	// finished are the requests the server gave timings for, for the
	// counter cross-check (storeServerCounters).
	finished []finishedRequest
}

// startStreams starts the cell's C streams, restarted as they finish, each
// request recorded with the cell's name and repeat.
func (m *Meter) startStreams(ctx context.Context, ref vocab.CellRef, bodies [][]byte, repeat int) *decodeRun {
	concurrency := ref.Concurrency
	d := &decodeRun{m: m, ctx: ctx, ref: ref, ev: waitEvidence{preemptions: -1, terms: m.Server.Client.Engine().Status()},
		cell: result.DecodeCell{Matrix: ref.MatrixLabel(), Context: ref.Context, Concurrency: concurrency}}
	cellCtx, cancel := context.WithCancel(ctx)
	d.cancel = cancel
	d.streams = newLoad(m.Server.Client, m.Prompts.Path(), bodies, concurrency, firstTokenTimeout(ref.Context, concurrency), m.StreamIdleTimeout)
	d.streams.exact = int64(m.MaxOutput) // DecodeBodies' max_tokens = min_tokens, ignore_eos
	if m.clock != nil {
		d.streams.now = m.clock(d.streams)
	}
	d.streams.record, d.streams.meta = m.record, requestMeta{cell: ref.Name(), phase: vocab.PhaseDecode, repeat: repeat, promptTokens: int64(ref.Context)}
	d.streams.start(cellCtx)
	return d
}

// stop cancels the streams and waits for them; false when they did not
// end in time (their goroutines may still write the slots' stats).
func (d *decodeRun) stop() bool {
	d.cancel()
	if !d.streams.wait(streamsExitTimeout) {
		d.m.warn(warning.New(warning.StreamsNotClosed, "", "",
			map[string]float64{warning.FigTimeoutS: streamsExitTimeout.Seconds()}).About(d.ref.Name()))
		return false
	}
	return true
}

// end stops a cell that could not be measured to its end. A stream's
// failure (streamFailure) makes it an error cell, unless the run is over
// or the server refuses every request or is gone (Meter.trouble); any other
// error (the run's end, the server's exit) is returned as it is.
func (d *decodeRun) end(err error) (result.DecodeCell, error) {
	d.stop()
	var ae asleepError
	if errors.As(err, &ae) {
		d.cell.Status, d.cell.Reasons = vocab.StatusError, []result.CellReason{*ae.why}
		d.cell.Reason = d.m.reasonText(d.cell.Reasons)
		return d.cell, nil
	}
	var sf streamFailure
	if !errors.As(err, &sf) {
		return d.cell, err
	}
	if d.ctx.Err() != nil {
		return d.cell, context.Cause(d.ctx)
	}
	if terr := d.m.trouble(d.ctx, sf.err); terr != nil {
		return d.cell, terr
	}
	d.cell.Status, d.cell.Reason = vocab.StatusError, sf.err.Error()
	if why := d.m.awakeCheck(d.ctx); why != nil { // the sleep aborted the streams
		d.cell.Reasons = []result.CellReason{*why}
		d.cell.Reason = d.m.reasonText(d.cell.Reasons)
	}
	return d.cell, nil
}

// progress tells the Meter the cell's live state.
func (d *decodeRun) progress(stage result.Stage, elapsed time.Duration, tps float64) {
	d.m.progress(event.CellProgress{Cell: d.ref, Stage: stage, Elapsed: elapsed, Window: d.m.Window, TPS: tps,
		Active: int(d.streams.decoding.Load())})
}

// awaitSteadyState waits at the steady-state gate
// (docs/method.md#steady-state-gate; steadyState) and keeps what it found
// for the status rules.
func (d *decodeRun) awaitSteadyState() error {
	g, err := d.m.steadyState(d.ctx, d.streams, d.ref.Concurrency, d.ref, d.progress, &d.scrapes)
	d.ev.gateQueued, d.ev.gateReason, d.ev.gateWaiting, d.ev.gateNote = g.queued, g.reason, g.waited, g.note
	d.ev.gateRefused, d.ev.gateRefusal = g.refused, g.refusal
	return err
}

// metricsAround is /metrics as read on either side of the window; ok when
// both reads succeeded.
type metricsAround struct {
	before, after     promread.Snapshot
	beforeAt, afterAt time.Time
	ok                bool
}

// measureWindow runs the fixed window (docs/method.md#window): the streams'
// tokens count inside it, /metrics is read at both ends and polled every
// pollEvery for the status rules (and, with crossCheckKV, for the KV
// cross-check), the progress told twice a second. A stream's failure is a
// streamFailure; the run's end and the server's exit end it as they are.
func (d *decodeRun) measureWindow(crossCheckKV bool) (metricsAround, error) {
	m, streams := d.m, d.streams
	var a metricsAround
	var beforeErr error
	a.before, a.beforeAt, beforeErr = m.Server.Client.Metrics(d.ctx)
	streams.windowStart.Store(streams.now())
	windowOpened := time.Now()
	if crossCheckKV {
		d.kvc = &kvCheck{context: d.ref.Context, terms: m.Server.Client.Engine().Status()}
	}
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	endAt := time.NewTimer(m.Window)
	defer endAt.Stop()
	lastProgress := time.Time{}
	var polls []poll // the window's, for the status rules
measuring:
	for {
		select {
		case <-d.ctx.Done():
			return a, context.Cause(d.ctx)
		case <-streams.failed:
			return a, streamFailure{streams.failErr}
		case <-endAt.C:
			break measuring
		case <-tick.C:
			if err := m.Server.Exited(); err != nil {
				return a, err
			}
			if err := d.poll(&polls); err != nil {
				return a, err
			}
			if time.Since(lastProgress) >= 500*time.Millisecond {
				el := time.Since(windowOpened)
				d.progress(result.StageMeasuring, el, float64(streams.windowTokens.Load())/el.Seconds())
				lastProgress = time.Now()
			}
		}
	}
	streams.windowEnd.Store(streams.now())
	d.ev.window = windowEvidence(polls, d.ref.Concurrency)
	var afterErr error
	a.after, a.afterAt, afterErr = m.Server.Client.Metrics(d.ctx)
	a.ok = beforeErr == nil && afterErr == nil
	return a, nil
}

// poll takes one of the window's polls (takePoll) onto polls, and feeds
// its scrape to the KV cross-check with the tokens the stream had on
// either side of it; an asleepError when the scrape shows the server's
// engine asleep.
func (d *decodeRun) poll(polls *[]poll) error {
	streams := d.streams
	complBefore := streams.completion.Load()
	p, s, err := d.m.takePoll(d.ctx, streams, d.ref.Concurrency, &d.scrapes)
	if why := d.m.asleep(s); err == nil && why != nil {
		return asleepError{why}
	}
	*polls = append(*polls, p)
	if err == nil && d.kvc != nil {
		d.kvc.sample(s, complBefore, streams.completion.Load(), streams.decoding.Load())
	}
	return nil
}

// storeClientMetrics stores the window's metrics as the client measured
// them (docs/method.md#metrics).
func (d *decodeRun) storeClientMetrics(stats windowStats) {
	cell := &d.cell
	cell.MeasuredS = Round(stats.measuredS, 3)
	cell.OutputTokens = int64(stats.tokens + 0.5)
	cell.TotalTPS = Round(stats.tokens/stats.measuredS, 1)
	cell.PerRequestTPS = Round(stats.perRequestTPS, 1)
	cell.TTFTMs, cell.TTFTMsP90, cell.TTFTMsP99 = Round(stats.ttft[0], 1), Round(stats.ttft[1], 1), Round(stats.ttft[2], 1)
	cell.TBTMs, cell.TBTMsP90, cell.TBTMsP99 = Round(stats.tbt[0], 3), Round(stats.tbt[1], 3), Round(stats.tbt[2], 3)
	for _, dist := range stats.dists {
		storeDistribution(vocab.PhaseDecode, dist, d.m.Percentiles, func(m metric.Metric, v float64) { cell.SetValue(m, v) })
	}
	if len(stats.serverTPS) > 0 {
		storeServerPerRequestTPS(cell, median(stats.serverTPS), result.ServerRateTimings)
	}
	d.finished = stats.finished
	cell.ActiveAvg = Round(stats.activeAvg, 2)
	cell.Completed = stats.completed
	cell.Rejected = stats.rejected
	cell.TokenSource = stats.source
}

// storeServerCounters stores what the server's counters say of the window
// (server_total_tps, the speculative acceptance, the preemptions, which
// the status rules weigh too), with a warning where server_total_tps
// disagrees with total_tps, where speculative decoding did not run
// although the server block asks for it, and where /metrics could not be
// read around the window.
func (d *decodeRun) storeServerCounters(a metricsAround) {
	cell, before, after := &d.cell, a.before, a.after
	if !a.ok {
		cell.Warnings = append(cell.Warnings, warning.New(warning.NoMetrics, "no /metrics around the window", "server_total_tps not measured", nil))
		return
	}
	if before.HasGenerationTokens && after.HasGenerationTokens && a.afterAt.After(a.beforeAt) {
		storeServerTotalTPS(cell, a)
	}
	storeServerLatency(cell, before, after)
	if cell.ServerPerRequestTPS == nil {
		if v, ok := after.DecodeRateSince(before); ok {
			storeServerPerRequestTPS(cell, v, result.ServerRateHistogram)
		}
	}
	if before.HasSpeculative && after.HasSpeculative {
		storeSpeculative(cell, before, after)
	}
	if after.HasSpecAcceptGauges && !after.HasSpeculative {
		storeSpeculativeGauges(cell, after)
	}
	ran := after.HasSpeculative && after.SpeculativeDrafts != before.SpeculativeDrafts ||
		after.HasSpecAcceptGauges && after.SpecAcceptLength > 0
	if d.m.Spec.Speculative != nil && !ran {
		cell.Warnings = append(cell.Warnings, warning.New(warning.SpeculativeIdle, d.m.Server.Client.SpeculativeIdle(), "", nil))
	}
	// A counter written from its first preemption on (SGLang's) that
	// appears during the window counted from 0.
	if after.HasPreemptions && (before.HasPreemptions || before.PreemptionsFromZero) {
		n := int64(max(after.Preemptions-before.Preemptions, 0))
		cell.Preemptions, d.ev.preemptions = &n, n
	}
	if before.HasFinishedTokens && after.HasFinishedTokens && len(d.finished) > 0 {
		if w, bad := counterCrossCheck(after.FinishedTokens-before.FinishedTokens, a.beforeAt, a.afterAt, d.streams.origin, d.finished); bad {
			cell.Warnings = append(cell.Warnings, w)
		}
	}
}

// serverRateTolerance is how far the server's own per-request rate may be
// from per_request_tps before the cell warns: the two clocks time the same
// tokens, the server's without the network and the client's reading.
const serverRateTolerance = 0.10

// storeServerPerRequestTPS stores the server's own per-request rate v,
// read from source (result.ServerRateTimings, ServerRateHistogram), with
// a warning when it differs from per_request_tps by more than
// serverRateTolerance (docs/llamacpp.md#server-timings,
// docs/method.md#unmeasurable).
func storeServerPerRequestTPS(cell *result.DecodeCell, v float64, source string) {
	v = Round(v, 1)
	cell.ServerPerRequestTPS, cell.ServerRateSource = &v, source
	if cell.PerRequestTPS <= 0 {
		return
	}
	if diff := (v - cell.PerRequestTPS) / cell.PerRequestTPS; diff > serverRateTolerance || diff < -serverRateTolerance {
		cell.Warnings = append(cell.Warnings, warning.New(warning.ServerRequestTPSGap, "", "",
			map[string]float64{warning.FigServerPerRequestTPS: v, warning.FigPerRequestTPS: cell.PerRequestTPS, warning.FigGap: diff}).About(source))
	}
}

// counterMargin is how near a scrape a request's end may be without the
// cross-check placing it on either side: the server adds a request's
// tokens when it releases the request, a moment before the client reads
// the stream's end, and a scrape's instant is its middle.
const counterMargin = 100 * time.Millisecond

// counterCrossCheck compares the change of the server's finished-tokens
// counter between the scrapes at before and after with the predicted_n of
// the requests that finished between them (ends in ns since origin): the
// counter must lie between the sum of those that surely finished between
// them (more than counterMargin inside) and the sum of those that may have
// (within counterMargin outside); bad when it does not, with the warning.
func counterCrossCheck(delta float64, before, after, origin time.Time, finished []finishedRequest) (warning.Warning, bool) {
	var sure, maybe int64
	for _, f := range finished {
		end := origin.Add(time.Duration(f.end))
		if end.After(before.Add(counterMargin)) && end.Before(after.Add(-counterMargin)) {
			sure += f.predicted
		}
		if end.After(before.Add(-counterMargin)) && end.Before(after.Add(counterMargin)) {
			maybe += f.predicted
		}
	}
	if delta >= float64(sure) && delta <= float64(maybe) {
		return warning.Warning{}, false
	}
	return warning.New(warning.ServerCounterGap, "", "", map[string]float64{warning.FigCounterTokens: delta, warning.FigFinishedTokens: float64(sure), warning.FigUncertainTokens: float64(maybe - sure)}), true
}

// storeServerTotalTPS stores server_total_tps, the server's generation
// tokens over the time between the two reads, with a warning when it
// differs from total_tps by more than 2 %.
func storeServerTotalTPS(cell *result.DecodeCell, a metricsAround) {
	v := Round((a.after.GenerationTokens-a.before.GenerationTokens)/a.afterAt.Sub(a.beforeAt).Seconds(), 1)
	cell.ServerTotalTPS = &v
	if cell.TotalTPS > 0 {
		if diff := (v - cell.TotalTPS) / cell.TotalTPS; diff > 0.02 || diff < -0.02 {
			cell.Warnings = append(cell.Warnings, warning.New(warning.ServerTPSGap, "", "", map[string]float64{warning.FigServerTotalTPS: v, warning.FigTotalTPS: cell.TotalTPS, warning.FigGap: diff}))
		}
	}
}

// storeServerLatency stores the means of the server's request latency
// histograms over the window, in ms (docs/method.md#server-latency).
func storeServerLatency(cell *result.DecodeCell, before, after promread.Snapshot) {
	for _, h := range []struct {
		dst         **float64
		now, before promread.SumCount
	}{
		{&cell.ServerTTFTMsMean, after.TTFT, before.TTFT},
		{&cell.ServerITLMsMean, after.ITL, before.ITL},
		{&cell.ServerE2EMsMean, after.E2E, before.E2E},
	} {
		if mean, ok := h.now.MeanSince(h.before); ok {
			v := Round(mean*1000, 3)
			*h.dst = &v
		}
	}
}

// storeSpeculativeGauges stores the acceptance SGLang's gauges of the
// accept length and rate state at the window's end:
// set at SGLang's last decode log before it (docs/sglang.md#metric-cadence),
// so acceptance near the end of the window, not summed over it as vLLM's
// counters are.
func storeSpeculativeGauges(cell *result.DecodeCell, after promread.Snapshot) {
	length, rate := Round(after.SpecAcceptLength, 3), Round(after.SpecAcceptRate, 4)
	if length > 0 {
		cell.SpeculativeAcceptLen, cell.SpeculativeAcceptRate = &length, &rate
	}
}

// storeSpeculative stores the speculative decoding's acceptance over the
// window from vLLM's spec_decode counters: the accepted share of the draft
// tokens, and the mean acceptance length (one token plus the accepted per
// draft).
func storeSpeculative(cell *result.DecodeCell, before, after promread.Snapshot) {
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

// storeKVCheck stores the KV cross-check's finding (docs/method.md#kv-capacity)
// when the cell took it, and its warning when the capacity is suspect.
func (d *decodeRun) storeKVCheck() {
	if d.kvc == nil {
		return
	}
	var w warning.Warning
	d.cell.KVUsageCheck, w = d.kvc.result(d.ref.Name(), d.m.KVTokens, d.m.KVSource)
	if w.Code != "" {
		d.cell.Warnings = append(d.cell.Warnings, w)
		d.m.note(event.Warned{Warning: w})
	}
}

// gateOutcome is what the steady-state gate found (steadyState).
type gateOutcome struct {
	// queued is set, with reason, when the server made requests wait at
	// the gate: a stable queue, or a timeout with the polls showing it.
	queued bool
	reason result.CellReason
	// waited: the server reported waiting requests once the conditions had
	// first held (docs/method.md#statuses).
	waited bool
	// note says the gate timed out with no sign of the server making
	// requests wait; the cell is measured anyway (warning.GateTimedOut;
	// no code: no note).
	note warning.Warning
	// refused is set, with refusal, when the server refused requests at
	// admission throughout the hold (docs/method.md#rejections): the cell
	// is measured at once, at what the server runs.
	refused bool
	refusal result.CellReason
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
		p, s, err := m.takePoll(ctx, streams, concurrency, scrapes)
		if why := m.asleep(s); err == nil && why != nil {
			return g, asleepError{why}
		}
		switch gt.observe(p) {
		case gateSteady:
			return gateOutcome{waited: gt.waited()}, nil
		case gateQueue:
			return gateOutcome{queued: true, reason: gt.queueReason(), waited: gt.waited()}, nil
		case gateRefused:
			return gateOutcome{refused: true, refusal: gt.refusalReason(), waited: gt.waited()}, nil
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
	p := poll{at: sinceOrigin, decoding: int(streams.decoding.Load()), started: int(streams.started.Load()), refused: streams.refused.Load()}
	if err == nil && s.HasRequests {
		p.gauges = true
		p.running = s.Running
		p.waiting, p.deferred = waitingOf(s, m.Server.Client.Engine().Status())
		p.runningLags = s.RunningLags
		p.allOutstanding = outBefore == c && streams.outstanding.Load() == c
		p.inTransit = streams.inTransit(int64(sinceOrigin), transitBound)
	}
	return p, s, err
}

// streamFailure is a stream's error surfacing from the steady-state wait:
// it makes the cell an error, unless the server itself is gone.
type streamFailure struct{ err error }

func (s streamFailure) Error() string { return s.err.Error() }
