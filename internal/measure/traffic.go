package measure

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/slogate/slogate/internal/event"
	"github.com/slogate/slogate/internal/lifecycle"
	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/promread"
	"github.com/slogate/slogate/internal/requests"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/warning"
	"github.com/slogate/slogate/internal/workload"
)

// This file measures traffic cells (docs/method.md#traffic): requests
// launched at the arrival times of one rate, whatever the server's
// completions do (open loop), or as many kept in flight as the cell's
// concurrency, each slot sending its next request when its last ended
// (closed loop, as vllm bench serve --max-concurrency), through a warm-up
// and a window; the requests that start in the window are the cell's, and
// the cell waits for them to finish. A conversation's turns are sent one
// after the other, each once the previous answer is in (work.go).

// trafficDrainMin is the shortest wait for a window's requests to finish
// after the window closes; the wait is the longer of it and the window.
const trafficDrainMin = 60 * time.Second

// arrivalSchedule draws the gaps between arrivals of one rate
// (docs/method.md#arrival-schedules), as `vllm bench serve` does
// (docs/vllm.md#bench-serve): poisson is exponential gaps of mean 1/rate,
// gamma has shape burstiness and scale 1/(rate·burstiness) (mean 1/rate,
// squared coefficient of variation 1/burstiness), constant is 1/rate.
type arrivalSchedule struct {
	kind       string
	rate       float64
	burstiness float64
	rng        *rand.Rand
}

// newArrivalSchedule seeds a schedule: the same seed draws the same gaps.
func newArrivalSchedule(kind string, rate, burstiness float64, seed int64) *arrivalSchedule {
	return &arrivalSchedule{kind: kind, rate: rate, burstiness: burstiness,
		rng: rand.New(rand.NewPCG(uint64(seed), 0x736c6f67617465))} // "slogate"
}

// next is the gap before the next arrival, in seconds.
func (a *arrivalSchedule) next() float64 {
	switch a.kind {
	case vocab.ArrivalsConstant:
		return 1 / a.rate
	case vocab.ArrivalsGamma:
		return gammaSample(a.rng, a.burstiness) / (a.rate * a.burstiness)
	}
	return a.rng.ExpFloat64() / a.rate
}

// gammaSample draws from Gamma(shape, 1) by Marsaglia and Tsang's method
// (shape < 1 through the boost U^(1/shape)). Hand-written: the standard
// library has no gamma distribution and this module's dependencies do not
// include one (gonum would be the only reason to add it).
func gammaSample(rng *rand.Rand, shape float64) float64 {
	if shape < 1 {
		u := rng.Float64()
		for u == 0 {
			u = rng.Float64()
		}
		return gammaSample(rng, shape+1) * math.Pow(u, 1/shape)
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := rng.Float64()
		if u < 1-0.0331*x*x*x*x || math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}

// trafficRequest is one request's life, in ns since the cell's origin.
// Its fields are written by the request's goroutine and read after every
// goroutine of the cell has exited.
type trafficRequest struct {
	launch  int64
	first   int64 // first chunk; -1 before it
	lastTok int64 // last chunk carrying tokens; -1 before it
	end     int64 // end of the stream; -1 while open
	tokens  int64
	// reasoning is the request's reasoning tokens and firstAnswer when
	// its first answer (content) chunk came, -1 before it
	// (docs/method.md#reasoning).
	reasoning, firstAnswer int64
	// finished: the stream ended with a finish_reason and [DONE];
	// rejected: the server refused it at admission (its end is when the
	// refusal came; docs/method.md#rejections).
	finished, rejected bool
	turn               int // the request's 1-based conversation turn; 0 outside conversations
	// index is the request's unit: its place in the cell's arrival
	// schedule (a closed loop's units in the order their slots took them).
	index int
	// planned is when the schedule planned the request's arrival and ready
	// when it could be launched: planned, or when the outstanding cap let
	// it (or an arrival before it) go. Both -1 without a planned time (a
	// closed loop, a conversation's later turns).
	planned, ready int64
	// promptTokens is the request's prompt length as planned; cached the
	// prompt tokens the server reported its prefix cache served (-1: not
	// reported).
	promptTokens, cached int64
}

// arrival is one unit's place in the schedule: its planned time and when
// the dispatcher could launch it (trafficRequest.planned and ready).
type arrival struct{ planned, ready int64 }

// unplanned is the arrival of a unit without a planned time.
var unplanned = arrival{planned: -1, ready: -1}

// trafficLoad launches one cell's requests and keeps their spans.
type trafficLoad struct {
	client            *lifecycle.Client
	path, url         string
	work              trafficWork
	closed            int // a closed loop's requests in flight; 0: an open loop
	origin            time.Time
	firstChunkTimeout time.Duration
	idleTimeout       time.Duration
	sched             *arrivalSchedule
	slots             chan struct{} // the outstanding cap
	// times, when not nil, are the arrivals instead of sched's: a trace's
	// (arrivals = "trace"), in seconds since origin; the dispatcher stops
	// after the last.
	times []float64
	// clock, when set, is the load's clock in ns since origin instead of
	// the time passed (a test's clocked transport, whose pauses advance
	// it: vllmfake.Server.ClockedClient).
	clock func() int64
	// toolSleep, when set, waits the tool batch d before unit i's call t
	// of an agentic session instead of sleep (a test's hook, to see what
	// the replay asked for apart from what the scheduler added).
	toolSleep func(ctx context.Context, i, t int, d time.Duration) bool
	// stall, when positive, delays each arrival after its timer fired
	// (the client-starving test hook: clientStallEnv).
	stall       time.Duration
	windowStart int64 // ns since origin
	windowEnd   int64
	// record receives a record of every request when it ends, meta says
	// which cell it belongs to (requests.jsonl); record may be nil.
	record func(*result.RequestRecord)
	meta   requestMeta

	mu       sync.Mutex
	reqs     []*trafficRequest
	inFlight atomic.Int64
	// windowOpen counts the window's requests that have not ended.
	windowOpen atomic.Int64
	capHits    atomic.Int64
	// unitsOpen counts an open loop's units that have not ended;
	// sessionsSent is set once an agentic trace's every session was
	// started, so that the cell ends with its last session.
	unitsOpen    atomic.Int64
	sessionsSent atomic.Bool
	wg           sync.WaitGroup
	failOnce     sync.Once
	failErr      error
	failed       chan struct{}

	// refused counts the cell's requests the server refused at admission,
	// warm-up and drain included; unanswered those the cell closed before
	// any chunk came (docs/method.md#rejections).
	refused, unanswered atomic.Int64
}

func (l *trafficLoad) now() int64 {
	if l.clock != nil {
		return l.clock()
	}
	return int64(time.Since(l.origin))
}

func (l *trafficLoad) fail(err error) {
	l.failOnce.Do(func() { l.failErr = err; close(l.failed) })
}

// dispatch launches units of work at the schedule's arrival times until
// ctx ends. An arrival that finds the outstanding cap reached waits for a
// slot, and is counted in capHits; the arrivals due while it waited are
// ready only when it got its slot (the cap's delay is the server's, and is
// kept apart from the client's lag).
func (l *trafficLoad) dispatch(ctx context.Context) {
	defer l.wg.Done()
	if l.closed > 0 {
		l.closedLoop(ctx)
		return
	}
	at := 0.0            // seconds since origin
	released := int64(0) // when the last cap wait ended, ns since origin
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	for i := 0; ; i++ {
		switch {
		case l.times == nil:
			at += l.sched.next()
		case i < len(l.times):
			at = l.times[i]
		default:
			if _, ok := agentWork(l.work); ok {
				l.sessionsSent.Store(true) // every session was started
			}
			return // the trace has no request left
		}
		planned := int64(at * float64(time.Second))
		timer.Reset(time.Until(l.origin.Add(time.Duration(planned))))
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		if l.stall > 0 {
			timer.Reset(l.stall)
			select {
			case <-ctx.Done():
				return
			case <-timer.C:
			}
		}
		select {
		case l.slots <- struct{}{}:
		default:
			l.capHits.Add(1)
			select {
			case l.slots <- struct{}{}:
				released = l.now()
			case <-ctx.Done():
				return
			}
		}
		a := arrival{planned: planned, ready: max(planned, released)}
		l.wg.Add(1)
		l.unitsOpen.Add(1)
		go func() {
			defer l.wg.Done()
			defer l.unitsOpen.Add(-1)
			l.unit(ctx, i, a)
			<-l.slots
		}()
	}
}

// closedLoop keeps l.closed units in flight: each slot sends unit after
// unit, the next as soon as its last ended (after a pause when the server
// refused it at admission: docs/method.md#rejections), until ctx ends.
func (l *trafficLoad) closedLoop(ctx context.Context) {
	var next atomic.Int64
	for range l.closed {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for ctx.Err() == nil {
				switch l.unit(ctx, int(next.Add(1)-1), unplanned) {
				case unitFailed:
					if ctx.Err() == nil {
						return // the request failed: the cell fails (l.failed)
					}
				case unitRejected:
					backoff(ctx)
				}
			}
		}()
	}
}

