package compare

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// trafficRun is a run with one traffic cell "replay" at rate 4 of n window
// requests (and a cool-down one outside the window), each request i's
// latencies its latent size (the same in every run of the seed) times
// slow and this run's noise; records false leaves the requests out (no
// requests.jsonl), schedule false the schedule and the indices.
func trafficRun(n int, slow float64, noise uint64, seed int64, records, schedule bool) *result.Results {
	latent := rand.New(rand.NewPCG(7, 7))
	own := rand.New(rand.NewPCG(noise, 3))
	limit := 300.0
	c := result.TrafficCell{Traffic: "replay", Rate: 4, Arrivals: "poisson", Seed: seed, Status: vocab.StatusValid,
		Launched: n, Completed: n, MeasuredS: float64(n) / 4, AchievedRPS: 4, SLO: &result.TrafficSLO{TTFTMs: &limit}}
	if schedule {
		c.Schedule = (&result.Schedule{Seed: seed, Arrivals: "poisson", Rate: 4, WarmUpS: 10, WindowS: float64(n) / 4}).Seal()
	}
	var ttfts, tbts, e2es []float64
	good := 0
	for i := range n + 1 {
		l := math.Exp(0.5 * latent.NormFloat64())
		e := math.Exp(0.02 * own.NormFloat64())
		ttft, tbt := 100*l*e*slow, 10*e*slow
		e2e := ttft + 63*tbt
		r := result.RequestRecord{Cell: "traffic/replay/rate=4", Phase: vocab.PhaseTraffic, TTFTMs: &ttft, TPOTMs: &tbt, E2EMs: e2e,
			OutputTokens: 64, Status: result.RequestFinished, InWindow: i < n}
		if schedule {
			r.Index = &i
		}
		if records {
			c.Requests = append(c.Requests, r)
		}
		if i < n {
			ttfts, tbts, e2es = append(ttfts, ttft), append(tbts, tbt), append(e2es, e2e)
			if ttft <= limit {
				good++
			}
		}
	}
	q := func(xs []float64, p float64) float64 {
		v, _ := newColumn(toFigures(xs), statTTFT, func(int) bool { return true }).quantile(p, nil)
		return v
	}
	c.TTFTMs, c.TTFTMsP99 = q(ttfts, 0.5), q(ttfts, 0.99)
	c.TBTMs, c.TBTMsP99 = q(tbts, 0.5), q(tbts, 0.99)
	c.E2EMs, c.E2EMsP99 = q(e2es, 0.5), q(e2es, 0.99)
	c.GoodputRPS, c.GoodputShare = float64(good)/c.MeasuredS, float64(good)/float64(n)
	return &result.Results{Traffic: []result.TrafficCell{c}, RequestsRead: records}
}

// toFigures are xs as the TTFTs of requests.
func toFigures(xs []float64) []reqFigures {
	out := make([]reqFigures, len(xs))
	for i, x := range xs {
		out[i] = reqFigures{ttft: x, hasTTFT: true}
	}
	return out
}

// changes are the pair's decided metrics by name.
func changes(tp TrafficPair) map[string]Change {
	out := map[string]Change{}
	for _, v := range tp.Values {
		if v.Decided {
			out[v.Metric.Name] = v.Change
		}
	}
	return out
}

