package measure

import (
	"context"
	"math"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/slogate/slogate/internal/lifecycle"
	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/vllmfake"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/warning"
)

// gapStats draws n gaps and returns their mean and variance.
func gapStats(s *arrivalSchedule, n int) (mean, variance float64) {
	gaps := make([]float64, n)
	for i := range gaps {
		gaps[i] = s.next()
		mean += gaps[i]
	}
	mean /= float64(n)
	for _, g := range gaps {
		variance += (g - mean) * (g - mean)
	}
	return mean, variance / float64(n-1)
}

// TestArrivalSchedules: every process has mean gap 1/rate; the variance
// of the gaps is 0 for constant, 1/rate² for Poisson (exponential gaps)
// and 1/(rate²·burstiness) for gamma, as `vllm bench serve` draws them
// (shape burstiness, scale 1/(rate·burstiness)). 200,000 draws of a fixed
// seed put the sample mean within 1 % and the variance within 3 %
// (their relative standard errors are 0.2 % and under 1 %).
func TestArrivalSchedules(t *testing.T) {
	tests := []struct {
		name       string
		kind       string
		rate, b    float64
		wantVarMul float64 // variance × rate²
	}{
		{name: "constant", kind: vocab.ArrivalsConstant, rate: 4, wantVarMul: 0},
		{name: "poisson", kind: vocab.ArrivalsPoisson, rate: 4, wantVarMul: 1},
		{name: "gamma bursty", kind: vocab.ArrivalsGamma, rate: 2, b: 0.5, wantVarMul: 2},
		{name: "gamma regular", kind: vocab.ArrivalsGamma, rate: 8, b: 4, wantVarMul: 0.25},
		{name: "gamma 1 is poisson", kind: vocab.ArrivalsGamma, rate: 0.5, b: 1, wantVarMul: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mean, variance := gapStats(newArrivalSchedule(tt.kind, tt.rate, tt.b, 7), 200_000)
			if want := 1 / tt.rate; math.Abs(mean-want) > 0.01*want {
				t.Errorf("mean gap %.5f s, want 1/rate = %.5f s within 1%%", mean, want)
			}
			want := tt.wantVarMul / (tt.rate * tt.rate)
			if math.Abs(variance-want) > 0.03*want+1e-12 {
				t.Errorf("gap variance %.6f, want %.6f within 3%%", variance, want)
			}
		})
	}
}

// TestArrivalScheduleSeeded: the same seed draws the same schedule, another
// seed another one (the seed recorded in the cell reproduces it).
func TestArrivalScheduleSeeded(t *testing.T) {
	a, b, c := newArrivalSchedule("poisson", 3, 0, 11), newArrivalSchedule("poisson", 3, 0, 11), newArrivalSchedule("poisson", 3, 0, 12)
	same, differ := true, false
	for range 100 {
		x, y, z := a.next(), b.next(), c.next()
		same = same && x == y
		differ = differ || x != z
	}
	if !same || !differ {
		t.Errorf("same seed gives the same gaps: %v; another seed other gaps: %v", same, differ)
	}
}

func ms(v float64) int64 { return int64(v * float64(time.Millisecond)) }

// fakeRequests is a fake clock's run: an arrival every gap ms from 0 to
// until ms, each taking ttft ms to its first token, then tokens-1 gaps of
// tbt ms, then closing at its last token.
func fakeRequests(gap, until, ttft, tbt float64, tokens int64) []trafficRequest {
	var out []trafficRequest
	for at := 0.0; at < until; at += gap {
		first := at + ttft
		last := first + float64(tokens-1)*tbt
		out = append(out, trafficRequest{launch: ms(at), first: ms(first), lastTok: ms(last), end: ms(last), tokens: tokens, finished: true})
	}
	return out
}

