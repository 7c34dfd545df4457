package measure

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/slogate/slogate/internal/event"
	"github.com/slogate/slogate/internal/measure/sse"
	"github.com/slogate/slogate/internal/promread"
	"github.com/slogate/slogate/internal/requests"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/warning"
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

// Prefill sends the cold requests for a context: prompts the server has
// not seen (a fresh cache_salt), max_tokens 1; ttft = time to the first
// chunk. The last request uses salt and so warms the prompt cache for the
// decode cells that use the same prompt and salt. Unrecorded (record
// false), it is that one warm-up request; recorded, the cell's repeats of
// this boot: n, and with repeat = "auto" more while more says so, up to
// limit (docs/method.md#repeat-auto), numbered from first in
// requests.jsonl (0: not a repeat). Each recorded run is taken through
// around (nil: as it is), which may read what it needs on either side of
// it. It returns every request's run.
func (m *Meter) Prefill(ctx context.Context, ctxLen int, prompt requests.Prompt, salt string, record bool, n, limit, first int, more func([]result.PrefillCell) bool, around PrefillRun) ([]result.PrefillCell, error) {
	ref := vocab.CellRef{Phase: vocab.PhasePrefill, Context: ctxLen}
	if why := m.awakeCheck(ctx); why != nil {
		// A request to a sleeping engine would wait until it woke.
		reasons := []result.CellReason{*why}
		if !record {
			m.warn(warning.New(warning.WarmUpFailed, "", m.reasonText(reasons), map[string]float64{warning.FigContext: float64(ctxLen), warning.FigNotSent: 1}))
		}
		return []result.PrefillCell{{Context: ctxLen, Status: vocab.StatusError, Reason: m.reasonText(reasons), Reasons: reasons}}, nil
	}
	if !record {
		n, limit = 1, 1
	}
	limit = max(limit, n)
	var runs []result.PrefillCell
	for i := 0; ; i++ {
		// The last request is the warm one; a request that may turn out
		// the last (repeat = "auto") uses a fresh salt, and the warm-up
		// follows on its own.
		last := i == limit-1
		s := salt
		if !last {
			s = fmt.Sprintf("%s-cold%d", salt, i)
		}
		body := m.Prompts.fields.body(prompt, 1, 0, s)
		if record { // measured: cold, whatever the server cached
			body = m.Prompts.fields.coldBody(prompt, s)
			m.progress(event.CellProgress{Cell: ref, Stage: result.StagePrefill})
		}
		meta := requestMeta{cell: ref.Name(), phase: vocab.PhasePrefill, repeat: first + i}
		if !record {
			meta.purpose, meta.repeat = result.PurposeWarmUp, 0
		}
		run := func() (result.PrefillCell, error) {
			return m.prefillOnce(ctx, ctxLen, body, len(prompt.Tokens), meta, record)
		}
		var c result.PrefillCell
		var err error
		if record && around != nil {
			c, err = around(run)
		} else {
			c, err = run()
		}
		if err != nil {
			return runs, err
		}
		runs = append(runs, c)
		if last {
			break
		}
		if c.Status == vocab.StatusError || (i+1 >= n && (more == nil || !more(runs))) {
			// Stopped before the warm request: send it unrecorded.
			if _, err := m.Prefill(ctx, ctxLen, prompt, salt, false, 1, 1, 0, nil, nil); err != nil {
				return runs, err
			}
			break
		}
	}
	if !record && runs[0].Status == vocab.StatusError {
		m.warn(warning.New(warning.WarmUpFailed, "", runs[0].Reason, map[string]float64{warning.FigContext: float64(ctxLen)}))
	}
	return runs, nil
}

// PrefillRun takes one recorded prefill run: it calls run, which sends
// the run's request and returns its cell (or the run's end), and returns
// what run returned; it may do what it needs on either side (the runner
// reads the machine, docs/method.md#environment).
type PrefillRun func(run func() (result.PrefillCell, error)) (result.PrefillCell, error)

// prefillOnce sends one cold prefill request of n prompt tokens and
// returns its run: its TTFT and rate, an error cell when the request
// failed, or the run's end (ctx's cause, a server gone). A recorded run
// also reads the server's own time for the prompt (storeServerPrefill)
// and is judged measurable or not (docs/method.md#unmeasurable).
func (m *Meter) prefillOnce(ctx context.Context, ctxLen int, body []byte, n int, meta requestMeta, record bool) (result.PrefillCell, error) {
	var before promread.Snapshot
	var beforeErr error
	if record {
		before, _, beforeErr = m.Server.Client.Metrics(ctx)
	}
	t0 := time.Now()
	ttft, tm, err := m.admittedColdRequest(ctx, body, n, meta)
	c := result.PrefillCell{Context: ctxLen, Status: vocab.StatusValid, ElapsedS: time.Since(t0).Seconds()}
	if err != nil {
		if ctx.Err() != nil {
			return c, context.Cause(ctx)
		}
		if terr := m.trouble(ctx, err); terr != nil {
			return c, terr
		}
		c.Status, c.Reason = vocab.StatusError, err.Error()
		return c, nil
	}
	c.TTFTMs = Round(ttft.Seconds()*1000, 1)
	c.TPS = Round(float64(n)/ttft.Seconds(), 1)
	if !record {
		return c, nil
	}
	var after promread.Snapshot
	afterErr := beforeErr
	if tm == nil && beforeErr == nil { // llama.cpp's timings need no scrape
		after, _, afterErr = m.Server.Client.Metrics(ctx)
	}
	storeServerPrefill(&c, tm, before, after, beforeErr == nil && afterErr == nil)
	if judgePrefillMeasurable(&c) {
		c.Reason = m.reasonText(c.Reasons)
	}
	return c, nil
}