// TestTrafficDecisions: traffic cells of one schedule are compared request
// for request and decided (within tolerance when the same, regressed when
// 20 % slower); without one schedule or records they are compared
// unpaired, saying why; a lost or errored cell fails or errors; another
// engine only informs.
func TestTrafficDecisions(t *testing.T) {
	p := Policy{Tolerance: 0.05}
	tests := []struct {
		name     string
		a, b     *result.Results
		engine   bool
		mode     TrafficMode
		note     string // a phrase of the note
		outcome  vocab.Outcome
		decided  vocab.Outcome
		ttft     Change
		requests int
	}{
		{name: "one schedule, the same server: within tolerance, paired", a: trafficRun(1600, 1, 1, 0, true, true), b: trafficRun(1600, 1, 2, 0, true, true),
			mode: TrafficPaired, outcome: vocab.Pass, decided: vocab.Pass, ttft: Unchanged, requests: 1600},
		{name: "one schedule, 20% slower: regressed", a: trafficRun(400, 1, 1, 0, true, true), b: trafficRun(400, 1.2, 2, 0, true, true),
			mode: TrafficPaired, outcome: vocab.Fail, decided: vocab.Fail, ttft: Regressed, requests: 400},
		{name: "20% slower against another engine: informs only", a: trafficRun(400, 1, 1, 0, true, true), b: trafficRun(400, 1.2, 2, 0, true, true), engine: true,
			mode: TrafficPaired, outcome: vocab.Pass, decided: vocab.Fail, ttft: Regressed, requests: 400},
		{name: "baseline without requests.jsonl: its values, unpaired", a: trafficRun(400, 1, 1, 0, false, true), b: trafficRun(400, 1.2, 2, 0, true, true),
			mode: TrafficValues, note: "the baseline has no per-request records", outcome: vocab.Fail, decided: vocab.Fail, ttft: Regressed},
		// Unpaired, the latent sizes of the requests are noise: the same
		// server is not shown within 5 % by 400 requests a side.
		{name: "baseline without a schedule: two samples", a: trafficRun(400, 1, 1, 0, true, false), b: trafficRun(400, 1, 2, 0, true, true),
			mode: TrafficUnpaired, note: "the baseline recorded no schedule", outcome: vocab.Inconclusive, decided: vocab.Inconclusive, ttft: Inconclusive, requests: 400},
		{name: "this run without requests: values", a: trafficRun(400, 1, 1, 0, true, true), b: trafficRun(400, 1, 2, 0, false, true),
			mode: TrafficValues, note: "this run has no per-request records", outcome: vocab.Pass, decided: vocab.Pass, ttft: Unchanged},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pairs := Traffic(tt.a, tt.b, p, tt.engine)
			if len(pairs) != 1 {
				t.Fatalf("%d pairs, want 1", len(pairs))
			}
			tp := pairs[0]
			if tp.Mode != tt.mode || tp.Outcome != tt.outcome || tp.Decided != tt.decided || tp.Requests != tt.requests {
				t.Errorf("mode %v outcome %v decided %v requests %d, want %v %v %v %d", tp.Mode, tp.Outcome, tp.Decided, tp.Requests, tt.mode, tt.outcome, tt.decided, tt.requests)
			}
			if !strings.Contains(tp.Note, tt.note) || (tt.note == "") != (tp.Note == "") {
				t.Errorf("note %q, want one with %q", tp.Note, tt.note)
			}
			if got := changes(tp)[metric.TTFTMs]; got != tt.ttft {
				t.Errorf("ttft_ms %v, want %v", got, tt.ttft)
			}
			var decided []string
			for _, v := range tp.Values {
				if v.Decided {
					decided = append(decided, v.Metric.Name)
					if v.Bounded != (tt.mode != TrafficValues) {
						t.Errorf("%s bounded %v in mode %v", v.Metric.Name, v.Bounded, tt.mode)
					}
				}
			}
			want := []string{metric.GoodputRPS, metric.GoodputShare, metric.TTFTMs, metric.TTFTMsP99, metric.TBTMs, metric.TBTMsP99, metric.E2EMs, metric.E2EMsP99}
			if !slices.Equal(decided, want) {
				t.Errorf("decided %v, want %v", decided, want)
			}
		})
	}
}

