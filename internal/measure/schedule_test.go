package measure

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slogate/slogate/internal/requests"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/vllmfake"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/warning"
	"github.com/slogate/slogate/internal/workload"
)

// planned is one arrival of a run as requests.jsonl records it: its
// planned send time (ms) and the dataset entry it sent.
type planned struct {
	ms    float64
	entry string
}

// scheduleRun measures one traffic cell of tr over workload w against f
// and returns the cell and its first requests' arrivals by index.
func scheduleRun(t *testing.T, f *vllmfake.Server, tr *spec.Traffic, w *spec.Workload) (result.TrafficCell, map[int]planned) {
	t.Helper()
	m := testMeter(f.Start(t).URL)
	m.MaxOutput = 8
	p, _, err := NewPrompts(context.Background(), m.Server.Client, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	m.Prompts = p
	var mu sync.Mutex
	arrivals := map[int]planned{}
	m.Record = func(r *result.RequestRecord) {
		mu.Lock()
		defer mu.Unlock()
		if r.Index == nil || r.PlannedMs == nil || r.LagMs == nil {
			t.Errorf("record %+v lacks its index, planned time or lag", r)
			return
		}
		arrivals[*r.Index] = planned{*r.PlannedMs, r.DatasetEntry}
	}
	ref := vocab.CellRef{Phase: vocab.PhaseTraffic, Matrix: tr.Label, Rate: tr.Rates[0]}
	c, err := m.WorkloadTraffic(context.Background(), ref, tr, w)
	if err != nil {
		t.Fatal(err)
	}
	if c.Schedule == nil {
		t.Fatalf("cell %s (%s) has no schedule", c.Status, c.Reason)
	}
	return c, arrivals
}

// datasetWorkload is a named workload over the JSONL dataset at path.
func datasetWorkload(t *testing.T, name, path string, seed uint64) *spec.Workload {
	t.Helper()
	d, err := requests.ReadDataset(path, "")
	if err != nil {
		t.Fatal(err)
	}
	return &spec.Workload{Name: name, Options: workload.Options{Prompt: workload.DatasetPrompt, DatasetPath: path, Seed: seed,
		OutputTokens: workload.FixedLength(4)}, Dataset: d, DatasetText: path}
}

// TestTrafficScheduleReplays: two runs of one traffic block and workload
// have the same schedule hash and send the same requests (index, planned
// time, dataset entry) whatever the machine did, and each of another
// arrival seed, another workload seed, another workload and another
// dataset file's contents changes the hash, with Differences naming what
// changed (and the sequence changing with it where it should).
func TestTrafficScheduleReplays(t *testing.T) {
	raw, err := os.ReadFile("../../testdata/datasets/prompts.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	orig, edited := filepath.Join(dir, "prompts.jsonl"), filepath.Join(dir, "edited.jsonl")
	if err := os.WriteFile(orig, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(edited, []byte(strings.Replace(string(raw), "lighthouse", "windmill", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	block := func(seed int64) *spec.Traffic {
		return &spec.Traffic{Label: "steady", Workload: "chat", Rates: []float64{40}, Arrivals: vocab.ArrivalsPoisson, Seed: seed,
			WarmUp: 50 * time.Millisecond, Duration: 250 * time.Millisecond, DurationText: "250ms", MaxOutstanding: 64}
	}
	f := &vllmfake.Server{Tokens: 4, PerChunk: 1, Gap: time.Millisecond}
	base, baseArrivals := scheduleRun(t, f, block(7), datasetWorkload(t, "chat", orig, 1))
	if base.Schedule == nil || len(base.Schedule.Hash) != 64 || base.Schedule.Hash != base.Schedule.Digest() {
		t.Fatalf("schedule %+v: want one sealed", base.Schedule)
	}
	if base.Schedule.DatasetSHA256 == "" || base.Schedule.Settings["prompt"] != workload.DatasetPrompt {
		t.Errorf("schedule %+v lacks the dataset's hash or prompt kind", base.Schedule)
	}
	tests := []struct {
		name string
		tr   *spec.Traffic
		w    *spec.Workload
		// want are the differences expected, by prefix.
		want []string
		// samePlanned and sameEntries: whether the planned times and the
		// entries sent are the base run's, index for index.
		samePlanned, sameEntries bool
	}{
		{name: "same", tr: block(7), w: datasetWorkload(t, "chat", orig, 1), samePlanned: true, sameEntries: true},
		{name: "arrival seed", tr: block(8), w: datasetWorkload(t, "chat", orig, 1), want: []string{"seed 7 vs 8"}, sameEntries: true},
		{name: "workload seed", tr: block(7), w: datasetWorkload(t, "chat", orig, 2), want: []string{"workload setting seed 1 vs 2"}, samePlanned: true},
		{name: "workload name", tr: block(7), w: datasetWorkload(t, "other", orig, 1), want: []string{`workload "chat" vs "other"`}, samePlanned: true, sameEntries: true},
		{name: "dataset contents", tr: block(7), w: datasetWorkload(t, "chat", edited, 1), want: []string{"dataset SHA-256 "}, samePlanned: true, sameEntries: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, arrivals := scheduleRun(t, f, tt.tr, tt.w)
			diffs := base.Schedule.Differences(c.Schedule)
			if len(diffs) != len(tt.want) {
				t.Fatalf("differences %q, want %q", diffs, tt.want)
			}
			for i, d := range diffs {
				if !strings.HasPrefix(d, tt.want[i]) {
					t.Errorf("difference %q, want %q…", d, tt.want[i])
				}
			}
			if same := c.Schedule.Hash == base.Schedule.Hash; same != (len(tt.want) == 0) {
				t.Errorf("same hash = %v with differences %q", same, diffs)
			}
			common := 0
			samePlanned, sameEntries := true, true
			for i, a := range arrivals {
				b, ok := baseArrivals[i]
				if !ok {
					continue
				}
				common++
				samePlanned = samePlanned && a.ms == b.ms
				sameEntries = sameEntries && a.entry == b.entry
			}
			if common < 5 {
				t.Fatalf("%d indices in common with the base run (%d and %d sent), want at least 5", common, len(arrivals), len(baseArrivals))
			}
			if samePlanned != tt.samePlanned || sameEntries != tt.sameEntries {
				t.Errorf("over %d common indices: same planned times %v, same entries %v; want %v, %v", common, samePlanned, sameEntries, tt.samePlanned, tt.sameEntries)
			}
		})
	}
}

// TestTrafficPlannedTimes: each arrival's planned time is the sum of the
// seeded schedule's gaps up to it, drawn here again independently, and its
// lag is its start less that time.
func TestTrafficPlannedTimes(t *testing.T) {
	f := &vllmfake.Server{Tokens: 4, PerChunk: 1, Gap: time.Millisecond}
	l := testTrafficLoad(f.Start(t), 60, 64, 0, time.Second)
	l.sched = newArrivalSchedule(vocab.ArrivalsPoisson, 60, 0, 3)
	var mu sync.Mutex
	var recs []result.RequestRecord
	l.record = func(r *result.RequestRecord) { mu.Lock(); recs = append(recs, *r); mu.Unlock() }
	ctx, cancel := context.WithCancel(context.Background())
	l.wg.Add(1)
	go l.dispatch(ctx)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		mu.Lock()
		n := len(recs)
		mu.Unlock()
		if n >= 10 || time.Now().After(deadline) {
			break
		}
	}
	cancel()
	l.wg.Wait()
	if len(recs) < 10 {
		t.Fatalf("%d records after 10 s, want 10", len(recs))
	}
	want := newArrivalSchedule(vocab.ArrivalsPoisson, 60, 0, 3)
	at, wantMs := 0.0, map[int]float64{}
	for i := range 1000 {
		at += want.next()
		wantMs[i] = Round(float64(int64(at*float64(time.Second)))/1e6, 3)
	}
	for _, r := range recs {
		if r.Index == nil || r.PlannedMs == nil || r.LagMs == nil {
			t.Fatalf("record %+v lacks its index, planned time or lag", r)
		}
		if *r.PlannedMs != wantMs[*r.Index] {
			t.Errorf("request %d planned at %v ms, want %v", *r.Index, *r.PlannedMs, wantMs[*r.Index])
		}
		sinceOrigin := float64(r.Start.Sub(l.origin)) / 1e6
		if d := sinceOrigin - *r.PlannedMs - *r.LagMs; d < -0.01 || d > 0.01 {
			t.Errorf("request %d: start %.3f ms − planned %.3f ms ≠ lag %.3f ms", *r.Index, sinceOrigin, *r.PlannedMs, *r.LagMs)
		}
		if *r.LagMs < 0 {
			t.Errorf("request %d sent %.3f ms before its planned time", *r.Index, -*r.LagMs)
		}
	}
}

// lagReqs are arrivals every gap ms in [0, n·gap), each launched lag(i)
// ms after it was ready; held(i) ms of the wait are the cap's.
func lagReqs(n int, gap float64, lag, held func(i int) float64) []trafficRequest {
	reqs := make([]trafficRequest, n)
	for i := range reqs {
		p := ms(float64(i) * gap)
		ready := p + ms(held(i))
		reqs[i] = trafficRequest{index: i, planned: p, ready: ready, launch: ready + ms(lag(i)), first: -1, lastTok: -1, end: -1}
	}
	return reqs
}

func none(int) float64 { return 0 }

// TestClientLagBound: the client-lag rule on made-up arrivals (no clock):
// a client whose median lag is over the bound (the larger of 50 ms and a
// tenth of the mean gap: it did not keep the rate) or whose lag once
// passed a second is behind; a loaded machine's spikes, which a client
// that keeps up catches up from, are not; the time the outstanding cap
// held an arrival is the server's, not the client's; a closed loop's
// requests and arrivals outside the window have no say.
func TestClientLagBound(t *testing.T) {
	tests := []struct {
		name       string
		rate       float64 // req/s; the arrivals' gap is 1000/rate ms
		reqs       func(gap float64) []trafficRequest
		behind     bool
		p50, bound float64
	}{
		{name: "jitter under the floor", rate: 10, reqs: func(gap float64) []trafficRequest {
			return lagReqs(200, gap, func(i int) float64 { return float64(i % 15) }, none)
		}, p50: 7, bound: 50},
		{name: "a loaded machine's spikes", rate: 40, reqs: func(gap float64) []trafficRequest {
			return lagReqs(200, gap, func(i int) float64 {
				if i%20 == 3 {
					return 250
				}
				return 1
			}, none)
		}, p50: 1, bound: 50},
		{name: "a loaded machine's median", rate: 40, reqs: func(gap float64) []trafficRequest {
			return lagReqs(200, gap, func(i int) float64 { return 19 + float64(i%7) }, none)
		}, p50: 22, bound: 50},
		{name: "behind the floor", rate: 10, reqs: func(gap float64) []trafficRequest {
			return lagReqs(200, gap, func(i int) float64 { return 60 + float64(i%50) }, none)
		}, behind: true, p50: 84.5, bound: 50},
		{name: "a slow rate's bound is a tenth of its gap", rate: 0.5, reqs: func(gap float64) []trafficRequest {
			return lagReqs(100, gap, func(i int) float64 { return 150 }, none)
		}, p50: 150, bound: 200},
		{name: "over a slow rate's bound", rate: 0.5, reqs: func(gap float64) []trafficRequest {
			return lagReqs(100, gap, func(i int) float64 { return 250 }, none)
		}, behind: true, p50: 250, bound: 200},
		{name: "a lag growing without end", rate: 200, reqs: func(gap float64) []trafficRequest {
			return lagReqs(400, gap, func(i int) float64 { return float64(i) * gap / 10 }, none)
		}, behind: true, p50: 99.75, bound: 50}, // 0.5 ms × 199.5, the median's place
		{name: "one lag over a second", rate: 0.1, reqs: func(gap float64) []trafficRequest {
			return lagReqs(200, gap, func(i int) float64 {
				if i == 7 {
					return 1200
				}
				return 1
			}, none)
		}, behind: true, p50: 1, bound: 1000},
		{name: "held by the cap: the server's", rate: 100, reqs: func(gap float64) []trafficRequest {
			return lagReqs(300, gap, func(int) float64 { return 0.5 }, func(i int) float64 { return float64(i) * 3 })
		}, p50: 0.5, bound: 50},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reqs := tt.reqs(1000 / tt.rate)
			f, behind := judgeLag(clientLags(reqs, 0, reqs[len(reqs)-1].launch+1), tt.rate)
			if behind != tt.behind || !nearMs(f.p50, tt.p50) || !nearMs(f.bound, tt.bound) || f.arrivals != len(reqs) {
				t.Errorf("behind %v, median lag %.3f ms, bound %.3f ms over %d; want %v, %.3f, %.3f over %d", behind, f.p50, f.bound, f.arrivals, tt.behind, tt.p50, tt.bound, len(reqs))
			}
			if f.p99 < f.p50 || f.max < f.p99 {
				t.Errorf("median %.3f, p99 %.3f, max %.3f ms: not in order", f.p50, f.p99, f.max)
			}
			if behind {
				w := f.warning()
				if w.Code != warning.ClientLag || w.Figures[warning.FigLagP50Ms] != Round(f.p50, 3) || w.Figures[warning.FigLagBoundMs] != Round(f.bound, 3) ||
					w.Figures[warning.FigLagMaxMs] != Round(f.max, 3) || w.Figures[warning.FigArrivals] != float64(len(reqs)) {
					t.Errorf("warning %+v, want %s with the figures", w, warning.ClientLag)
				}
			}
		})
	}
	t.Run("closed loop and outside the window", func(t *testing.T) {
		reqs := lagReqs(100, 10, func(int) float64 { return 500 }, none)
		for i := range reqs[:50] {
			reqs[i].planned, reqs[i].ready = -1, -1 // a closed loop's, or later turns
		}
		lags := clientLags(reqs, 0, reqs[80].launch)
		if len(lags) != 30 {
			t.Errorf("%d lags, want the 30 planned ones launched in the window", len(lags))
		}
		if _, behind := judgeLag(nil, 10); behind {
			t.Errorf("no arrivals: behind")
		}
		if _, behind := judgeLag(lags, 0); behind {
			t.Errorf("a closed loop (rate 0): behind")
		}
	})
}

// nearMs reports whether a and b are the same ms figure, to 0.005 ms.
func nearMs(a, b float64) bool { return a-b < 0.005 && b-a < 0.005 }

// TestTrafficLagHeldByCap: arrivals that wait for the outstanding cap
// record the wait as held (the server's share of their lag), and their
// client lag is counted from when they got a slot. The fake holds every
// request open until the test ends it, as TestTrafficLoadCap does.
func TestTrafficLagHeldByCap(t *testing.T) {
	f := &vllmfake.Server{Tokens: 4, PerChunk: 4, Hold: make(chan struct{})}
	l := testTrafficLoad(f.Start(t), 200, 2, 0, time.Minute)
	var mu sync.Mutex
	var recs []result.RequestRecord
	l.record = func(r *result.RequestRecord) { mu.Lock(); recs = append(recs, *r); mu.Unlock() }
	ctx, cancel := context.WithCancel(context.Background())
	l.wg.Add(1)
	go l.dispatch(ctx)
	for deadline := time.Now().Add(10 * time.Second); l.capHits.Load() < 1 || f.Running.Load() < 2; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the cap was not reached in 10 s")
		}
	}
	time.Sleep(20 * time.Millisecond) // the waiting arrival falls behind its planned time
	for range 3 {
		f.Hold <- struct{}{}
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		mu.Lock()
		n := len(recs)
		mu.Unlock()
		if n >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("3 requests did not end in 10 s")
		}
	}
	cancel()
	for range 8 {
		select {
		case f.Hold <- struct{}{}:
		case <-time.After(100 * time.Millisecond):
		}
	}
	l.wg.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	held := 0
	for _, q := range l.reqs {
		if q.planned < 0 || q.ready < q.planned || q.launch < q.ready {
			t.Errorf("request %d: planned %d, ready %d, launched %d ns; want planned ≤ ready ≤ launch", q.index, q.planned, q.ready, q.launch)
		}
		if q.ready > q.planned {
			held++
			var rec result.RequestRecord
			q.schedule(&rec)
			if rec.HeldMs == nil || *rec.HeldMs <= 0 || *rec.HeldMs > *rec.LagMs {
				t.Errorf("request %d held %v ms of lag %v ms; want 0 < held ≤ lag", q.index, rec.HeldMs, *rec.LagMs)
			}
		}
	}
	if held == 0 || l.reqs[2].ready <= l.reqs[2].planned {
		t.Errorf("%d arrivals held; want the third (index %d, planned %d, ready %d) among them", held, l.reqs[2].index, l.reqs[2].planned, l.reqs[2].ready)
	}
	if i := slices.IndexFunc(l.reqs, func(q *trafficRequest) bool { return q.index == 2 }); i < 0 {
		t.Errorf("arrival 2 was never launched")
	}
}

