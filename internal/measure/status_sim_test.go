package measure

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// The shortfall rule's error rates, simulated (docs/method.md#statuses).
//
// A model of what a client sees of vLLM's request gauges: C streams, each
// request generating L tokens, one per engine step of S; the gauges are
// made at each step's end (docs/vllm.md#metrics), so a request that
// finished in a step is gone from running at its end, and a restart —
// sent δ after the finish, arriving δ later — counts only from the end of
// the step scheduled after it arrived. Held streams' requests are never
// run and never reported waiting (a front end or proxy holding them). Polls
// come every 50 ms ± 5 ms through a 2 s window; each trial starts the
// streams at random points of their requests.

// shortfallModel is one configuration of the model.
type shortfallModel struct {
	c, tokens int           // streams; tokens per request
	step      time.Duration // engine step
	delta     time.Duration // one HTTP hop
	held      int           // streams held by the server
	// hold delays every request this long before it reaches the engine,
	// somewhere the server does not report (a proxy's queue): not running,
	// not waiting.
	hold time.Duration
}

// trial simulates one window and returns its polls, every interval
// polled at intervals of about every.
func (m shortfallModel) trial(rng *rand.Rand, every time.Duration) []poll {
	S, d := float64(m.step), float64(m.delta)
	type req struct{ sent, counted, finish, first float64 }
	// The warm-up before the window: long enough for every stream to have
	// restarted; each stream's request starts at a random point.
	warm := 20 * float64(m.tokens) * S
	live := make([]req, m.c)
	stepEnd := func(t float64) float64 { return math.Ceil(t/S) * S }
	newReq := func(sent float64) req {
		counted := stepEnd(sent+d+float64(m.hold)) + S // scheduled at the step start after arrival, counted at that step's end
		return req{sent: sent, counted: counted, first: counted + d, finish: counted + float64(m.tokens-1)*S}
	}
	for i := range live {
		start := -rng.Float64() * float64(m.tokens) * S
		live[i] = newReq(start)
	}
	var polls []poll
	end := warm + float64(2*time.Second)
	next := warm
	for t := 0.0; t <= end; {
		// Advance every stream past its finished requests up to t.
		for i := range live {
			for i >= m.held && live[i].finish+d <= t {
				live[i] = newReq(live[i].finish + d)
			}
		}
		if t >= next {
			last := math.Floor(t/S) * S // the gauges are of the last step end
			p := poll{at: time.Duration(t), gauges: true, allOutstanding: true, started: m.c, decoding: m.c}
			for i, r := range live {
				if i < m.held {
					if t-r.sent < float64(transitBound) {
						p.inTransit++
					}
					continue
				}
				if r.counted <= last && last < r.finish {
					p.running++
				}
				if t < r.first && t-r.sent < float64(transitBound) {
					p.inTransit++
				}
			}
			polls = append(polls, p)
			next = t + float64(every) + (rng.Float64()*2-1)*float64(5*time.Millisecond)
		}
		t = next
		if t > end {
			break
		}
	}
	return polls
}