// unitEnd is how a unit of work ended (trafficLoad.unit).
type unitEnd int

const (
	// unitDone: its requests ended (finished, cancelled, or cut short).
	unitDone unitEnd = iota
	// unitFailed: a request failed, and failed the cell.
	unitFailed
	// unitRejected: the server refused a request at admission.
	unitRejected
)

// unit sends unit i's requests, turn after turn, each launched when the
// previous one's answer is in; it stops at a request that does not finish
// (a refused one among them). Its first request is arrival a; the later
// turns have no planned time.
func (l *trafficLoad) unit(ctx context.Context, i int, a arrival) unitEnd {
	var answers []string
	sw, agent := agentWork(l.work)
	for t := range l.work.turns(i) {
		if t > 0 {
			a = unplanned
		}
		if agent && t > 0 && !l.waitTools(ctx, i, t, sw.toolWait(i, t)) {
			return unitDone
		}
		// The launch time is taken under the lock windowDone reads it
		// with, so no window request can register after the window is
		// seen done.
		l.mu.Lock()
		req := &trafficRequest{launch: l.now(), first: -1, lastTok: -1, end: -1, firstAnswer: -1, turn: l.work.turnOf(i, t),
			index: i, planned: a.planned, ready: a.ready, cached: -1}
		inWindow := req.launch >= l.windowStart && req.launch < l.windowEnd
		if inWindow {
			l.windowOpen.Add(1)
			if agent && t == 0 {
				// The window waits for a session it started to end,
				// its tool batches included.
				l.windowOpen.Add(1)
				defer l.windowOpen.Add(-1)
			}
		}
		l.reqs = append(l.reqs, req)
		l.mu.Unlock()
		l.inFlight.Add(1)
		answer, err := l.request(ctx, req, i, t, l.work.body(i, t, answers), inWindow) // an aborted request keeps end = -1
		l.inFlight.Add(-1)
		if inWindow {
			l.windowOpen.Add(-1)
		}
		if isRejection(err) {
			return unitRejected
		}
		if err != nil && ctx.Err() == nil {
			l.fail(err)
			return unitFailed
		}
		if !req.finished {
			return unitDone
		}
		answers = append(answers, answer)
	}
	return unitDone
}

// waitTools waits the tool batch d before unit i's call t, false when ctx
// ended first.
func (l *trafficLoad) waitTools(ctx context.Context, i, t int, d time.Duration) bool {
	if l.toolSleep != nil {
		return l.toolSleep(ctx, i, t, d)
	}
	return sleep(ctx, d)
}

// schedule fills rec's place in the schedule: its index, and with a
// planned time the planned send, the lag behind it and the cap's share of
// the lag.
func (q *trafficRequest) schedule(rec *result.RequestRecord) {
	index := q.index
	rec.Index = &index
	if q.planned < 0 {
		return
	}
	planned, lag := Round(float64(q.planned)/1e6, 3), Round(float64(q.launch-q.planned)/1e6, 3)
	rec.PlannedMs, rec.LagMs = &planned, &lag
	if q.ready > q.planned {
		held := Round(float64(min(q.ready, q.launch)-q.planned)/1e6, 3)
		rec.HeldMs = &held
	}
}

// windowDone reports whether the window has closed, or an agentic trace's
// sessions have all ended, and every request launched in it has ended.
func (l *trafficLoad) windowDone() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	traceDone := l.sessionsSent.Load() && l.unitsOpen.Load() == 0
	return (l.now() >= l.windowEnd || traceDone) && l.windowOpen.Load() == 0
}

