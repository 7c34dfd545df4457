package measure

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/slogate/slogate/internal/lifecycle"
	"github.com/slogate/slogate/internal/measure/sse"
	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/result"
)

// errStalled is the cause of a stream cancelled by its inactivity timer.
type errStalled struct{ after time.Duration }

func (e errStalled) Error() string {
	return "stream stalled: no data for " + e.after.String() + " (per-stream inactivity timeout)"
}

// stallTimer cancels a request's context with errStalled when its stream is
// silent longer than allowed: the first chunk's timeout at first, then the
// idle timeout after each chunk. Every request of every cell kind reads
// its stream under one.
type stallTimer struct {
	limit atomic.Int64 // the inactivity allowed right now
	timer *time.Timer
}

// newStallTimer returns a child of ctx that the timer cancels, the timer,
// and the function that stops both (to defer).
func newStallTimer(ctx context.Context, first time.Duration) (context.Context, *stallTimer, func()) {
	rctx, cancel := context.WithCancelCause(ctx)
	s := &stallTimer{}
	s.limit.Store(int64(first))
	s.timer = time.AfterFunc(first, func() { cancel(errStalled{time.Duration(s.limit.Load())}) })
	return rctx, s, func() { s.timer.Stop(); cancel(nil) }
}

// chunk restarts the wait after a chunk: idle from now.
func (s *stallTimer) chunk(idle time.Duration) {
	s.limit.Store(int64(idle))
	s.timer.Reset(idle)
}

// span is one request's life in a cell, in ns since the cell's origin.
type span struct {
	first, end int64 // first chunk; end of the stream (-1 while open)
	finished   bool  // ended with a finish_reason and [DONE]
}

// slotStats is what one stream slot saw. It is written only by its own
// goroutine and read after that goroutine has exited.
type slotStats struct {
	tokens       float64   // tokens in chunks that arrived inside the window
	decodeTokens float64   // the same, excluding each request's first chunk
	decodeNs     int64     // inter-chunk gaps of those chunks
	gaps         []float32 // per chunk in the window: gap ÷ tokens, in ms
	chunkGaps    []float32 // per chunk in the window after a request's first: the gap itself (ITL), in ms
	tpots        []float64 // ms, TPOT of every request completed inside the window
	ttfts        []float64 // ms, every request of the cell that got a first chunk
	spans        []span
	source       result.TokenSource // least exact token source of a request counted inside the window
	stream       int                // the slot's 1-based number (requests.jsonl)
	// serverTPS is the server's own rate (timings.predicted_per_second) of
	// every request with timings completed inside the window; finished
	// every request with timings that finished, when and its predicted_n.
	serverTPS []float64
	finished  []finishedRequest
	trace     requestTrace // the request running now, for requests.jsonl
	// rejected counts the slot's requests the server refused at admission
	// whose refusal came inside the window (docs/method.md#rejections).
	rejected int

	// Requests without per-chunk usage. Those that got their final usage
	// give the tokens-per-chunk ratio (finalTokens ÷ finalChunks); those cut at
	// the window's end never do, and their provisional one-token-per-chunk
	// counts (provisional*) are scaled by that ratio in stats.
	finalTokens, finalChunks                   float64
	provisionalTokens, provisionalDecodeTokens float64
	provisionalGaps                            [][2]int // index ranges into gaps
	awaitingCorrection                         bool
}

