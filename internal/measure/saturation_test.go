package measure

import (
	"math"
	"math/rand"
	"sort"
	"testing"
	"time"

	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/vocab"
)

// queueModel is a server of slots slots serving requests first come first
// served, each for a time drawn uniformly in [serviceLo, serviceHi]
// seconds: an M/G/c queue, the shape of an engine's continuous batch. Its
// capacity is slots over the mean service time.
type queueModel struct {
	slots                int
	serviceLo, serviceHi float64
}

func (q queueModel) capacity() float64 { return float64(q.slots) / ((q.serviceLo + q.serviceHi) / 2) }

// simulateCell runs one open-loop cell of Poisson arrivals at rate through
// the queue, polled every pollEvery from the window's start (after
// warmUp) to its end, the saturation rule checked at each poll as
// watchTraffic checks it; it returns when the rule stopped the cell, since
// the window's start, or false when the window ran to its end.
func (q queueModel) simulateCell(rng *rand.Rand, rate float64, warmUp, window time.Duration) (time.Duration, bool) {
	end := (warmUp + window).Seconds()
	var arrive, start, finish []float64
	free := make([]float64, q.slots) // when each slot is next free
	for t := rng.ExpFloat64() / rate; t < end; t += rng.ExpFloat64() / rate {
		sort.Float64s(free)
		s := math.Max(t, free[0])
		f := s + q.serviceLo + rng.Float64()*(q.serviceHi-q.serviceLo)
		free[0] = f
		arrive, start, finish = append(arrive, t), append(start, s), append(finish, f)
	}
	sort.Float64s(start)
	sort.Float64s(finish)
	rule := saturationRule{span: SaturationAfter(0, window), rate: rate}
	var trend queueTrend
	var a, s, f int
	for at := pollEvery; at <= warmUp+window; at += pollEvery {
		t := at.Seconds()
		for a < len(arrive) && arrive[a] <= t {
			a++
		}
		for s < len(start) && start[s] <= t {
			s++
		}
		for f < len(finish) && finish[f] <= t {
			f++
		}
		trend.add(queueSample{at: at, gauges: true, waiting: float64(a - s), outstanding: float64(a - f)})
		if at < warmUp {
			continue
		}
		if _, stop := rule.check(&trend); stop {
			return at - warmUp, true
		}
	}
	return window, false
}

// TestSaturationErrorRates measures the saturation rule's error rates by
// simulation, 1,000 cells per case, each a 30 s window after the default
// 10 s warm-up: a cell at 3× capacity must stop as saturated within 20 %
// of its window in every cell (a miss is the rule's false negative), one
// at 0.8× capacity in at most 1 % of cells (its false positive), on
// servers of few slots and slow requests, of a middling batch, and of a
// wide batch.
func TestSaturationErrorRates(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates 6,000 cells")
	}
	const cells = 1000
	window := 30 * time.Second
	tests := []struct {
		name string
		load float64
		// maxStopped and minStopped bound the share of cells stopped
		// within maxStopAt of their window.
		maxStopped, minStopped float64
		maxStopAt              float64
	}{
		{name: "3x capacity stops", load: 3, minStopped: 1, maxStopped: 1, maxStopAt: 0.2},
		{name: "0.8x capacity runs", load: 0.8, minStopped: 0, maxStopped: 0.01, maxStopAt: 1},
	}
	for _, srv := range testQueues {
		for _, tc := range tests {
			t.Run(srv.name+"/"+tc.name, func(t *testing.T) {
				rng := rand.New(rand.NewSource(43))
				rate := tc.load * srv.queue.capacity()
				stopped, latest := 0, time.Duration(0)
				for range cells {
					at, stop := srv.queue.simulateCell(rng, rate, 10*time.Second, window)
					if stop && at.Seconds() <= tc.maxStopAt*window.Seconds() {
						stopped++
						latest = max(latest, at)
					}
				}
				share := float64(stopped) / cells
				t.Logf("%.1f req/s (%.1f× of %.1f): %d of %d cells stopped (%.1f %%)", rate, tc.load, srv.queue.capacity(), stopped, cells, 100*share)
				if stopped > 0 {
					t.Logf("the latest at %v of the %v window (%.0f %% of it saved or more)", latest, window, 100*(1-latest.Seconds()/window.Seconds()))
				}
				if share < tc.minStopped || share > tc.maxStopped {
					t.Errorf("stopped in %.1f %% of cells, want %.0f %% to %.0f %%", 100*share, 100*tc.minStopped, 100*tc.maxStopped)
				}
			})
		}
	}
}