// TestTrafficStatsLittlesLaw: on a fake clock with an arrival every 100 ms
// (10 req/s) and requests of 50 + 19 × 10 = 240 ms, the window [2 s, 7 s)
// has 50 launches, and the time-averaged number in flight is achieved rate
// × mean latency = 10 × 0.24 = 2.4, counting the requests that straddle
// the window's edges for the part inside it.
func TestTrafficStatsLittlesLaw(t *testing.T) {
	reqs := fakeRequests(100, 9000, 50, 10, 20)
	w := trafficStats(reqs, ms(2000), ms(7000), spec.TrafficSLO{})
	if w.launched != 50 || w.completed != 50 || w.achievedRPS != 10 {
		t.Fatalf("launched %d, completed %d, achieved %v req/s; want 50, 50, 10", w.launched, w.completed, w.achievedRPS)
	}
	if math.Abs(w.e2eMean-240) > 1e-6 || math.Abs(w.concurrencyAvg-2.4) > 1e-6 {
		t.Errorf("mean e2e %v ms, concurrency %v; want 240 ms and 10 × 0.24 = 2.4", w.e2eMean, w.concurrencyAvg)
	}
	if math.Abs(w.tbt[0]-10) > 1e-6 || math.Abs(w.ttft[2]-50) > 1e-6 {
		t.Errorf("tbt %v, ttft %v; want 10 ms and 50 ms", w.tbt, w.ttft)
	}
	// A request still open at the drain timeout is in flight to the end of
	// the window, counted as launched and unfinished, and never good.
	open := append(fakeRequests(100, 9000, 50, 10, 20), trafficRequest{launch: ms(6500), first: -1, lastTok: -1, end: -1})
	w2 := trafficStats(open, ms(2000), ms(7000), spec.TrafficSLO{})
	if w2.unfinished != 1 || w2.launched != 51 || math.Abs(w2.concurrencyAvg-(2.4+0.5/5)) > 1e-6 || w2.good != 50 {
		t.Errorf("with one open request: unfinished %d, launched %d, concurrency %v, good %d; want 1, 51, 2.5, 50", w2.unfinished, w2.launched, w2.concurrencyAvg, w2.good)
	}
}

// TestTrafficStatsGoodput: a request is good when its own TTFT, its own
// mean time between tokens and its own e2e latency are each at most the
// limit (equal counts); goodput is the good requests of the window per
// second.
func TestTrafficStatsGoodput(t *testing.T) {
	limit := func(v float64) *float64 { return &v }
	// In the window [0, 1 s): ttft 100/200/300 ms, tbt 10/20/30 ms over 11 tokens.
	reqs := []trafficRequest{
		{launch: 0, first: ms(100), lastTok: ms(100 + 100), end: ms(200), tokens: 11, finished: true},
		{launch: ms(10), first: ms(210), lastTok: ms(210 + 200), end: ms(410), tokens: 11, finished: true},
		{launch: ms(20), first: ms(320), lastTok: ms(320 + 300), end: ms(620), tokens: 11, finished: true},
		{launch: ms(30), first: ms(40), end: ms(50), tokens: 1, finished: false},                          // aborted: never good
		{launch: ms(1500), first: ms(1510), lastTok: ms(1600), end: ms(1600), tokens: 11, finished: true}, // after the window
	}
	tests := []struct {
		name     string
		slo      spec.TrafficSLO
		wantGood int
	}{
		{name: "no slo: every completed request", slo: spec.TrafficSLO{}, wantGood: 3},
		{name: "ttft at the limit counts", slo: spec.TrafficSLO{TTFTMs: limit(200)}, wantGood: 2},
		{name: "tbt", slo: spec.TrafficSLO{TBTMs: limit(15)}, wantGood: 1},
		{name: "e2e", slo: spec.TrafficSLO{E2EMs: limit(300)}, wantGood: 1},
		{name: "every limit at once", slo: spec.TrafficSLO{TTFTMs: limit(250), TBTMs: limit(25), E2EMs: limit(10000)}, wantGood: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := trafficStats(reqs, 0, ms(1000), tt.slo)
			if w.launched != 4 || w.completed != 3 {
				t.Fatalf("launched %d, completed %d; want 4, 3", w.launched, w.completed)
			}
			if w.good != tt.wantGood || w.goodputRPS != float64(tt.wantGood) || w.goodputShare != float64(tt.wantGood)/4 {
				t.Errorf("good %d, goodput %v req/s, share %v; want %d, %d, %v", w.good, w.goodputRPS, w.goodputShare, tt.wantGood, tt.wantGood, float64(tt.wantGood)/4)
			}
			// The three completed requests' 11 tokens each in 1 s: neither
			// the aborted request's nor the one after the window count.
			if w.outputTokens != 33 || w.outputTPS != 33 {
				t.Errorf("output tokens %d, %v tok/s; want 33, 33", w.outputTokens, w.outputTPS)
			}
		})
	}
}