// load drives C streams, restarting each as it finishes with its own
// prompt (stream i sends bodies[i mod len(bodies)]: one shared prompt, or
// one per stream when the workload is distinct), and accounts every chunk against the window [windowStart, windowEnd].
type load struct {
	client                 *lifecycle.Client
	path                   string // /v1/completions or /v1/chat/completions
	url                    string
	bodies                 [][]byte
	origin                 time.Time
	firstChunkTimeout      time.Duration // inactivity allowed before the first chunk
	idleTimeout            time.Duration // inactivity allowed between chunks
	windowStart, windowEnd atomic.Int64  // window bounds in ns since origin (MaxInt64 = unset)
	decoding               atomic.Int64  // streams past their first token right now
	started                atomic.Int64  // slots that have had a first token at least once
	windowTokens           atomic.Int64  // tokens inside the window so far (for progress)
	outstanding            atomic.Int64  // requests sent and not yet ended (docs/method.md#statuses)
	completion             atomic.Int64  // completion tokens of the latest chunk of any stream: at C = 1, the stream's (the KV cross-check)
	// refused counts the cell's requests the server refused at admission,
	// gate and window alike; unanswered those the cell closed before any
	// chunk came, which the server may have refused unseen
	// (docs/method.md#rejections).
	refused, unanswered atomic.Int64
	slots               []slotStats
	// exact is the output tokens each request asks for with ignore_eos
	// (max_tokens = min_tokens = max_output); a stream that finishes with
	// fewer is an error (errShortStream). 0: not checked.
	exact int64
	// awaiting[i] is when slot i sent its current request, in ns since
	// origin, while that request has no first chunk; -1 otherwise. The
	// status rules excuse such a young request from the server's running
	// count: it may not have reached the engine yet (inTransit).
	awaiting []atomic.Int64
	// now is the clock every chunk, request and window bound is stamped
	// with, in ns since origin: realNow, or a test's clock.
	now func() int64
	// record receives a record of every request when it ends, meta says
	// which cell it belongs to (requests.jsonl); record may be nil.
	record   func(*result.RequestRecord)
	meta     requestMeta
	wg       sync.WaitGroup
	failOnce sync.Once
	failErr  error
	failed   chan struct{}
}

// newLoad prepares C streams POSTing bodies to path.
func newLoad(client *lifecycle.Client, path string, bodies [][]byte, conc int, firstChunkTimeout, idleTimeout time.Duration) *load {
	l := &load{client: client, path: path, url: client.Base() + path, bodies: bodies, origin: time.Now(),
		firstChunkTimeout: firstChunkTimeout, idleTimeout: idleTimeout, slots: make([]slotStats, conc), failed: make(chan struct{})}
	l.now = l.realNow
	l.windowStart.Store(math.MaxInt64)
	l.windowEnd.Store(math.MaxInt64)
	l.awaiting = make([]atomic.Int64, conc)
	for i := range l.slots {
		l.slots[i].stream = i + 1
		l.awaiting[i].Store(-1)
	}
	return l
}

// inTransit counts the streams whose current request was sent less than
// bound before now (ns since origin) and has no first chunk yet: requests
// a server may not count yet, because they have not reached its engine,
// or reached it after its last published stats (docs/method.md#statuses).
func (l *load) inTransit(now int64, bound time.Duration) int {
	n := 0
	for i := range l.awaiting {
		if sent := l.awaiting[i].Load(); sent >= 0 && now-sent < int64(bound) {
			n++
		}
	}
	return n
}

// finishedRequest is a request that finished, when (ns since the load's
// origin) and the tokens the server says it predicted.
type finishedRequest struct {
	end, predicted int64
}

// realNow is the load's clock: ns since its origin.
func (l *load) realNow() int64 { return int64(time.Since(l.origin)) }

// start launches the streams; they run until ctx is cancelled or one fails.
func (l *load) start(ctx context.Context) {
	for i := range l.slots {
		l.wg.Add(1)
		body := l.bodies[i%len(l.bodies)]
		go func(st *slotStats) {
			defer l.wg.Done()
			everStarted := false
			for ctx.Err() == nil {
				err := l.request(ctx, st, body, &everStarted)
				switch {
				case isRejection(err):
					// The server is full: the stream asks again after
					// a pause (docs/method.md#rejections).
					backoff(ctx)
				case err != nil:
					if ctx.Err() == nil {
						l.fail(err)
					}
					return
				}
			}
		}(&l.slots[i])
	}
}