// testQueues are the servers the simulations run: few slots and slow
// requests (few arrivals, little evidence), a middling batch, a wide one.
var testQueues = []struct {
	name  string
	queue queueModel
}{
	{name: "4 slots, 1-3 s requests", queue: queueModel{slots: 4, serviceLo: 1, serviceHi: 3}},
	{name: "16 slots, 0.5-1.5 s requests", queue: queueModel{slots: 16, serviceLo: 0.5, serviceHi: 1.5}},
	{name: "64 slots, 2-6 s requests", queue: queueModel{slots: 64, serviceLo: 2, serviceHi: 6}},
}

// TestSaturationWithoutWarmUp: with warmup = "0s" the rule has only the
// window's polls: at 3× capacity the middling and wide servers still stop
// within 20 % of a 30 s window in every cell, the server of 4 slow slots
// (6 req/s, about 30 arrivals in 5 s) in 80 % of cells or more; at 0.8×
// none stops in more than 1 % of cells. 1,000 cells each.
func TestSaturationWithoutWarmUp(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates 6,000 cells")
	}
	const cells = 1000
	window := 30 * time.Second
	for i, srv := range testQueues {
		t.Run(srv.name, func(t *testing.T) {
			rng := rand.New(rand.NewSource(44))
			over, under := 0, 0
			for range cells {
				if at, stop := srv.queue.simulateCell(rng, 3*srv.queue.capacity(), 0, window); stop && at <= window/5 {
					over++
				}
				if _, stop := srv.queue.simulateCell(rng, 0.8*srv.queue.capacity(), 0, window); stop {
					under++
				}
			}
			t.Logf("3×: %d of %d cells stopped within 20 %% of the window; 0.8×: %d stopped", over, cells, under)
			minOver := cells
			if i == 0 {
				minOver = cells * 8 / 10
			}
			if over < minOver || under > cells/100 {
				t.Errorf("3×: %d stopped, want ≥ %d; 0.8×: %d stopped, want ≤ %d", over, minOver, under, cells/100)
			}
		})
	}
}

// TestSaturationRule: the rule stops a queue that grows steadily for its
// span, in the server's gauge and the client's outstanding requests
// alike, and nothing else: a span too short, a burst, a queue the client
// alone sees grow, growth too slow for the rate.
func TestSaturationRule(t *testing.T) {
	ramp := func(n int, gauges bool, waiting, outstanding func(i int) float64) []queueSample {
		s := make([]queueSample, n)
		for i := range s {
			s[i] = queueSample{at: time.Duration(i) * 100 * time.Millisecond, gauges: gauges, waiting: waiting(i), outstanding: outstanding(i)}
		}
		return s
	}
	grow := func(i int) float64 { return float64(i) } // 10 a second
	flat := func(int) float64 { return 3 }
	tests := []struct {
		name    string
		rule    saturationRule
		samples []queueSample
		want    bool
	}{
		{name: "grows for the span", rule: saturationRule{span: 5 * time.Second, rate: 20}, samples: ramp(51, true, grow, grow), want: true},
		{name: "span not yet observed", rule: saturationRule{span: 5 * time.Second, rate: 20}, samples: ramp(50, true, grow, grow)},
		{name: "growth under a quarter of the rate", rule: saturationRule{span: 5 * time.Second, rate: 41}, samples: ramp(51, true, grow, grow)},
		{name: "flat queue", rule: saturationRule{span: 5 * time.Second, rate: 20}, samples: ramp(51, true, flat, flat)},
		{name: "gauge flat while the client's outstanding grow", rule: saturationRule{span: 5 * time.Second, rate: 20}, samples: ramp(51, true, flat, grow)},
		// The client's outstanding requests climb on any stable server
		// until its first requests end: never evidence alone.
		{name: "no gauge: outstanding alone never stop", rule: saturationRule{span: 5 * time.Second, rate: 20}, samples: ramp(51, false, flat, grow)},
		{name: "a lost scrape holds the gauge's last reading", rule: saturationRule{span: 5 * time.Second, rate: 20},
			samples: append(ramp(50, true, grow, grow), queueSample{at: 5 * time.Second, waiting: 0, outstanding: 50}), want: true},
		{name: "a burst at the end", rule: saturationRule{span: 5 * time.Second, rate: 4},
			samples: ramp(51, true, func(i int) float64 { return float64(max(0, i-45) * 10) }, func(i int) float64 { return float64(max(0, i-45) * 10) })},
		// A CI rehearsal's llama.cpp probe: 3 req/s against about 2.3,
		// its waiting gauge up by 8 in 2.1 s, a burst as much as a trend.
		{name: "a rise of 8 over a short span", rule: saturationRule{span: time.Second, rate: 3},
			samples: ramp(22, true, func(i int) float64 { return float64(i) * 8 / 21 }, func(i int) float64 { return float64(i) * 10 / 21 })},
		{name: "closed loop: no rate", rule: saturationRule{span: 5 * time.Second}, samples: ramp(51, true, grow, grow)},
		{name: "rise under the minimum", rule: saturationRule{span: 5 * time.Second, rate: 0.5},
			samples: ramp(51, true, func(i int) float64 { return float64(i) / 20 }, func(i int) float64 { return float64(i) / 20 })},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ev, got := tc.rule.check(trendOf(tc.samples))
			if got != tc.want {
				t.Fatalf("check = %v, want %v (evidence %+v)", got, tc.want, ev)
			}
		})
	}
}