func TestTrafficStatus(t *testing.T) {
	tests := []struct {
		name                string
		polls               []poll
		capHits, unfinished int
		// rejected of launched were refused at admission.
		rejected, launched int
		want               vocab.Status
		wantReason         string
	}{
		{name: "valid", want: vocab.StatusValid},
		{name: "server queued", polls: []poll{waitingPoll(0, 0), waitingPoll(50, 2), waitingPoll(100, 1)}, want: vocab.StatusQueued,
			wantReason: "the server reported waiting requests in two polls in a row during the window"},
		// One poll alone is a moment (docs/method.md#statuses): a request
		// that waited one engine step.
		{name: "one waiting poll", polls: []poll{waitingPoll(0, 0), waitingPoll(50, 3), waitingPoll(100, 0), waitingPoll(150, 2)}, want: vocab.StatusValid},
		{name: "waiting polls apart from a failed scrape", polls: []poll{waitingPoll(0, 1), {at: 50 * time.Millisecond}, waitingPoll(100, 1)}, want: vocab.StatusQueued,
			wantReason: "the server reported waiting requests in two polls in a row during the window"},
		{name: "cap hit", capHits: 3, want: vocab.StatusQueued, wantReason: "3 arrivals found 64 requests outstanding (max_outstanding) and were launched late"},
		{name: "unfinished", unfinished: 2, want: vocab.StatusQueued, wantReason: "2 of the window's requests did not finish"},
		{name: "refused at admission", rejected: 7, launched: 40, want: vocab.StatusQueued,
			wantReason: "the server refused 7 of the window's 40 requests at admission (its queue limit)"},
		{name: "refused and queued: the refusals say it", rejected: 1, launched: 40, polls: []poll{waitingPoll(0, 1), waitingPoll(50, 1)}, capHits: 2,
			want: vocab.StatusQueued, wantReason: "the server refused 1 of the window's 40 requests at admission (its queue limit)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, reasons := trafficStatus(tt.polls, tt.capHits, 64, tt.unfinished, tt.rejected, tt.launched)
			if reason := wordsOf(reasons); st != tt.want || reason != tt.wantReason {
				t.Errorf("got %s %q, want %s %q", st, reason, tt.want, tt.wantReason)
			}
		})
	}
}

// waitingPoll is a traffic cell's poll at ms with waiting requests waiting.
func waitingPoll(ms int, waiting float64) poll {
	return poll{at: time.Duration(ms) * time.Millisecond, gauges: true, waiting: waiting}
}

// runLoad drives a trafficLoad against f at rate req/s (constant arrivals)
// with the given cap for d, then stops it, and returns it with the peak
// number in flight: as the server saw them, and as the client counted them.
func runLoad(t *testing.T, f *vllmfake.Server, rate float64, maxOutstanding int, d time.Duration) (l *trafficLoad, serverPeak, clientPeak int64) {
	return runLoadClosed(t, f, rate, maxOutstanding, 0, d)
}

