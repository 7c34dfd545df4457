package runner

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/hostenv"
	"github.com/slogate/slogate/internal/lifecycle"
	"github.com/slogate/slogate/internal/report"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/vllmfake"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/warning"
)

// The runner's tests run on a machine that never moves, whatever the
// machine running them does: a test that wants it to move says so
// (movingMachine).
func init() {
	takeMachine = func() hostenv.Snapshot { return hostenv.Snapshot{Calibration: time.Millisecond} }
}

// enoughAt stops a cell once it has n samples.
type enoughAt int

func (n enoughAt) Look(_, candidate []float64, _ bool) compare.Look {
	return compare.Look{Stop: len(candidate) >= int(n), Rule: "enough", Repeats: len(candidate)}
}

// movingMachine is a machine whose fixed calibration takes 1 ms, except
// at the end of the runs moved names (1-based), when it takes 3 ms.
func movingMachine(moved func(run int) bool) func() hostenv.Snapshot {
	var calls atomic.Int64
	return func() hostenv.Snapshot {
		n := int(calls.Add(1))
		s := hostenv.Snapshot{Load1: 0.5, LoadOK: true, Calibration: time.Millisecond}
		if n%2 == 0 && moved(n/2) {
			s.Calibration = 3 * time.Millisecond
		}
		return s
	}
}

// TestUnmeasurableRuns: the runs of a decode cell the client could not
// measure, or whose machine moved, are left out of its figures and listed
// with why; repeat = "auto" replaces them up to max_repeat; a fixed design
// keeps a moved run with its warning; a cell none of whose runs counted is
// unmeasurable and says why each run was left out. Every run's machine is
// in the cell's environment (docs/method.md#unmeasurable).
func TestUnmeasurableRuns(t *testing.T) {
	tests := []struct {
		name        string
		gap         time.Duration // the fake server's gap between tokens
		scale       float64       // its token counter against what it streamed (0: the same)
		repeat      int
		auto        bool
		maxRepeat   int
		moved       func(run int) bool
		wantStatus  vocab.Status
		wantRepeats int
		wantRuns    int // runs taken, excluded ones too
		wantOut     []int
		wantOutWhy  string // in the reason of every excluded run
		wantWhy     string // the start of an unmeasurable cell's reason
		wantWarning bool   // the moved run's warning kept
	}{
		{name: "a fixed design keeps a moved run with its warning", gap: 2 * time.Millisecond, repeat: 3, moved: func(r int) bool { return r == 2 },
			wantStatus: vocab.StatusValid, wantRepeats: 3, wantRuns: 3, wantWarning: true},
		{name: "auto replaces a moved run", gap: 2 * time.Millisecond, repeat: 4, auto: true, maxRepeat: 6, moved: func(r int) bool { return r == 2 },
			wantStatus: vocab.StatusValid, wantRepeats: 4, wantRuns: 5, wantOut: []int{2}, wantOutWhy: "the machine moved: a fixed CPU calibration took 1 ms at its fastest after a run of the cell and 3 ms after this one"},
		{name: "auto stops at max_repeat, every run after the first moved", gap: 2 * time.Millisecond, repeat: 4, auto: true, maxRepeat: 5, moved: func(r int) bool { return r >= 2 },
			// One run kept: the cell is that run, a single measurement
			// without samples.
			wantStatus: vocab.StatusValid, wantRepeats: 0, wantRuns: 5, wantOut: []int{2, 3, 4, 5}, wantOutWhy: "the machine moved: "},
		{name: "a machine that stays where the first run left it has not moved", gap: 2 * time.Millisecond, repeat: 3, moved: func(int) bool { return true },
			wantStatus: vocab.StatusValid, wantRepeats: 3, wantRuns: 3},
		// CI saw a first run's reading of 2.3 ms, then 0.85 ms at every
		// later one: all 8 runs of a healthy cell left out, against the
		// busy reading.
		{name: "a busy moment at the first run's end moves no later run", gap: 2 * time.Millisecond, repeat: 4, auto: true, maxRepeat: 6, moved: func(r int) bool { return r == 1 },
			wantStatus: vocab.StatusValid, wantRepeats: 4, wantRuns: 4},
		{name: "windows of a few tokens the server counted more of", gap: 120 * time.Millisecond, scale: 30, repeat: 2, moved: func(int) bool { return false },
			wantStatus: vocab.StatusUnmeasurable, wantRuns: 2, wantOut: []int{1, 2}, wantOutWhy: "output tokens in", wantWhy: "none of its 2 runs could be measured: run 1: the window held "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			defer func(old func() hostenv.Snapshot) { takeMachine = old }(takeMachine)
			takeMachine = movingMachine(tc.moved)
			defer func(old func(result.Measure, float64, float64) stopRule) { newStopRule = old }(newStopRule)
			newStopRule = func(result.Measure, float64, float64) stopRule { return enoughAt(4) }
			f := vllmfake.Server{Tokens: 100000, PerChunk: 1, Gap: tc.gap, GeneratedScale: tc.scale}
			s := f.Start(t)
			sp := smallSpec(1)
			sp.Prefill = nil // its runs would read the machine too
			sp.Measure.Duration = 300 * time.Millisecond
			sp.Measure.Repeat, sp.Measure.RepeatAuto, sp.Measure.MaxRepeat = tc.repeat, tc.auto, tc.maxRepeat
			cfg := testConfig(t, s.URL, sp, "decode")
			res, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			c := res.Decode[0]
			if c.Status != tc.wantStatus || (tc.wantStatus.Measured() && (c.Repeats != tc.wantRepeats || len(c.Samples["total_tps"]) != tc.wantRepeats)) {
				t.Errorf("cell %s (%q), %d repeats, samples %v; want %s of %d", c.Status, c.Reason, c.Repeats, c.Samples["total_tps"], tc.wantStatus, tc.wantRepeats)
			}
			if len(c.Environment) != tc.wantRuns {
				t.Errorf("environment of %d runs %+v; want %d", len(c.Environment), c.Environment, tc.wantRuns)
			}
			wantExcluded(t, c.Excluded, tc.wantOut, tc.wantOutWhy)
			if !tc.wantStatus.Measured() && !strings.HasPrefix(c.Reason, tc.wantWhy) {
				t.Errorf("reason %q; want it to start %q", c.Reason, tc.wantWhy)
			}
			if got := warning.Has(c.Warnings, warning.EnvironmentMoved); got != tc.wantWarning {
				t.Errorf("warnings %v: environment_moved %v, want %v", c.Warnings, got, tc.wantWarning)
			}
		})
	}
}

