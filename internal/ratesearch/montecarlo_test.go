package ratesearch

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/vocab"
)

// The Monte Carlo of the rate search's error rates (docs/method.md#rate-search-error-rates):
// the decision code against a synthetic server whose true capacity at the
// objective is known exactly. The server is the simulator's shape: c
// slots (max_num_seqs) that each serve one request at a time, first come
// first served, a request's slot time its output tokens times a step time
// (the simulator's --sim-tbt: the same step time at any batch), its TTFT
// the wait for a slot plus its prefill; every time multiplied by
// --sim-noise's factor exp(x − σ²/2), x an Ornstein–Uhlenbeck process of
// stationary standard deviation σ and correlation time 2 s advanced along
// the server's clock (internal/sim/engine.go's jitter), and by
// --sim-slowdown's factor. The output tokens are exponential (the
// simulator's are log-normal around --sim-eos-mean), which makes it an
// M/M/c queue: the wait W has Erlang C's closed form, P(W > t) =
// C(c, λ/μ)·exp(−(cμ − λ)·t), and the true capacity at "goodput_share ≥
// 0.95 with TTFT ≤ L" is the λ where 1 − P(W > L − prefill) = 0.95,
// solved to 1e-12. The probes are Poisson arrivals at the probe's rate,
// each window warmed up from an empty queue, as a traffic cell is.

// mcServer is the synthetic server (see above).
type mcServer struct {
	slots     int
	meanSlotS float64 // mean slot time of a request (output tokens × step), seconds
	prefillS  float64
	sloS      float64 // the TTFT SLO
	sigma     float64 // --sim-noise
	slowdown  float64 // --sim-slowdown
	warmS     float64
	windowS   float64
	fixed     bool // every request the same output tokens (ignore_eos): M/D/c
	// iid: each request meets the SLO independently, with Erlang C's
	// probability at the window's rate times the noise's mean factor over
	// the window (the queue's correlation between requests left out).
	iid bool
	// deff is the design effect the probes' data state (0: estimated
	// from their windows).
	deff float64
	// pooled: the probes' data give no windows (the requests taken as
	// independent: the bounds before the design effect was estimated).
	pooled bool
}

// simServer is the Monte Carlo's server: 8 slots, 64 output tokens on
// average at a 20 ms step (1.28 s a request), a 100 ms prefill, the SLO
// TTFT ≤ 1 s, --sim-noise 0.05 (the simulator's noise in the e2e noise
// tests; 4 % a repeat, docs/method.md#noise), 15 s of warm-up and a 60 s
// window.
func simServer() mcServer {
	return mcServer{slots: 8, meanSlotS: 1.28, prefillS: 0.1, sloS: 1, sigma: 0.05, slowdown: 1, warmS: 15, windowS: 60}
}

// erlangC is the probability that an arrival waits in an M/M/c queue
// with offered load a = λ/μ < c.
func erlangC(c int, a float64) float64 {
	sum, term := 0.0, 1.0
	for k := 0; k < c; k++ {
		if k > 0 {
			term *= a / float64(k)
		}
		sum += term
	}
	top := term * a / float64(c) * float64(c) / (float64(c) - a) // a^c/c! · c/(c − a)
	return top / (sum + top)
}

// share is the true long-run share of requests meeting the SLO at rate,
// without noise (Erlang C).
func (s mcServer) share(rate float64) float64 {
	mu := 1 / (s.meanSlotS * s.slowdown)
	if rate >= float64(s.slots)*mu {
		return 0
	}
	t := s.sloS - s.prefillS*s.slowdown
	if t < 0 {
		return 0
	}
	return 1 - erlangC(s.slots, rate/mu)*math.Exp(-(float64(s.slots)*mu-rate)*t)
}