// runLoadClosed is runLoad, with closed > 0 a closed loop of that many
// requests in flight instead of arrivals.
func runLoadClosed(t *testing.T, f *vllmfake.Server, rate float64, maxOutstanding, closed int, d time.Duration) (l *trafficLoad, serverPeak, clientPeak int64) {
	t.Helper()
	l = testTrafficLoad(f.Start(t), rate, maxOutstanding, closed, d)
	ctx, cancel := context.WithCancel(context.Background())
	l.wg.Add(1)
	go l.dispatch(ctx)
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		serverPeak, clientPeak = max(serverPeak, f.Running.Load()), max(clientPeak, l.inFlight.Load())
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	l.wg.Wait()
	select {
	case <-l.failed:
		t.Fatalf("a request failed: %v", l.failErr)
	default:
	}
	return l, serverPeak, clientPeak
}

// TestTrafficLoadOpenLoop: requests are launched at their arrival times
// whatever the completions do: at 50 req/s with requests of 20 × 20 ms =
// 0.4 s, about 20 are in flight at once (far more than a closed loop's
// few), and none waits for a slot.
func TestTrafficLoadOpenLoop(t *testing.T) {
	l, peak, _ := runLoad(t, &vllmfake.Server{Tokens: 20, Gap: 20 * time.Millisecond}, 50, 4096, 1500*time.Millisecond)
	if peak < 12 {
		t.Errorf("at most %d requests in flight at once, want about 50 × 0.4 = 20 (open loop)", peak)
	}
	if hits := l.capHits.Load(); hits != 0 {
		t.Errorf("cap hits %d, want 0 (the cap of 4096 was never reached)", hits)
	}
	if n := len(l.reqs); n < 60 || n > 80 {
		t.Errorf("%d requests launched in 1.5 s at 50 req/s, want about 75", n)
	}
}

// testTrafficLoad is a load of 20-token completions against srv at rate
// (constant arrivals) or, with closed > 0, a closed loop, its window the
// first d.
func testTrafficLoad(srv *httptest.Server, rate float64, maxOutstanding, closed int, d time.Duration) *trafficLoad {
	client := lifecycle.NewClient(srv.URL, "", "qwen")
	body := []byte(`{"model":"qwen","prompt":[1,2,3],"max_tokens":20,"min_tokens":20,"stream":true}`)
	return &trafficLoad{client: client, path: "/v1/completions", url: srv.URL + "/v1/completions",
		work: bodiesWork{bodies: [][]byte{body}}, closed: closed, origin: time.Now(), firstChunkTimeout: 10 * time.Second, idleTimeout: 10 * time.Second,
		sched: newArrivalSchedule(vocab.ArrivalsConstant, rate, 0, 0), slots: make(chan struct{}, maxOutstanding),
		windowStart: 0, windowEnd: int64(d), failed: make(chan struct{})}
}

// TestTrafficLoadCap: the safety cap holds the requests in flight at
// max_outstanding, and each arrival that finds it reached waits for a slot
// and is counted. The fake holds every request open until the test ends
// one (Hold), so which arrivals find the cap reached is the test's doing,
// not the machine's speed: at 200 req/s the first 5 arrivals take the
// slots and the 6th waits (one hit); each request the test ends lets the
// waiting arrival in, and the next one, already due, waits in its turn.
func TestTrafficLoadCap(t *testing.T) {
	f := &vllmfake.Server{Tokens: 20, PerChunk: 20, Hold: make(chan struct{})}
	l := testTrafficLoad(f.Start(t), 200, 5, 0, time.Minute)
	ctx, cancel := context.WithCancel(context.Background())
	l.wg.Add(1)
	go l.dispatch(ctx)
	defer func() {
		cancel()
		l.wg.Wait()
	}()
	launched := func() int {
		l.mu.Lock()
		defer l.mu.Unlock()
		return len(l.reqs)
	}
	// settled waits until, k requests having ended, 5 + k are launched,
	// 5 are in flight on both sides and k + 1 arrivals have found the cap
	// reached: a condition, not a margin of time (the deadline only bounds
	// a broken test). It fails at once when the load overshoots.
	settled := func(k int) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
			n, in, hits := launched(), l.inFlight.Load(), l.capHits.Load()
			if in > 5 || n > 5+k || hits > int64(k+1) {
				t.Fatalf("after %d requests ended: %d launched, %d in flight, %d cap hits; want at most 5 + %d, max_outstanding 5, %d", k, n, in, hits, k, k+1)
			}
			if n == 5+k && in == 5 && f.Running.Load() == 5 && hits == int64(k+1) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("after %d requests ended: %d launched, %d in flight (%d on the server), %d cap hits after 10 s; want 5 + %d, 5, %d",
					k, n, in, f.Running.Load(), hits, k, k+1)
			}
		}
	}
	const ended = 3
	for k := range ended + 1 {
		settled(k)
		if k < ended {
			f.Hold <- struct{}{} // one request ends
		}
	}
	if hits := l.capHits.Load(); hits != ended+1 {
		t.Errorf("cap hits %d, want %d: each arrival after the first 5 found the cap reached", hits, ended+1)
	}
}