// storeServerPrefill stores the server's own time for prefill run c's
// prompt: llama.cpp's timings.prompt_ms when the request carried timings
// (tm), else the server's TTFT histogram over the request when the
// scrapes around it (ok) saw exactly this one request observed (vLLM's
// time_to_first_token_seconds, SGLang's): its Δsum.
func storeServerPrefill(c *result.PrefillCell, tm *sse.Timings, before, after promread.Snapshot, ok bool) {
	switch {
	case tm != nil && tm.PromptMs > 0:
		v := Round(tm.PromptMs, 1)
		c.ServerPrefillMs, c.ServerPrefillSource = &v, result.ServerPrefillTimings
	case ok && after.TTFT.Has && before.TTFT.Has && after.TTFT.Count-before.TTFT.Count == 1 && after.TTFT.Sum >= before.TTFT.Sum:
		v := Round((after.TTFT.Sum-before.TTFT.Sum)*1000, 1)
		c.ServerPrefillMs, c.ServerPrefillSource = &v, result.ServerPrefillHistogram
	}
}

// WarmStreams warms the prompts of a distinct workload's other streams
// (stream 0's is the prefill request's) with the context's cache_salt, one
// max_tokens = 1 request each, so that every decode stream starts warm as
// with a shared prompt (docs/method.md#workload). They are the prompts of
// the largest cell that fits the KV cache, so they fit in it together.
func (m *Meter) WarmStreams(ctx context.Context, cp *ContextPrompts, salt string) error {
	if len(cp.Prompts) < 2 {
		return nil
	}
	t0 := time.Now()
	for i, p := range cp.Prompts[1:] {
		meta := requestMeta{cell: vocab.CellRef{Phase: vocab.PhasePrefill, Context: cp.ctxLen}.Name(), phase: vocab.PhasePrefill,
			purpose: result.PurposeWarmUp, stream: i + 2}
		if _, _, err := m.admittedColdRequest(ctx, m.Prompts.fields.body(p, 1, 0, salt), len(p.Tokens), meta); err != nil {
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
			if terr := m.trouble(ctx, err); terr != nil {
				return terr
			}
			m.warn(warning.New(warning.WarmUpFailed, "", err.Error(), map[string]float64{warning.FigContext: float64(cp.ctxLen), warning.FigStream: float64(i + 2)}))
		}
	}
	m.note(event.PromptsWarmed{Context: cp.ctxLen, Streams: len(cp.Prompts), Took: time.Since(t0)})
	return nil
}

// admittedColdRequest is coldRequest sent again, rejectBackoff after each
// refusal, while the server refuses it at admission
// (docs/method.md#rejections), for at most rejectedRetryFor: alone on the
// server, it is refused only while the requests of the cell before are
// still being dropped, or by a limit that refuses everything. Each refusal
// is recorded as rejected; the last answer is the request's.
func (m *Meter) admittedColdRequest(ctx context.Context, body []byte, n int, meta requestMeta) (time.Duration, *sse.Timings, error) {
	deadline := time.Now().Add(rejectedRetryFor)
	for {
		ttft, tm, err := m.coldRequest(ctx, body, n, meta)
		if !isRejection(err) || ctx.Err() != nil || time.Now().After(deadline) {
			return ttft, tm, err
		}
		backoff(ctx)
	}
}

// coldRequest sends one request and returns its time to the first chunk
// and the server's own timings of it (llama.cpp's; nil without), reading
// the stream to its end; its record goes to requests.jsonl with meta.
func (m *Meter) coldRequest(ctx context.Context, body []byte, n int, meta requestMeta) (ttft time.Duration, tm *sse.Timings, err error) {
	rctx, stall, stop := newStallTimer(ctx, firstTokenTimeout(n, 0))
	defer stop()
	t0 := time.Now()
	var tr requestTrace
	tr.begin(0)
	tr.promptTokens = int64(n) // the prompt as built; the server's usage overrides it
	eof, finished := false, false
	defer func() {
		tr.end = int64(time.Since(t0))
		rec := tr.record(t0, meta, finished, err == nil && !eof && ctx.Err() != nil, err)
		m.record(&rec)
	}()
	clock := func() int64 { return int64(time.Since(t0)) }
	ts, err := openTokenStream(rctx, m.Server.Client, m.Server.Client.Base()+m.Prompts.Path(), m.Prompts.Path(), body, stall, m.StreamIdleTimeout, clock, &tr)
	if err != nil {
		return 0, nil, asRejection(m.engine(), streamError(ctx, rctx, err))
	}
	defer ts.close()
	for {
		ch, err := ts.next()
		tr.outputTokens = ts.outputTokens()
		if err == io.EOF {
			eof, finished = true, ts.finished
			break
		}
		if err != nil {
			return 0, nil, asRejection(m.engine(), streamError(ctx, rctx, err))
		}
		if ch.first {
			ttft = time.Duration(ch.at)
		}
	}
	if ttft == 0 {
		return 0, nil, fmt.Errorf("the stream ended without a token")
	}
	return ttft, tr.timings, nil
}