// TestTrafficClientStalled: a dispatcher starved by the test hook (each
// arrival delayed 30 ms at a 10 ms mean gap) falls behind by 20 ms more
// every arrival, however fast the machine: the lag rule says it is behind.
func TestTrafficClientStalled(t *testing.T) {
	f := &vllmfake.Server{Tokens: 4, PerChunk: 1, Gap: time.Millisecond}
	l := testTrafficLoad(f.Start(t), 100, 4096, 0, 400*time.Millisecond)
	l.stall = 30 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel()
	l.wg.Add(1)
	go l.dispatch(ctx)
	l.wg.Wait()
	reqs := make([]trafficRequest, len(l.reqs))
	for i, q := range l.reqs {
		reqs[i] = *q
	}
	fig, behind := judgeLag(clientLags(reqs, l.windowStart, l.windowEnd), 100)
	if !behind || len(reqs) < 3 {
		t.Errorf("%d arrivals, p99 lag %.1f ms (bound %.1f): behind %v, want true", len(reqs), fig.p99, fig.bound, behind)
	}
	if !strings.Contains(words(fig.reason()), "the client fell behind its schedule") {
		t.Errorf("reason %q", words(fig.reason()))
	}
}

// TestTrafficScheduleUnnamed: a cell of the unnamed workload records its
// schedule too, and how many prompts its requests cycle through (a
// distinct workload's count follows the decode cells' streams) is part of
// it: request i sends prompt i mod that count.
func TestTrafficScheduleUnnamed(t *testing.T) {
	f := vllmfake.Server{Tokens: 4, PerChunk: 1, Gap: time.Millisecond}
	m := testMeter(f.Start(t).URL)
	m.MaxOutput = 4
	tr := &spec.Traffic{Label: "steady", Context: 100, Rates: []float64{20}, Arrivals: vocab.ArrivalsConstant, Seed: 3,
		WarmUp: 50 * time.Millisecond, Duration: 200 * time.Millisecond, DurationText: "200ms", MaxOutstanding: 64}
	ref := vocab.CellRef{Phase: vocab.PhaseTraffic, Matrix: "steady", Context: 100, Rate: 20}
	run := func(bodies [][]byte) *result.Schedule {
		c, err := m.Traffic(context.Background(), ref, tr, bodies)
		if err != nil {
			t.Fatal(err)
		}
		if c.Schedule == nil || c.Schedule.Hash != c.Schedule.Digest() {
			t.Fatalf("schedule %+v, want one sealed", c.Schedule)
		}
		return c.Schedule
	}
	one := run(testBodies(m, 100))
	if got := one.Differences(run(testBodies(m, 100))); got != nil {
		t.Errorf("the same cell again differs: %q", got)
	}
	four := run(slices.Repeat(testBodies(m, 100), 4))
	if got, want := one.Differences(four), []string{"workload setting prompts 1 vs 4"}; !slices.Equal(got, want) {
		t.Errorf("differences %q, want %q", got, want)
	}
	if one.Workload != "" || one.Settings["context"] != "100" || one.Settings["max_output"] != "4" || one.Settings["endpoint"] != "/v1/completions" {
		t.Errorf("schedule %+v: want the unnamed workload's context, max_output and endpoint", one)
	}
}