// request runs one streaming request, unit i's turn t, to its end; nil
// when it finished or ctx was cancelled, a rejection when the server
// refused it at admission (req.rejected, counted in refused). Either way it
// hands the request's record to record (inWindow: it was launched inside
// the window). It returns the generated text when later turns need it.
func (l *trafficLoad) request(ctx context.Context, req *trafficRequest, i, t int, body []byte, inWindow bool) (answer string, err error) {
	rctx, stall, stop := newStallTimer(ctx, l.firstChunkTimeout)
	defer stop()
	var tr requestTrace
	tr.begin(req.launch)
	var rec result.RequestRecord
	tr.promptTokens = l.work.describe(i, t, &rec)
	req.promptTokens = tr.promptTokens
	if tr.promptTokens == 0 {
		tr.promptTokens = l.meta.promptTokens
	}
	var ts *tokenStream
	var text strings.Builder
	wantText := l.work.wantsAnswers()
	eof := false
	defer func() {
		tr.end = l.now()
		cancelled := err == nil && !eof && ctx.Err() != nil
		switch {
		case isRejection(err):
			req.rejected, req.end = true, tr.end
			l.refused.Add(1)
		case cancelled && tr.first < 0:
			l.unanswered.Add(1)
		}
		r := tr.record(l.origin, l.meta, eof && req.finished, cancelled, err)
		r.DatasetEntry, r.Conversation, r.Turn, r.PrefixGroup = rec.DatasetEntry, rec.Conversation, rec.Turn, rec.PrefixGroup
		if ts != nil {
			r.CachedTokens = ts.cached
			if ts.cached != nil {
				req.cached = *ts.cached
			}
		}
		r.InWindow = inWindow
		req.schedule(&r)
		rec = r
		if l.record != nil {
			l.record(&rec)
		}
	}()
	ts, err = openTokenStream(rctx, l.client, l.url, l.path, body, stall, l.idleTimeout, l.now, &tr)
	if err != nil {
		return "", asRejection(l.client.Engine(), streamError(ctx, rctx, err))
	}
	defer ts.close()
	for {
		ch, err := ts.next()
		tr.outputTokens = ts.outputTokens()
		req.reasoning, req.firstAnswer = ts.reasoningTokens(), ts.firstAnswer
		if err == io.EOF {
			req.end, req.finished = ch.at, ts.finished
			req.tokens = ts.outputTokens()
			req.lastTok = ts.lastTok
			eof = true
			if err := ts.short(l.work.exact(i, t)); err != nil {
				req.finished = false
				return "", err
			}
			return text.String(), nil
		}
		if err != nil {
			return "", asRejection(l.client.Engine(), streamError(ctx, rctx, err))
		}
		if wantText && ch.Text {
			var d chunkDetails
			if json.Unmarshal(ts.rd.Data(), &d) == nil {
				text.WriteString(d.text())
			}
		}
		if ch.first {
			req.first = ch.at // TTFT: the first chunk of any kind, as for decode
		}
	}
}

// trafficWindow is what a traffic cell's window measured
// (docs/method.md#traffic), computed by trafficStats.
type trafficWindow struct {
	measuredS                 float64
	launched, completed, good int
	unfinished                int
	achievedRPS, goodputRPS   float64
	goodputShare              float64
	e2e, ttft, tbt            [3]float64 // median, p90, p99 (ms)
	e2eMean                   float64
	concurrencyAvg            float64
	// outputTokens are the output tokens of the window's completed
	// requests, outputTPS them ÷ measuredS.
	outputTokens int64
	outputTPS    float64
	// dists are the cell's latency distributions (docs/method.md#metric-names).
	dists []distribution
	// turnTTFTs are the window's TTFTs by conversation turn (1-based);
	// nil outside conversations.
	turnTTFTs map[int][]float64
	// rejected: the window's requests the server refused at admission
	// (launched, never good: docs/method.md#goodput).
	rejected int
	// reasoning: a window request's stream carried reasoning, so the
	// cell has its phases' distributions (docs/method.md#reasoning);
	// unanswered counts the completed ones that sent reasoning and never
	// an answer token, unansweredTokens the most output tokens one of
	// them had.
	reasoning        bool
	unanswered       int
	unansweredTokens int64
}

// trafficStats computes a window's metrics from every request's span: the
// requests launched in [windowStart, windowEnd) are the window's; each
// meets slo when its own TTFT, its own mean time between tokens and its own
// end-to-end latency are each at most the limit (docs/method.md#goodput);
// the time-averaged concurrency integrates every request's [launch, end)
// over the window, so that it equals achieved rate × mean e2e latency in
// steady state (Little's law). A request still open counts as open until
// windowEnd.
func trafficStats(reqs []trafficRequest, windowStart, windowEnd int64, slo spec.TrafficSLO) trafficWindow {
	var w trafficWindow
	span := windowEnd - windowStart
	if span <= 0 {
		return w
	}
	w.measuredS = float64(span) / 1e9
	var e2es, ttfts, tbts []float64
	var ph phases
	var inFlightNs float64
	for _, q := range reqs {
		end := q.end
		if end < 0 || end > windowEnd {
			end = windowEnd
		}
		if start := max(q.launch, windowStart); end > start {
			inFlightNs += float64(end - start)
		}
		if q.launch < windowStart || q.launch >= windowEnd {
			continue
		}
		w.launched++
		ph.add(q)
		if q.first >= 0 {
			ttfts = append(ttfts, float64(q.first-q.launch)/1e6)
			if q.turn > 0 {
				if w.turnTTFTs == nil {
					w.turnTTFTs = map[int][]float64{}
				}
				w.turnTTFTs[q.turn] = append(w.turnTTFTs[q.turn], float64(q.first-q.launch)/1e6)
			}
		}
		if q.end < 0 {
			w.unfinished++
			continue
		}
		if q.rejected {
			w.rejected++
		}
		if !q.finished {
			continue
		}
		w.completed++
		w.outputTokens += q.tokens
		e2e := float64(q.end-q.launch) / 1e6
		e2es = append(e2es, e2e)
		w.e2eMean += e2e
		ttft := float64(q.first-q.launch) / 1e6
		tbt := 0.0 // one token: no gap, as vllm bench serve counts it for goodput
		if q.tokens > 1 && q.lastTok > q.first {
			tbt = float64(q.lastTok-q.first) / 1e6 / float64(q.tokens-1)
			tbts = append(tbts, tbt)
		}
		if within(slo.TTFTMs, ttft) && within(slo.TBTMs, tbt) && within(slo.E2EMs, e2e) {
			w.good++
		}
	}
	if w.completed > 0 {
		w.e2eMean /= float64(w.completed)
	}
	w.achievedRPS = float64(w.launched) / w.measuredS
	w.goodputRPS = float64(w.good) / w.measuredS
	w.outputTPS = float64(w.outputTokens) / w.measuredS
	if w.launched > 0 {
		w.goodputShare = float64(w.good) / float64(w.launched)
	}
	w.concurrencyAvg = inFlightNs / float64(span)
	w.e2e = [3]float64{percentile(e2es, 50), percentile(e2es, 90), percentile(e2es, 99)}
	w.ttft = [3]float64{percentile(ttfts, 50), percentile(ttfts, 90), percentile(ttfts, 99)}
	w.tbt = [3]float64{percentile(tbts, 50), percentile(tbts, 90), percentile(tbts, 99)}
	// tbt_ms is each request's TPOT under its older name: tpot_ms holds the same samples.
	w.dists = []distribution{{metric.E2EMs, e2es, 1}, {metric.TTFTMs, ttfts, 1}, {metric.TBTMs, tbts, 3}, {metric.TPOTMs, tbts, 3}}
	if ph.reasoning {
		w.reasoning, w.unanswered, w.unansweredTokens = true, ph.unanswered, ph.unansweredTokens
		w.dists = append(w.dists, ph.dists()...)
	}
	if w.completed == 0 {
		// A latency of a window in which no request completed is
		// unmeasured, not 0, though some first tokens came: the table's
		// fields keep 0 and read as unmeasured (TrafficCell.Value), the
		// naming rule's statistics are left out.
		w.turnTTFTs = nil
		for i := range w.dists {
			w.dists[i].xs = nil
		}
	}
	return w
}