// TestTrafficLostAndErrored: the baseline's cell lost in this run fails,
// errored is an Error, one the baseline did not measure is a Skip.
func TestTrafficLostAndErrored(t *testing.T) {
	errored := trafficRun(50, 1, 2, 0, true, true)
	errored.Traffic[0].Status = vocab.StatusError
	other := trafficRun(50, 1, 2, 0, true, true)
	other.Traffic[0].Rate = 8
	tests := []struct {
		name string
		a, b *result.Results
		want []vocab.Outcome
	}{
		{name: "errored", a: trafficRun(50, 1, 1, 0, true, true), b: errored, want: []vocab.Outcome{vocab.Error}},
		{name: "lost, and one only this run has", a: trafficRun(50, 1, 1, 0, true, true), b: other, want: []vocab.Outcome{vocab.Fail, vocab.Skip}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []vocab.Outcome
			for _, tp := range Traffic(tt.a, tt.b, Policy{Tolerance: 0.05}, false) {
				got = append(got, tp.Outcome)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("outcomes %v, want %v", got, tt.want)
			}
		})
	}
}

// TestTrafficUnlike: schedules that differ refuse the comparison, naming
// what differs, unless -allow-settings-change, which compares them
// unpaired.
func TestTrafficUnlike(t *testing.T) {
	a, b := trafficRun(100, 1, 1, 0, true, true), trafficRun(100, 1, 2, 5, true, true)
	c := Build(a, b, Policy{Tolerance: 0.05})
	if !c.Refused || c.ExitCode() != 2 {
		t.Fatalf("refused %v exit %d, want refused, exit 2", c.Refused, c.ExitCode())
	}
	var got []string
	for _, d := range c.Settings {
		got = append(got, d.String())
	}
	if want := []string{"traffic/replay/rate=4 seed: 0 → 5"}; !slices.Equal(got, want) {
		t.Errorf("settings %q, want %q", got, want)
	}
	c = Build(a, b, Policy{Tolerance: 0.05, AllowSettingsChange: true})
	if c.Refused || len(c.Traffic) != 1 || c.Traffic[0].Mode != TrafficUnpaired || !strings.Contains(c.Traffic[0].Note, "the schedules differ (seed 0 vs 5)") {
		t.Errorf("allowed: refused %v, traffic %+v", c.Refused, c.Traffic)
	}
}

// TestTrafficPairsByIndex: the pairs are made by index and turn, not by
// order: this run's records shuffled pair the same, and a request of the
// baseline's window that is not in this run's is left out, counted as
// missing; a closed loop is compared unpaired, saying why.
func TestTrafficPairsByIndex(t *testing.T) {
	a, b := trafficRun(100, 1, 1, 0, true, true), trafficRun(100, 1, 1, 0, true, true)
	rs := b.Traffic[0].Requests
	rand.New(rand.NewPCG(1, 1)).Shuffle(len(rs), func(i, j int) { rs[i], rs[j] = rs[j], rs[i] })
	tp := Traffic(a, b, Policy{Tolerance: 0.05}, false)[0]
	for _, v := range tp.Values {
		if v.Decided && (v.Lower != 1 || v.Upper != 1) {
			t.Errorf("%s bounds %v … %v: identical requests paired out of order", v.Metric.Name, v.Lower, v.Upper)
		}
	}
	for i := range rs {
		if *rs[i].Index < 10 {
			rs[i].InWindow = false // sent after the window closed
		}
	}
	tp = Traffic(a, b, Policy{Tolerance: 0.05}, false)[0]
	if tp.Missing != 10 || tp.Requests != 90 {
		t.Errorf("%d paired, %d missing; want 90 and 10", tp.Requests, tp.Missing)
	}
	for _, v := range tp.Values {
		if v.Decided && (v.Lower != 1 || v.Upper != 1) {
			t.Errorf("%s bounds %v … %v: the pairs left should be identical", v.Metric.Name, v.Lower, v.Upper)
		}
	}
	limit := 500.0
	b.Traffic[0].SLO = &result.TrafficSLO{TTFTMs: &limit, TBTMs: &limit}
	if tp := Traffic(a, b, Policy{Tolerance: 0.05}, false)[0]; !slices.Equal(tp.SLO, []string{"ttft_ms 300 → 500", "tbt_ms none → 500"}) {
		t.Errorf("SLO differences %q, want ttft_ms and tbt_ms named", tp.SLO)
	}
	closed := func(r *result.Results) *result.Results {
		c := &r.Traffic[0]
		c.Rate, c.Concurrency = 0, 4
		for i := range c.Requests {
			c.Requests[i].Cell = c.Ref().Name()
		}
		return r
	}
	tp = Traffic(closed(trafficRun(100, 1, 1, 0, true, true)), closed(trafficRun(100, 1, 1, 0, true, true)), Policy{Tolerance: 0.05}, false)[0]
	if tp.Mode != TrafficUnpaired || !strings.Contains(tp.Note, "a closed loop") {
		t.Errorf("closed loop: mode %v, note %q; want unpaired, saying why", tp.Mode, tp.Note)
	}
}

