package bisect

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/slogate/slogate/internal/bisection"
	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// world is a fake series of builds: each cell's throughput is base from
// build 0 and divided by slowdown from build k[cell] on; every repeat is
// log-normal with noise sigma (the simulator's model of a window's
// jitter), repeat = "auto" taken as compare.Sequential takes it.
type world struct {
	cells    []vocab.CellRef
	k        []int // first bad build of each cell; -1: never
	slowdown float64
	sigma    float64
	rng      *rand.Rand
	// fail are builds that do not start; noisy builds repeat with this
	// noise instead of sigma.
	fail  map[int]bool
	noisy map[int]float64
	// window and boot are a repeat's and a start's GPU seconds.
	window, boot float64
	calls        []Request
	// cancelAfter cancels the context at that call (0: never).
	cancelAfter int
	cancel      context.CancelFunc
}

func cellAt(ctx, conc int) vocab.CellRef {
	return vocab.CellRef{Phase: vocab.PhaseDecode, Matrix: "decode", Context: ctx, Concurrency: conc}
}

func newWorld(seed uint64, slowdown, sigma float64, k ...int) *world {
	w := &world{slowdown: slowdown, sigma: sigma, rng: rand.New(rand.NewPCG(seed, 7)), fail: map[int]bool{}, window: 30, boot: 60}
	for i, kk := range k {
		w.cells = append(w.cells, cellAt(8192, 1<<i))
		w.k = append(w.k, kk)
	}
	return w
}

// draw is one repeat of cell c at build i: total_tps, ttft_ms, tbt_ms.
func (w *world) draw(c, i int) (tps, ttft, tbt float64) {
	f := 1.0
	if w.k[c] >= 0 && i >= w.k[c] {
		f = w.slowdown
	}
	sigma := w.sigma
	if s, ok := w.noisy[i]; ok {
		sigma = s
	}
	n := math.Exp(sigma*w.rng.NormFloat64() - sigma*sigma/2)
	return 1000 / f * n, 100 * f / n, 5 * f / n
}

func (w *world) measure(ctx context.Context, r Request) (*result.Results, error) {
	w.calls = append(w.calls, r)
	if w.cancelAfter > 0 && len(w.calls) == w.cancelAfter {
		w.cancel()
		return nil, context.Canceled
	}
	if w.fail[r.Index] {
		return nil, fmt.Errorf("server exited before it was ready\nlog…")
	}
	res := &result.Results{Measure: result.Measure{Duration: "30s", DurationS: 30, MaxOutput: 4096, Endpoint: "completions",
		Repeat: 4, RepeatAuto: true, MaxRepeat: 20}, Server: result.Server{Name: "s"}}
	design := compare.Sequential{}
	fixed := 0
	if r.Attempt > 1 {
		res.Measure.RepeatAuto, res.Measure.Repeat, fixed = false, 20, 20
	}
	repeats := 0
	for ci, ref := range w.cells {
		if r.Cells != nil && !contains(r.Cells, ref) {
			continue
		}
		var base []float64
		if r.Baseline != nil {
			if bc, ok := r.Baseline.DecodeCell("decode", ref.Context, ref.Concurrency); ok {
				base = bc.Samples["total_tps"]
			}
		}
		s := map[string][]float64{}
		for {
			tps, ttft, tbt := w.draw(ci, r.Index)
			s["total_tps"] = append(s["total_tps"], tps)
			s["ttft_ms"] = append(s["ttft_ms"], ttft)
			s["tbt_ms"] = append(s["tbt_ms"], tbt)
			n := len(s["total_tps"])
			if fixed > 0 {
				if n >= fixed {
					break
				}
				continue
			}
			if design.Look(base, s["total_tps"], true).Stop {
				break
			}
		}
		n := len(s["total_tps"])
		repeats += n
		res.Decode = append(res.Decode, result.DecodeCell{Matrix: "decode", Context: ref.Context, Concurrency: ref.Concurrency,
			Status: vocab.StatusValid, TotalTPS: median(s["total_tps"]), TTFTMs: median(s["ttft_ms"]), TBTMs: median(s["tbt_ms"]),
			Repeats: n, Samples: s})
	}
	g := w.boot + w.window*float64(repeats)
	res.GPUTime = &result.GPUTime{GPUs: 1, ServerS: g, GPUSeconds: g}
	return res, nil
}