// phases gathers a window's reasoning phases (docs/method.md#reasoning):
// each request's TTFO (first answer chunk − launch), and of the completed
// ones the tokens of each phase and each phase's rate.
type phases struct {
	reasoning               bool
	ttfos, thought, answer  []float64
	thoughtRate, answerRate []float64
	unanswered              int
	unansweredTokens        int64
}

// add counts window request q.
func (p *phases) add(q trafficRequest) {
	p.reasoning = p.reasoning || q.reasoning > 0
	if q.firstAnswer >= 0 {
		p.ttfos = append(p.ttfos, float64(q.firstAnswer-q.launch)/1e6)
	}
	if q.end < 0 || !q.finished {
		return
	}
	content := q.tokens - q.reasoning
	p.thought = append(p.thought, float64(q.reasoning))
	p.answer = append(p.answer, float64(content))
	if q.firstAnswer < 0 {
		if q.reasoning > 0 {
			p.unanswered++
			p.unansweredTokens = max(p.unansweredTokens, q.tokens)
		}
		return
	}
	// A phase shorter than a burst (docs/method.md#bursts) came in one
	// read: it has no rate (its tokens ÷ microseconds would be one).
	if q.reasoning > 0 && q.first >= 0 && q.firstAnswer-q.first >= burstGap {
		p.thoughtRate = append(p.thoughtRate, float64(q.reasoning)/(float64(q.firstAnswer-q.first)/1e9))
	}
	if content > 1 && q.lastTok-q.firstAnswer >= burstGap {
		p.answerRate = append(p.answerRate, float64(content-1)/(float64(q.lastTok-q.firstAnswer)/1e9))
	}
}

// dists are the phases' distributions.
func (p *phases) dists() []distribution {
	return []distribution{{metric.TTFOMs, p.ttfos, 1}, {metric.ReasoningTokens, p.thought, 1}, {metric.ContentTokens, p.answer, 1},
		{metric.ReasoningTPS, p.thoughtRate, 3}, {metric.ContentTPS, p.answerRate, 3}}
}

// within reports whether v meets the limit (nil: no limit).
func within(limit *float64, v float64) bool { return limit == nil || v <= *limit }

// TrafficPrompts is how many prompts a distinct workload builds for a
// context's traffic cells (docs/method.md#traffic): request i sends prompt
// i mod TrafficPrompts (or the decode cells' prompts, when they are more).
const TrafficPrompts = 32

// Traffic measures traffic cell ref of traffic block t (nil: the spec has
// none of that name, an error cell) with the context's decode request
// bodies (request i sends bodies[i mod len(bodies)]).
func (m *Meter) Traffic(ctx context.Context, ref vocab.CellRef, t *spec.Traffic, bodies [][]byte) (result.TrafficCell, error) {
	start := time.Now()
	cell := result.TrafficCell{Traffic: ref.Matrix, Context: ref.Context, Rate: ref.Rate, Concurrency: ref.Concurrency}
	if t == nil {
		cell.Status, cell.Reasons = vocab.StatusError, []result.CellReason{{Code: result.ReasonNoTrafficBlock, Names: map[string]string{result.NameBlock: ref.Matrix}}}
		cell.Reason = m.reasonText(cell.Reasons)
		return cell, nil
	}
	cell.Arrivals, cell.Burstiness, cell.Seed, cell.MaxOutstanding = t.Arrivals, t.Burstiness, t.Seed, t.MaxOutstanding
	mo := m.MaxOutput
	if m.MaxModelLen > 0 && ref.Context+mo > m.MaxModelLen {
		cell.Status, cell.Reasons = vocab.StatusError, []result.CellReason{{Code: result.ReasonContextTooLong, Figures: map[string]float64{
			result.FigContext: float64(ref.Context), result.FigMaxOutput: float64(mo), result.FigMaxModelLen: float64(m.MaxModelLen)}}}
		cell.Reason = m.reasonText(cell.Reasons)
		return cell, nil
	}
	if len(bodies) == 0 {
		cell.Status, cell.Reason = vocab.StatusError, "no prompt was built for the context"
		return cell, nil
	}
	cell.Schedule = trafficSchedule(ref, t, "", workloadOptions(m.Workload), m.Prompts.Path(), mo, "")
	// Request i sends bodies[i mod len(bodies)]: their count (the decode
	// cells' streams, for a distinct workload) decides which prompt an
	// index sends.
	cell.Schedule.Settings["prompts"] = strconv.Itoa(len(bodies))
	cell.Schedule.Seal()
	c, err := m.trafficOnce(ctx, ref, t, bodiesWork{bodies: bodies, promptTokens: int64(ref.Context), exactTokens: int64(mo)}, &cell)
	c.ElapsedS = Round(time.Since(start).Seconds(), 2)
	return c, err
}