func (l *load) fail(err error) {
	l.failOnce.Do(func() {
		l.failErr = err
		close(l.failed)
	})
}

// wait waits for the streams to exit, at most d; it reports whether they did.
func (l *load) wait(d time.Duration) bool { return waitFor(&l.wg, d) }

// waitFor waits for wg, at most d; it reports whether wg was done.
func waitFor(wg *sync.WaitGroup, d time.Duration) bool {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}

// request runs one streaming request to its end. It returns nil when the
// request finished or ctx was cancelled, a rejection when the server
// refused it at admission (counted: refused, and the slot's rejected when
// the refusal came inside the window), and the error otherwise. Either way
// it hands the request's record to record.
func (l *load) request(ctx context.Context, st *slotStats, body []byte, everStarted *bool) (err error) {
	rctx, stall, stop := newStallTimer(ctx, l.firstChunkTimeout)
	defer stop()

	l.outstanding.Add(1)
	defer l.outstanding.Add(-1)
	l.completion.Store(0)
	start := l.now()
	awaiting := &l.awaiting[st.stream-1]
	awaiting.Store(start)
	defer awaiting.Store(-1)
	tr := &st.trace
	tr.begin(start)
	tr.promptTokens = l.meta.promptTokens
	eof, finished := false, false
	rc := requestCount{l: l, st: st, awaiting: awaiting, everStarted: everStarted, start: start,
		sp: span{first: -1, end: -1}, prevTok: -1, prevChunk: -1, burst: -1}
	defer func() { l.endRequest(ctx, st, err, eof, finished, rc.counted) }()
	ts, err := openTokenStream(rctx, l.client, l.url, l.path, body, stall, l.idleTimeout, l.now, tr)
	if err != nil {
		return asRejection(l.client.Engine(), streamError(ctx, rctx, err))
	}
	defer ts.close()

	rc.ts = ts
	rc.gapStart = len(st.gaps)
	for {
		ch, err := ts.next()
		now := ch.at
		if err == io.EOF {
			eof, finished = true, ts.finished
			return rc.done(now)
		}
		if err != nil {
			rc.endSpan(now, false)
			tr.outputTokens = ts.outputTokens()
			return asRejection(l.client.Engine(), streamError(ctx, rctx, err))
		}
		windowStart, windowEnd := l.windowStart.Load(), l.windowEnd.Load()
		in := now >= windowStart && now <= windowEnd
		if ch.Choices == 0 {
			rc.finalUsage(&ch)
			continue
		}
		rc.chunk(&ch, now, in)
	}
}

// endRequest accounts a request at its end, whatever ended it: a refusal
// (refused, and the slot's rejected when it came inside the window), a
// request the cell closed before any chunk (unanswered); then it hands the
// request's record to record. counted says a chunk of it came inside the
// window.
func (l *load) endRequest(ctx context.Context, st *slotStats, err error, eof, finished, counted bool) {
	tr := &st.trace
	tr.end = l.now()
	cancelled := err == nil && !eof && ctx.Err() != nil
	switch {
	case isRejection(err):
		l.refused.Add(1)
		if w0, w1 := l.windowStart.Load(), l.windowEnd.Load(); tr.end >= w0 && tr.end <= w1 {
			st.rejected++
		}
	case cancelled && tr.first < 0:
		l.unanswered.Add(1)
	}
	m := l.meta
	m.stream = st.stream
	rec := tr.record(l.origin, m, finished, cancelled, err)
	rec.InWindow = counted
	if l.record != nil {
		l.record(&rec)
	}
}