// TestShortfallErrorRates: with restarts alone (nothing held) the
// shortfall rule almost never makes a cell queued, whatever the step time
// and output length — the old rule (250 ms polls, no excuse for the
// requests in transit, one poll enough) did in up to half of the windows;
// with a request held it almost always does. Rates from 2,000 seeded
// windows per row.
func TestShortfallErrorRates(t *testing.T) {
	const trials = 2000
	rows := []struct {
		name      string
		m         shortfallModel
		maxFalse  float64 // nothing held: the most windows queued
		minDetect float64 // one held: the fewest windows queued
	}{
		{name: "64 × 128 tokens, 15 ms steps", m: shortfallModel{c: 64, tokens: 128, step: 15 * time.Millisecond, delta: time.Millisecond}, maxFalse: 0.001, minDetect: 0.99},
		{name: "64 × 32 tokens (speculative), 15 ms steps", m: shortfallModel{c: 64, tokens: 32, step: 15 * time.Millisecond, delta: time.Millisecond}, maxFalse: 0.001, minDetect: 0.99},
		{name: "16 × 128 tokens, 10 ms steps", m: shortfallModel{c: 16, tokens: 128, step: 10 * time.Millisecond, delta: time.Millisecond}, maxFalse: 0.001, minDetect: 0.99},
		{name: "32 × 16 tokens, 80 ms steps", m: shortfallModel{c: 32, tokens: 16, step: 80 * time.Millisecond, delta: 2 * time.Millisecond}, maxFalse: 0.001, minDetect: 0.99},
		{name: "256 × 128 tokens, 40 ms steps", m: shortfallModel{c: 256, tokens: 128, step: 40 * time.Millisecond, delta: 5 * time.Millisecond}, maxFalse: 0.001, minDetect: 0.99},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			falseNew, falseOld, detect := 0, 0, 0
			for range trials {
				if windowEvidence(row.m.trial(rng, pollEvery), row.m.c).short.shortfall() {
					falseNew++
				}
				if oldShortfall(row.m.trial(rng, 250*time.Millisecond), row.m.c) {
					falseOld++
				}
				held := row.m
				held.held = 1
				if windowEvidence(held.trial(rng, pollEvery), held.c).short.shortfall() {
					detect++
				}
			}
			fNew, fOld, det := float64(falseNew)/trials, float64(falseOld)/trials, float64(detect)/trials
			t.Logf("queued with nothing held: %.4f (the old rule: %.4f); with one request held: %.4f", fNew, fOld, det)
			if fNew > row.maxFalse || det < row.minDetect {
				t.Errorf("false queued %.4f (want ≤ %g), detection %.4f (want ≥ %g)", fNew, row.maxFalse, det, row.minDetect)
			}
		})
	}
}

// TestShortfallOfHeldRequests: every request held X ms before it reaches
// the engine, somewhere the server does not report, is found by the
// shortfall rule only when X exceeds the in-transit bound (transitBound,
// 1 s): a request younger than that without a first token is excused as in
// transit, so a shorter hold is never seen. Rates from 2,000 seeded windows
// per row (docs/method.md#statuses).
func TestShortfallOfHeldRequests(t *testing.T) {
	const trials = 2000
	models := []struct {
		name string
		m    shortfallModel
	}{
		{name: "64 × 128 tokens, 15 ms steps", m: shortfallModel{c: 64, tokens: 128, step: 15 * time.Millisecond, delta: time.Millisecond}},
		{name: "16 × 128 tokens, 10 ms steps", m: shortfallModel{c: 16, tokens: 128, step: 10 * time.Millisecond, delta: time.Millisecond}},
	}
	holds := []struct {
		hold             time.Duration
		minRate, maxRate float64
	}{
		{hold: 200 * time.Millisecond, maxRate: 0.001},
		{hold: 500 * time.Millisecond, maxRate: 0.001},
		{hold: 1500 * time.Millisecond, minRate: 0.99, maxRate: 1},
	}
	for _, mo := range models {
		for _, h := range holds {
			t.Run(fmt.Sprintf("%s, held %v", mo.name, h.hold), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(3, 4))
				m := mo.m
				m.hold = h.hold
				detect := 0
				for range trials {
					if windowEvidence(m.trial(rng, pollEvery), m.c).short.shortfall() {
						detect++
					}
				}
				rate := float64(detect) / trials
				t.Logf("every request held %v: %.4f of windows queued", h.hold, rate)
				if rate < h.minRate || rate > h.maxRate {
					t.Errorf("queued %.4f of windows, want %g to %g", rate, h.minRate, h.maxRate)
				}
			})
		}
	}
}

// oldShortfall is the rule this package had before: fewer than C running
// while C were outstanding in at least a quarter of the polls and at least
// two of them, no excuse for requests in transit.
func oldShortfall(polls []poll, c int) bool {
	short := 0
	for _, p := range polls {
		if p.running < float64(c) {
			short++
		}
	}
	return short >= 2 && float64(short) >= 0.25*float64(len(polls))
}