func contains(refs []vocab.CellRef, r vocab.CellRef) bool {
	for _, x := range refs {
		if x == r {
			return true
		}
	}
	return false
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func builds(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("b%02d", i)
	}
	return out
}

func config(w *world, n int) Config {
	b := builds(n)
	return Config{Builds: b, Good: b[0], Bad: b[n-1], Policy: compare.Policy{Tolerance: 0.05}, Measure: w.measure}
}

// candidateSteps counts the candidate builds measured (not the endpoints).
func candidateSteps(r *bisection.Report) int {
	n := 0
	for _, s := range r.Steps {
		if s.Role == bisection.RoleCandidate {
			n++
		}
	}
	return n
}

func TestRunFindsFirstBad(t *testing.T) {
	tests := []struct {
		name string
		k    []int
	}{
		{name: "early", k: []int{1}},
		{name: "middle", k: []int{7}},
		{name: "late", k: []int{15}},
		{name: "two cells at different builds", k: []int{4, 11}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(1, 1.2, 0.01, tt.k...)
			rep, err := Run(context.Background(), config(w, 16))
			if err != nil {
				t.Fatal(err)
			}
			if !rep.Decided() {
				t.Fatalf("undecided: %+v", rep.Cells)
			}
			for i, a := range rep.Cells {
				if want := fmt.Sprintf("b%02d", tt.k[i]); a.FirstBad != want {
					t.Errorf("cell %s: first bad %s, want %s", a.Cell, a.FirstBad, want)
				}
				if want := fmt.Sprintf("b%02d", tt.k[i]-1); a.LastGood != want {
					t.Errorf("cell %s: last good %s, want %s", a.Cell, a.LastGood, want)
				}
			}
			// ⌈log₂ 16⌉ = 4 steps per cell, + 1 for a range split unevenly.
			if n, most := candidateSteps(rep), len(tt.k)*(4+1); n > most {
				t.Errorf("%d candidate steps, want at most %d", n, most)
			}
		})
	}
}

func TestRunSkipsBuildThatFails(t *testing.T) {
	w := newWorld(2, 1.2, 0.01, 10)
	w.fail[7] = true // the first step: the middle of b00…b15
	rep, err := Run(context.Background(), config(w, 16))
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Decided() || rep.Cells[0].FirstBad != "b10" || rep.Cells[0].LastGood != "b09" {
		t.Fatalf("answer %+v, want first bad b10, the skipped b07 measured around", rep.Cells[0])
	}
	var skipped *bisection.Record
	for i := range rep.Steps {
		if rep.Steps[i].Build == "b07" {
			skipped = &rep.Steps[i]
		}
	}
	if skipped == nil || !strings.Contains(skipped.Error, "server exited before it was ready") {
		t.Fatalf("b07's step %+v, want its start error", skipped)
	}
	if rep.Cells[0].Found && rep.Cells[0].FirstBad == "b07" {
		t.Fatal("a skipped build was named first bad")
	}
}

func TestRunSkippedNeighbourIsUndecided(t *testing.T) {
	w := newWorld(3, 1.2, 0.01, 8)
	w.fail[7] = true
	rep, err := Run(context.Background(), config(w, 16))
	if err != nil {
		t.Fatal(err)
	}
	a := rep.Cells[0]
	if a.Found || strings.Join(a.Candidates, ",") != "b07,b08" {
		t.Fatalf("answer %+v, want undecided between b07 (skipped) and b08", a)
	}
}