// TestSaturationEvidence: the saturated reason carries the rule's figures
// and the window saved; without the server's gauge, no waiting figures.
func TestSaturationEvidence(t *testing.T) {
	ev := saturationEvidence{gauges: true, slope: 9.87654, fit: 0.991, waitingStart: 10.04, waitingEnd: 59.4,
		outstandingStart: 26, outstandingEnd: 75.5, outstandingSlope: 9.9, observed: 5 * time.Second}
	r := ev.reason(5*time.Second, 30*time.Second, 5200*time.Millisecond, 24)
	want := map[string]float64{result.FigSlopePerS: 9.877, result.FigFit: 0.991, result.FigWaitingStart: 10, result.FigWaitingEnd: 59.4,
		result.FigOutstandingStart: 26, result.FigOutstandingEnd: 75.5, result.FigObservedS: 5, result.FigSaturationAfterS: 5,
		result.FigWindowS: 30, result.FigSavedS: 24.8, result.FigRate: 24}
	if r.Code != result.ReasonSaturated || len(r.Figures) != len(want) {
		t.Fatalf("reason = %+v", r)
	}
	for k, v := range want {
		if r.Figures[k] != v {
			t.Errorf("%s = %v, want %v", k, r.Figures[k], v)
		}
	}
	ev.gauges = false
	if r := ev.reason(5*time.Second, 30*time.Second, 5*time.Second, 24); r.Figures[result.FigWaitingStart] != 0 || len(r.Figures) != len(want)-2 {
		t.Errorf("without the gauge: %+v", r.Figures)
	}
}

// TestSaturationAfter: the default span is 5 s, capped at a fifth of the
// window, at least 1 s; a spec's setting is kept.
func TestSaturationAfter(t *testing.T) {
	tests := []struct {
		name        string
		set, window time.Duration
		want        time.Duration
	}{
		{name: "default", window: 60 * time.Second, want: 5 * time.Second},
		{name: "a fifth of a short window", window: 10 * time.Second, want: 2 * time.Second},
		{name: "at least a second", window: 2 * time.Second, want: time.Second},
		{name: "set", set: 3 * time.Second, window: 60 * time.Second, want: 3 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := SaturationAfter(tc.set, tc.window); got != tc.want {
				t.Errorf("SaturationAfter = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestSaturationRuleOf: only an open loop is checked, over its block's
// saturation_after or the default, and never where it is "0s".
func TestSaturationRuleOf(t *testing.T) {
	open := vocab.CellRef{Phase: vocab.PhaseTraffic, Matrix: "steady", Rate: 4}
	closed := vocab.CellRef{Phase: vocab.PhaseTraffic, Matrix: "steady", Concurrency: 8}
	tests := []struct {
		name string
		ref  vocab.CellRef
		t    spec.Traffic
		want saturationRule
	}{
		{name: "open loop, default", ref: open, t: spec.Traffic{Duration: time.Minute}, want: saturationRule{span: 5 * time.Second, rate: 4}},
		{name: "open loop, set", ref: open, t: spec.Traffic{Duration: time.Minute, SaturationAfter: 2 * time.Second}, want: saturationRule{span: 2 * time.Second, rate: 4}},
		{name: "open loop, off", ref: open, t: spec.Traffic{Duration: time.Minute, SaturationOff: true}},
		{name: "closed loop", ref: closed, t: spec.Traffic{Duration: time.Minute}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := saturationRuleOf(tc.ref, &tc.t); got != tc.want {
				t.Errorf("saturationRuleOf = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// trendOf is the trend of samples, in time order.
func trendOf(samples []queueSample) *queueTrend {
	q := &queueTrend{}
	for _, s := range samples {
		q.add(s)
	}
	return q
}
