package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync/atomic"
	"time"

	"github.com/slogate/slogate/plan"
	"github.com/slogate/slogate/result"
	"github.com/slogate/slogate/runner/sse"
)

// Timeouts of the measurement method. Waits that depend on the amount of
// prefill work scale with it at an assumed slow prefill rate.
const (
	slowPrefillRate    = 2000.0 // tok/s assumed when bounding a first-token wait
	steadyBase         = 30 * time.Second
	steadyPrefillRate  = 10000.0 // tok/s: the steady-state timeout grows by C×ctx at this rate
	steadyMax          = 30 * time.Minute
	pollEvery          = 250 * time.Millisecond
	streamsExitTimeout = 10 * time.Second
)

// firstTokenTimeout bounds the wait for the first chunk of a prompt of n
// tokens sent together with `others` more: 2 min + their prefill at a slow
// 2,000 tok/s for a cold prompt (1M tokens: about 10 min) and a tenth of
// that per extra stream (warm prompts that only wait their turn), at most
// 30 min.
func firstTokenTimeout(n, others int) time.Duration {
	work := float64(n) * (1 + float64(others)/10)
	return min(2*time.Minute+time.Duration(work/slowPrefillRate*float64(time.Second)), 30*time.Minute)
}

// prefill sends the cold request for a context: a prompt the server has not
// seen (a fresh cache_salt), max_tokens 1; ttft = time to the first chunk.
// It also warms the prompt cache for the decode cells that use the same
// prompt and salt. Repeats use fresh salts; the last one is the warm one.
func (r *run) prefill(ctx context.Context, ctxLen int, salt string, record bool) (result.PrefillCell, error) {
	ref := result.CellRef{Phase: result.PhasePrefill, Context: ctxLen}
	if record {
		r.obs.CellStart(ref)
	}
	start := time.Now()
	n := ctxLen
	if r.mml > 0 && n > r.mml-1 {
		n = r.mml - 1
	}
	if r.chat {
		n = r.prompt.tokens // calibrated (step)
	}
	repeat := 1
	if record {
		repeat = max(r.measure().Repeat, 1)
	}
	var runs []result.PrefillCell
	for i := 0; i < repeat; i++ {
		s := salt
		if i < repeat-1 {
			s = fmt.Sprintf("%s-cold%d", salt, i)
		}
		body := r.requestBody(n, 1, 0, s)
		r.obs.Progress(Progress{Cell: ref, Phase: "prefill", CellsDone: r.done, Cells: r.total, ETA: r.eta()})
		ttft, err := r.coldRequest(ctx, body, n)
		c := result.PrefillCell{Context: ctxLen, Status: result.StatusValid}
		if err != nil {
			if ctx.Err() != nil {
				return c, context.Cause(ctx)
			}
			if terr := r.serverTrouble(ctx); terr != nil {
				return c, terr
			}
			c.Status, c.Reason = result.StatusError, err.Error()
		} else {
			c.TTFTMs = round(ttft.Seconds()*1000, 1)
			c.TPS = round(float64(n)/ttft.Seconds(), 1)
		}
		runs = append(runs, c)
	}
	c := combinePrefill(runs)
	c.ElapsedS = round(time.Since(start).Seconds(), 2)
	if !record && c.Status == result.StatusError {
		r.warn(fmt.Sprintf("cache warm-up request at %s failed: %s", result.FormatTokens(ctxLen), c.Reason))
	}
	return c, nil
}