// TestRunInconclusiveIsUndecided: a build whose repeats are too noisy to
// decide, even measured again with the most repeats, is never guessed:
// the cell whose first bad is beside it is left undecided between them.
func TestRunInconclusiveIsUndecided(t *testing.T) {
	w := newWorld(8, 1.2, 0.01, 8)
	w.noisy = map[int]float64{7: 0.4}
	rep, err := Run(context.Background(), config(w, 16))
	if err != nil {
		t.Fatal(err)
	}
	a := rep.Cells[0]
	if a.Found || strings.Join(a.Candidates, ",") != "b07,b08" {
		t.Fatalf("answer %+v, want undecided between b07 (inconclusive) and b08", a)
	}
	attempts := 0
	for _, s := range rep.Steps {
		if s.Build == "b07" {
			attempts++
			if s.Cells[0].Outcome != bisection.Inconclusive {
				t.Errorf("b07 attempt %d: %s, want inconclusive", s.Attempt, s.Cells[0].Outcome)
			}
		}
	}
	if attempts != 2 {
		t.Errorf("b07 measured %d times, want 2 (the second with more repeats)", attempts)
	}
}

func TestRunResumes(t *testing.T) {
	dir := t.TempDir()
	w := newWorld(4, 1.2, 0.01, 6)
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel, w.cancelAfter = cancel, 5 // good, bad, two steps, then interrupted
	store := map[string]*result.Results{}
	cfg := config(w, 16)
	cfg.OutDir = dir
	cfg.Measure = func(ctx context.Context, r Request) (*result.Results, error) {
		res, err := w.measure(ctx, r)
		if err == nil {
			store[r.Dir] = res
		}
		return res, err
	}
	cfg.Load = func(d string) (*result.Results, error) {
		if r, ok := store[d]; ok {
			return r, nil
		}
		return nil, errors.New("missing")
	}
	if _, err := Run(ctx, cfg); err == nil {
		t.Fatal("an interrupted bisection returned no error")
	}
	prev, err := ReadLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(prev) != 4 {
		t.Fatalf("bisect.jsonl holds %d records, want 4 (the endpoints and two steps)", len(prev))
	}
	done := map[string]bool{}
	for _, p := range prev {
		done[p.Build] = true
	}
	w.calls, w.cancelAfter = nil, 0
	cfg.Previous = prev
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range w.calls {
		if done[c.Build] {
			t.Errorf("resumed bisection measured %s again", c.Build)
		}
	}
	if !rep.Decided() || rep.Cells[0].FirstBad != "b06" {
		t.Fatalf("resumed answer %+v, want b06", rep.Cells[0])
	}
	all, _ := ReadLog(dir)
	if len(all) != len(rep.Steps) {
		t.Errorf("bisect.jsonl holds %d records after the resume, the bisection %d steps", len(all), len(rep.Steps))
	}
}

func TestRunBudget(t *testing.T) {
	w := newWorld(5, 1.2, 0.01, 6)
	cfg := config(w, 16)
	cfg.MaxGPUSeconds = 1 // spent by the endpoints
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.BudgetOut || rep.Decided() || candidateSteps(rep) != 0 {
		t.Fatalf("budget out %v, decided %v, %d steps: want out, undecided, none", rep.BudgetOut, rep.Decided(), candidateSteps(rep))
	}
}

func TestRunNoRegression(t *testing.T) {
	w := newWorld(6, 1.2, 0.01, -1)
	rep, err := Run(context.Background(), config(w, 16))
	if err != nil {
		t.Fatal(err)
	}
	if !rep.NoRegression || rep.GoodVsBad == nil || len(rep.Steps) != 2 {
		t.Fatalf("no regression %v, %d steps: want true and only the endpoints", rep.NoRegression, len(rep.Steps))
	}
}

func TestRunEndpointFails(t *testing.T) {
	w := newWorld(7, 1.2, 0.01, 6)
	w.fail[15] = true
	_, err := Run(context.Background(), config(w, 16))
	if exit.Code(err) != exit.Infra || !strings.Contains(err.Error(), "the bad build b15 could not be measured: server exited") {
		t.Fatalf("err = %v (exit %d), want exit 3 naming the bad build", err, exit.Code(err))
	}
}