// WorkloadTraffic measures traffic cell ref of traffic block t over its
// named workload w: the requests a plan of w gives (requests.Scheduler over
// the server's /tokenize), a dataset's entries, drawn lengths, shared
// prefixes, conversations. A plan that cannot be made is an error cell
// saying why.
func (m *Meter) WorkloadTraffic(ctx context.Context, ref vocab.CellRef, t *spec.Traffic, w *spec.Workload) (result.TrafficCell, error) {
	start := time.Now()
	cell := result.TrafficCell{Traffic: ref.Matrix, Context: ref.Context, Rate: ref.Rate, Concurrency: ref.Concurrency,
		Arrivals: t.Arrivals, Burstiness: t.Burstiness, Seed: t.Seed, MaxOutstanding: t.MaxOutstanding}
	planned := plannedRequests(t, ref)
	if w.Prefix.IsDial() && ref.Concurrency > 0 {
		// Each lap past the plan's end has a cache salt of its own, so its
		// first requests find the shared tokens cold: a closed loop plans
		// 64 requests a slot, not 16, for a lap to cost the dial little.
		planned *= dialLaps
	}
	plan, err := m.Prompts.plan(ctx, w, requests.ScheduleConfig{Requests: planned, Context: ref.Context, MaxOutput: m.MaxOutput, MaxModelLen: m.MaxModelLen})
	if err != nil {
		if ctx.Err() != nil {
			return cell, context.Cause(ctx)
		}
		cell.Status, cell.Reason = vocab.StatusError, fmt.Sprintf("workload %q: %v", w.Name, err)
		return cell, nil
	}
	// The plan's reuse warning counts the requests planned; the cell's
	// (after it ran) counts those it sent.
	cell.Warnings = append(cell.Warnings, slices.DeleteFunc(slices.Clone(plan.Warnings), func(w warning.Warning) bool { return w.Code == warning.DatasetReused })...)
	// The counts are the ShareGPT filter's (vllm bench serve's): a JSONL or
	// messages dataset has no filter, so its counts would be zeros.
	if plan.Examined > 0 && w.Dataset != nil && w.Dataset.Format == workload.FormatShareGPT {
		d := plan.Dropped
		// Its detail's words: report.WarningText.
		counts := warning.New(warning.DatasetCounts, "dataset "+w.DatasetText, "", map[string]float64{warning.FigExamined: float64(plan.Examined + d.TooFewTurns), warning.FigKept: float64(plan.Usable), warning.FigDropped: float64(d.Total()),
			warning.FigTooFewTurns: float64(d.TooFewTurns), warning.FigPromptTooShort: float64(d.PromptTooShort), warning.FigOutputTooShort: float64(d.OutputTooShort),
			warning.FigPromptTooLong: float64(d.PromptTooLong), warning.FigTotalTooLong: float64(d.TotalTooLong)})
		if m.WarningText != nil {
			counts = m.WarningText(counts)
		}
		cell.Warnings = append(cell.Warnings, counts)
	}
	var datasetID func(requests.Request) string
	if w.Prompt == workload.DatasetPrompt {
		ids := map[int]string{}
		if w.Dataset != nil {
			for _, e := range w.Dataset.Entries {
				if e.ID != "" {
					ids[e.Index] = e.ID
				}
			}
		}
		datasetID = func(r requests.Request) string {
			if id, ok := ids[r.Entry]; ok {
				return id
			}
			return strconv.Itoa(r.Entry)
		}
	}
	cell.Schedule = trafficSchedule(ref, t, w.Name, w.Options, m.Prompts.Path(), m.MaxOutput, plan.DatasetSHA256)
	fields := m.Prompts.fieldsFor(w)
	cell.Workload, cell.Prompts = w.Name, promptForm(fields, plan)
	work, err := newPlanWork(fields, plan, w.IgnoreEOS, datasetID)
	if err != nil {
		cell.Status, cell.Reason = vocab.StatusError, fmt.Sprintf("workload %q: %v", w.Name, err)
		return cell, nil
	}
	if w.Prefix.IsDial() {
		dial := w.Prefix.HitRate
		cell.PrefixHitRateDial = &dial
		work.dialSalt = newDialSalt()
		if mismatch, ok := prefixBlockMismatch(w.Prefix, m.KVBlock); ok {
			cell.Warnings = append(cell.Warnings, mismatch)
		}
	}
	if plan.TraceSHA256 != "" {
		traceSettings(cell.Schedule, w.Trace, plan.TraceSHA256)
		for _, tw := range traceWarnings(w, plan) {
			if m.WarningText != nil {
				tw = m.WarningText(tw)
			}
			cell.Warnings = append(cell.Warnings, tw)
		}
	}
	var times []float64
	if _, agent := agentWork(work); t.Arrivals == vocab.ArrivalsTrace || agent {
		times = plan.Arrivals // an agentic trace's sessions start at their times, whatever the block's arrivals
	}
	c, err := m.trafficOnceAt(ctx, ref, t, work, &cell, times)
	c.ElapsedS = Round(time.Since(start).Seconds(), 2)
	if off, ok := prefixHitOffDial(&c); ok && err == nil {
		c.Warnings = append(c.Warnings, m.worded([]warning.Warning{off})...)
	}
	if reuse, ok := plan.SentReuseWarning(work.sentCounts()); ok && err == nil {
		c.Warnings = append(c.Warnings, reuse)
	}
	return c, err
}

// plannedRequests is how many requests to plan for a cell: what its
// warm-up and window launch at the rate, or 16 per slot of a closed loop,
// at least 64; the cell reuses them in order should it send more.
func plannedRequests(t *spec.Traffic, ref vocab.CellRef) int {
	n := 16 * ref.Concurrency
	if ref.Rate > 0 {
		n = int(math.Ceil(ref.Rate*(t.WarmUp+t.Duration).Seconds())) + 1
	}
	return max(n, 64)
}

// trafficOnce runs the warm-up, the window and the drain of one cell.
func (m *Meter) trafficOnce(ctx context.Context, ref vocab.CellRef, t *spec.Traffic, work trafficWork, cell *result.TrafficCell) (result.TrafficCell, error) {
	return m.trafficOnceAt(ctx, ref, t, work, cell, nil)
}