// TestUnmeasurablePrefillRuns: the runs of a prefill cell are watched as a
// decode cell's are: a run whose client read the first token late against
// the server's own clock, or with repeat = "auto" whose machine moved, is
// left out with why and replaced under auto; a fixed design keeps a moved
// run and says so in a warning; a cell none of whose runs counted is
// unmeasurable; every run's machine is in the cell's environment
// (docs/method.md#unmeasurable, docs/method.md#environment).
func TestUnmeasurablePrefillRuns(t *testing.T) {
	tests := []struct {
		name        string
		ttftScale   float64 // the fake server's TTFT clock against the stream's (0: no histogram)
		repeat      int
		auto        bool
		maxRepeat   int
		moved       func(run int) bool
		wantStatus  vocab.Status
		wantRepeats int
		wantRuns    int
		wantOut     []int
		wantOutWhy  string
		wantWhy     string                // in the cell's reason
		wantMoved   bool                  // a run-level environment_moved warning: calibration, 1 ms to 3 ms
		wait        func(run int) float64 // the launched server's wait share by run (nil: not read)
	}{
		{name: "a fixed design keeps a moved run and warns", repeat: 3, moved: func(r int) bool { return r == 2 },
			wantStatus: vocab.StatusValid, wantRepeats: 3, wantRuns: 3, wantMoved: true},
		{name: "auto replaces a moved run", repeat: 3, auto: true, maxRepeat: 5, moved: func(r int) bool { return r == 2 },
			wantStatus: vocab.StatusValid, wantRepeats: 3, wantRuns: 4, wantOut: []int{2}, wantOutWhy: "the machine moved: a fixed CPU calibration took 1 ms at its fastest after a run of the cell and 3 ms after this one"},
		// A time-to-first-token histogram is recorded, not judged
		// (docs/method.md#unmeasurable, rule 5).
		{name: "a client slower than a histogram's clock: recorded, not judged", ttftScale: 0.2, repeat: 1, moved: func(int) bool { return false },
			wantStatus: vocab.StatusValid, wantRuns: 1},
		{name: "a starved server, once", repeat: 1, moved: func(int) bool { return false }, wait: func(int) float64 { return 80 },
			wantStatus: vocab.StatusUnmeasurable, wantRuns: 1, wantWhy: "the server was starved: "},
		{name: "a starved server, every run", repeat: 2, moved: func(int) bool { return false }, wait: func(int) float64 { return 80 },
			wantStatus: vocab.StatusUnmeasurable, wantRuns: 2, wantOut: []int{1, 2}, wantOutWhy: "the server was starved: its threads spent 80 %",
			wantWhy: "none of its 2 runs could be measured: run 1: the server was starved"},
		{name: "auto replaces starved runs, up to max_repeat", repeat: 2, auto: true, maxRepeat: 3, moved: func(int) bool { return false }, wait: func(int) float64 { return 80 },
			wantStatus: vocab.StatusUnmeasurable, wantRuns: 3, wantOut: []int{1, 2, 3}, wantOutWhy: "the server was starved",
			wantWhy: "none of its 3 runs could be measured"},
		{name: "a starved server's run is left out", repeat: 3, moved: func(int) bool { return false }, wait: func(r int) float64 { return map[int]float64{2: 80}[r] },
			wantStatus: vocab.StatusValid, wantRepeats: 2, wantRuns: 3, wantOut: []int{2}, wantOutWhy: "the server was starved: its threads spent 80 %"},
		{name: "a server whose clock agrees is measured", ttftScale: 1, repeat: 2, moved: func(int) bool { return false },
			wantStatus: vocab.StatusValid, wantRepeats: 2, wantRuns: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			defer func(old func() hostenv.Snapshot) { takeMachine = old }(takeMachine)
			takeMachine = movingMachine(tc.moved)
			if tc.wait != nil {
				defer func(old func(*lifecycle.Server) (int, bool)) { serverGroup = old }(serverGroup)
				serverGroup = func(*lifecycle.Server) (int, bool) { return 4242, true }
				defer func(old func(int) hostenv.Sched) { readGroup = old }(readGroup)
				readGroup = waitingServer(tc.wait)
			}
			defer func(old func(result.Measure, float64, float64) stopRule) { newStopRule = old }(newStopRule)
			newStopRule = func(result.Measure, float64, float64) stopRule { return enoughAt(3) }
			f := vllmfake.Server{Tokens: 1, PerChunk: 1, FirstDelay: 200 * time.Millisecond, TTFTScale: tc.ttftScale}
			s := f.Start(t)
			sp := smallSpec()
			sp.Matrices = nil
			sp.Servers[0].Device = "cpu" // a CPU build: its wait is judged
			sp.Measure.Repeat, sp.Measure.RepeatAuto, sp.Measure.MaxRepeat = tc.repeat, tc.auto, tc.maxRepeat
			res, err := Run(context.Background(), testConfig(t, s.URL, sp, ""))
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Prefill) != 1 {
				t.Fatalf("prefill cells %+v", res.Prefill)
			}
			c := res.Prefill[0]
			if c.Status != tc.wantStatus || (tc.wantStatus.Measured() && c.Repeats != tc.wantRepeats && !(tc.wantRepeats == 1 && c.Repeats == 0)) {
				t.Errorf("cell %s (%q), %d repeats; want %s of %d", c.Status, c.Reason, c.Repeats, tc.wantStatus, tc.wantRepeats)
			}
			if !strings.Contains(c.Reason, tc.wantWhy) {
				t.Errorf("reason %q; want %q in it", c.Reason, tc.wantWhy)
			}
			if len(c.Environment) != tc.wantRuns {
				t.Errorf("environment of %d runs %+v; want %d", len(c.Environment), c.Environment, tc.wantRuns)
			}
			wantExcluded(t, c.Excluded, tc.wantOut, tc.wantOutWhy)
			var moved []warning.Warning
			for _, w := range res.Warnings {
				if w.Code == warning.EnvironmentMoved {
					moved = append(moved, w)
				}
			}
			switch {
			case !tc.wantMoved && len(moved) > 0:
				t.Errorf("environment_moved warnings %+v; want none", moved)
			case tc.wantMoved && len(moved) != 1:
				t.Errorf("environment_moved warnings %+v; want one", moved)
			case tc.wantMoved:
				before, _ := moved[0].Figure(warning.FigBefore)
				after, _ := moved[0].Figure(warning.FigAfter)
				if moved[0].Subject != string(hostenv.Calibration) || before != 1 || after != 3 {
					t.Errorf("environment_moved warning %+v; want calibration from 1 to 3 ms", moved[0])
				}
			}
		})
	}
}