// capacity is the true capacity at goodput_share ≥ target: the rate
// where share crosses it, by bisection.
func (s mcServer) capacity(target float64) float64 {
	lo, hi := 0.0, float64(s.slots)/(s.meanSlotS*s.slowdown)
	for range 200 {
		mid := (lo + hi) / 2
		if s.share(mid) >= target {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// mcRun is one search's run of the server: its clock and noise state go
// on across the probes' windows.
type mcRun struct {
	s     mcServer
	rng   *rand.Rand
	clock float64 // the server's time at the start of the next window
	x     float64 // the noise process's state at time xAt
	xAt   float64
}

func newRun(s mcServer, seed uint64) *mcRun {
	r := &mcRun{s: s, rng: rand.New(rand.NewPCG(seed, 0x6d63))}
	r.x = s.sigma * r.rng.NormFloat64()
	return r
}

// factor is --sim-noise's step-time factor at server time t (t never
// decreases between calls).
func (r *mcRun) factor(t float64) float64 {
	if r.s.sigma == 0 {
		return 1
	}
	a := math.Exp(-(t - r.xAt) / 2)
	r.x = r.x*a + r.s.sigma*math.Sqrt(1-a*a)*r.rng.NormFloat64()
	r.xAt = t
	return math.Exp(r.x - r.s.sigma*r.s.sigma/2)
}

// window measures one window at rate: the requests launched in it and
// those whose TTFT met the SLO.
func (r *mcRun) window(rate float64) (good, launched int) {
	g := r.windowSeq(rate)
	for _, ok := range g {
		if ok {
			good++
		}
	}
	return good, len(g)
}

// windowSeq measures one window at rate: whether each request launched in
// it met the SLO, in arrival order.
func (r *mcRun) windowSeq(rate float64) (goods []bool) {
	s := r.s
	if s.iid {
		// The window's mean noise factor: the OU process averaged over
		// the window (sampled once a second).
		f, steps := 0.0, int(s.windowS)
		for i := range steps {
			f += r.factor(r.clock + s.warmS + float64(i))
		}
		f /= float64(steps)
		p := s.share(rate * f)
		n := 0
		for t := r.rng.ExpFloat64() / rate; t < s.windowS; t += r.rng.ExpFloat64() / rate {
			n++
		}
		for range n {
			goods = append(goods, r.rng.Float64() < p)
		}
		r.clock += s.warmS + s.windowS + 5
		return goods
	}
	free := make([]float64, s.slots) // when each slot is next free, relative to the window's start
	for t := r.rng.ExpFloat64() / rate; t < s.warmS+s.windowS; t += r.rng.ExpFloat64() / rate {
		i := 0
		for j := range free {
			if free[j] < free[i] {
				i = j
			}
		}
		start := max(t, free[i]) // FCFS: starts are in arrival order
		f := r.factor(r.clock+start) * s.slowdown
		slot := s.meanSlotS
		if !s.fixed {
			slot *= r.rng.ExpFloat64()
		}
		free[i] = start + slot*f
		if t >= s.warmS {
			goods = append(goods, start-t+s.prefillS*f <= s.sloS)
		}
	}
	// The next window starts after this one's requests drained and a
	// pause.
	end := s.warmS + s.windowS
	for _, f := range free {
		end = max(end, f)
	}
	r.clock += end + 5
	return goods
}

// probe is the run as the search's probe function, with the objective
// goodput_share ≥ target.
func (r *mcRun) probe(target float64) ProbeFunc {
	var at float64
	var k, n int
	var wins []Window
	return func(rate float64, windows int) (Outcome, error) {
		if windows == 1 || rate != at {
			at, k, n, wins = rate, 0, 0, nil
		}
		g, l := r.window(rate)
		k, n = k+g, n+l
		wins = append(wins, Window{K: g, N: l})
		d := Data{Metric: metric.GoodputShare, Kind: Share, K: k, N: n, DesignEffect: r.s.deff}
		if !r.s.pooled {
			d.Windows = slices.Clone(wins)
		}
		return Outcome{
			Data: []Data{d},
			Objective: func(v map[string]float64) (bool, error) {
				return v[metric.GoodputShare] >= target, nil
			},
		}, nil
	}
}

// mcFigures are a scenario's counts.
type mcFigures struct {
	runs, lowerBelow, upperAbove, within, windows int
	regressed, pass, inconclusive                 int
	lowerRel, upperRel                            float64 // sums of the bounds ÷ the truth
}

func (f mcFigures) rate(n int) float64 { return float64(n) / float64(f.runs) }

// mcSettings are the search the Monte Carlo runs: [1, 16] req/s, the
// default precision, confidence and windows.
var mcSettings = Settings{Lo: 1, Hi: 16}

// searchOnce runs one search of s from seed.
func searchOnce(t *testing.T, s mcServer, seed uint64) Answer {
	t.Helper()
	r := newRun(s, seed)
	ans, err := mcSettings.Search(r.probe(0.95))
	if err != nil {
		t.Fatal(err)
	}
	return ans
}

// mcRuns is the number of runs a scenario: few by default, many with
// SLOGATE_RATESEARCH_MC=1.
func mcRuns() int {
	if os.Getenv("SLOGATE_RATESEARCH_MC") == "1" {
		return 2000
	}
	return 60
}

// TestServerModel checks the synthetic server against its closed form:
// the share its windows measure, without noise, over many requests, is
// Erlang C's at the capacity, and the noise moves it by little.
func TestServerModel(t *testing.T) {
	s := simServer()
	c := s.capacity(0.95)
	if got := s.share(c); math.Abs(got-0.95) > 1e-9 {
		t.Fatalf("share at the capacity %v = %v", c, got)
	}
	for _, sigma := range []float64{0, 0.05} {
		s.sigma = sigma
		s.windowS = 20000
		g, n := newRun(s, 7).window(c)
		got := float64(g) / float64(n)
		t.Logf("σ %v: share at the true capacity %.4f req/s over %d requests: %.4f (Erlang C: 0.95)", sigma, c, n, got)
		if math.Abs(got-0.95) > 0.006 {
			t.Errorf("σ %v: measured share %.4f at the capacity, want 0.95 ± 0.006 (the closed form)", sigma, got)
		}
	}
}

// mcScenario is one server model and window the Monte Carlo runs.
type mcScenario struct {
	name string
	s    mcServer
}

// scenarios are the Monte Carlo's servers: iid (each request meets the
// SLO independently: the Clopper–Pearson bounds' assumption), queue (the
// queue itself, whose neighbouring requests wait together) and queue
// pooled (the queue with the probes' windows pooled as independent
// requests: the bounds before the design effect was estimated), with
// 60 s windows, and with SLOGATE_RATESEARCH_MC=1 600 s windows too.
func scenarios() []mcScenario {
	iid := simServer()
	iid.iid = true
	pooled := simServer()
	pooled.pooled = true
	out := []mcScenario{{"iid/60s", iid}, {"queue/60s", simServer()}, {"queue-pooled/60s", pooled}}
	if os.Getenv("SLOGATE_RATESEARCH_MC") == "1" {
		iid.windowS = 600
		q := simServer()
		q.windowS = 600
		out = append(out, mcScenario{"iid/600s", iid}, mcScenario{"queue/600s", q})
	}
	return out
}

// TestErrorRates is the Monte Carlo of the rate search's error rates
// (docs/method.md#rate-search-error-rates), quick: on the iid server and
// on the queue with the design effect estimated from the probes'
// windows, the lower and the upper bound each on their side of the true
// capacity in ≥ 95 % of runs, identical builds regressed in ≤ 5 % of
// pairs, and a search measuring at most half the windows of a fixed
// sweep at the precision; on the queue with its windows pooled as
// independent requests, the lower bound above the truth in more than
// 5 % of runs (why the design effect is estimated).
// SLOGATE_RATESEARCH_MC=1 go test -run 'TestErrorRates|TestMustShow' -v
// ./internal/ratesearch runs 2,000 of each, with the figures of every
// scenario.
func TestErrorRates(t *testing.T) {
	for _, sc := range scenarios()[:3] {
		t.Run(sc.name, func(t *testing.T) {
			f := errorRates(t, sc.s)
			if sc.s.pooled {
				if f.one.rate(f.one.lowerBelow) >= 0.95 {
					t.Errorf("pooled windows: lower bound below the truth in %.3f of runs, want < 0.95 (the queue's dependence uncounted)", f.one.rate(f.one.lowerBelow))
				}
				return
			}
			if f.one.rate(f.one.lowerBelow) < 0.95 || f.one.rate(f.one.upperAbove) < 0.95 {
				t.Errorf("bounds on their side of the truth in %.3f (lower) and %.3f (upper) of runs, want ≥ 0.95", f.one.rate(f.one.lowerBelow), f.one.rate(f.one.upperAbove))
			}
			if f.same.rate(f.same.regressed) > 0.05 {
				t.Errorf("identical builds regressed in %.3f of pairs, want ≤ 0.05", f.same.rate(f.same.regressed))
			}
			if f.meanWindows > float64(f.sweep)/2 {
				t.Errorf("%.1f windows a search, more than half a fixed sweep's %d", f.meanWindows, f.sweep)
			}
		})
	}
}

// TestMustShow is issue 31's Must show over the scenarios whose bounds
// estimate the design effect, with SLOGATE_RATESEARCH_MC=1 only: the
// lower bound below the truth in ≥ 95 % of runs and identical builds
// regressed in ≤ 5 % of pairs, asserted. By the two searches' bounds a
// build with 10 % less capacity is regressed in far fewer than 90 % of
// pairs, because a window of a queue holds few independent observations
// (the paired check reaches that power: TestPairedMustShow;
// docs/method.md#rate-search-error-rates); at the default 4 windows a
// probe the answer is within the precision in fewer than 95 % of runs
// (more windows a probe reach it: TestAnswerPrecision). The test logs
// both figures.
func TestMustShow(t *testing.T) {
	if os.Getenv("SLOGATE_RATESEARCH_MC") != "1" {
		t.Skip("the long Monte Carlo: SLOGATE_RATESEARCH_MC=1")
	}
	for _, sc := range scenarios() {
		if sc.s.pooled {
			continue
		}
		t.Run(sc.name, func(t *testing.T) {
			f := errorRates(t, sc.s)
			if f.one.rate(f.one.lowerBelow) < 0.95 {
				t.Errorf("lower bound below the truth in %.3f of runs, want ≥ 0.95", f.one.rate(f.one.lowerBelow))
			}
			if f.same.rate(f.same.regressed) > 0.05 {
				t.Errorf("identical builds regressed in %.3f of pairs, want ≤ 0.05", f.same.rate(f.same.regressed))
			}
			t.Logf("by the bounds (docs/method.md#rate-search-error-rates): capacity ÷ 1.1 regressed in %.3f of pairs (Must show ≥ 0.90: the paired check's); at 4 windows a probe the answer within the precision in %.3f of runs (max_windows: TestAnswerPrecision)",
				f.lost.rate(f.lost.regressed), f.one.rate(f.one.within))
		})
	}
}

// mcResult are a scenario's figures.
type mcResult struct {
	one, same, lost mcFigures
	meanWindows     float64
	sweep           int
}

// errorRates runs mcRuns() triples of searches of base: two of base (an
// identical pair) and one of a build whose capacity is base's ÷ 1.1.
func errorRates(t *testing.T, base mcServer) mcResult {
	truth := base.capacity(0.95)
	// The slower build: every time scaled so that its capacity is the
	// baseline's ÷ 1.1 exactly (bisection on the scale).
	slow := base
	lo, hi := 1.0, 2.0
	for range 100 {
		slow.slowdown = (lo + hi) / 2
		if slow.capacity(0.95) > truth/1.1 {
			lo = slow.slowdown
		} else {
			hi = slow.slowdown
		}
	}
	slowTruth := slow.capacity(0.95)
	n := mcRuns()
	var one, same, lost mcFigures
	for i := range n {
		a := searchOnce(t, base, uint64(3*i))
		b := searchOnce(t, base, uint64(3*i+1))
		c := searchOnce(t, slow, uint64(3*i+2))
		for _, x := range []struct {
			ans   Answer
			truth float64
		}{{a, truth}, {b, truth}, {c, slowTruth}} {
			one.runs++
			one.windows += x.ans.Windows
			if x.ans.Lower <= x.truth {
				one.lowerBelow++
			}
			if x.ans.Upper == 0 || x.ans.Upper >= x.truth {
				one.upperAbove++
			}
			if math.Abs(x.ans.Rate-x.truth) <= mcSettings.withDefaults().Precision*x.truth {
				one.within++
			}
			one.lowerRel += x.ans.Lower / x.truth
			if x.ans.Upper > 0 {
				one.upperRel += x.ans.Upper / x.truth
			} else {
				one.upperRel += mcSettings.Hi / x.truth
			}
		}
		count := func(f *mcFigures, a, b Answer) {
			f.runs++
			switch Capacity(bounds(a), bounds(b), 0.05).Outcome {
			case vocab.Fail:
				f.regressed++
			case vocab.Pass:
				f.pass++
			default:
				f.inconclusive++
			}
		}
		count(&same, a, b)
		count(&lost, a, c)
	}
	sweep := int(math.Ceil(math.Log(mcSettings.Hi/mcSettings.Lo)/math.Log1p(DefaultPrecision))) + 1
	meanWindows := float64(one.windows) / float64(one.runs)
	t.Logf("true capacity %.4f req/s (the slower build: slowdown %.4f, %.4f req/s); %d searches, %d pairs of each", truth, slow.slowdown, slowTruth, one.runs, n)
	t.Logf("lower bound ≤ truth %.1f %%, upper bound ≥ truth %.1f %%, answer within %.1f %%: %.1f %%",
		100*one.rate(one.lowerBelow), 100*one.rate(one.upperAbove), 100*DefaultPrecision, 100*one.rate(one.within))
	t.Logf("bounds ÷ truth on average: lower %.3f, upper %.3f", one.lowerRel/float64(one.runs), one.upperRel/float64(one.runs))
	t.Logf("identical builds: regressed %.1f %%, within %.1f %%, inconclusive %.1f %%", 100*same.rate(same.regressed), 100*same.rate(same.pass), 100*same.rate(same.inconclusive))
	t.Logf("capacity ÷ 1.1: regressed %.1f %%, within %.1f %%, inconclusive %.1f %%", 100*lost.rate(lost.regressed), 100*lost.rate(lost.pass), 100*lost.rate(lost.inconclusive))
	t.Logf("windows a search: %.1f on average; a fixed sweep of [%g, %g] at %.1f %% steps: %d (ratio %.2f)",
		meanWindows, mcSettings.Lo, mcSettings.Hi, 100*DefaultPrecision, sweep, meanWindows/float64(sweep))

	return mcResult{one: one, same: same, lost: lost, meanWindows: meanWindows, sweep: sweep}
}

func bounds(a Answer) Bounds {
	return Bounds{Found: a.Found, Rate: a.Rate, Lower: a.Lower, Upper: a.Upper, Precision: a.Precision}
}

// TestQueueOverdispersion measures why the bounds undercover on the
// queue: at its capacity, the share of a 60 s window varies far more from
// window to window than the binomial's variance of its requests (the
// design effect, ~20 measured; docs/method.md#rate-search-error-rates),
// while the iid server's stays binomial.
func TestQueueOverdispersion(t *testing.T) {
	for _, tc := range []struct {
		name     string
		iid      bool
		min, max float64
	}{
		{name: "queue", min: 8, max: math.Inf(1)},
		{name: "iid", iid: true, min: 0.5, max: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := simServer()
			s.iid = tc.iid
			r := newRun(s, 11)
			var xs []float64
			total := 0
			for range 300 {
				g, n := r.window(s.capacity(0.95))
				xs = append(xs, float64(g)/float64(n))
				total += n
			}
			m, v := 0.0, 0.0
			for _, x := range xs {
				m += x
			}
			m /= float64(len(xs))
			for _, x := range xs {
				v += (x - m) * (x - m)
			}
			v /= float64(len(xs) - 1)
			ratio := v / (m * (1 - m) / (float64(total) / float64(len(xs))))
			t.Logf("%s: window share %.4f ± %.4f, variance %.1f× the binomial's", tc.name, m, math.Sqrt(v), ratio)
			if ratio < tc.min || ratio > tc.max {
				t.Errorf("variance ratio %.1f, want in [%v, %v]", ratio, tc.min, tc.max)
			}
		})
	}
}

// windowOn is one window of s at rate over a given schedule: gaps are
// unit-rate exponential gaps (a traffic cell's arrivals from its seed are
// these gaps ÷ its rate, so one seed draws the same requests at every
// rate, time-scaled) and sizes the requests' unit slot times (nil: every
// request the mean, ignore_eos); noise is the run whose --sim-noise
// process scales each step. It says whether each request launched in the
// window met the SLO.
func (s mcServer) windowOn(gaps, sizes []float64, rate float64, noise *mcRun) (goods []bool) {
	free := make([]float64, s.slots)
	t := 0.0
	for i, g := range gaps {
		t += g / rate
		if t >= s.warmS+s.windowS {
			break
		}
		k := 0
		for j := range free {
			if free[j] < free[k] {
				k = j
			}
		}
		start := max(t, free[k])
		f := noise.factor(noise.clock+start) * s.slowdown
		slot := s.meanSlotS
		if sizes != nil {
			slot *= sizes[i]
		}
		free[k] = start + slot*f
		if t >= s.warmS {
			goods = append(goods, start-t+s.prefillS*f <= s.sloS)
		}
	}
	noise.clock += s.warmS + s.windowS + 60
	return goods
}

// longShare is s's share at rate over one long window (hours of
// arrivals, the same seed for every call: common random numbers, so that
// a bisection over it is monotone).
func (s mcServer) longShare(rate float64, seed uint64) float64 {
	s.warmS, s.windowS = 100, 40000
	rng := rand.New(rand.NewPCG(seed, 1))
	gaps := make([]float64, int(rate*(s.warmS+s.windowS))+1000)
	var sizes []float64
	if !s.fixed {
		sizes = make([]float64, len(gaps))
	}
	for i := range gaps {
		gaps[i] = rng.ExpFloat64()
		if sizes != nil {
			sizes[i] = rng.ExpFloat64()
		}
	}
	g := s.windowOn(gaps, sizes, rate, newRun(s, seed+1))
	k := 0
	for _, ok := range g {
		if ok {
			k++
		}
	}
	return float64(k) / float64(len(g))
}

// TestPairedCapacityCheck measures the paired check of capacity lost that
// docs/method.md#rate-search-error-rates proposes in place of comparing
// two searches' bounds: the candidate replays the baseline's windows at
// its answer R, time-scaled to R·(1 − tolerance) (the same seeds), and a
// window's paired difference is the candidate's SLO-met share there less
// the baseline's at R. At the tolerance's edge (capacity lost exactly the
// tolerance, R the true capacity) its mean is 0 by the definition of
// capacity; identical builds make it positive (the same requests, further
// apart); a build with 10 % less capacity negative. The test logs, per
// --sim-noise, the mean and spread of a 60 s window's difference and the
// windows a one-sided 5 % test needs for 90 % power, and fails if the
// identical builds' mean is not positive or the slower build's not
// negative. On M/D/8 (ignore_eos: fixed output, as a traffic block sends
// its requests), with its capacity found by long runs, since M/D/c has no
// closed form as simple as Erlang C. SLOGATE_RATESEARCH_MC=1 only.
func TestPairedCapacityCheck(t *testing.T) {
	if os.Getenv("SLOGATE_RATESEARCH_MC") != "1" {
		t.Skip("the long Monte Carlo: SLOGATE_RATESEARCH_MC=1")
	}
	const tolerance = 0.05
	for _, sigma := range []float64{0.05, 0.005} {
		t.Run(fmt.Sprintf("sim-noise=%g", sigma), func(t *testing.T) {
			base := simServer()
			base.fixed, base.sigma = true, sigma
			capOf := func(s mcServer) float64 {
				lo, hi := 0.0, float64(s.slots)/(s.meanSlotS*s.slowdown)
				for range 30 {
					mid := (lo + hi) / 2
					if s.longShare(mid, 5) >= 0.95 {
						lo = mid
					} else {
						hi = mid
					}
				}
				return lo
			}
			truth := capOf(base)
			slow := base
			lo, hi := 1.0, 1.5
			for range 20 {
				slow.slowdown = (lo + hi) / 2
				if capOf(slow) > truth/1.1 {
					lo = slow.slowdown
				} else {
					hi = slow.slowdown
				}
			}
			t.Logf("M/D/8 capacity %.4f req/s; 10 %% less at --sim-slowdown %.4f", truth, slow.slowdown)
			for _, c := range []struct {
				name string
				cand mcServer
				sign float64
			}{{"identical", base, 1}, {"capacity ÷ 1.1", slow, -1}} {
				rng := rand.New(rand.NewPCG(17, 2))
				var ds []float64
				for w := range 400 {
					gaps := make([]float64, 4000)
					for i := range gaps {
						gaps[i] = rng.ExpFloat64()
					}
					a := base.windowOn(gaps, nil, truth, newRun(base, uint64(2*w)))
					b := c.cand.windowOn(gaps, nil, truth*(1-tolerance), newRun(c.cand, uint64(2*w+1)))
					ds = append(ds, share(b)-share(a))
				}
				m, sd := meanSD(ds)
				if c.sign > 0 {
					// A one-sided 5 % test over n windows calls it regressed
					// when the mean is below −1.645·sd/√n: rarely, the mean
					// being above 0.
					t.Logf("%s: a 60 s window's paired difference %+.4f ± %.4f (one window below 0 in %.0f %% of windows)", c.name, m, sd, 100*below(ds, 0))
				} else {
					t.Logf("%s: a 60 s window's paired difference %+.4f ± %.4f; %.0f windows for 90 %% power at one-sided 5 %%", c.name, m, sd,
						math.Pow((1.6449+1.2816)*sd/m, 2))
				}
				if m*c.sign <= 0 {
					t.Errorf("%s: mean paired difference %+.4f, want its sign %+.0f", c.name, m, c.sign)
				}
			}
		})
	}
}

// share is the share of goods that are true.
func share(goods []bool) float64 {
	k := 0
	for _, ok := range goods {
		if ok {
			k++
		}
	}
	return float64(k) / float64(len(goods))
}

// below is the share of xs below x.
func below(xs []float64, x float64) float64 {
	n := 0
	for _, v := range xs {
		if v < x {
			n++
		}
	}
	return float64(n) / float64(len(xs))
}

// meanSD is the mean and sample standard deviation of xs.
func meanSD(xs []float64) (m, sd float64) {
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	for _, x := range xs {
		sd += (x - m) * (x - m)
	}
	return m, math.Sqrt(sd / float64(len(xs)-1))
}

// The paired check's Monte Carlo (docs/method.md#rate-search-error-rates):
// the whole procedure, R the answer of a search and not the truth. A
// baseline run searches the M/D/8 server (fixed output, as a traffic
// block's ignore_eos requests) for goodput_share ≥ 0.95; with an answer R
// it goes on to measure N windows at R, window w's arrivals seed + w's
// unit-rate gaps ÷ R; a candidate run, its own noise process, measures the
// same seeds at R·(1 − tolerance); PairedCapacity decides from the
// windows' differences of goodput_share at one-sided 5 % and the 5 %
// tolerance. The candidates are an identical build, one slowed so that
// its capacity is the baseline's ÷ 1.1, and one at the tolerance's edge
// (capacity × 0.95), each against the same baseline run.

// pairedTolerance and pairedAlpha are the paired check's tolerance and
// one-sided level.
const pairedTolerance, pairedAlpha = 0.05, 0.05

// pairedServers are the paired Monte Carlo's servers at one --sim-noise:
// the M/D/8 baseline, the build with its capacity ÷ 1.1 and the one at
// the tolerance's edge, with the baseline's capacity.
type pairedServers struct {
	base, slow, edge mcServer
	truth            float64
}

// pairedServerMemo holds pairedServersAt's answers by --sim-noise (each
// hours of simulated arrivals).
var pairedServerMemo = map[float64]pairedServers{}

// pairedServersAt finds the baseline's capacity at --sim-noise sigma by
// bisection of longShare on the rate, then each slower build's slowdown,
// the one whose share is 0.95 at its target capacity, by bisection of
// longShare on the slowdown (the same seed throughout: common random
// numbers; TestPairedCapacityCheck's bisection of capacities finds the
// same slowdowns).
func pairedServersAt(sigma float64) pairedServers {
	if p, ok := pairedServerMemo[sigma]; ok {
		return p
	}
	base := simServer()
	base.fixed, base.sigma = true, sigma
	lo, hi := 0.0, float64(base.slots)/base.meanSlotS
	for range 24 {
		mid := (lo + hi) / 2
		if base.longShare(mid, 5) >= 0.95 {
			lo = mid
		} else {
			hi = mid
		}
	}
	p := pairedServers{base: base, truth: lo}
	slowTo := func(capacity float64) mcServer {
		s := base
		lo, hi := 1.0, 1.5
		for range 20 {
			s.slowdown = (lo + hi) / 2
			if s.longShare(capacity, 5) >= 0.95 {
				lo = s.slowdown
			} else {
				hi = s.slowdown
			}
		}
		s.slowdown = lo
		return s
	}
	p.slow, p.edge = slowTo(p.truth/1.1), slowTo(p.truth*(1-pairedTolerance))
	pairedServerMemo[sigma] = p
	return p
}

// pairedGaps are seed's unit-rate exponential gaps, enough for a window
// of s at rate (their sum past its warm-up and window times the rate):
// ÷ any lower rate, the same requests further apart.
func (s mcServer) pairedGaps(seed uint64, rate float64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 0x7061697264))
	var gaps []float64
	for sum := 0.0; sum <= (s.warmS+s.windowS)*rate; {
		g := rng.ExpFloat64()
		gaps = append(gaps, g)
		sum += g
	}
	return gaps
}

