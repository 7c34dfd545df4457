package sim

import (
	"container/list"
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
	model       model
	numBlocks   int
	runCap      int     // max requests running at once
	prefixCache bool    // --enable-prefix-caching
	specTokens  int     // num_speculative_tokens; 0 = no speculative decoding
	acceptLen   float64 // mean tokens per step per sequence (1 without speculation)
	stepScale   float64 // multiplies the profile's step time (speculation on/off vs the seed)
	profAccept  float64 // tokens per step the profile was measured with
	tbt         time.Duration
	ttft        time.Duration
	prefillTPS  float64
	seed        uint64
}

// request is one generation request as the engine sees it. Prompts are
// kept only as a hash and a length.
type request struct {
	promptTokens int
	maxTokens    int
	hash         uint64

	// Owned by the step loop.
	arrived   time.Duration // virtual time of arrival
	admitted  time.Duration
	firstAt   time.Duration // cold prefill: when the first token is due
	warm      bool
	decoding  bool
	firstTok  time.Duration // virtual time of the first token
	blocks    int
	generated int
	residual  float64 // speculative sampling: expected minus emitted tokens so far

	// Shared with the HTTP handler.
	pending atomic.Int64  // tokens generated and not yet sent
	aborted atomic.Bool   // the client went away
	notify  chan struct{} // poked (non-blocking) when pending grows
}

func newRequest(promptTokens, maxTokens int, hash uint64) *request {
	return &request{promptTokens: promptTokens, maxTokens: maxTokens, hash: hash, notify: make(chan struct{}, 1)}
}

// engine is the simulated vLLM engine core: one goroutine stepping a
// continuously batched set of running requests in (virtual) time that
// tracks the wall clock.
type engine struct {
	p   engineParams
	rng *rand.Rand

	mu       sync.Mutex
	incoming []*request
	wake     chan struct{}
	stopped  chan struct{} // closed when the loop ends

	// Owned by the loop.
	base        time.Time
	now         time.Duration
	waiting     []*request
	running     []*request
	usedBlocks  int
	prefillBusy time.Duration
	cache       *prefixCache
	timer       *time.Timer
	batch       []*request
	st          stats
	virtual     bool // tests: time jumps instead of passing

	snapMu sync.Mutex
	snap   stats
}

func newEngine(p engineParams) *engine {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &engine{
		p: p, rng: rand.New(rand.NewPCG(p.seed, p.seed^0x9e3779b97f4a7c15)),
		wake: make(chan struct{}, 1), stopped: make(chan struct{}),
		cache: newPrefixCache(p.numBlocks * blockSize), timer: t,
		st: stats{ttft: histogram{bounds: ttftBuckets}, itl: histogram{bounds: itlBuckets}},
	}
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
	e.intake()
	e.admit()
	e.firstTokens()
	e.batch = e.batch[:0]
	for _, r := range e.running {
		if r.decoding {
			e.batch = append(e.batch, r)
		}
	}
	e.publish()
	if len(e.batch) > 0 {
		step := e.stepTime(e.batch)
		e.now += step
		if !e.sleepUntil(ctx, e.now, false) {
			return true, false
		}
		e.decode(e.batch, step)
		return true, true
	}
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
		r.arrived = e.now
		e.waiting = append(e.waiting, r)
	}
	e.waiting = dropAborted(e.waiting, nil)
	e.running = dropAborted(e.running, func(r *request) { e.usedBlocks -= r.blocks; e.st.aborted++ })
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
// a slot is free and their whole KV (prompt + max_tokens) fits.
func (e *engine) admit() {
	for len(e.waiting) > 0 && len(e.running) < e.p.runCap {
		r := e.waiting[0]
		need := (r.promptTokens + r.maxTokens + blockSize - 1) / blockSize
		if e.usedBlocks+need > e.p.numBlocks {
			break
		}
		e.waiting[0] = nil
		e.waiting = e.waiting[1:]
		e.usedBlocks += need
		r.blocks = need
		r.admitted = e.now
		e.running = append(e.running, r)
		e.st.prefixQueries += int64(r.promptTokens)
		if e.p.prefixCache && e.cache.lookup(r.hash) {
			r.warm = true
			e.st.prefixHits += int64((r.promptTokens - 1) / blockSize * blockSize)
			continue
		}
		start := max(e.now, e.prefillBusy)
		r.firstAt = start + seconds(float64(r.promptTokens)/e.prefillRate(r.promptTokens))
		e.prefillBusy = r.firstAt
	}
}