// waitingServer is the scheduler account of a server whose threads wait
// for a CPU waitPct % of their ready time in the runs waits names
// (1-based), none in the others: each reading adds 100 ms run (and the
// wait), two readings a run.
func waitingServer(waitPct func(run int) float64) func(int) hostenv.Sched {
	var calls atomic.Int64
	var acc hostenv.ThreadSched
	var mu sync.Mutex
	return func(int) hostenv.Sched {
		mu.Lock()
		defer mu.Unlock()
		n := int(calls.Add(1))
		if n%2 == 0 {
			p := waitPct(n / 2)
			run := uint64(400e6) // about 1.3 CPUs over a run
			acc.RunNs += run
			acc.WaitNs += uint64(float64(run) * p / (100 - p))
		}
		return hostenv.Sched{Threads: map[int]hostenv.ThreadSched{7: acc}, OK: true}
	}
}

// TestServerWaitRuns: a run whose launched server waited for a CPU
// beyond half its ready time is unmeasurable, left out of a fixed design
// too; beyond a quarter it is a moved run, kept with its warning by a
// fixed design and replaced by repeat = "auto"; every run's wait share
// is in its environment record (docs/method.md#environment).
func TestServerWaitRuns(t *testing.T) {
	tests := []struct {
		name        string
		wait        func(run int) float64
		repeat      int
		auto        bool
		wantStatus  vocab.Status
		wantRepeats int
		wantOut     []int
		wantOutWhy  string
		wantWarning bool
		gpu         bool // the server is no CPU build: read, not judged
	}{
		{name: "a quiet server", wait: func(int) float64 { return 3 }, repeat: 3, wantStatus: vocab.StatusValid, wantRepeats: 3},
		{name: "a GPU server's wait is recorded, not judged", wait: func(int) float64 { return 90 }, repeat: 2, gpu: true,
			wantStatus: vocab.StatusValid, wantRepeats: 2},
		// vLLM's CPU build on two cores, alone, waits 22 to 27 %: its own.
		{name: "a server that always waits a quarter has not moved", wait: func(r int) float64 { return 22 + float64(r) }, repeat: 3, wantStatus: vocab.StatusValid, wantRepeats: 3},
		{name: "a starved run is left out of a fixed design", wait: func(r int) float64 { return map[int]float64{2: 80}[r] }, repeat: 3,
			wantStatus: vocab.StatusValid, wantRepeats: 2, wantOut: []int{2},
			wantOutWhy: "the server was starved: its threads spent 80 % of the time they were ready to run waiting for a CPU (over 50 %)"},
		{name: "a run that waited a third is kept by a fixed design, warned", wait: func(r int) float64 { return map[int]float64{2: 33}[r] }, repeat: 3,
			wantStatus: vocab.StatusValid, wantRepeats: 3, wantWarning: true},
		{name: "auto replaces a run that waited a third", wait: func(r int) float64 { return map[int]float64{1: 3, 2: 33, 3: 5, 4: 4}[r] }, repeat: 3, auto: true,
			wantStatus: vocab.StatusValid, wantRepeats: 3, wantOut: []int{2},
			wantOutWhy: "the server waited: its threads spent 33 % of the time they were ready to run waiting for a CPU, against 3 % at the least in the cell's runs (more than 20 points)"},
		{name: "every run starved", wait: func(int) float64 { return 90 }, repeat: 2,
			wantStatus: vocab.StatusUnmeasurable, wantOut: []int{1, 2}, wantOutWhy: "the server was starved"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			defer func(old func(*lifecycle.Server) (int, bool)) { serverGroup = old }(serverGroup)
			serverGroup = func(*lifecycle.Server) (int, bool) { return 4242, true }
			defer func(old func(int) hostenv.Sched) { readGroup = old }(readGroup)
			readGroup = waitingServer(tc.wait)
			defer func(old func(result.Measure, float64, float64) stopRule) { newStopRule = old }(newStopRule)
			newStopRule = func(result.Measure, float64, float64) stopRule { return enoughAt(3) }
			f := vllmfake.Server{Tokens: 100000, PerChunk: 1, Gap: 2 * time.Millisecond}
			s := f.Start(t)
			sp := smallSpec(1)
			sp.Prefill = nil // its runs would read the server's account too
			sp.Measure.Duration = 300 * time.Millisecond
			sp.Measure.Repeat, sp.Measure.RepeatAuto, sp.Measure.MaxRepeat = tc.repeat, tc.auto, 5
			if !tc.gpu {
				sp.Servers[0].Device = "cpu"
			}
			res, err := Run(context.Background(), testConfig(t, s.URL, sp, "decode"))
			if err != nil {
				t.Fatal(err)
			}
			c := res.Decode[0]
			if c.Status != tc.wantStatus || (tc.wantStatus.Measured() && c.Repeats != tc.wantRepeats) {
				t.Errorf("cell %s (%q), %d repeats; want %s of %d", c.Status, c.Reason, c.Repeats, tc.wantStatus, tc.wantRepeats)
			}
			wantExcluded(t, c.Excluded, tc.wantOut, tc.wantOutWhy)
			for _, e := range c.Environment {
				if e.ServerWaitPct == nil || e.ServerCPUs == nil {
					t.Errorf("run %d's environment %+v has no server wait", e.Repeat, e)
				}
			}
			warned := slices.ContainsFunc(c.Warnings, func(w warning.Warning) bool { return w.Code == warning.EnvironmentMoved })
			if warned != tc.wantWarning {
				t.Errorf("moved warning %v, want %v: %+v", warned, tc.wantWarning, c.Warnings)
			}
		})
	}
}