// TestTrafficLoadClosedLoop: a closed loop keeps exactly its concurrency
// in flight, each slot sending its next request as its last one ends:
// 6 slots of 0.4 s requests launch about 6 ÷ 0.4 = 15 a second, whatever
// the (unused) rate says, and never wait for the cap.
func TestTrafficLoadClosedLoop(t *testing.T) {
	l, _, peak := runLoadClosed(t, &vllmfake.Server{Tokens: 20, Gap: 20 * time.Millisecond}, 1000, 4096, 6, 1500*time.Millisecond)
	if peak != 6 {
		t.Errorf("%d requests in flight at most, want the concurrency 6", peak)
	}
	if hits := l.capHits.Load(); hits != 0 {
		t.Errorf("cap hits %d, want 0 in a closed loop", hits)
	}
	finished := 0
	for _, q := range l.reqs {
		if q.finished {
			finished++
		}
	}
	if n := len(l.reqs); n < 18 || n > 30 || finished < 12 {
		t.Errorf("%d requests launched (%d finished) in 1.5 s by 6 slots of 0.4 s requests, want about 6 × 1.5 ÷ 0.4 ≈ 22 + 6", n, finished)
	}
}

// TestTrafficErrorCellKey: a closed loop's cell that errors before it
// sends is still keyed by its concurrency (it was keyed rate=0: named
// "…/rate=0", lost to -baseline, conditions and -resume).
func TestTrafficErrorCellKey(t *testing.T) {
	ref := vocab.CellRef{Phase: vocab.PhaseTraffic, Matrix: "steady", Context: 8192, Concurrency: 8}
	tr := &spec.Traffic{Label: "steady"}
	for _, tt := range []struct {
		name string
		m    *Meter
		t    *spec.Traffic
	}{
		{name: "no such block", m: &Meter{}},
		{name: "longer than max_model_len", m: &Meter{MaxOutput: 256, MaxModelLen: 4096}, t: tr},
		{name: "no prompt built", m: &Meter{MaxOutput: 256}, t: tr},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := tt.m.Traffic(context.Background(), ref, tt.t, nil)
			if err != nil || c.Status != vocab.StatusError || c.Ref() != ref {
				t.Errorf("cell %s (%s, %v), err %v; want an error cell keyed %s", c.Ref().Name(), c.Status, c.Reason, err, ref.Name())
			}
		})
	}
}