// TestPlannedTraffic: before the run, a traffic block whose seed, arrivals,
// warm-up, window or workload differ from the baseline cells' schedules is
// refused naming what differs; the same block is not.
func TestPlannedTraffic(t *testing.T) {
	base := trafficRun(50, 1, 1, 0, true, true)
	same := PlannedTraffic{Label: "replay", Seed: 0, Arrivals: "poisson", WarmUp: 10 * time.Second, Window: 12500 * time.Millisecond}
	tests := []struct {
		name    string
		planned PlannedTraffic
		want    []string
	}{
		{name: "the same schedule", planned: same},
		{name: "another seed", planned: func() PlannedTraffic { p := same; p.Seed = 3; return p }(), want: []string{"traffic/replay/rate=4 seed: 0 → 3"}},
		{name: "another window and arrivals", planned: func() PlannedTraffic { p := same; p.Window, p.Arrivals = time.Minute, "constant"; return p }(),
			want: []string{`traffic/replay/rate=4 arrivals: "poisson" → "constant"`, "traffic/replay/rate=4 window: 12.5s → 60s"}},
		{name: "another block", planned: func() PlannedTraffic { p := same; p.Label, p.Seed = "other", 3; return p }()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := BuildPlanned(base, Planned{Window: 0, Repeat: 1, Traffic: []PlannedTraffic{tt.planned}}, Policy{Tolerance: 0.05})
			var got []string
			for _, d := range c.Settings {
				if strings.HasPrefix(d.Setting, "traffic/") {
					got = append(got, d.String())
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("traffic settings %q, want %q", got, tt.want)
			}
		})
	}
}

// TestTrafficRecord: results.json's comparison keeps a row per traffic
// cell and decided metric, with the bootstrap's bounds, the decision and
// the outcome; a lost cell is one row saying so.
func TestTrafficRecord(t *testing.T) {
	a, b := trafficRun(400, 1, 1, 0, true, true), trafficRun(400, 1.2, 2, 0, true, true)
	lost := trafficRun(50, 1, 1, 0, true, true)
	lost.Traffic[0].Rate = 8
	a.Traffic = append(a.Traffic, lost.Traffic[0])
	rec := Build(a, b, Policy{Tolerance: 0.05}).Record()
	var ttft *result.ComparisonRow
	for i := range rec.Traffic {
		if rec.Traffic[i].Metric == metric.TTFTMs {
			ttft = &rec.Traffic[i]
		}
	}
	if len(rec.Traffic) != 9 || ttft == nil {
		t.Fatalf("%d traffic rows (%+v), want 8 metrics and the lost cell's row", len(rec.Traffic), rec.Traffic)
	}
	if ttft.Cell != "traffic/replay/rate=4" || ttft.Decision != "regressed" || ttft.Outcome != vocab.Fail || ttft.Lower == nil ||
		*ttft.Lower > *ttft.Change || *ttft.Change > *ttft.Upper || *ttft.Lower < 0.05 || *ttft.Confidence != 0.95 {
		t.Errorf("ttft_ms row %+v: want regressed, bounds around the change and beyond +5%%", *ttft)
	}
	if last := rec.Traffic[8]; last.Cell != "traffic/replay/rate=8" || last.Decision != "lost" || last.Outcome != vocab.Fail {
		t.Errorf("lost cell's row %+v, want lost, fail", last)
	}
}