// TestStarvedJudgedOnCPUServers: a starved run is judged on a server that
// computes on the CPU, whether its spec says so (device = "cpu") or it is
// llama.cpp on a machine without GPUs; vLLM on a GPU, or llama.cpp on a
// machine with one, has its wait recorded only.
func TestStarvedJudgedOnCPUServers(t *testing.T) {
	tests := []struct {
		name   string
		server spec.Server
		gpus   []result.GPU
		want   bool
	}{
		{name: "vLLM's CPU build", server: spec.Server{Device: "cpu"}, want: true},
		{name: "vLLM on a GPU", server: spec.Server{}, gpus: []result.GPU{{Name: "H100"}}},
		{name: "vLLM, no GPU found", server: spec.Server{}},
		{name: "llama.cpp, no GPU found", server: spec.Server{Engine: "llamacpp"}, want: true},
		{name: "llama.cpp on a GPU", server: spec.Server{Engine: "llamacpp"}, gpus: []result.GPU{{Name: "H100"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			defer func(old func(*lifecycle.Server) (int, bool)) { serverGroup = old }(serverGroup)
			serverGroup = func(*lifecycle.Server) (int, bool) { return 4242, true }
			defer func(old func(int) hostenv.Sched) { readGroup = old }(readGroup)
			readGroup = waitingServer(func(int) float64 { return 80 })
			defer func(old func() hostenv.Snapshot) { takeMachine = old }(takeMachine)
			takeMachine = movingMachine(func(int) bool { return false })
			r := &run{cfg: Config{Server: &tc.server}, results: &result.Results{Server: result.Server{GPUs: tc.gpus}}}
			w := r.watchMachine(1, nil, func() {})
			if got := w.starved != nil; got != tc.want {
				t.Errorf("starved %v (%v), want %v", got, w.starved, tc.want)
			}
			if w.env.ServerWaitPct == nil || *w.env.ServerWaitPct != 80 {
				t.Errorf("server wait %v, want 80 recorded", w.env.ServerWaitPct)
			}
		})
	}
}

// wantExcluded checks the runs a cell left out: their numbers, in order,
// are want, each reason holds why, and each has its reasons as values,
// which word to its reason.
func wantExcluded(t *testing.T, excluded []result.ExcludedRun, want []int, why string) {
	t.Helper()
	var out []int
	for _, x := range excluded {
		out = append(out, x.Repeat)
		if !strings.Contains(x.Reason, why) {
			t.Errorf("run %d left out for %q; want %q", x.Repeat, x.Reason, why)
		}
		if words := report.CellReasonText(x.Reasons, ""); len(x.Reasons) == 0 || words != x.Reason {
			t.Errorf("run %d left out for %q, its reasons %v word %q", x.Repeat, x.Reason, x.Reasons, words)
		}
	}
	if !slices.Equal(out, want) {
		t.Errorf("excluded runs %v; want %v", out, want)
	}
}