// TestTrafficNoneCompleted: a cell in whose window no request completed
// (here none is launched: at 0.5 req/s, constant, the first arrival is at
// 2 s and the window is 100–400 ms) records its counts, but its latencies
// are unmeasured, not 0 — every statistic of the table and of the naming
// rule, and the goodput share of no launched request — and its warning
// says so and what to change.
func TestTrafficNoneCompleted(t *testing.T) {
	f := vllmfake.Server{Tokens: 20, Gap: time.Millisecond}
	m := testMeter(f.Start(t).URL)
	m.MaxOutput = 20
	tr := &spec.Traffic{Label: "steady", Context: 1000, Rates: []float64{0.5}, Arrivals: "constant",
		Duration: 300 * time.Millisecond, DurationText: "300ms", WarmUp: 100 * time.Millisecond, MaxOutstanding: 64}
	ref := vocab.CellRef{Phase: vocab.PhaseTraffic, Matrix: "steady", Context: 1000, Rate: 0.5}
	c, err := m.Traffic(context.Background(), ref, tr, testBodies(m, 1000))
	if err != nil {
		t.Fatal(err)
	}
	if c.Status != vocab.StatusValid || c.Launched != 0 || c.Completed != 0 {
		t.Fatalf("cell %s %q, %d launched, %d completed; want a valid cell with none", c.Status, c.Reason, c.Launched, c.Completed)
	}
	for _, name := range []string{metric.TTFTMs, metric.TTFTMsP99, metric.E2EMs, metric.E2EMsMean, metric.TBTMsP90, metric.GoodputShare, metric.OutputTPS, "tpot_ms_p99", "ttft_ms_p90"} {
		if v, ok := c.Metric(name); ok {
			t.Errorf("%s = %v, want unmeasured", name, v)
		}
	}
	for _, name := range []string{metric.Launched, metric.Completed, metric.GoodputRPS, metric.AchievedRPS} {
		if v, ok := c.Metric(name); !ok || v != 0 {
			t.Errorf("%s = %v, %v; want a measured 0", name, v, ok)
		}
	}
	want := warning.Warning{Code: warning.NoCompletion, Figures: map[string]float64{warning.FigLaunched: 0, warning.FigWindowS: 0.3}}
	if !slices.ContainsFunc(warning.Textless(c.Warnings), want.Equal) {
		t.Errorf("warnings %+v lack %+v", c.Warnings, want)
	}
}

// TestTrafficOutputTPS: on the fake, whose every completion streams 20
// tokens, a traffic cell's output_tps is its completed requests × 20 ÷ its
// window: the output tokens of the window's completed requests.
func TestTrafficOutputTPS(t *testing.T) {
	f := vllmfake.Server{Tokens: 20, Gap: time.Millisecond}
	m := testMeter(f.Start(t).URL)
	m.MaxOutput = 20
	tr := &spec.Traffic{Label: "steady", Context: 1000, Rates: []float64{20}, Arrivals: "constant",
		Duration: 500 * time.Millisecond, DurationText: "500ms", WarmUp: 100 * time.Millisecond, MaxOutstanding: 64}
	ref := vocab.CellRef{Phase: vocab.PhaseTraffic, Matrix: "steady", Context: 1000, Rate: 20}
	c, err := m.Traffic(context.Background(), ref, tr, testBodies(m, 1000))
	if err != nil {
		t.Fatal(err)
	}
	if c.Completed < 5 {
		t.Fatalf("%d completed of %d launched, want about 10", c.Completed, c.Launched)
	}
	got, ok := c.Metric(metric.OutputTPS)
	if want := Round(float64(20*c.Completed)/c.MeasuredS, 3); !ok || math.Abs(got-want) > 0.01 {
		t.Errorf("output_tps = %v (%v), want %d completed × 20 tokens ÷ %v s = %v", got, ok, c.Completed, c.MeasuredS, want)
	}
}

// TestTrafficStatsNoneCompleted: a window in which requests got their
// first token but none completed keeps no latency samples: its statistics
// are unmeasured, not those of the first tokens alone.
func TestTrafficStatsNoneCompleted(t *testing.T) {
	reqs := []trafficRequest{
		{launch: 0, first: ms(100), lastTok: ms(300), end: -1, tokens: 5, turn: 2},                // still running
		{launch: ms(10), first: ms(50), lastTok: ms(60), end: ms(70), tokens: 2, finished: false}, // aborted
	}
	w := trafficStats(reqs, 0, ms(1000), spec.TrafficSLO{})
	if w.launched != 2 || w.completed != 0 {
		t.Fatalf("launched %d, completed %d; want 2, 0", w.launched, w.completed)
	}
	for _, d := range w.dists {
		if len(d.xs) != 0 {
			t.Errorf("%s has %d samples, want none", d.name, len(d.xs))
		}
	}
	if len(w.turnTTFTs) != 0 {
		t.Errorf("turn TTFTs %v, want none", w.turnTTFTs)
	}
}