// TestRequestsToDecide: the requests a side an inconclusive interval needs
// to clear the tolerance's edge, its width falling as 1/√n.
func TestRequestsToDecide(t *testing.T) {
	tests := []struct {
		name                    string
		n                       int
		est, lower, upper, edge float64
		want                    int
	}{
		// est 1, bounds ÷ and × 1.05², edge 1.05: the half-width is
		// twice the distance to the edge and must halve: 4× the requests.
		{name: "twice as far as the edge", n: 100, est: 1, lower: 1 / 1.1025, upper: 1.1025, edge: 1.05, want: 400},
		{name: "at the edge: never", n: 100, est: 1.05, lower: 1, upper: 1.1, edge: 1.05, want: 0},
		{name: "beyond the cap", n: 100, est: 1.001, lower: 0.9, upper: 1.1, edge: 1.002, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := requestsToDecide(tt.n, tt.est, tt.lower, tt.upper, tt.edge); got != tt.want {
				t.Errorf("requestsToDecide %d, want %d", got, tt.want)
			}
		})
	}
}

// TestTrafficUndecidablePercentile: a percentile of fewer requests a side
// than its order statistics can bound at α (a p99 at 0.05: 299) is
// inconclusive whatever its bounds say, and never fails, not even when
// -inconclusive pass fails what is estimated beyond the tolerance; from
// enough requests the same slowdown regresses it
// (docs/method.md#undecidable-percentiles).
func TestTrafficUndecidablePercentile(t *testing.T) {
	tests := []struct {
		name       string
		n          int
		records    bool
		policy     Policy
		wantChange Change
		wantOut    vocab.Outcome
		wantFrom   int
	}{
		{name: "paired, 200 requests: undecidable", n: 200, records: true, wantChange: Inconclusive, wantOut: vocab.Inconclusive, wantFrom: 200},
		{name: "paired, 200 requests, -inconclusive pass: passes, never fails", n: 200, records: true,
			policy: Policy{Inconclusive: InconclusivePass}, wantChange: Inconclusive, wantOut: vocab.Pass, wantFrom: 200},
		{name: "values only, 200 requests: undecidable", n: 200, wantChange: Inconclusive, wantOut: vocab.Inconclusive, wantFrom: 200},
		{name: "paired, 400 requests: regressed", n: 400, records: true, wantChange: Regressed, wantOut: vocab.Fail},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := trafficRun(tt.n, 1, 1, 3, tt.records, true)
			b := trafficRun(tt.n, 1.5, 1, 3, tt.records, true)
			tp := Traffic(a, b, tt.policy, false)[0]
			var got *TrafficValue
			for i := range tp.Values {
				if tp.Values[i].Metric.Name == "ttft_ms_p99" {
					got = &tp.Values[i]
				}
			}
			if got == nil {
				t.Fatal("ttft_ms_p99 not compared")
			}
			if got.Change != tt.wantChange || got.Outcome != tt.wantOut || got.From != tt.wantFrom {
				t.Errorf("ttft_ms_p99: %s, %s, from %d (need %d); want %s, %s, from %d", got.Change, got.Outcome, got.From, got.Need, tt.wantChange, tt.wantOut, tt.wantFrom)
			}
			if tt.wantFrom > 0 && got.Need != 299 {
				t.Errorf("need %d; want 299 (0.99^299 ≤ 0.05)", got.Need)
			}
			for _, v := range tp.Values {
				if v.Metric.Name == "ttft_ms" && v.Change != Regressed {
					t.Errorf("ttft_ms (a median of %d requests) %s; want regressed", tt.n, v.Change)
				}
			}
		})
	}
}