// pairedResult are a paired scenario's counts at each number of windows
// (one mcFigures a candidate and number), over the baseline runs that
// found an answer.
type pairedResult struct {
	same, lost, edge []mcFigures
	notFound         int
}

// pairedErrorRates runs pairs baseline runs of p, each with its three
// candidates, deciding each pair at every number of windows in windows
// (a run's first n windows: its check at check_windows = n), and logs
// the figures.
func pairedErrorRates(t *testing.T, p pairedServers, windows []int, pairs int) pairedResult {
	t.Helper()
	most := slices.Max(windows)
	res := pairedResult{same: make([]mcFigures, len(windows)), lost: make([]mcFigures, len(windows)), edge: make([]mcFigures, len(windows))}
	var rel []float64 // R ÷ truth
	for i := range pairs {
		run := newRun(p.base, uint64(4*i))
		ans, err := mcSettings.Search(run.probe(0.95))
		if err != nil {
			t.Fatal(err)
		}
		if !ans.Found {
			res.notFound++
			continue
		}
		r, cr := ans.Rate, ans.Rate*(1-pairedTolerance)
		rel = append(rel, r/p.truth)
		cands := []struct {
			s    mcServer
			run  *mcRun
			figs []mcFigures
			ds   []float64
		}{
			{s: p.base, run: newRun(p.base, uint64(4*i+1)), figs: res.same},
			{s: p.slow, run: newRun(p.slow, uint64(4*i+2)), figs: res.lost},
			{s: p.edge, run: newRun(p.edge, uint64(4*i+3)), figs: res.edge},
		}
		for w := range most {
			gaps := p.base.pairedGaps(uint64(i)<<16+uint64(w), r)
			a := share(p.base.windowOn(gaps, nil, r, run))
			for c := range cands {
				cands[c].ds = append(cands[c].ds, share(cands[c].s.windowOn(gaps, nil, cr, cands[c].run))-a)
			}
		}
		for k, n := range windows {
			for _, c := range cands {
				f := &c.figs[k]
				f.runs++
				d, _ := PairedCapacity([]PairedMetric{{Metric: metric.GoodputShare, HigherIsBetter: true, Diffs: c.ds[:n]}}, pairedAlpha, cr, r)
				switch d.Outcome {
				case vocab.Fail:
					f.regressed++
				case vocab.Pass:
					f.pass++
				default:
					f.inconclusive++
				}
			}
		}
	}
	m, sd := meanSD(rel)
	t.Logf("M/D/8 at --sim-noise %g: capacity %.4f req/s; ÷ 1.1 at --sim-slowdown %.4f, × 0.95 at %.4f; %d baseline runs, %d without an answer; R ÷ truth %.3f ± %.3f",
		p.base.sigma, p.truth, p.slow.slowdown, p.edge.slowdown, pairs, res.notFound, m, sd)
	for k, n := range windows {
		s, l, e := res.same[k], res.lost[k], res.edge[k]
		t.Logf("N = %d: identical regressed %.1f / within %.1f / inconclusive %.1f %%; capacity ÷ 1.1 regressed %.1f / within %.1f / inconclusive %.1f %%; capacity × 0.95 regressed %.1f / within %.1f / inconclusive %.1f %%",
			n, 100*s.rate(s.regressed), 100*s.rate(s.pass), 100*s.rate(s.inconclusive),
			100*l.rate(l.regressed), 100*l.rate(l.pass), 100*l.rate(l.inconclusive),
			100*e.rate(e.regressed), 100*e.rate(e.pass), 100*e.rate(e.inconclusive))
	}
	return res
}