// coldRequest sends one request and returns its time to the first chunk,
// reading the stream to its end.
func (r *run) coldRequest(ctx context.Context, body []byte, n int) (time.Duration, error) {
	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	firstTO := firstTokenTimeout(n, 0)
	var limit atomic.Int64
	limit.Store(int64(firstTO))
	timer := time.AfterFunc(firstTO, func() { cancel(errStalled{time.Duration(limit.Load())}) })
	defer timer.Stop()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, r.c.base+r.genPath(), bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	r.c.authorize(req)
	t0 := time.Now()
	resp, err := r.c.http.Do(req)
	if err != nil {
		return 0, streamError(ctx, rctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 2048))
		return 0, fmt.Errorf("POST %s answered HTTP %d: %s", r.genPath(), resp.StatusCode, snippet(b))
	}
	rd := sse.NewReader(resp.Body, 16<<10)
	var ttft time.Duration
	for {
		ch, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, streamError(ctx, rctx, err)
		}
		limit.Store(int64(r.cfg.StreamIdleTimeout))
		timer.Reset(r.cfg.StreamIdleTimeout)
		if ttft == 0 && ch.Choices > 0 {
			ttft = time.Since(t0)
		}
	}
	if ttft == 0 {
		return 0, fmt.Errorf("the stream ended without a token")
	}
	return ttft, nil
}

// decode measures one decode cell, repeat times, or skips it as over capacity.
func (r *run) decode(ctx context.Context, ref result.CellRef, body []byte) (result.DecodeCell, error) {
	r.obs.CellStart(ref)
	start := time.Now()
	m := r.measure()
	base := result.DecodeCell{Matrix: ref.MatrixLabel(), Context: ref.Context, Concurrency: ref.Concurrency}
	if plan.OverCapacity(ref.Concurrency, ref.Context, m.MaxOutput, r.kv) {
		c := base
		c.Status = result.StatusOverCapacity
		c.Reason = fmt.Sprintf("%d × (%d + %d) = %d tokens > KV cache %d tokens", ref.Concurrency, ref.Context, m.MaxOutput,
			int64(ref.Concurrency)*int64(ref.Context+m.MaxOutput), r.kv)
		return c, nil
	}
	if r.mml > 0 && ref.Context+m.MaxOutput > r.mml {
		c := base
		c.Status = result.StatusError
		c.Reason = fmt.Sprintf("context %d + max_output %d exceeds max_model_len %d", ref.Context, m.MaxOutput, r.mml)
		c.ElapsedS = round(time.Since(start).Seconds(), 2)
		return c, nil
	}
	var runs []result.DecodeCell
	for i := 0; i < max(m.Repeat, 1); i++ {
		c, err := r.decodeOnce(ctx, ref, body)
		if err != nil {
			return c, err
		}
		runs = append(runs, c)
		if c.Status == result.StatusError {
			break
		}
	}
	c := combineDecode(runs)
	c.Matrix, c.Context, c.Concurrency = base.Matrix, base.Context, base.Concurrency
	c.ElapsedS = round(time.Since(start).Seconds(), 2)
	return c, nil
}