// TestScheduleSettings: what of a workload decides its requests is in the
// schedule's settings, each value without spaces (so that a difference
// "NAME A vs B" reads unambiguously), and what does not decide them is
// not: a dataset's prompts use no article document, output_tokens
// replaces max_output.
func TestScheduleSettings(t *testing.T) {
	tests := []struct {
		name    string
		opts    workload.Options
		named   bool
		want    map[string]string
		without []string
	}{
		{name: "unnamed article", opts: workload.Options{Prompt: workload.Article, Seed: 1},
			want: map[string]string{"prompt": workload.Article, "seed": "1", "context": "1024", "max_output": "64", "endpoint": "/v1/completions"}},
		{name: "generated lengths and prefixes", named: true,
			opts: workload.Options{Prompt: workload.Random, Seed: 3, InputTokens: workload.Length{Distribution: workload.Uniform, Min: 100, Max: 900},
				OutputTokens: workload.FixedLength(32), Prefix: workload.Prefix{Groups: 4, Tokens: 128}, Turns: 2, IgnoreEOS: true},
			want: map[string]string{"prompt": workload.Random, "input_tokens": "{min=100,max=900}", "output_tokens": "32",
				"prefix": "{groups=4,tokens=128}", "turns": "2", "ignore_eos": "true"},
			without: []string{"max_output", "document_sha256"}},
		{name: "dataset", named: true, opts: workload.Options{Prompt: workload.DatasetPrompt, Seed: 1, DatasetFormat: workload.FormatShareGPT},
			want:    map[string]string{"dataset_format": workload.FormatShareGPT, "filter": "{min_prompt=4,max_prompt=1024,min_output=4,max_total=2048}"},
			without: []string{"max_output", "document_sha256", "instruction_sha256"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := scheduleSettings(tt.opts, tt.named, 1024, 64, "/v1/completions")
			for k, v := range tt.want {
				if s[k] != v {
					t.Errorf("%s = %q, want %q", k, s[k], v)
				}
			}
			for _, k := range tt.without {
				if v, ok := s[k]; ok {
					t.Errorf("%s = %q, want it left out", k, v)
				}
			}
			for k, v := range s {
				if strings.Contains(v, " ") {
					t.Errorf("%s = %q holds a space", k, v)
				}
			}
		})
	}
}

// TestLagUnmeasurable: a client behind its schedule makes a cell
// unmeasurable, whatever its queue said, except a saturated one: its
// server could not keep up with the smaller load the client offered.
func TestLagUnmeasurable(t *testing.T) {
	tests := []struct {
		name   string
		status vocab.Status
		want   bool
	}{
		{name: "valid", status: vocab.StatusValid, want: true},
		{name: "queued", status: vocab.StatusQueued, want: true},
		{name: "over capacity", status: vocab.StatusOverCapacity, want: true},
		{name: "saturated", status: vocab.StatusSaturated, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := lagUnmeasurable(tt.status); got != tt.want {
				t.Errorf("lagUnmeasurable(%s) = %v, want %v", tt.status, got, tt.want)
			}
		})
	}
}