// pairedWindows are the check_windows the paired Monte Carlo runs, and
// pairedMustShowWindows the one its Must show is asserted at.
var pairedWindows, pairedMustShowWindows = []int{12, 16, 17, 18, 20, 24, 48}, 24

// TestPairedErrorRates is the paired check's Monte Carlo, quick: 100
// baseline runs at --sim-noise 0.05 with 24 windows, identical builds
// regressed in at most 13 and a build with 10 % less capacity in at least
// 79. At the Must show's rates exactly (5 %, 90 %) each fails by chance
// with probability below 5 in 10,000 (the binomial's tails: P(X ≥ 14 |
// 100, 0.05) = 0.00046, P(X ≤ 78 | 100, 0.9) = 0.00031).
// SLOGATE_RATESEARCH_MC=1 go test -run TestPairedMustShow -v
// ./internal/ratesearch runs the long one.
func TestPairedErrorRates(t *testing.T) {
	res := pairedErrorRates(t, pairedServersAt(0.05), []int{pairedMustShowWindows}, 100)
	if s := res.same[0]; s.regressed > 13 {
		t.Errorf("identical builds regressed in %d of %d pairs, want ≤ 13 (the Must show's 5 %%)", s.regressed, s.runs)
	}
	if l := res.lost[0]; l.regressed < 79 {
		t.Errorf("capacity ÷ 1.1 regressed in %d of %d pairs, want ≥ 79 (the Must show's 90 %%)", l.regressed, l.runs)
	}
}