// trafficOnceAt is trafficOnce with the arrivals at times (seconds since
// the cell's origin) when not nil: a trace's.
func (m *Meter) trafficOnceAt(ctx context.Context, ref vocab.CellRef, t *spec.Traffic, work trafficWork, cell *result.TrafficCell, times []float64) (result.TrafficCell, error) {
	settled, why, err := m.settleServer(ctx)
	cell.SettleS = Round(settled.Seconds(), 3)
	if err != nil {
		return *cell, err
	}
	if why != "" {
		cell.Status, cell.Reason = vocab.StatusError, why
		return *cell, nil
	}
	cellCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	cell.Concurrency = ref.Concurrency
	before, _, beforeErr := m.Server.Client.Metrics(ctx) // the prefix cache's counters at the start
	l := m.newTrafficLoad(ref, t, work)
	l.times = times
	l.wg.Add(1)
	go l.dispatch(cellCtx)
	stop := func() bool { return m.stopTraffic(ref, l, cancel) }
	watch, err := m.watchTraffic(ctx, ref, t, l, stop)
	if err != nil {
		return *cell, err
	}
	if watch.failed {
		return m.failTraffic(ctx, l.failErr, cell, stop)
	}
	// Cool-down arrivals kept the load steady while the window's last
	// requests finished; closing them aborts them (docs/method.md#traffic).
	// Stopped once: a second wait would double the timeout and its warning.
	stopped := stop()
	if watch.saturated != nil && stopped {
		// The requests ended: the window is the part run.
		l.windowEnd = min(l.windowEnd, int64(watch.stoppedAt))
	}
	if !stopped {
		cell.Status, cell.Reasons = vocab.StatusError, []result.CellReason{{Code: result.ReasonRequestsNotStopped, Figures: map[string]float64{result.FigTimeoutS: streamsExitTimeout.Seconds()}}}
		cell.Reason = m.reasonText(cell.Reasons)
		return *cell, nil
	}
	reqs := l.copyRequests()
	select {
	case <-l.failed:
		// A request failed as the cell closed: the window is complete.
	default:
	}
	m.trafficFigures(ctx, ref, t, l, reqs, watch, cell, before, beforeErr == nil)
	return *cell, nil
}

// newTrafficLoad prepares one cell's requests, its origin now.
func (m *Meter) newTrafficLoad(ref vocab.CellRef, t *spec.Traffic, work trafficWork) *trafficLoad {
	closed := ref.Concurrency
	if _, ok := agentWork(work); ok {
		closed = 0 // sessions start at their recorded times
	}
	return &trafficLoad{client: m.Server.Client, path: m.Prompts.Path(), url: m.Server.Client.Base() + m.Prompts.Path(), work: work, closed: closed,
		origin: time.Now(), firstChunkTimeout: firstTokenTimeout(ref.Context, max(t.MaxOutstanding, ref.Concurrency)), idleTimeout: m.StreamIdleTimeout,
		sched: newArrivalSchedule(t.Arrivals, ref.Rate, t.Burstiness, t.Seed), slots: make(chan struct{}, t.MaxOutstanding),
		windowStart: int64(t.WarmUp), windowEnd: int64(t.WarmUp + t.Duration), failed: make(chan struct{}), stall: clientStall(),
		record: m.record, meta: requestMeta{cell: ref.Name(), phase: vocab.PhaseTraffic, promptTokens: int64(ref.Context)}}
}

// copyRequests copies the cell's requests as they are now.
func (l *trafficLoad) copyRequests() []trafficRequest {
	l.mu.Lock()
	defer l.mu.Unlock()
	reqs := make([]trafficRequest, len(l.reqs))
	for i, q := range l.reqs {
		reqs[i] = *q
	}
	return reqs
}

// trafficDrain is how long a cell waits for its window's requests to
// finish after the window closes.
func trafficDrain(t *spec.Traffic) time.Duration { return max(trafficDrainMin, t.Duration) }

// stopTraffic cancels the cell's requests and waits for them; false, with
// a warning, when they did not end in time (their goroutines may still
// write the requests' times).
func (m *Meter) stopTraffic(ref vocab.CellRef, l *trafficLoad, cancel context.CancelFunc) bool {
	cancel()
	if waitFor(&l.wg, streamsExitTimeout) {
		return true
	}
	m.warn(warning.New(warning.StreamsNotClosed, "", "",
		map[string]float64{warning.FigTimeoutS: streamsExitTimeout.Seconds(), warning.FigTrafficCell: 1}).About(ref.Name()))
	return false
}

// failTraffic ends a cell one of whose requests failed with err: its
// requests stopped, the error is the cell's, or the run's when ctx ended
// or the server is in trouble.
func (m *Meter) failTraffic(ctx context.Context, err error, cell *result.TrafficCell, stop func() bool) (result.TrafficCell, error) {
	stop()
	if ctx.Err() != nil {
		return *cell, context.Cause(ctx)
	}
	if terr := m.trouble(ctx, err); terr != nil {
		return *cell, terr
	}
	cell.Status, cell.Reason = vocab.StatusError, err.Error()
	return *cell, nil
}

// trafficWatch is what a cell saw while its requests ran.
type trafficWatch struct {
	polls   []poll      // the window's request gauges, for waitedInARow
	scrapes scrapeTimes // the window's scrapes of the server's metrics
	drained bool        // the window's requests all ended within the drain
	failed  bool        // a request failed: the load's failErr
	// queue is the cell's queue at each poll from its start, warm-up
	// included, for the saturation rule; saturated is the rule's evidence
	// when it stopped the cell, at stoppedAt (since the load's origin).
	queue     queueTrend
	saturated *saturationEvidence
	stoppedAt time.Duration
}

// saturationRuleOf is the saturation rule of cell ref of traffic block t:
// its span 0 (never checked) for a closed loop, whose queue its
// concurrency bounds, where saturation_after is "0s", and for a trace's
// arrivals unless saturation_after is set: the rule's bounds are those of
// Poisson arrivals at a constant rate, and a trace's bursts make a
// bounded queue look unbounded (docs/method.md#saturation).
func saturationRuleOf(ref vocab.CellRef, t *spec.Traffic) saturationRule {
	if ref.Rate <= 0 || t.SaturationOff || t.Arrivals == vocab.ArrivalsTrace && t.SaturationAfter == 0 {
		return saturationRule{}
	}
	return saturationRule{span: SaturationAfter(t.SaturationAfter, t.Duration), rate: ref.Rate}
}

