package sim

import (
	"context"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// blockSize is vLLM's KV cache block size in tokens.
const blockSize = 16

// maxLag is how far the step loop may fall behind real time before it gives
// up catching up (a busy machine): beyond it, the lost time is dropped
// rather than bursting tokens out to make up for it.
const maxLag = 250 * time.Millisecond

// engineParams are the settled numbers the step loop runs with.
type engineParams struct {
	model          model
	maxLen         int // max_model_len: the request-token histograms' buckets
	numBlocks      int
	runCap         int     // max requests running at once
	prefixCache    bool    // --enable-prefix-caching
	numSpeculative int     // num_speculative_tokens; 0 = no speculative decoding
	acceptLen      float64 // mean tokens per step per sequence (1 without speculation)
	stepScale      float64 // multiplies the profile's step time (speculation on/off vs the seed)
	profAccept     float64 // tokens per step the profile was measured with
	tbt            time.Duration
	ttft           time.Duration
	prefillTPS     float64
	seed           uint64
	index          int      // data-parallel rank (engine label, log prefix, seeds)
	noise          float64  // --sim-noise: std dev of the log of the step-time factor
	bootFactor     float64  // --sim-boot-noise's factor of this process start (1 without)
	preempt        bool     // --sim-preempt: reserve KV as tokens come, preempt when it runs out
	draftsOff      bool     // --sim-spec-off: speculation configured, never run
	slowAt         SlowBand // --sim-slow-at-concurrency
	// slowdown multiplies the time of every step, prefill and decode (and
	// so TTFT, which is prefill): --sim-slowdown; 0 (unset) means 1. A
	// build whose kernels are uniformly slower, for a gate to catch.
	slowdown float64
	// observe, when set, is told what each iteration did (on the loop's
	// goroutine): the seam through which an engine-specific surface reports
	// at its own cadence (SGLang's scheduler metrics and batch log lines).
	observe func(stepEvent)
	// ratio, when set, admits as SGLang's PrefillAdder does instead of
	// reserving each request's whole output: KV is allocated as tokens
	// come, and requests are retracted when the pool runs out.
	ratio *tokenRatio
}

// tokenRatio is SGLang's new_token_ratio admission (managers/scheduler.py,
// schedule_policy.py, environ.py; docs/sglang.md#admission): a request is
// admitted when its prompt and clipped max_new_tokens fit in the free pool
// beside the running requests' clipped remaining outputs × the ratio; the
// ratio starts at init, falls by decay each decode step to min, and after
// a retraction is re-estimated from the requests left.
type tokenRatio struct {
	init, min, decay float64
	clip             int // SGLANG_CLIP_MAX_NEW_TOKENS_ESTIMATION
	retractSteps     int // SGLANG_RETRACT_DECODE_STEPS
}

// sglangTokenRatio is SGLang's defaults at schedule_conservativeness 1:
// init 0.7, min 0.7 × 0.14, over 600 decode steps; clip 4096; 20 steps.
func sglangTokenRatio() *tokenRatio {
	const init = 0.7
	minRatio := init * 0.14
	return &tokenRatio{init: init, min: minRatio, decay: (init - minRatio) / 600, clip: 4096, retractSteps: 20}
}

// stepEvent is one iteration's work as an engine-specific surface sees it:
// a prefill batch (requests admitted this iteration; SGLang logs and sets
// its gauges there) or a decode step.
type stepEvent struct {
	decode       bool          // a decode step ran (else: requests were admitted)
	now          time.Duration // the engine's clock after the work
	newSeqs      int           // requests admitted (prefill batch)
	newTokens    int64         // their prompt tokens not found in the prefix cache
	cachedTokens int64         // their prompt tokens found in it
	running      int           // requests running after the work
	waiting      int           // requests waiting after it
	heldTokens   int           // KV tokens the running requests hold (prompt + generated)
	st           *stats        // the loop's counters (read only, on the loop's goroutine)
	batch        int           // sequences in the decode step
}

// noiseCorrelation is the correlation time of --sim-noise's jitter: the
// step-time factor is exp(x − σ²/2) with x an Ornstein–Uhlenbeck process of
// stationary standard deviation σ, advanced by each step's duration. Steps
// a few milliseconds apart share most of their jitter, and windows seconds
// apart differ by about σ, as a real GPU's clock and thermal drift do
// (independent per-step noise would average out over a window's thousands
// of steps and leave runs identical).
const noiseCorrelation = 2 * time.Second

// request is one generation request as the engine sees it. Prompts are
// kept only as a hash, a length and their prefix-cache block keys.
type request struct {
	promptTokens int
	maxTokens    int
	hash         uint64
	chain        blockChain // the prompt's block keys (prefix caching)
	// limit is how many tokens the request generates: maxTokens, or with
	// ignore_eos false where the model stops (eos: its last token is EOS).
	limit int
	eos   bool
	// reasoning is how many of the first output tokens a chat stream
	// sends as reasoning (a server launched with --reasoning-parser).
	reasoning int
	// ask is what the request asked of logprobs: with them, the output is
	// the prompt's greedy output (greedy.go).
	ask logprobsAsk

	// Owned by the step loop.
	arrived  time.Duration // virtual time of arrival
	admitted time.Duration
	firstAt  time.Duration // cold prefill: when the first token is due
	warm     bool
	decoding bool
	firstTok time.Duration // virtual time of the first token
	lastOut  time.Duration // virtual time of its last output (emit)
	// arrivedDropped and outDropped are the engine's dropped time
	// (engine.dropped) at its arrival and at its last output.
	arrivedDropped, outDropped time.Duration
	blocks                     int
	generated                  int
	residual                   float64 // speculative sampling: expected minus emitted tokens so far
	unsent                     int     // tokens of this step, handed over at publish
	resumed                    bool    // preempted once: its re-prefill is not a first token
	held                       []*cachedBlock
	// scheduled is when it was first admitted (vLLM's scheduled_ts, which
	// a preemption does not move); preemptions counts them.
	scheduled   time.Duration
	wasAdmitted bool
	preemptions int

	// cachedTokens is the prompt tokens the prefix cache served at the
	// request's first scheduling (vLLM's num_cached_tokens); -1 before.
	cachedTokens atomic.Int64

	// Shared with the HTTP handler.
	pending atomic.Int64  // tokens generated and not yet sent
	aborted atomic.Bool   // the client went away
	notify  chan struct{} // poked (non-blocking) when pending grows
}

// newRequest is a request whose prompt is known only by hash (tests): its
// block keys are derived from the hash, so two such prompts share every
// block when their hashes are equal and none otherwise. It runs to
// maxTokens.
func newRequest(promptTokens, maxTokens int, hash uint64) *request {
	r := &request{promptTokens: promptTokens, maxTokens: maxTokens, limit: maxTokens, hash: hash, notify: make(chan struct{}, 1)}
	for i := range promptTokens {
		r.chain.add(int(mix64(hash^uint64(i/blockSize)) >> 40))
	}
	r.chain.clip()
	r.cachedTokens.Store(-1)
	return r
}

// engine is the simulated vLLM engine core: one goroutine stepping a
// continuously batched set of running requests in (virtual) time that
// tracks the wall clock.
type engine struct {
	p        engineParams
	rng      *rand.Rand
	noiseRNG *rand.Rand
	noiseX   float64 // the jitter process's state (see noiseCorrelation)

	mu       sync.Mutex
	incoming []*request
	wake     chan struct{}
	stopped  chan struct{} // closed when the loop ends

	// Owned by the loop.
	base        time.Time
	now         time.Duration
	dropped     time.Duration // real time the loop gave up catching up on (sleepUntil)
	waiting     []*request
	running     []*request
	usedBlocks  int
	prefillBusy time.Duration
	cache       *prefixCache
	timer       *time.Timer
	batch       []*request
	outbox      []*request // requests with tokens of this step (unsent)
	stepTokens  int        // prompt tokens computed and tokens generated since the last publish
	st          stats
	virtual     bool // tests: time jumps instead of passing

	snapMu sync.Mutex
	snap   stats

	// Published with the snapshot, read by the data-parallel load balancer.
	nWaiting, nRunning atomic.Int64

	newTokenRatio float64 // SGLang's new_token_ratio (engineParams.ratio)

	// sleepLevel is vLLM's sleep mode (POST /sleep?level=N): 0 awake, else
	// the level; while it is set the loop runs no step, so arrivals and
	// running requests wait until POST /wake_up.
	sleepLevel atomic.Int32
}

func newEngine(p engineParams) *engine {
	if p.slowdown == 0 {
		p.slowdown = 1
	}
	t := time.NewTimer(time.Hour)
	t.Stop()
	seed := p.seed + uint64(p.index)*0x9e3779b97f4a7c15
	noiseRNG := rand.New(rand.NewPCG(seed, 0x6e6f697365))
	e := &engine{
		p: p, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		noiseRNG: noiseRNG, noiseX: p.noise * noiseRNG.NormFloat64(),
		wake: make(chan struct{}, 1), stopped: make(chan struct{}),
		cache: newPrefixCache(), timer: t,
		st: newStats(p.maxLen),
	}
	if p.ratio != nil {
		e.newTokenRatio = p.ratio.init
	}
	return e
}

// submit hands a request to the loop.
func (e *engine) submit(r *request) {
	e.mu.Lock()
	e.incoming = append(e.incoming, r)
	e.mu.Unlock()
	e.poke()
}

// poke wakes the loop if it is idle or waiting for a prefill.
func (e *engine) poke() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// load is the data-parallel load balancer's score, as vLLM's
// (DPLBAsyncMPClient.get_core_engine_for_request): 4 × waiting + running.
func (e *engine) load() int64 {
	e.mu.Lock()
	in := int64(len(e.incoming))
	e.mu.Unlock()
	return 4*(in+e.nWaiting.Load()) + e.nRunning.Load()
}

// snapshot returns the counters as of the last step.
func (e *engine) snapshot() stats {
	e.snapMu.Lock()
	defer e.snapMu.Unlock()
	return e.snap
}

// resetPrefixCache empties the prefix cache (POST /reset_prefix_cache).
func (e *engine) resetPrefixCache() {
	e.mu.Lock()
	e.cache.resetReq = true
	e.mu.Unlock()
	e.poke()
}

// sleep puts the engine to sleep at level (POST /sleep), wakeUp wakes it
// (POST /wake_up). A sleeping vLLM engine in "abort" mode (the default)
// also aborts its in-flight requests; the simulator keeps them waiting, as
// the "keep" mode does.
func (e *engine) sleep(level int) {
	e.sleepLevel.Store(int32(level))
	e.poke()
}

func (e *engine) wakeUp() {
	e.sleepLevel.Store(0)
	e.poke()
}

// asleep reports whether the engine sleeps.
func (e *engine) asleep() bool { return e.sleepLevel.Load() > 0 }

// run is the step loop; it returns when ctx is done.
func (e *engine) run(ctx context.Context) {
	defer close(e.stopped)
	e.base = time.Now()
	for {
		busy, ok := e.iterate(ctx)
		if !ok {
			return
		}
		if busy {
			continue
		}
		// Idle until something arrives.
		select {
		case <-ctx.Done():
			return
		case <-e.wake:
			e.now = max(e.now, time.Since(e.base))
		}
	}
}

// iterate runs one scheduler iteration: take arrivals, admit, finish due
// prefills, then run one decode step (or wait for the next prefill). It
// reports busy=false when there is nothing to do, ok=false when ctx ended.
func (e *engine) iterate(ctx context.Context) (busy, ok bool) {
	if lvl := int(e.sleepLevel.Load()); lvl != e.st.sleepLevel || lvl > 0 {
		e.st.sleepLevel = lvl
		if lvl > 0 {
			e.publish()
			return false, true
		}
	}
	e.intake()
	runBefore := len(e.running)
	e.admit()
	if e.p.observe != nil && len(e.running) > runBefore {
		ev := stepEvent{newSeqs: len(e.running) - runBefore}
		for _, r := range e.running[runBefore:] {
			hit := int64(len(r.held) * blockSize) // right after admission, r holds its hit blocks
			ev.cachedTokens += hit
			ev.newTokens += int64(r.promptTokens) - hit
		}
		e.report(ev)
	}
	e.firstTokens()
	if e.p.preempt || e.p.ratio != nil {
		e.reserveStep()
	}
	e.batch = e.batch[:0]
	for _, r := range e.running {
		if r.decoding {
			e.batch = append(e.batch, r)
		}
	}
	e.balance()
	if len(e.batch) > 0 {
		step := e.stepTime(e.batch)
		e.now += step
		if !e.sleepUntil(ctx, e.now, false) {
			return true, false
		}
		e.decode(e.batch)
		if ra := e.p.ratio; ra != nil {
			e.newTokenRatio = max(e.newTokenRatio-ra.decay, ra.min)
		}
		if e.p.observe != nil {
			e.report(stepEvent{decode: true, batch: len(e.batch)})
		}
		e.publish()
		return true, true
	}
	e.publish()
	if next, ok := e.nextFirstToken(); ok {
		return true, e.sleepUntil(ctx, next, true)
	}
	return false, true
}

// sleepUntil waits for virtual time t; with wakeable, an arrival ends the
// wait early (the clock then moves to the real time). It reports false when
// ctx is done.
func (e *engine) sleepUntil(ctx context.Context, t time.Duration, wakeable bool) bool {
	if e.virtual {
		e.now = t
		return true
	}
	d := t - time.Since(e.base)
	if d < -maxLag {
		e.base = e.base.Add(-d - maxLag) // drop the time we cannot make up
		e.dropped += -d - maxLag
		d = -maxLag
	}
	if d <= 0 {
		if wakeable {
			e.now = t
		}
		return ctx.Err() == nil
	}
	e.timer.Reset(d)
	var wake chan struct{}
	if wakeable {
		wake = e.wake
	}
	select {
	case <-ctx.Done():
		e.timer.Stop()
		return false
	case <-e.timer.C:
		if wakeable {
			e.now = t
		}
	case <-wake:
		e.timer.Stop()
		e.now = min(t, max(e.now, time.Since(e.base)))
	}
	return true
}

// wall is the time since virtual time since, when the engine had dropped
// dropped, as a wall clock reads it: the virtual time between, and the
// time the step loop dropped in between (sleepUntil), which a real
// engine's clock counts. vLLM times its TTFT and inter-token histograms
// by the wall clock (v1/metrics/stats.py), so a stall of the machine is
// in them as it is in what the client sees.
func (e *engine) wall(since, dropped time.Duration) time.Duration {
	return e.now - since + e.dropped - dropped
}

// intake moves new requests to the waiting queue and drops aborted ones.
func (e *engine) intake() {
	e.mu.Lock()
	in := e.incoming
	e.incoming = nil
	reset := e.cache.resetReq
	e.cache.resetReq = false
	e.mu.Unlock()
	if reset {
		e.cache.reset()
	}
	for _, r := range in {
		r.arrived, r.arrivedDropped = e.now, e.dropped
		e.waiting = append(e.waiting, r)
	}
	e.waiting = dropAborted(e.waiting, nil)
	e.running = dropAborted(e.running, func(r *request) { e.usedBlocks -= r.blocks; e.st.aborted++; e.releaseBlocks(r) })
}

func dropAborted(rs []*request, free func(*request)) []*request {
	kept := rs[:0]
	for _, r := range rs {
		if r.aborted.Load() {
			if free != nil {
				free(r)
			}
			continue
		}
		kept = append(kept, r)
	}
	clear(rs[len(kept):])
	return kept
}

// admit moves waiting requests to running, first come first served, while
// a slot is free and their KV fits: the whole of it (prompt + max_tokens),
// or with --sim-preempt only what they hold now (prompt + tokens generated
// before a preemption), as vLLM's scheduler allocates.
func (e *engine) admit() {
	for len(e.waiting) > 0 && len(e.running) < e.p.runCap {
		r := e.waiting[0]
		need := blocksFor(r.promptTokens + r.maxTokens)
		if e.p.preempt || e.p.ratio != nil {
			need = blocksFor(r.promptTokens + r.generated)
		}
		if e.usedBlocks+need > e.p.numBlocks || e.p.ratio != nil && !e.ratioAdmits(r) {
			break
		}
		e.waiting[0] = nil
		e.waiting = e.waiting[1:]
		e.usedBlocks += need
		r.blocks = need
		r.admitted = e.now
		if !r.wasAdmitted {
			r.scheduled, r.wasAdmitted = e.now, true
		}
		e.running = append(e.running, r)
		cached := e.lookup(r)
		full := cached > 0 && cached == (r.promptTokens-1)/blockSize*blockSize
		prefill := r.promptTokens - cached
		switch {
		case r.resumed && full:
			prefill = max(r.generated, 1) // recompute what the preemption dropped
		case r.resumed:
			prefill += r.generated
		case full:
			r.warm = true
			continue
		}
		start := max(e.now, e.prefillBusy)
		if cached == 0 || r.resumed && full {
			r.firstAt = start + seconds(float64(prefill)/e.prefillRate(prefill)*e.p.slowdown)
			e.prefillBusy = r.firstAt
			continue
		}
		// A partial hit prefills only the uncached tokens, as vLLM's
		// scheduler schedules request.num_tokens − num_computed_tokens
		// (docs/vllm.md#prefix-caching), at the cost of extending a cached
		// context: T(all) − T(cached), T(n) = n ÷ rate(n), and no less
		// than the uncached tokens at the whole context's rate. That is
		// never more than T(all), a miss's prefill: the hit's first token
		// comes sooner than a miss's by the prefill it skips. (It was
		// floored at the warm TTFT, so a later turn of a conversation, a
		// hit, came slower than its uncached first turn.)
		total := cached + prefill
		t := float64(total)/e.prefillRate(total) - float64(cached)/e.prefillRate(cached)
		t = min(max(t, float64(prefill)/e.prefillRate(total)), float64(total)/e.prefillRate(total))
		e.prefillBusy = start + seconds(t*e.p.slowdown)
		r.firstAt = e.prefillBusy
	}
}

// lookup finds r's longest cached prefix in whole blocks (at most prompt −
// 1 tokens), holds those blocks and returns their tokens; a new request's
// lookup counts in vllm:prefix_cache_queries and _hits and sets its
// cached tokens (a preempted one's does not: vLLM counts those apart).
func (e *engine) lookup(r *request) int {
	if !e.p.prefixCache {
		r.cachedTokens.CompareAndSwap(-1, 0)
		return 0
	}
	keys := r.chain.blocks[:min(len(r.chain.blocks), (r.promptTokens-1)/blockSize)]
	r.held = e.cache.acquire(keys, r.held[:0])
	cached := len(r.held) * blockSize
	if !r.resumed {
		e.st.prefixQueries += int64(r.promptTokens)
		e.st.prefixHits += int64(cached)
	}
	r.cachedTokens.CompareAndSwap(-1, int64(cached))
	return cached
}

// cachePrompt caches the blocks of r's prompt once it is computed.
func (e *engine) cachePrompt(r *request) {
	if e.p.prefixCache {
		r.held = e.cache.hold(r.chain.blocks[len(r.held):], r.held)
	}
}

// releaseBlocks lets go of r's cached blocks (finished, aborted or
// preempted); a finished request first caches the full blocks its output
// filled, as vLLM caches a request's blocks as they fill: every output
// token but the last, whose KV is never computed (an EOS among them).
func (e *engine) releaseBlocks(r *request) {
	if !e.p.prefixCache {
		return
	}
	if r.generated == r.limit && len(r.held) == len(r.chain.blocks) {
		r.held = e.cache.hold(r.chain.extend(genTokenID, r.generated-1), r.held)
	}
	e.cache.release(r.held)
	r.held = r.held[:0]
}

// warmReady is when a prefix-cache hit gets its first token: the seed's
// warm TTFT at this context and the number of requests in the system.
func (e *engine) warmReady(r *request) time.Duration {
	if e.p.ttft > 0 {
		return r.admitted + time.Duration(float64(e.p.ttft)*e.p.slowdown)
	}
	n := float64(len(e.running) + len(e.waiting))
	return r.admitted + seconds(e.p.model.warmAt(float64(r.promptTokens), n)*e.p.slowdown)
}

func (e *engine) readyAt(r *request) time.Duration {
	if r.warm {
		return e.warmReady(r)
	}
	return r.firstAt
}

// firstTokens finishes the prefill of every running request that is due.
func (e *engine) firstTokens() {
	for i := 0; i < len(e.running); i++ {
		r := e.running[i]
		if r.decoding || e.readyAt(r) > e.now {
			continue
		}
		r.decoding = true
		e.cachePrompt(r)
		if !r.resumed {
			r.firstTok = e.now
			cached := max(int(r.cachedTokens.Load()), 0)
			e.st.promptTokens += int64(r.promptTokens)
			e.st.promptComputed += int64(r.promptTokens - cached)
			e.st.promptCached += int64(cached)
			e.stepTokens += r.promptTokens - cached
			e.st.ttft.observe(e.wall(r.arrived, r.arrivedDropped).Seconds())
		} else {
			// vLLM's first output after a preemption is not a prefill's
			// (OutputProcessor clears is_prefilling at the first output):
			// it is an inter-token gap, the preemption's wait in it.
			e.st.itl.observe(e.wall(r.lastOut, r.outDropped).Seconds())
		}
		if e.emit(r, 1) {
			i--
		}
	}
}

// nextFirstToken is the earliest time a prefilling request is due.
func (e *engine) nextFirstToken() (time.Duration, bool) {
	best, ok := time.Duration(math.MaxInt64), false
	for _, r := range e.running {
		if !r.decoding {
			best, ok = min(best, e.readyAt(r)), true
		}
	}
	return best, ok
}

// stepTime is the duration of one decode step for batch.
func (e *engine) stepTime(batch []*request) time.Duration {
	step := float64(e.baseStepTime(batch)) * e.p.slowdown
	if e.p.slowAt.applies(len(batch)) {
		step *= e.p.slowAt.Factor
	}
	return time.Duration(step)
}

// baseStepTime is stepTime without --sim-slowdown and --sim-slow-at-concurrency.
func (e *engine) baseStepTime(batch []*request) time.Duration {
	if e.p.tbt > 0 {
		return e.jitter(time.Duration(float64(e.p.tbt) * e.p.acceptLen))
	}
	ctx := 0
	for _, r := range batch {
		ctx += r.promptTokens
	}
	rate := e.p.model.seqRate.at(float64(ctx)/float64(len(batch)), float64(len(batch)))
	return e.jitter(seconds(e.p.profAccept / rate * e.p.stepScale))
}

// jitter multiplies a step's duration by --sim-noise's log-normal factor
// (mean 1; see noiseCorrelation) and by the process start's
// --sim-boot-noise factor.
func (e *engine) jitter(step time.Duration) time.Duration {
	if e.p.bootFactor > 0 {
		step = time.Duration(float64(step) * e.p.bootFactor)
	}
	sigma := e.p.noise
	if sigma == 0 {
		return step
	}
	a := math.Exp(-float64(step) / float64(noiseCorrelation))
	e.noiseX = e.noiseX*a + sigma*math.Sqrt(1-a*a)*e.noiseRNG.NormFloat64()
	return time.Duration(float64(step) * math.Exp(e.noiseX-sigma*sigma/2))
}

// blocksFor is the number of KV blocks tokens occupy.
func blocksFor(tokens int) int { return (tokens + blockSize - 1) / blockSize }

// reserveStep (--sim-preempt) grows every decoding request's KV to hold
// the tokens this step may add (one, plus the drafts with speculative
// decoding), oldest first. When the cache is full it preempts the most
// recently admitted running request, as vLLM's scheduler does (recompute
// mode: the request loses its KV, goes back to the front of the waiting
// queue and re-prefills its prompt and the tokens generated so far).
func (e *engine) reserveStep() {
	ahead := 1
	if e.p.numSpeculative > 0 && !e.p.draftsOff {
		ahead += e.p.numSpeculative
	}
	for i := 0; i < len(e.running); i++ {
		r := e.running[i]
		if !r.decoding {
			continue
		}
		need := blocksFor(r.promptTokens+r.generated+ahead) - r.blocks
		for need > 0 && e.usedBlocks+need > e.p.numBlocks {
			victim := e.victim()
			e.preemptRequest(victim)
			if victim == r {
				break
			}
		}
		if !r.decoding {
			i-- // r itself was preempted and left the running list
			continue
		}
		if need > 0 {
			e.usedBlocks += need
			r.blocks += need
		}
	}
}

// victim is the request to preempt when the pool is full: vLLM's most
// recently admitted; with SGLang's admission retract_decode's choice (the
// "length" policy: the fewest tokens generated, then the longest prompt),
// after which new_token_ratio is re-estimated from the requests that stay.
func (e *engine) victim() *request {
	ra := e.p.ratio
	if ra == nil {
		return e.running[len(e.running)-1]
	}
	v := e.running[0]
	for _, r := range e.running[1:] {
		if r.generated < v.generated || r.generated == v.generated && r.promptTokens > v.promptTokens {
			v = r
		}
	}
	decoded, maxNew, left := 0, 0, 0
	for _, r := range e.running {
		if r != v {
			decoded += r.generated
			maxNew += r.maxTokens
			left++
		}
	}
	if maxNew > 0 {
		e.newTokenRatio = min(1, float64(decoded+ra.retractSteps*left)/float64(maxNew))
	}
	return v
}

// ratioAdmits is SGLang's PrefillAdder check for r: its prompt (less what
// the prefix cache holds) and min(max_new_tokens, clip) must stay below
// the free pool less the reservations — the running requests' clipped
// remaining outputs × new_token_ratio, and the whole clipped outputs of
// those admitted in this same batch. (SGLang clips a request's
// max_new_tokens to the pool, so one always fits an empty one.)
func (e *engine) ratioAdmits(r *request) bool {
	ra := e.p.ratio
	offset := 0.0
	for _, x := range e.running {
		rest := float64(min(x.maxTokens-x.generated, ra.clip))
		if x.admitted != e.now {
			rest *= e.newTokenRatio
		}
		offset += rest
	}
	free := float64((e.p.numBlocks - e.usedBlocks) * blockSize)
	need := float64(r.promptTokens + min(r.maxTokens-r.generated, ra.clip))
	return need < free-offset
}

// preemptRequest frees r's KV and puts it at the front of the waiting queue.
func (e *engine) preemptRequest(r *request) {
	e.releaseBlocks(r)
	e.usedBlocks -= r.blocks
	r.blocks = 0
	r.decoding, r.warm = false, false
	r.resumed = r.generated > 0 // before its first token it is simply a new request again
	r.preemptions++
	e.removeRunning(r)
	e.waiting = append(e.waiting, nil)
	copy(e.waiting[1:], e.waiting)
	e.waiting[0] = r
	e.st.preemptions++
}

// decode ends one step: every sequence in batch gets its tokens.
func (e *engine) decode(batch []*request) {
	for _, r := range batch {
		if r.aborted.Load() {
			continue
		}
		n := e.sampleTokens(r)
		// vLLM observes, once per output of a request however many tokens
		// it holds, the time since the request's output before
		// (IterationStats.update_from_output, v1/metrics/stats.py).
		e.st.itl.observe(e.wall(r.lastOut, r.outDropped).Seconds())
		e.emit(r, n)
	}
	e.st.steps++
}

// emit delivers n tokens to r and retires it when it reached its limit
// (max_tokens, or its EOS); it reports whether r left the running list.
func (e *engine) emit(r *request, n int) bool {
	n = min(n, r.limit-r.generated)
	r.generated += n
	r.lastOut, r.outDropped = e.now, e.dropped
	e.st.generationTokens += int64(n)
	e.stepTokens += n
	if r.unsent == 0 {
		e.outbox = append(e.outbox, r)
	}
	r.unsent += n
	if r.generated < r.limit {
		return false
	}
	e.usedBlocks -= r.blocks
	e.releaseBlocks(r)
	if r.eos {
		e.st.stopped++
	} else {
		e.st.success++
	}
	e.finished(r)
	e.removeRunning(r)
	return true
}

// finished records a request that ran to its end in the per-request
// histograms, as vLLM's IterationStats.update_from_finished_request
// (v1/metrics/stats.py) computes them: e2e from arrival, queued until
// first scheduled, prefill until the first token, decode from it,
// inference from first scheduled, the time per output token over the
// tokens after the first; its prompt, output (n = 1: also the largest
// output of its request), max_tokens, preemptions, and the prompt tokens
// it computed (less those the prefix cache served).
func (e *engine) finished(r *request) {
	sec := func(d time.Duration) float64 { return max(d, 0).Seconds() }
	decode := e.now - r.firstTok
	st := &e.st
	st.e2e.observe(sec(e.now - r.arrived))
	st.queue.observe(sec(r.scheduled - r.arrived))
	st.prefill.observe(sec(r.firstTok - r.scheduled))
	st.inference.observe(sec(e.now - r.scheduled))
	st.decode.observe(sec(decode))
	tpot := 0.0
	if r.generated > 1 {
		tpot = sec(decode) / float64(r.generated-1)
	}
	st.tpot.observe(tpot)
	st.reqPrompt.observe(float64(r.promptTokens))
	st.reqGeneration.observe(float64(r.generated))
	st.reqMaxGeneration.observe(float64(r.generated))
	st.reqN.observe(1)
	st.reqMaxParam.observe(float64(r.maxTokens))
	st.reqPreemptions.observe(float64(r.preemptions))
	st.reqKVComputed.observe(float64(r.promptTokens - max(int(r.cachedTokens.Load()), 0)))
}

// removeRunning takes r off the running list, keeping the order.
func (e *engine) removeRunning(r *request) {
	for i, x := range e.running {
		if x == r {
			last := len(e.running) - 1
			copy(e.running[i:], e.running[i+1:])
			e.running[last] = nil
			e.running = e.running[:last]
			return
		}
	}
}

// sampleTokens draws how many tokens a sequence emits this step: without
// speculation one; with it a random count in [1, k+1] whose running mean is
// held at the acceptance length (error diffusion, so short windows see the
// configured rate, not sampling noise). Speculative-decoding counters move as vLLM's.
func (e *engine) sampleTokens(r *request) int {
	if e.p.numSpeculative == 0 || e.p.draftsOff {
		return 1
	}
	k := e.p.numSpeculative
	x := e.p.acceptLen + r.residual + (e.rng.Float64()*2-1)*1.5
	n := min(max(int(math.Round(x)), 1), k+1)
	r.residual += e.p.acceptLen - float64(n)
	// The last step of a request needs only what is left (vLLM drafts the
	// same, and counts only the tokens it emits as accepted).
	n = min(n, max(r.limit-r.generated, 1))
	e.st.drafts++
	e.st.draftTokens += int64(k)
	e.st.acceptedTokens += int64(n - 1)
	for i := 0; i < n-1 && i < len(e.st.acceptedPerPos); i++ {
		e.st.acceptedPerPos[i]++
	}
	return n
}

func (e *engine) prefillRate(tokens int) float64 {
	if e.p.prefillTPS > 0 {
		return e.p.prefillTPS
	}
	return e.p.model.prefill.at(float64(tokens), 1)
}

// balance publishes the queue lengths the data-parallel load balancer
// reads, as soon as this iteration has admitted what it can (vLLM's
// client counts each request it sends an engine at once, not at the
// engine's next stats).
func (e *engine) balance() {
	e.nWaiting.Store(int64(len(e.waiting)))
	e.nRunning.Store(int64(len(e.running)))
}

// publish copies the loop's counters for /metrics and the stats log at
// the end of a step, where vLLM's Scheduler.update_from_output makes its
// SchedulerStats (docs/vllm.md#metrics): the requests that finished in the
// step are gone from running, and those that arrived during it are not
// yet in waiting (vLLM's engine core adds them before the next schedule).
// An idle engine or one waiting for a prefill publishes once per
// iteration too.
func (e *engine) publish() {
	if e.stepTokens > 0 {
		e.st.iterationTokens.observe(float64(e.stepTokens))
		e.stepTokens = 0
	}
	e.st.running = len(e.running)
	e.st.waiting = len(e.waiting)
	// vllm:kv_cache_usage_perc counts the blocks requests hold now: vLLM
	// allocates a request's blocks as its tokens come (prompt, then each
	// step's), even where the simulator admits against the whole
	// prompt + max_tokens (docs/vllm.md#metrics).
	e.st.usedBlocks = e.usedBlocks
	if !e.p.preempt && e.p.ratio == nil {
		e.st.usedBlocks = 0
		for _, r := range e.running {
			e.st.usedBlocks += blocksFor(r.promptTokens + r.generated)
		}
	}
	// Cached blocks no request holds live in the KV cache's free room:
	// what running requests occupy evicts them, least recently used first.
	e.cache.trim(e.p.numBlocks - e.st.usedBlocks)
	e.balance()
	e.snapMu.Lock()
	e.snap = e.st
	e.snapMu.Unlock()
	e.deliver()
}

// deliver hands the step's tokens to their requests' handlers, after the
// step's counters are published: vLLM's output handler records a step's
// stats (vllm:generation_tokens_total and the rest) in the same pass that
// queues its outputs, before the client's coroutine can run, so a client
// that read its last token finds it counted in /metrics (AsyncLLM's
// output_handler; docs/vllm.md#metrics, "Counted before the client sees
// it").
func (e *engine) deliver() {
	for i, r := range e.outbox {
		r.pending.Add(int64(r.unsent))
		r.unsent = 0
		select {
		case r.notify <- struct{}{}:
		default:
		}
		e.outbox[i] = nil
	}
	e.outbox = e.outbox[:0]
}

// report completes ev with the loop's state and hands it to observe.
func (e *engine) report(ev stepEvent) {
	ev.now, ev.running, ev.waiting, ev.st = e.now, len(e.running), len(e.waiting), &e.st
	for _, r := range e.running {
		ev.heldTokens += r.promptTokens + r.generated
	}
	e.p.observe(ev)
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