// decodeOnce is the sustained decode of docs/method.md#decode: C streams restarted as they
// finish; the steady-state gate; a fixed window; the metrics of the window.
func (r *run) decodeOnce(ctx context.Context, ref result.CellRef, body []byte) (result.DecodeCell, error) {
	conc := ref.Concurrency
	cell := result.DecodeCell{Matrix: ref.MatrixLabel(), Context: ref.Context, Concurrency: conc}
	window := r.window()
	cellCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	ld := newLoad(r.c, r.genPath(), body, conc, firstTokenTimeout(ref.Context, conc), r.cfg.StreamIdleTimeout)
	ld.start(cellCtx)
	stop := func() {
		cancel()
		if !ld.wait(streamsExitTimeout) {
			r.warn(fmt.Sprintf("%s: streams did not close within %v", ref.Name(), streamsExitTimeout))
		}
	}
	fail := func(err error) (result.DecodeCell, error) {
		stop()
		if ctx.Err() != nil {
			return cell, context.Cause(ctx)
		}
		if terr := r.serverTrouble(ctx); terr != nil {
			return cell, terr
		}
		cell.Status, cell.Reason = result.StatusError, err.Error()
		return cell, nil
	}
	progress := func(phase string, elapsed time.Duration, tps float64) {
		r.obs.Progress(Progress{Cell: ref, Phase: phase, Elapsed: elapsed, Window: window, TPS: tps,
			Active: int(ld.decoding.Load()), CellsDone: r.done, Cells: r.total, ETA: r.eta()})
	}

	// Steady state (step 3).
	queued, reason, err := r.steadyState(ctx, ld, conc, ref, progress)
	var sf streamFailure
	switch {
	case errors.As(err, &sf):
		return fail(sf.err)
	case err != nil:
		stop()
		return cell, err
	}

	// The window (step 4).
	m0, t0, m0err := r.c.metrics(ctx)
	ws := ld.now()
	ld.ws.Store(ws)
	winStart := time.Now()
	sawWaiting := false
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	endAt := time.NewTimer(window)
	defer endAt.Stop()
	lastProgress := time.Time{}
measuring:
	for {
		select {
		case <-ctx.Done():
			stop()
			return cell, context.Cause(ctx)
		case <-ld.failed:
			return fail(ld.failErr)
		case <-endAt.C:
			break measuring
		case <-tick.C:
			if err := r.procExited(); err != nil {
				stop()
				return cell, err
			}
			if s, _, err := r.c.metrics(ctx); err == nil && s.HasRequests && s.Waiting > 0 {
				sawWaiting = true
			}
			if time.Since(lastProgress) >= 500*time.Millisecond {
				el := time.Since(winStart)
				progress("measuring", el, float64(ld.winTok.Load())/el.Seconds())
				lastProgress = time.Now()
			}
		}
	}
	we := ld.now()
	ld.we.Store(we)
	m1, t1, m1err := r.c.metrics(ctx)
	stop() // step 5: closing the connections aborts the requests
	select {
	case <-ld.failed:
		// A stream failed as the window closed: the window is still complete.
	default:
	}

	w := ld.stats()
	cell.MeasuredS = round(w.measuredS, 3)
	cell.OutputTokens = int64(w.tokens + 0.5)
	cell.TotalTPS = round(w.tokens/w.measuredS, 1)
	cell.PerRequestTPS = round(w.perRequestTPS, 1)
	cell.TTFTMs, cell.TTFTMsP90, cell.TTFTMsP99 = round(w.ttft[0], 1), round(w.ttft[1], 1), round(w.ttft[2], 1)
	cell.TBTMs, cell.TBTMsP90, cell.TBTMsP99 = round(w.tbt[0], 3), round(w.tbt[1], 3), round(w.tbt[2], 3)
	cell.ActiveAvg = round(w.activeAvg, 2)
	cell.Completed = w.completed
	cell.TokenSource = w.source
	if m0err == nil && m1err == nil && m0.HasGenerationTokens && m1.HasGenerationTokens && t1.After(t0) {
		v := round((m1.GenerationTokens-m0.GenerationTokens)/t1.Sub(t0).Seconds(), 1)
		cell.ServerTotalTPS = &v
		if cell.TotalTPS > 0 {
			if d := (v - cell.TotalTPS) / cell.TotalTPS; d > 0.02 || d < -0.02 {
				cell.Warnings = append(cell.Warnings, fmt.Sprintf("server_total_tps %.1f differs from total_tps %.1f by %+.1f%%", v, cell.TotalTPS, d*100))
			}
		}
	}
	if m0err == nil && m1err == nil && m0.HasSpecDecode && m1.HasSpecDecode {
		drafts := m1.SpecDrafts - m0.SpecDrafts
		draftTok := m1.SpecDraftTokens - m0.SpecDraftTokens
		acc := m1.SpecAcceptedTokens - m0.SpecAcceptedTokens
		if draftTok > 0 {
			v := round(acc/draftTok, 4)
			cell.SpecAcceptRate = &v
		}
		if drafts > 0 {
			v := round(1+acc/drafts, 3)
			cell.SpecAcceptLen = &v
		}
	}
	if m0err != nil || m1err != nil {
		cell.Warnings = append(cell.Warnings, "no /metrics around the window: server_total_tps not measured")
	}
	cell.Status = result.StatusValid
	switch {
	case queued:
		cell.Status, cell.Reason = result.StatusQueued, reason
	case sawWaiting:
		cell.Status, cell.Reason = result.StatusQueued, "the server reported waiting requests during the window"
	case w.activeAvg < 0.95*float64(conc):
		cell.Status, cell.Reason = result.StatusQueued, fmt.Sprintf("only %.1f of %d streams active on average", w.activeAvg, conc)
	}
	return cell, nil
}