// warmReady is when a prefix-cache hit gets its first token: the seed's
// warm TTFT at this context and the number of requests in the system.
func (e *engine) warmReady(r *request) time.Duration {
	if e.p.ttft > 0 {
		return r.admitted + e.p.ttft
	}
	n := float64(len(e.running) + len(e.waiting))
	return r.admitted + seconds(e.p.model.warmTTFT.at(float64(r.promptTokens), n))
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
		r.firstTok = e.now
		e.cache.insert(r.hash, r.promptTokens)
		e.st.promptTokens += int64(r.promptTokens)
		e.st.ttft.observe((e.now - r.arrived).Seconds())
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
	if e.p.tbt > 0 {
		return time.Duration(float64(e.p.tbt) * e.p.acceptLen)
	}
	ctx := 0
	for _, r := range batch {
		ctx += r.promptTokens
	}
	rate := e.p.model.seqRate.at(float64(ctx)/float64(len(batch)), float64(len(batch)))
	return seconds(e.p.profAccept / rate * e.p.stepScale)
}

// decode ends one step: every sequence in batch gets its tokens.
func (e *engine) decode(batch []*request, step time.Duration) {
	for _, r := range batch {
		if r.aborted.Load() {
			continue
		}
		n := e.sampleTokens(r)
		e.st.itl.observe(step.Seconds())
		e.emit(r, n)
	}
	e.st.steps++
}

// emit delivers n tokens to r and retires it when it reached max_tokens;
// it reports whether r left the running list.
func (e *engine) emit(r *request, n int) bool {
	n = min(n, r.maxTokens-r.generated)
	r.generated += n
	e.st.generationTokens += int64(n)
	r.pending.Add(int64(n))
	select {
	case r.notify <- struct{}{}:
	default:
	}
	if r.generated < r.maxTokens {
		return false
	}
	e.usedBlocks -= r.blocks
	e.st.success++
	for i, x := range e.running {
		if x == r {
			last := len(e.running) - 1
			copy(e.running[i:], e.running[i+1:])
			e.running[last] = nil
			e.running = e.running[:last]
			break
		}
	}
	return true
}

// sampleTokens draws how many tokens a sequence emits this step: without
// speculation one; with it a random count in [1, k+1] whose running mean is
// held at the acceptance length (error diffusion, so short windows see the
// configured rate, not sampling noise). Spec-decode counters move as vLLM's.
func (e *engine) sampleTokens(r *request) int {
	if e.p.specTokens == 0 {
		return 1
	}
	k := e.p.specTokens
	x := e.p.acceptLen + r.residual + (e.rng.Float64()*2-1)*1.5
	n := min(max(int(math.Round(x)), 1), k+1)
	r.residual += e.p.acceptLen - float64(n)
	// The last step of a request needs only what is left (vLLM drafts the
	// same, and counts only the tokens it emits as accepted).
	n = min(n, max(r.maxTokens-r.generated, 1))
	e.st.specDrafts++
	e.st.specDraftTokens += int64(k)
	e.st.specAccepted += int64(n - 1)
	for i := 0; i < n-1 && i < len(e.st.specPerPos); i++ {
		e.st.specPerPos[i]++
	}
	return n
}

func (e *engine) prefillRate(tokens int) float64 {
	if e.p.prefillTPS > 0 {
		return e.p.prefillTPS
	}
	return e.p.model.prefill.at(float64(tokens), 1)
}

// publish copies the loop's counters for /metrics and the stats log.
func (e *engine) publish() {
	e.st.running = len(e.running)
	e.st.waiting = len(e.waiting)
	e.st.usedBlocks = e.usedBlocks
	e.snapMu.Lock()
	e.snap = e.st
	e.snapMu.Unlock()
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// maxCacheEntries bounds the prefix cache's bookkeeping, so a stream of
// distinct short prompts cannot grow the simulator's memory.
const maxCacheEntries = 1 << 16

// prefixCache remembers recently prefilled prompts by hash, evicting the
// least recently used beyond the KV capacity in tokens (or beyond
// maxCacheEntries prompts).
type prefixCache struct {
	capacity int
	tokens   int
	order    *list.List // front = most recent; values are cacheEntry
	index    map[uint64]*list.Element
	resetReq bool // guarded by engine.mu
}

type cacheEntry struct {
	hash   uint64
	tokens int
}

func newPrefixCache(capacity int) *prefixCache {
	return &prefixCache{capacity: capacity, order: list.New(), index: map[uint64]*list.Element{}}
}

func (c *prefixCache) lookup(h uint64) bool {
	el, ok := c.index[h]
	if ok {
		c.order.MoveToFront(el)
	}
	return ok
}

func (c *prefixCache) insert(h uint64, tokens int) {
	if el, ok := c.index[h]; ok {
		c.order.MoveToFront(el)
		return
	}
	c.index[h] = c.order.PushFront(cacheEntry{h, tokens})
	c.tokens += tokens
	for (c.tokens > c.capacity || c.order.Len() > maxCacheEntries) && c.order.Len() > 1 {
		old := c.order.Remove(c.order.Back()).(cacheEntry)
		delete(c.index, old.hash)
		c.tokens -= old.tokens
	}
}

func (c *prefixCache) reset() {
	c.order.Init()
	clear(c.index)
	c.tokens = 0
}
