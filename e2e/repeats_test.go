package e2e

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/metric"
	res "github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/views"
	"github.com/slogate/slogate/internal/vocab"
)

// repeatMatrix is one context with two decode cells, short windows.
const repeatMatrix = `
matrix "decode" {
  contexts    = ["1K"]
  concurrency = [1, 2]
}
`

// TestRepeatAuto: with repeat = "auto" and a baseline, a cell the first
// look decides stops at the minimum (4 repeats), one it does not takes
// more; both as recorded in results.json (repeats and design.stop_reason).
//
// The samples the design decides on are wall-clock measurements, and a
// loaded machine makes them worse, never better: a time to first token
// that is one 300 ms timer plus scheduling read 303 to 431 ms over five
// repeats at load average 13, enough to leave a quiet simulator's first
// look inconclusive. So no case asserts what the clock decides:
//   - a clear change (the candidate's simulator 3× slower in every gated
//     metric) is regressed at the first look however slow the machine
//     makes the candidate, since slowness only widens the change;
//   - for the quiet and the noisy simulator, the first look is computed
//     again from the samples results.json recorded (the baseline's and
//     the candidate's first four, compare.Sequential as the run
//     configures it), and the run must have stopped at 4 exactly when it
//     decided, saying so; the noisy one must not have been decided (its
//     noise is the simulator's seeded --sim-noise, which load only adds to).
func TestRepeatAuto(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	defer noLeftovers(t, mark)
	oneCell := "matrix \"decode\" {\n  contexts = [\"1K\"]\n  concurrency = [1]\n}\n"
	tests := []struct {
		name string
		// base and auto are the baseline's and the candidate's simulator
		// arguments.
		base, auto string
		matrix     string
		// want: "first look" every cell decided at it (reason
		// firstLook), "more" none, "recorded" as the recorded samples'
		// first look decides.
		want      string
		firstLook string
	}{
		{name: "a clear change stops at the minimum", matrix: oneCell, want: "first look", firstLook: "regressed at the first look (4 repeats)",
			base: `"--sim-tbt", "5ms", "--sim-ttft", "300ms", "--sim-noise", "0.002"`,
			auto: `"--sim-tbt", "15ms", "--sim-ttft", "900ms", "--sim-noise", "0.002"`},
		{name: "quiet stops where its recorded samples decide", matrix: repeatMatrix, want: "recorded",
			base: `"--sim-tbt", "5ms", "--sim-ttft", "300ms", "--sim-noise", "0.002"`,
			auto: `"--sim-tbt", "5ms", "--sim-ttft", "300ms", "--sim-noise", "0.002"`},
		{name: "noisy takes more", matrix: oneCell, want: "more",
			base: `"--sim-tbt", "5ms", "--sim-ttft", "300ms", "--sim-noise", "0.1"`,
			auto: `"--sim-tbt", "5ms", "--sim-ttft", "300ms", "--sim-noise", "0.1"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			base := writeSpec(t, freePort(t), tc.base+`, "--sim-seed", "1"`, "measure {\n  duration = \"1s\"\n  max_output = 512\n  repeat = 5\n}\n"+tc.matrix)
			if r := slogate(t, mark, 3*time.Minute, "", nil, "run", "-sim", "-out", filepath.Join(dir, "base"), base); r.Code != 0 {
				t.Fatalf("baseline: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
			}
			auto := writeSpec(t, freePort(t), tc.auto+`, "--sim-seed", "2"`, "measure {\n  duration = \"1s\"\n  max_output = 512\n  repeat = \"auto\"\n  max_repeat = 8\n}\n"+tc.matrix)
			r := slogate(t, mark, 4*time.Minute, "", nil, "run", "-sim", "-out", filepath.Join(dir, "auto"), "-baseline", filepath.Join(dir, "base", "results.json"), auto)
			baseline := readResults(t, filepath.Join(dir, "base"))
			got := readResults(t, filepath.Join(dir, "auto"))
			if !got.Measure.RepeatAuto || got.Measure.Repeat != 4 || got.Measure.MaxRepeat != 8 {
				t.Errorf("measure = %+v, want repeat auto from 4 to 8", got.Measure)
			}
			if len(got.Decode) == 0 {
				t.Fatalf("no decode cell measured\n%s\n%s", r.Stdout, r.Stderr)
			}
			for _, c := range got.Decode {
				if c.Repeats < 4 || c.Repeats > 8 || len(c.Samples[metric.TotalTPS]) != c.Repeats || c.Design == nil || c.Design.Stop == nil {
					t.Fatalf("cell %s: %d repeats, %d samples, design %+v: want 4 to 8 with a stop reason\n%s", c.Ref().Name(), c.Repeats, len(c.Samples[metric.TotalTPS]), c.Design, r.Stdout)
				}
				stopped := views.RepeatStopText(c.Design)
				if !strings.Contains(r.Stdout, fmt.Sprintf("%d repeats (auto): %s", c.Repeats, stopped)) {
					t.Errorf("the console does not say how many repeats %s took:\n%s", c.Ref().Name(), r.Stdout)
				}
				b, ok := baseline.DecodeCell(c.Matrix, c.Context, c.Concurrency)
				if !ok {
					t.Fatalf("the baseline has no cell %s", c.Ref().Name())
				}
				decided, reason := firstLook(b, &c)
				switch want := tc.want; {
				case want == "first look" && !decided, want == "more" && decided:
					t.Fatalf("cell %s: the recorded samples' first look decided %v (%s), want %s\nbaseline %v\ncandidate %v",
						c.Ref().Name(), decided, reason, want, b.Samples, c.Samples)
				case want == "recorded" && !decided:
					t.Logf("cell %s: the first look could not decide on these samples (a loaded machine's): %s", c.Ref().Name(), reason)
				}
				if decided {
					if c.Repeats != 4 || stopped != reason {
						t.Errorf("cell %s: %d repeats, stopped %q; the recorded samples decide at the first look: want 4, %q", c.Ref().Name(), c.Repeats, stopped, reason)
					}
				} else if c.Repeats == 4 {
					t.Errorf("cell %s stopped at 4 (%q), but the recorded samples' first look decides nothing: %s", c.Ref().Name(), stopped, reason)
				}
				if tc.firstLook != "" && !strings.Contains(stopped, metric.TotalTPS+": "+tc.firstLook) {
					t.Errorf("cell %s stopped %q, want total_tps %s", c.Ref().Name(), stopped, tc.firstLook)
				}
			}
		})
	}
}

// firstLook is repeat = "auto"'s first look at candidate cell c against
// baseline cell b, computed from the samples results.json recorded: the
// baseline's and c's first four, for each metric the design gates on
// (compare.DefaultMetrics) with the run's design (4 to max_repeat 8, the
// default α and tolerance). decided when every metric stops there; reason
// is the stop reason the run states then, else what did not decide.
func firstLook(b, c *res.DecodeCell) (decided bool, reason string) {
	design := compare.Sequential{Min: 4, Max: 8}
	var reasons []string
	for _, m := range compare.DefaultMetrics(vocab.PhaseDecode) {
		xs := c.Samples[m.Name]
		if len(xs) < 4 {
			return false, fmt.Sprintf("%s: %d samples", m.Name, len(xs))
		}
		look := design.Look(b.Samples[m.Name], xs[:4], m.HigherIsBetter)
		why := views.LookText(look.Record(m.Name))
		if !look.Stop {
			return false, fmt.Sprintf("%s: %s (baseline %v, first four %v)", m.Name, why, b.Samples[m.Name], xs[:4])
		}
		reasons = append(reasons, m.Name+": "+why)
	}
	return true, strings.Join(reasons, "; ")
}

// TestBoots: measure { boots = 2 } starts the server twice (each start's
// line in its own log, the simulator's per-start factor from boot seeds 1
// and 2), leaves nothing behind, records each sample's boot and the
// Kalibera–Jones levels, counts GPU time as server time × the GPUs the
// plan counts (tensor_parallel_size 2), and `slogate noise` prints the
// figures.
func TestBoots(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	defer noLeftovers(t, mark)
	dir := t.TempDir()
	spec := filepath.Join(dir, "boots.hcl")
	os.WriteFile(spec, []byte(fmt.Sprintf(`server "sim" {
  model                = "Qwen/Qwen3.5-4B"
  host                 = "127.0.0.1"
  port                 = %d
  tensor_parallel_size = 2
  ready_timeout        = "20s"
  args                 = ["--sim-tbt", "5ms", "--sim-ttft", "20ms", "--sim-noise", "0.01", "--sim-boot-noise", "0.05"]
}
measure {
  duration   = "1s"
  max_output = 512
  repeat     = 4
  boots      = 2
}
matrix "decode" {
  contexts    = ["1K"]
  concurrency = [1]
}
`, freePort(t))), 0o644)
	out := filepath.Join(dir, "out")
	r := slogate(t, mark, 3*time.Minute, "", nil, "run", "-sim", "-out", out, spec)
	if r.Code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if n := strings.Count(r.Stdout, "starting server: "); n != 2 || !strings.Contains(r.Stdout, "boot 2 of 2: restarting the server (measure.boots = 2)") {
		t.Errorf("%d server starts, want 2 with a restart line:\n%s", n, r.Stdout)
	}
	for i, log := range []string{"server.boot1.log", "server.log"} {
		b, err := os.ReadFile(filepath.Join(out, log))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "vLLM API server version") || !strings.Contains(string(b), fmt.Sprintf("(--sim-boot-noise 0.05, boot seed %d)", i+1)) {
			t.Errorf("%s is not boot %d's log:\n%s", log, i+1, b)
		}
	}
	got := readResults(t, out)
	c, ok := got.DecodeCell("decode", 1024, 1)
	if !ok || c.Repeats != 4 || c.Design == nil || fmt.Sprint(c.Design.Boots) != "[1 1 2 2]" {
		t.Fatalf("cell = %+v, want 4 repeats from boots [1 1 2 2]", c)
	}
	if lv, ok := c.Design.Levels["total_tps"]; !ok || lv.Within <= 0 {
		t.Errorf("levels = %+v, want total_tps's within-boot variance", c.Design.Levels)
	}
	g := got.GPUTime
	if g == nil || g.GPUs != 2 || g.Boots != 2 || len(g.StartupS) != 2 || math.Abs(g.GPUSeconds-2*g.ServerS) > 0.02 || g.CellsS > g.ServerS {
		t.Fatalf("gpu_time = %+v, want 2 GPUs × server_s over 2 boots", g)
	}
	if math.Abs(c.GPUSeconds-2*c.ElapsedS) > 0.02 || c.ElapsedS < 4 {
		t.Errorf("cell: gpu_seconds %v, elapsed_s %v: want elapsed × 2 GPUs, elapsed at least the 4 one-second windows", c.GPUSeconds, c.ElapsedS)
	}
	if want := fmt.Sprintf("GPU time %.3f GPU-hours (", g.GPUHours()); !strings.Contains(r.Stdout, want) {
		t.Errorf("the console does not give the GPU time %q:\n%s", want, r.Stdout)
	}

	n := slogate(t, mark, 20*time.Second, "", nil, "noise", filepath.Join(out, "results.json"))
	if n.Code != 0 {
		t.Fatalf("noise: exit %d\n%s\n%s", n.Code, n.Stdout, n.Stderr)
	}
	row := regexp.MustCompile(`decode/ctx=1K/conc=1\s+total_tps\s+4 \(2 boots\)\s+(\d+\.\d\d)%\s+(\S+)% \(N = 4\)\s+(\d+)\s+(\d+\.\d\d)% / (\d+\.\d\d)%`)
	m := row.FindStringSubmatch(n.Stdout)
	if m == nil {
		t.Fatalf("noise has no total_tps row with noise, smallest change, repeats and boot spreads:\n%s", n.Stdout)
	}
	if want := fmt.Sprintf("%.2f", math.Sqrt(c.Design.Levels["total_tps"].Within)*100); m[4] != want {
		t.Errorf("within-boot σ %s%%, results.json says %s%%", m[4], want)
	}
}

// TestRepeatDiagnostics: validate reports the measure block's repeat
// settings that cannot work, each with its file, line and what to do.
func TestRepeatDiagnostics(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	tests := []struct {
		name    string
		measure string
		want    []string
	}{
		{name: "max_repeat below the minimum", measure: `repeat = "auto"` + "\n  max_repeat = 2",
			want: []string{"Error: Invalid max_repeat", "line 12", `max_repeat must be at least 4, repeat = "auto"'s minimum a side`}},
		{name: "bounds without auto", measure: "repeat = 5\n  max_gpu_time = \"1h\"",
			want: []string{`Error: Bound without repeat = "auto"`, "line 12", `max_gpu_time bounds repeat = "auto"`}},
		{name: "more boots than repeats", measure: "repeat = 2\n  boots = 3",
			want: []string{"Error: More boots than repeats", "line 12", "raise repeat to at least 3"}},
		{name: "no boots", measure: "boots = 0", want: []string{"Error: Invalid boots", "line 11", "boots must be a positive whole number; got 0."}},
		{name: "a word for repeat", measure: `repeat = "often"`, want: []string{"Error: Invalid repeat", "line 11", `a whole number, or "auto" to repeat a gated cell`, `got "often".`}},
		{name: "max_gpu_time below the minimum", measure: `repeat = "auto"` + "\n  max_gpu_time = \"10s\"",
			want: []string{"Error: max_gpu_time below the minimum", "line 12", `max_gpu_time = "10s" cannot hold the minimum of server "sim": its 2 cells at 4 repeats`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			spec := writeSpec(t, 8000, "", "measure {\n  "+tc.measure+"\n}\n"+repeatMatrix)
			r := slogate(t, mark, 20*time.Second, "", nil, "validate", spec)
			if r.Code != 2 {
				t.Fatalf("exit %d, want 2\n%s%s", r.Code, r.Stdout, r.Stderr)
			}
			for _, w := range append(tc.want, "on "+spec+" ") {
				if !strings.Contains(r.Stderr, w) {
					t.Errorf("diagnostics do not say %q:\n%s", w, r.Stderr)
				}
			}
		})
	}
}

// TestPlanRepeatAuto: plan shows the repeat = "auto" design, the estimate
// at the minimum and at max_repeat, and both in GPU-hours.
func TestPlanRepeatAuto(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	spec := writeSpec(t, 8000, "", "measure {\n  duration = \"10s\"\n  repeat = \"auto\"\n  max_repeat = 10\n}\n"+repeatMatrix)
	r := slogate(t, mark, 20*time.Second, "", nil, "plan", spec)
	if r.Code != 0 {
		t.Fatalf("exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	// Two cells of warm-up (0.25 s and C × 1K at 1M tok/s) + 3 s hold +
	// 10 s window, and the 1K prefill (0.05 s): 26.55 s a repeat, 106.2 s
	// at 4 and 265.5 s at 10, printed in whole seconds; one GPU.
	for _, w := range []string{"repeats: auto: 4 to 10 a cell, until each gated cell is decided",
		"estimated: 1m46s at the minimum, 4m26s at max_repeat", "GPU time: 0.030 to 0.074 GPU-hours (× 1 GPU)"} {
		if !strings.Contains(r.Stdout, w) {
			t.Errorf("plan does not say %q:\n%s", w, r.Stdout)
		}
	}
}