// steadyState waits for docs/method.md#steady-state-gate: running == C, waiting == 0 and C
// client streams past their first token, held for SteadyHold. It returns
// queued=true (and why) when the server holds a stable queue instead
// (running < C with waiting > 0, all running streams decoding, held) or the
// timeout passes. A stream failure returns its error.
func (r *run) steadyState(ctx context.Context, ld *load, conc int, ref result.CellRef, progress func(string, time.Duration, float64)) (bool, string, error) {
	hold := r.cfg.SteadyHold
	timeout := steadyBase + hold + time.Duration(float64(conc)*float64(ref.Context)/steadyPrefillRate*float64(time.Second))
	timeout = min(timeout, steadyMax)
	start := time.Now()
	deadline := start.Add(timeout)
	var heldSince, queuedSince time.Time
	var queuedRunning float64 = -1
	misses := 0
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return false, "", context.Cause(ctx)
		case <-ld.failed:
			return false, "", streamFailure{ld.failErr}
		case <-tick.C:
		}
		if err := r.procExited(); err != nil {
			return false, "", err
		}
		now := time.Now()
		snap, _, merr := r.c.metrics(ctx)
		haveGauges := merr == nil && snap.HasRequests
		decoding := ld.decoding.Load()
		clientOK := ld.started.Load() == int64(conc)
		serverOK := !haveGauges || (snap.Running == float64(conc) && snap.Waiting == 0)
		if clientOK && serverOK {
			misses = 0
			if heldSince.IsZero() {
				heldSince = now
			}
		} else if !heldSince.IsZero() {
			// A stream that finished and is restarting shows for a moment:
			// only two failed polls in a row break the hold.
			if misses++; misses >= 2 {
				heldSince, misses = time.Time{}, 0
			}
		}
		if !heldSince.IsZero() && now.Sub(heldSince) >= hold {
			return false, "", nil
		}
		// A stable queue: the server runs fewer than C, the rest wait, and
		// every running request is decoding.
		if haveGauges && snap.Waiting > 0 && snap.Running > 0 && float64(decoding) >= snap.Running {
			if queuedRunning != snap.Running || queuedSince.IsZero() {
				queuedRunning, queuedSince = snap.Running, now
			}
			if now.Sub(queuedSince) >= hold {
				return true, fmt.Sprintf("the server ran %.0f of %d requests; %.0f waited", snap.Running, conc, snap.Waiting), nil
			}
		} else {
			queuedSince = time.Time{}
		}
		if now.After(deadline) {
			msg := fmt.Sprintf("steady state not reached within %v (%d of %d streams decoding", timeout.Round(time.Second), decoding, conc)
			if haveGauges {
				msg += fmt.Sprintf("; server running %.0f, waiting %.0f", snap.Running, snap.Waiting)
			}
			return true, msg + "); measured anyway", nil
		}
		progress("warm-up", now.Sub(start), 0)
	}
}

// streamFailure is a stream's error surfacing from the steady-state wait:
// it makes the cell an error, unless the server itself is gone.
type streamFailure struct{ err error }

func (s streamFailure) Error() string { return s.err.Error() }

// combinePrefill merges repeated prefill runs: medians with [min, max].
func combinePrefill(runs []result.PrefillCell) result.PrefillCell {
	if len(runs) == 1 {
		return runs[0]
	}
	c := runs[len(runs)-1]
	for _, x := range runs {
		if x.Status == result.StatusError {
			return x
		}
	}
	c.Repeats = len(runs)
	c.Spread = map[string][2]float64{}
	for name, get := range map[string]func(*result.PrefillCell) *float64{
		"tps":     func(c *result.PrefillCell) *float64 { return &c.TPS },
		"ttft_ms": func(c *result.PrefillCell) *float64 { return &c.TTFTMs },
	} {
		var xs []float64
		for i := range runs {
			xs = append(xs, *get(&runs[i]))
		}
		*get(&c) = median(xs)
		c.Spread[name] = [2]float64{slices.Min(xs), slices.Max(xs)}
	}
	return c
}