// requestCount is one request's accounting in its slot while it streams:
// its span, what it counted inside the window, and the chunks the next
// gap is measured from. request keeps it on its stack.
type requestCount struct {
	l           *load
	st          *slotStats
	ts          *tokenStream
	awaiting    *atomic.Int64 // the slot's awaiting entry
	everStarted *bool         // the slot has had a first token at least once
	start       int64         // when the request was sent
	sp          span
	// prevTok is when the last chunk carrying tokens arrived (-1: none yet).
	// A chat stream starts with a role chunk of zero tokens: it gives the
	// TTFT (docs/vllm.md#chat), and the first token chunk after it starts decoding
	// as a completions stream's first chunk does.
	prevTok                   int64
	prevChunk                 int64   // the last chunk with choices (ITL, as vLLM times it)
	provisionalInWindow       float64 // chunks counted as one token (no per-chunk usage)
	provisionalDecodeInWindow float64 // of those, in the window and not the request's first
	gapStart                  int     // this request's gap samples are st.gaps[gapStart:]
	// A burst: token chunks each less than burstGap after the one before
	// are one gap sample, the burst's gap ÷ its tokens, and one ITL, as
	// vLLM's one chunk of several tokens is (docs/method.md#bursts);
	// burst is its sample's index in st.gaps (-1: none open).
	burst       int
	burstNs     int64
	burstTokens float64
	counted     bool // a chunk of the request came inside the window
}

// endSpan closes the request's span at now and, when it counted inside
// the window, folds its token source into the slot's (a request cut
// before its final usage is left for stats to correct).
func (rc *requestCount) endSpan(now int64, finished bool) {
	st, ts := rc.st, rc.ts
	rc.sp.end, rc.sp.finished = now, finished
	if rc.sp.first >= 0 {
		rc.l.decoding.Add(-1)
		st.spans = append(st.spans, rc.sp)
	}
	if rc.counted { // the request's token source, if it counted inside the window
		var src result.TokenSource
		switch {
		case ts.perChunkUsage:
			src = result.TokenSourceUsage
		case ts.final && ts.provisional > 0:
			src = result.TokenSourceFinalUsage
		default: // cut before its final usage: corrected in stats
			st.provisionalTokens += rc.provisionalInWindow
			st.provisionalDecodeTokens += rc.provisionalDecodeInWindow
			st.provisionalGaps = append(st.provisionalGaps, [2]int{rc.gapStart, len(st.gaps)})
			st.awaitingCorrection = true
		}
		st.source = st.source.LeastExact(src)
	}
}

// done accounts the request's end at "data: [DONE]" (now): its span, its
// output tokens, a short stream's error, the server's own timings and the
// TPOT of a request finished inside the window.
func (rc *requestCount) done(now int64) error {
	l, st, ts, tr := rc.l, rc.st, rc.ts, &rc.st.trace
	rc.endSpan(now, ts.finished)
	tr.outputTokens = ts.outputTokens()
	if err := ts.short(l.exact); err != nil {
		return err
	}
	if tm := ts.timings; tm != nil && ts.finished {
		st.finished = append(st.finished, finishedRequest{end: now, predicted: tm.PredictedN})
		if w0, w1 := l.windowStart.Load(), l.windowEnd.Load(); now >= w0 && now <= w1 && tm.PredictedN > 1 {
			st.serverTPS = append(st.serverTPS, tm.PredictedPerSecond)
		}
	}
	if w0, w1 := l.windowStart.Load(), l.windowEnd.Load(); ts.finished && now >= w0 && now <= w1 && tr.outputTokens > 1 && tr.last > tr.first {
		st.tpots = append(st.tpots, float64(tr.last-tr.first)/1e6/float64(tr.outputTokens-1))
	}
	return nil
}