// watchTraffic follows the cell's requests every pollEvery until the
// window's have ended or the drain after the window is over: it scrapes
// the server's request gauges inside the window and reports progress. It
// returns early with failed when a request failed, and, the requests
// stopped, with the error when ctx ends or the server exits.
func (m *Meter) watchTraffic(ctx context.Context, ref vocab.CellRef, t *spec.Traffic, l *trafficLoad, stop func() bool) (trafficWatch, error) {
	var watch trafficWatch
	rule := saturationRuleOf(ref, t)
	drain := trafficDrain(t)
	windowEnd := l.origin.Add(t.WarmUp + t.Duration)
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	lastProgress := time.Time{}
	for {
		select {
		case <-ctx.Done():
			stop()
			return watch, context.Cause(ctx)
		case <-l.failed:
			watch.failed = true
			return watch, nil
		case <-tick.C:
		}
		if err := m.Server.Exited(); err != nil {
			stop()
			return watch, err
		}
		now := time.Now()
		inWindow := !now.Before(l.origin.Add(t.WarmUp)) && now.Before(windowEnd)
		switch {
		case inWindow:
			p := m.pollTraffic(ctx, l, &watch.scrapes)
			watch.polls = append(watch.polls, p)
			if rule.span > 0 {
				watch.queue.add(queueSample{at: p.at, gauges: p.gauges, waiting: p.waiting, outstanding: float64(l.inFlight.Load())})
				if ev, ok := rule.check(&watch.queue); ok {
					// Now, not at the tick: the scrape took its time.
					watch.saturated, watch.stoppedAt = &ev, time.Since(l.origin)
					return watch, nil
				}
			}
		case rule.span > 0 && now.Before(windowEnd):
			// The warm-up's queue is evidence too; its scrapes are not
			// the window's.
			var warm scrapeTimes
			p := m.pollTraffic(ctx, l, &warm)
			watch.queue.add(queueSample{at: p.at, gauges: p.gauges, waiting: p.waiting, outstanding: float64(l.inFlight.Load())})
		}
		if l.windowDone() {
			watch.drained = true
			return watch, nil
		}
		if now.After(windowEnd.Add(drain)) {
			return watch, nil
		}
		if now.Sub(lastProgress) >= 500*time.Millisecond {
			m.trafficProgress(ref, t, l, now)
			lastProgress = now
		}
	}
}

// pollTraffic scrapes the server's request gauges once, its time taken
// into scrapes.
func (m *Meter) pollTraffic(ctx context.Context, l *trafficLoad, scrapes *scrapeTimes) poll {
	s, at, took, err := m.Server.Client.TimedMetrics(ctx)
	scrapes.add(took)
	p := poll{at: at.Sub(l.origin)}
	if err == nil && s.HasRequests {
		p.gauges = true
		p.waiting, _ = waitingOf(s, m.Server.Client.Engine().Status())
	}
	return p
}

// trafficProgress reports the cell's stage at now: warming up, or
// measuring and how far into the window.
func (m *Meter) trafficProgress(ref vocab.CellRef, t *spec.Traffic, l *trafficLoad, now time.Time) {
	stage, el := result.StageWarmUp, now.Sub(l.origin)
	if !now.Before(l.origin.Add(t.WarmUp)) {
		stage, el = result.StageMeasuring, min(now.Sub(l.origin.Add(t.WarmUp)), t.Duration)
	}
	m.progress(event.CellProgress{Cell: ref, Stage: stage, Elapsed: el, Window: t.Duration,
		Active: int(l.inFlight.Load())})
}

// trafficFigures sets the cell's figures, warnings and status from its
// requests (reqs, the load l) and what watch saw of the server; before is
// the server's metrics at the cell's start (beforeOK: scraped).
func (m *Meter) trafficFigures(ctx context.Context, ref vocab.CellRef, t *spec.Traffic, l *trafficLoad, reqs []trafficRequest, watch trafficWatch, cell *result.TrafficCell, before promread.Snapshot, beforeOK bool) {
	if l.sessionsSent.Load() && l.unitsOpen.Load() == 0 {
		// An agentic trace that ended inside the window: the window is
		// the trace's, up to its last call's end.
		end := l.windowStart
		for _, q := range reqs {
			end = max(end, q.end)
		}
		l.windowEnd = min(l.windowEnd, end+1)
	}
	w := trafficStats(reqs, l.windowStart, l.windowEnd, t.SLO)
	if s := t.SLO; s.TTFTMs != nil || s.TBTMs != nil || s.E2EMs != nil {
		// What goodput was judged by, so that a comparison judges each
		// request of the window by it (result.TrafficSLO.Met).
		cell.SLO = &result.TrafficSLO{TTFTMs: s.TTFTMs, TBTMs: s.TBTMs, E2EMs: s.E2EMs}
	}
	m.prefixCacheHitRate(ctx, cell, before, beforeOK)
	if w.completed == 0 && watch.saturated == nil {
		cell.Warnings = append(cell.Warnings, warning.New(warning.NoCompletion, "", "", map[string]float64{warning.FigLaunched: float64(w.launched), warning.FigWindowS: t.Duration.Seconds()}))
	}
	cell.Warnings = append(cell.Warnings, noAnswerWarnings(w)...)
	setTrafficCounts(cell, w)
	if sw, ok := agentWork(l.work); ok {
		cell.Sessions = sessionFigures(sw, reqs, l.windowStart, l.windowEnd)
	}
	var gap []warning.Warning
	cell.Rejections, gap = m.cellRejections(ctx, before, beforeOK, rejectionCount{refused: int(l.refused.Load()), unanswered: int(l.unanswered.Load())})
	cell.Warnings = append(cell.Warnings, gap...)
	setTrafficLatencies(cell, w, m.Percentiles)
	cell.CapHits = int(l.capHits.Load())
	if !watch.drained && watch.saturated == nil {
		drain := trafficDrain(t)
		cell.Warnings = append(cell.Warnings, warning.New(warning.Unfinished, "", "", map[string]float64{warning.FigUnfinished: float64(w.unfinished), warning.FigDrainS: drain.Seconds()}))
	}
	var slow []warning.Warning
	cell.Polling, slow = watch.scrapes.record()
	cell.Warnings = append(cell.Warnings, slow...)
	cell.Status, cell.Reasons = trafficStatus(watch.polls, cell.CapHits, t.MaxOutstanding, w.unfinished, w.rejected, w.launched)
	if ev := watch.saturated; ev != nil {
		// Past the server's capacity: the rest of the window saved.
		ran := max(0, watch.stoppedAt-t.WarmUp)
		cell.Status, cell.Reasons = vocab.StatusSaturated, []result.CellReason{ev.reason(SaturationAfter(t.SaturationAfter, t.Duration), t.Duration, ran, ref.Rate)}
	}
	lag, behind := judgeLag(clientLags(reqs, l.windowStart, l.windowEnd), ref.Rate)
	cell.LagMsP50, cell.LagMsP99, cell.LagMsMax = Round(lag.p50, 3), Round(lag.p99, 3), Round(lag.max, 3)
	if behind {
		cell.Warnings = append(cell.Warnings, lag.warning())
		if lagUnmeasurable(cell.Status) {
			cell.Status, cell.Reasons = vocab.StatusUnmeasurable, []result.CellReason{lag.reason()}
		}
	}
	cell.Reason = ""
	if cell.Reasons != nil {
		cell.Reason = m.reasonText(cell.Reasons)
	}
	cell.Warnings = m.worded(cell.Warnings)
}