// decodeFields are the float metrics of a decode cell that repeats combine.
var decodeFields = map[string]func(*result.DecodeCell) *float64{
	"total_tps":       func(c *result.DecodeCell) *float64 { return &c.TotalTPS },
	"per_request_tps": func(c *result.DecodeCell) *float64 { return &c.PerRequestTPS },
	"ttft_ms":         func(c *result.DecodeCell) *float64 { return &c.TTFTMs },
	"ttft_ms_p90":     func(c *result.DecodeCell) *float64 { return &c.TTFTMsP90 },
	"ttft_ms_p99":     func(c *result.DecodeCell) *float64 { return &c.TTFTMsP99 },
	"tbt_ms":          func(c *result.DecodeCell) *float64 { return &c.TBTMs },
	"tbt_ms_p90":      func(c *result.DecodeCell) *float64 { return &c.TBTMsP90 },
	"tbt_ms_p99":      func(c *result.DecodeCell) *float64 { return &c.TBTMsP99 },
	"active_avg":      func(c *result.DecodeCell) *float64 { return &c.ActiveAvg },
	"measured_s":      func(c *result.DecodeCell) *float64 { return &c.MeasuredS },
}

// combineDecode merges repeated runs of a cell: each metric is the median
// over runs, with [min, max] in Spread; the status is the worst.
func combineDecode(runs []result.DecodeCell) result.DecodeCell {
	if len(runs) == 1 {
		return runs[0]
	}
	worst := runs[0]
	for _, x := range runs {
		if statusRank(x.Status) > statusRank(worst.Status) {
			worst = x
		}
	}
	if worst.Status == result.StatusError {
		return worst
	}
	c := runs[0]
	c.Status, c.Reason = worst.Status, worst.Reason
	c.Repeats = len(runs)
	c.Spread = map[string][2]float64{}
	vals := func(get func(*result.DecodeCell) float64) []float64 {
		var xs []float64
		for i := range runs {
			xs = append(xs, get(&runs[i]))
		}
		return xs
	}
	for name, get := range decodeFields {
		xs := vals(func(c *result.DecodeCell) float64 { return *get(c) })
		*get(&c) = median(xs)
		c.Spread[name] = [2]float64{slices.Min(xs), slices.Max(xs)}
	}
	ints := map[string]func(*result.DecodeCell) float64{
		"completed":     func(c *result.DecodeCell) float64 { return float64(c.Completed) },
		"output_tokens": func(c *result.DecodeCell) float64 { return float64(c.OutputTokens) },
	}
	for name, get := range ints {
		xs := vals(get)
		c.Spread[name] = [2]float64{slices.Min(xs), slices.Max(xs)}
	}
	c.Completed = int(median(vals(ints["completed"])) + 0.5)
	c.OutputTokens = int64(median(vals(ints["output_tokens"])) + 0.5)
	for name, get := range map[string]func(*result.DecodeCell) **float64{
		"server_total_tps": func(c *result.DecodeCell) **float64 { return &c.ServerTotalTPS },
		"spec_accept_rate": func(c *result.DecodeCell) **float64 { return &c.SpecAcceptRate },
		"spec_accept_len":  func(c *result.DecodeCell) **float64 { return &c.SpecAcceptLen },
	} {
		var xs []float64
		for i := range runs {
			if p := *get(&runs[i]); p != nil {
				xs = append(xs, *p)
			}
		}
		if len(xs) == len(runs) {
			v := median(xs)
			*get(&c) = &v
			c.Spread[name] = [2]float64{slices.Min(xs), slices.Max(xs)}
		}
	}
	var warns []string
	for _, x := range runs {
		warns = append(warns, x.Warnings...)
		if sourceRank(x.TokenSource) > sourceRank(c.TokenSource) {
			c.TokenSource = x.TokenSource
		}
	}
	c.Warnings = warns
	return c
}

func statusRank(s result.Status) int {
	switch s {
	case result.StatusValid:
		return 0
	case result.StatusQueued:
		return 1
	case result.StatusOverCapacity:
		return 2
	}
	return 3
}