// finalUsage takes the final usage chunk: it corrects the provisional
// one-token-per-chunk counts when the chunks carried no usage of their own.
func (rc *requestCount) finalUsage(ch *streamChunk) {
	st, ts := rc.st, rc.ts
	if ch.HasUsage && !ts.perChunkUsage && ts.provisional > 0 {
		provisionalTotal := float64(ts.provisional)
		st.finalTokens += float64(ch.CompletionTokens)
		st.finalChunks += provisionalTotal
		if per := float64(ch.CompletionTokens) / provisionalTotal; rc.provisionalInWindow > 0 && per > 0 {
			st.tokens += rc.provisionalInWindow * (per - 1)
			st.decodeTokens += rc.provisionalDecodeInWindow * (per - 1)
			for i := rc.gapStart; i < len(st.gaps); i++ {
				st.gaps[i] = float32(float64(st.gaps[i]) / per)
			}
		}
	}
}

// chunk accounts one chunk with choices that arrived at now (in: inside
// the window): its ITL, the TTFT when it is the request's first, its
// tokens and their gap since the last chunk that carried tokens.
func (rc *requestCount) chunk(ch *streamChunk, now int64, in bool) {
	st := rc.st
	k := float64(ch.tokens)
	provisional := !ch.HasUsage && ch.tokens > 0 // counted one token until the final usage says
	if in && provisional {
		rc.provisionalInWindow++
	}
	rc.l.completion.Store(rc.ts.completion)
	inBurst := rc.prevChunk >= 0 && now-rc.prevChunk < burstGap
	if in && rc.prevChunk >= 0 && !inBurst {
		st.chunkGaps = append(st.chunkGaps, float32(float64(now-rc.prevChunk)/1e6))
	}
	rc.prevChunk = now
	if ch.first { // TTFT: the first chunk of any kind (vLLM sends the chat role chunk with the first token)
		rc.firstChunk(now)
	}
	if in {
		st.tokens += k
		rc.l.windowTokens.Add(int64(k))
		rc.counted = true
	}
	switch {
	case in && rc.prevTok >= 0 && k > 0:
		rc.decodeGap(now, k, provisional, inBurst)
	case k > 0:
		rc.burst = -1
	}
	if k > 0 {
		rc.prevTok = now
	}
}

// firstChunk takes the request's first chunk, at now: its TTFT, and the
// stream decoding from now on.
func (rc *requestCount) firstChunk(now int64) {
	rc.sp.first = now
	rc.awaiting.Store(-1)
	rc.st.ttfts = append(rc.st.ttfts, float64(now-rc.start)/1e6)
	rc.l.decoding.Add(1)
	if !*rc.everStarted {
		*rc.everStarted = true
		rc.l.started.Add(1)
	}
}

// decodeGap counts a chunk of k tokens inside the window that came after
// another chunk with tokens: its gap is a decode gap, a sample of its own
// or one more chunk of the burst open (inBurst).
func (rc *requestCount) decodeGap(now int64, k float64, provisional, inBurst bool) {
	st := rc.st
	if provisional {
		rc.provisionalDecodeInWindow++
	}
	gap := now - rc.prevTok
	st.decodeTokens += k
	st.decodeNs += gap
	if inBurst && rc.burst >= 0 {
		rc.burstNs, rc.burstTokens = rc.burstNs+gap, rc.burstTokens+k
		st.gaps[rc.burst] = float32(float64(rc.burstNs) / 1e6 / rc.burstTokens)
	} else {
		rc.burst, rc.burstNs, rc.burstTokens = len(st.gaps), gap, k
		st.gaps = append(st.gaps, float32(float64(gap)/1e6/k))
	}
}

// streamError turns a failed read into nil (the cell closed the stream) or
// a readable error.
func streamError(cellCtx, rctx context.Context, err error) error {
	if cellCtx.Err() != nil {
		return nil
	}
	var st errStalled
	if cause := context.Cause(rctx); errors.As(cause, &st) {
		return st
	}
	var ae *sse.APIError
	if errors.As(err, &ae) {
		return ae
	}
	var se *lifecycle.StreamStatusError
	if errors.As(err, &se) {
		return se
	}
	if errors.Is(err, sse.ErrTruncated) {
		return err
	}
	return fmt.Errorf("stream failed: %v", err)
}