// TestPairedMustShow is issue 31's Must show for the paired check, with
// SLOGATE_RATESEARCH_MC=1 only: 2,000 baseline runs at --sim-noise 0.05
// and 0.005, identical builds regressed in ≤ 5 % of pairs and a build
// with 10 % less capacity in ≥ 90 % at 24 windows, asserted; the figures
// at 12 to 48 windows, and at the tolerance's edge, logged.
func TestPairedMustShow(t *testing.T) {
	if os.Getenv("SLOGATE_RATESEARCH_MC") != "1" {
		t.Skip("the long Monte Carlo: SLOGATE_RATESEARCH_MC=1")
	}
	for _, sigma := range []float64{0.05, 0.005} {
		t.Run(fmt.Sprintf("sim-noise=%g", sigma), func(t *testing.T) {
			res := pairedErrorRates(t, pairedServersAt(sigma), pairedWindows, 2000)
			k := slices.Index(pairedWindows, pairedMustShowWindows)
			if s := res.same[k]; s.rate(s.regressed) > 0.05 {
				t.Errorf("N = %d: identical builds regressed in %.3f of pairs, want ≤ 0.05", pairedMustShowWindows, s.rate(s.regressed))
			}
			if l := res.lost[k]; l.rate(l.regressed) < 0.90 {
				t.Errorf("N = %d: capacity ÷ 1.1 regressed in %.3f of pairs, want ≥ 0.90", pairedMustShowWindows, l.rate(l.regressed))
			}
		})
	}
}