func TestCheckBuilds(t *testing.T) {
	tests := []struct {
		name, good, bad string
		want            string // "" = ok
	}{
		{name: "ok", good: "a", bad: "c"},
		{name: "good missing", good: "x", bad: "c", want: "does not contain -good x"},
		{name: "bad missing", good: "a", bad: "y", want: "does not contain -bad y"},
		{name: "neither", good: "x", bad: "y", want: "contains neither -good x nor -bad y"},
		{name: "reversed", good: "c", bad: "a", want: "-good c must come before -bad a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := CheckBuilds([]string{"a", "b", "c"}, tt.good, tt.bad)
			switch {
			case tt.want == "" && err != nil:
				t.Fatal(err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want) || exit.Code(err) != exit.Usage):
				t.Fatalf("err = %v, want exit 2 with %q", err, tt.want)
			}
		})
	}
}

// simulate runs bisections of n builds with the first bad drawn at
// random: the share of answers naming a wrong build, the share left
// undecided (exit 4: inconclusive with the most repeats), and the mean GPU seconds per bisection and per measuring
// every build once with the same design.
func simulate(t *testing.T, runs, n int, slowdown, sigma float64) (wrong, undecided, gpu, every float64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(42, uint64(slowdown*1000)))
	bad, open := 0, 0
	for r := range runs {
		k := 1 + rng.IntN(n-1)
		w := newWorld(uint64(r)+100, slowdown, sigma, k)
		rep, err := Run(context.Background(), config(w, n))
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case !rep.Decided():
			open++
		case rep.Cells[0].FirstBad != fmt.Sprintf("b%02d", k):
			bad++
		}
		gpu += rep.GPUSeconds
		// Every build measured against good, endpoints included.
		all := newWorld(uint64(r)+100, slowdown, sigma, k)
		base, _ := all.measure(context.Background(), Request{Index: 0, Attempt: 1})
		every += base.GPUTime.GPUSeconds
		for i := 1; i < n; i++ {
			res, _ := all.measure(context.Background(), Request{Index: i, Attempt: 1, Baseline: base})
			every += res.GPUTime.GPUSeconds
		}
	}
	return float64(bad) / float64(runs), float64(open) / float64(runs), gpu / float64(runs), every / float64(runs)
}

// TestSimulation is docs/method.md#bisect's figures: with the documented
// defaults (tolerance 5%, α 0.05, repeat = "auto") and the simulator's
// noise model, the share of wrong answers (at most 5%), the share left
// undecided (a regression near the tolerance at high noise: reported,
// never guessed) and the GPU time of a bisection
// of 16 builds against measuring every one. The short version always
// runs; SLOGATE_BISECT_SIM=1 runs the long one and prints the table.
func TestSimulation(t *testing.T) {
	runs := 40
	if os.Getenv("SLOGATE_BISECT_SIM") != "" {
		runs = 1000
	}
	tests := []struct {
		name            string
		slowdown, sigma float64
	}{
		{name: "20% slower, 4% noise per repeat", slowdown: 1.2, sigma: 0.04},
		{name: "10% slower, 4% noise per repeat", slowdown: 1.1, sigma: 0.04},
		{name: "10% slower, 2% noise per repeat", slowdown: 1.1, sigma: 0.02},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wrong, undecided, gpu, every := simulate(t, runs, 16, tt.slowdown, tt.sigma)
			t.Logf("%d bisections of 16 builds: %.1f%% wrong, %.1f%% undecided; GPU time %.0f s a bisection, %.0f s measuring every build (%.0f%%)",
				runs, wrong*100, undecided*100, gpu, every, 100*gpu/every)
			if wrong > 0.05 {
				t.Errorf("%.1f%% wrong answers, want at most 5%%", wrong*100)
			}
			if gpu >= every {
				t.Errorf("a bisection cost %.0f s, measuring every build %.0f s", gpu, every)
			}
		})
	}
}