// windowStats are the metrics of docs/method.md#metrics, computed from the slots after the streams
// have exited.
type windowStats struct {
	tokens        float64
	perRequestTPS float64
	// serverTPS are the server's own per-request rates of the requests
	// completed in the window; finished every request the server gave
	// timings for, when it finished (wall clock) and what it predicted.
	serverTPS []float64
	finished  []finishedRequest
	ttft      [3]float64 // median, p90, p99
	tbt       [3]float64
	// dists are the cell's latency distributions (docs/method.md#metric-names).
	dists     []distribution
	activeAvg float64
	completed int
	// rejected is the requests the server refused at admission inside the
	// window.
	rejected  int
	source    result.TokenSource
	measuredS float64
}

func (l *load) stats() windowStats {
	windowStart, windowEnd := l.windowStart.Load(), l.windowEnd.Load()
	var w windowStats
	w.measuredS = float64(windowEnd-windowStart) / 1e9
	var perStream, ttfts, gaps, chunkGaps, tpots []float64
	var activeNs float64
	// The tokens-per-chunk ratio of requests that reported only a final usage.
	var finalTok, finalChunks float64
	for i := range l.slots {
		finalTok += l.slots[i].finalTokens
		finalChunks += l.slots[i].finalChunks
	}
	for i := range l.slots {
		st := &l.slots[i]
		if st.awaitingCorrection {
			src := result.TokenSourceChunks
			if finalChunks > 0 && finalTok > 0 {
				per := finalTok / finalChunks
				st.tokens += st.provisionalTokens * (per - 1)
				st.decodeTokens += st.provisionalDecodeTokens * (per - 1)
				for _, r := range st.provisionalGaps {
					for j := r[0]; j < r[1]; j++ {
						st.gaps[j] = float32(float64(st.gaps[j]) / per)
					}
				}
				src = result.TokenSourceFinalUsage
			}
			st.awaitingCorrection, st.provisionalTokens, st.provisionalDecodeTokens, st.provisionalGaps = false, 0, 0, nil
			st.source = st.source.LeastExact(src)
		}
		w.tokens += st.tokens
		w.rejected += st.rejected
		if st.decodeNs > 0 {
			perStream = append(perStream, st.decodeTokens/(float64(st.decodeNs)/1e9))
		}
		ttfts = append(ttfts, st.ttfts...)
		for _, g := range st.gaps {
			gaps = append(gaps, float64(g))
		}
		for _, g := range st.chunkGaps {
			chunkGaps = append(chunkGaps, float64(g))
		}
		tpots = append(tpots, st.tpots...)
		w.serverTPS = append(w.serverTPS, st.serverTPS...)
		w.finished = append(w.finished, st.finished...)
		for _, sp := range st.spans {
			end := sp.end
			if end < 0 || end > windowEnd {
				end = windowEnd
			}
			if start := max(sp.first, windowStart); end > start {
				activeNs += float64(end - start)
			}
			if sp.finished && sp.end >= windowStart && sp.end <= windowEnd {
				w.completed++
			}
		}
		w.source = w.source.LeastExact(st.source)
	}
	if windowEnd > windowStart {
		w.activeAvg = activeNs / float64(windowEnd-windowStart)
	}
	w.perRequestTPS = median(perStream)
	w.ttft = [3]float64{percentile(ttfts, 50), percentile(ttfts, 90), percentile(ttfts, 99)}
	w.tbt = [3]float64{percentile(gaps, 50), percentile(gaps, 90), percentile(gaps, 99)}
	w.dists = []distribution{{metric.TTFTMs, ttfts, 1}, {metric.TBTMs, gaps, 3}, {metric.ITLMs, chunkGaps, 3}, {metric.TPOTMs, tpots, 3}}
	if w.source == "" {
		w.source = result.TokenSourceUsage
	}
	return w
}