// prefixCacheHitRate sets the cell's prefix cache hit rate from the
// server's counters before (beforeOK: scraped) and now, when both have
// them and the cache was queried.
func (m *Meter) prefixCacheHitRate(ctx context.Context, cell *result.TrafficCell, before promread.Snapshot, beforeOK bool) {
	if after, _, err := m.Server.Client.Metrics(ctx); err == nil && beforeOK && before.HasPrefixCache && after.HasPrefixCache {
		if dq := after.PrefixCacheQueries - before.PrefixCacheQueries; dq > 0 {
			cell.SetValue(metric.Must(vocab.PhaseTraffic, metric.PrefixCacheHitRate), Round((after.PrefixCacheHits-before.PrefixCacheHits)/dq, 4))
		}
	}
}

// PrefixHitDialBound is how far (a share, 0..1) a cell's measured
// prefix-cache hit rate may be from its workload's dial before the cell
// warns (warning.PrefixHitOffDial).
const PrefixHitDialBound = 0.10

// prefixHitOffDial is the warning of a measured cell whose server-counted
// prefix-cache hit rate is more than PrefixHitDialBound from the rate its
// workload dialled; false without a dial, a measured rate or such a gap.
func prefixHitOffDial(c *result.TrafficCell) (warning.Warning, bool) {
	if c.PrefixHitRateDial == nil || !c.Status.Measured() {
		return warning.Warning{}, false
	}
	got, ok := c.Metric(metric.PrefixCacheHitRate)
	if !ok || math.Abs(got-*c.PrefixHitRateDial) <= PrefixHitDialBound {
		return warning.Warning{}, false
	}
	return warning.New(warning.PrefixHitOffDial, "", "", map[string]float64{
		warning.FigDialled: *c.PrefixHitRateDial, warning.FigMeasured: got, warning.FigBound: PrefixHitDialBound}), true
}

// lagUnmeasurable reports whether a cell of status whose client fell
// behind its schedule is unmeasurable: whatever the server did, the
// window did not offer the load asked for, so it cannot say how the
// server serves it. Except a saturated cell: its server's queue grew
// without bound under the smaller load the client did offer, so it
// cannot keep up with the rate asked either (docs/method.md#saturation);
// the lag is then warned, and the cell stays saturated.
func lagUnmeasurable(status vocab.Status) bool {
	return status != vocab.StatusSaturated
}

// prefixBlockMismatch is the warning of a dial whose block is not a
// whole number of the server's stated KV blocks (kvBlock, 0: unstated):
// the server caches whole blocks only, so it serves fewer of the shared
// tokens than dialled; false when they fit or the server states none.
func prefixBlockMismatch(p workload.Prefix, kvBlock int64) (warning.Warning, bool) {
	if !p.IsDial() || kvBlock <= 1 || int64(p.Block)%kvBlock == 0 {
		return warning.Warning{}, false
	}
	return warning.New(warning.PrefixBlockMismatch, "", "", map[string]float64{
		warning.FigBlock: float64(p.Block), warning.FigServerBlock: float64(kvBlock)}), true
}

// dialLaps is how many times plannedRequests' closed-loop plan a dialled
// workload's cell plans.
const dialLaps = 4

// dialSeq numbers the cells that dial a hit rate, for their cache salts.
var dialSeq atomic.Int64

// dialProcess tells this process's salts from another's.
var dialProcess = strconv.FormatInt(time.Now().UnixNano(), 36)

// newDialSalt is a cache_salt prefix no other cell of any run has used.
func newDialSalt() string {
	return "slogate-dial-" + dialProcess + "-" + strconv.FormatInt(dialSeq.Add(1), 10)
}

// noAnswerWarnings is the no_answer warning of a window some of whose
// completed requests streamed reasoning and never an answer: their TTFO
// is unmeasured, not 0 (docs/method.md#reasoning); none otherwise.
func noAnswerWarnings(w trafficWindow) []warning.Warning {
	if w.unanswered == 0 {
		return nil
	}
	return []warning.Warning{warning.New(warning.NoAnswer, "", "", map[string]float64{warning.FigUnanswered: float64(w.unanswered),
		warning.FigCompleted: float64(w.completed), warning.FigTokens: float64(w.unansweredTokens)})}
}

// setTrafficCounts sets the cell's turn TTFTs, its window and its request
// counts from its window's stats.
func setTrafficCounts(cell *result.TrafficCell, w trafficWindow) {
	for turn, ttfts := range w.turnTTFTs {
		cell.SetValue(metric.Must(vocab.PhaseTraffic, metric.TurnName(turn)), Round(percentile(ttfts, 50), 1))
	}
	cell.MeasuredS = Round(w.measuredS, 3)
	cell.Launched, cell.Completed, cell.Unfinished = w.launched, w.completed, w.unfinished
	cell.Rejected = w.rejected
	if w.launched > 0 {
		cell.RejectedShare = Round(float64(w.rejected)/float64(w.launched), 4)
	}
}

// setTrafficLatencies sets the cell's rates, latencies, distributions (at
// percentiles) and concurrency from its window's stats.
func setTrafficLatencies(cell *result.TrafficCell, w trafficWindow, percentiles []float64) {
	cell.AchievedRPS = Round(w.achievedRPS, 3)
	cell.GoodputRPS, cell.GoodputShare = Round(w.goodputRPS, 3), Round(w.goodputShare, 4)
	cell.E2EMs, cell.E2EMsP90, cell.E2EMsP99, cell.E2EMsMean = Round(w.e2e[0], 1), Round(w.e2e[1], 1), Round(w.e2e[2], 1), Round(w.e2eMean, 1)
	cell.TTFTMs, cell.TTFTMsP90, cell.TTFTMsP99 = Round(w.ttft[0], 1), Round(w.ttft[1], 1), Round(w.ttft[2], 1)
	cell.TBTMs, cell.TBTMsP90, cell.TBTMsP99 = Round(w.tbt[0], 3), Round(w.tbt[1], 3), Round(w.tbt[2], 3)
	for _, d := range w.dists {
		storeDistribution(vocab.PhaseTraffic, d, percentiles, func(m metric.Metric, v float64) { cell.SetValue(m, v) })
	}
	cell.ConcurrencyAvg = Round(w.concurrencyAvg, 3)
	if w.completed > 0 {
		cell.SetValue(metric.Must(vocab.PhaseTraffic, metric.OutputTPS), Round(w.outputTPS, 3))
	}
}