// reasoned gives every request of r's traffic cell reasoning tokens
// before its answer at its time between tokens: its TTFO is its TTFT +
// tokens × TBT, and the cell's ttfo_ms and ttfo_ms_p99 those of its
// window requests.
func reasoned(r *result.Results, tokens int64) *result.Results {
	c := &r.Traffic[0]
	var ttfos []float64
	for i := range c.Requests {
		q := &c.Requests[i]
		ttfo := *q.TTFTMs + float64(tokens)**q.TPOTMs
		q.ReasoningTokens, q.TTFOMs = &tokens, &ttfo
		if q.InWindow {
			ttfos = append(ttfos, ttfo)
		}
	}
	for _, s := range []struct {
		name string
		p    float64
	}{{name: metric.TTFOMs, p: 0.5}, {name: metric.TTFOMsP99, p: 0.99}} {
		v, _ := newColumn(toFigures(ttfos), statTTFT, func(int) bool { return true }).quantile(s.p, nil)
		c.SetValue(metric.Must(vocab.PhaseTraffic, s.name), v)
	}
	return r
}

// TestTrafficTTFOOneSide: TTFO is decided when either cell streamed
// reasoning, the side without it taking its TTFT as its TTFO (its first
// token was its answer's), request for request by the paired bootstrap:
// an upgrade that starts reasoning 20 tokens
// (about 200 ms on a TTFT of about 100) is regressed on TTFO though its
// TTFT is unchanged; one that stops is improved; without reasoning on
// either side TTFO is not compared.
func TestTrafficTTFOOneSide(t *testing.T) {
	p := Policy{Tolerance: 0.05}
	run := func(noise uint64) *result.Results { return trafficRun(400, 1, noise, 0, true, true) }
	tests := []struct {
		name       string
		a, b       *result.Results
		ttfo, ttft Change
		compared   bool
	}{
		{name: "only the candidate reasons: regressed", a: run(1), b: reasoned(run(2), 20), ttfo: Regressed, ttft: Unchanged, compared: true},
		{name: "only the baseline reasons: improved", a: reasoned(run(1), 20), b: run(2), ttfo: Improved, ttft: Unchanged, compared: true},
		{name: "both reason alike: unchanged", a: reasoned(run(1), 20), b: reasoned(run(2), 20), ttfo: Unchanged, ttft: Unchanged, compared: true},
		{name: "neither reasons: not compared", a: run(1), b: run(2), ttft: Unchanged},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pairs := Traffic(tt.a, tt.b, p, false)
			if len(pairs) != 1 {
				t.Fatalf("%d pairs, want 1", len(pairs))
			}
			got := changes(pairs[0])
			if got[metric.TTFTMs] != tt.ttft {
				t.Errorf("ttft_ms %v, want %v", got[metric.TTFTMs], tt.ttft)
			}
			for _, name := range []string{metric.TTFOMs, metric.TTFOMsP99} {
				change, compared := got[name]
				if compared != tt.compared || compared && name == metric.TTFOMs && change != tt.ttfo {
					t.Errorf("%s %v (compared %v), want %v (compared %v)", name, change, compared, tt.ttfo, tt.compared)
				}
			}
			for _, v := range pairs[0].Values {
				if v.Metric.Name == metric.TTFOMs {
					t.Logf("ttfo_ms %.1f → %.1f (%+.1f %%, bounds %.3f–%.3f): %v", v.A, v.B, 100*v.Delta, v.Lower, v.Upper, v.Change)
				}
				if (v.Metric.Name == metric.TTFOMs || v.Metric.Name == metric.TTFOMsP99) && !v.Bounded {
					t.Errorf("%s decided on its two values, want by the paired bootstrap of the requests' TTFOs", v.Metric.Name)
				}
			}
		})
	}
}
