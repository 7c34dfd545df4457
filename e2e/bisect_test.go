package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// bisectSpec is a launched simulator whose build is the variable build
// (b00, b01, …): every cell is 30% slower from build k on, the 8-stream
// cell 40% slower from build k8 on, and build fail does not start (its
// --sim-noise is no number). Four repeats a side decide a clear change.
func bisectSpec(t *testing.T, port int, matrix string) string {
	return specFile(t, "bisect.hcl", fmt.Sprintf(`variable "build" {
  type    = string
  default = "b00"
}
variable "k" {
  type    = number
  default = 99
}
variable "k8" {
  type    = number
  default = 99
}
variable "kfast" {
  type    = number
  default = 99
}
variable "fail" {
  type    = string
  default = ""
}
server "sim" {
  model             = "Qwen/Qwen3.5-4B"
  served_model_name = "qwen"
  host              = "127.0.0.1"
  port              = %d
  max_model_len     = 65536
  ready_timeout     = "20s"
  args = ["--sim-tbt", "5ms", "--sim-ttft", "300ms", "--sim-noise", var.build == var.fail ? "not-a-number" : "0.002",
    "--sim-slowdown", tonumber(substr(var.build, 1, 2)) >= var.k ? "1.3" : tonumber(substr(var.build, 1, 2)) >= var.kfast ? "0.5" : "1.0",
  "--sim-slow-at-concurrency", tonumber(substr(var.build, 1, 2)) >= var.k8 ? "8:1.4" : "8:1.0"]
}
measure {
  duration   = "300ms"
  max_output = 256
  repeat     = 4
}
%s`, port, matrix))
}

// buildList writes b00 … b(n-1), one a line.
func buildList(t *testing.T, n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "b%02d\n", i)
	}
	return specFile(t, "builds.txt", b.String())
}

func jsonlLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}

// TestBisectFindsFirstBad: 16 builds, every cell slower from b11 on: the
// first bad is b11, found in ⌈log₂ 16⌉ = 4 steps + at most 1, each step
// on a line with its outcome and GPU time, bisect.jsonl holding a line per
// build measured, the endpoints included. The steps decide on
// server_itl_ms_mean (-metric), the simulator's own inter-token histogram:
// it times each step by the simulator's schedule, not by a clock a loaded
// machine slows, so other work between the good build's measurement and
// the others' cannot leave a step undecided (docs/method.md#bisect). With
// the client's tbt_ms, a fresh clone's make test under other work ended
// exit 4, "tbt_ms +2.5 % vs good (inconclusive)" at every step.
func TestBisectFindsFirstBad(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	defer noLeftovers(t, mark)
	out := filepath.Join(t.TempDir(), "bisect")
	sp := bisectSpec(t, freePort(t), "matrix \"decode\" {\n  contexts = [\"1K\"]\n  concurrency = [4]\n}\n")
	// 8 minutes: a loaded 2-core machine slows the boots and the windows,
	// not the decisions.
	r := slogate(t, mark, 8*time.Minute, "", nil, "bisect", "-sim", "-metric", "server_itl_ms_mean", "-var-name", "build", "-var", "k=11",
		"-good", "b00", "-bad", "b15", "-candidates", buildList(t, 16), "-out", out, sp)
	if r.Code != 0 {
		t.Fatalf("exit %d, want 0\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	for _, want := range []string{"first bad: b11\n", "  decode/ctx=1K/conc=4: ", "% against good at b11 (regressed)", "; last good b10 (",
		"b00 (the good build): measured; GPU time ", "b15 (the bad build): measured; GPU time "} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.Stdout)
		}
	}
	// The simulator's 1.3× slowdown, as its own histogram timed it: a
	// loaded machine's late wake-ups add to both builds' waits alike and
	// dilute it a little (+29.9 % under stress --cpu 2).
	if m := regexp.MustCompile(`server_itl_ms_mean \+([0-9.]+)% against good at b11`).FindStringSubmatch(r.Stdout); m == nil {
		t.Errorf("stdout lacks the first bad's server_itl_ms_mean against good:\n%s", r.Stdout)
	} else if v, _ := strconv.ParseFloat(m[1], 64); v < 27 || v > 33 {
		t.Errorf("first bad's server_itl_ms_mean +%s%% against good, want the simulator's +30 %% ± 3:\n%s", m[1], r.Stdout)
	}
	// A step measured again with the most repeats (inconclusive at first:
	// on a loaded machine the 0.2 % noise grows) is one step, two lines.
	lines := strings.Count(r.Stdout, " (step ")
	steps := lines - strings.Count(r.Stdout, ", measured again with the most repeats)")
	if steps < 4 || steps > 5 {
		t.Errorf("%d steps, want ⌈log₂ 16⌉ = 4 (+1 at most):\n%s", steps, r.Stdout)
	}
	endpoints := 2 + strings.Count(r.Stdout, ", measured again with the most repeats: its comparison with good was inconclusive")
	if n := len(jsonlLines(t, filepath.Join(out, "bisect.jsonl"))); n != lines+endpoints {
		t.Errorf("bisect.jsonl has %d lines, want %d (each measurement, the endpoints' too)", n, lines+endpoints)
	}
}

// TestBisectTwoCellsSkipResume: of 8 builds, the 8-stream cell regresses
// from b02 and both from b05, and b03 does not start: each cell's first
// bad is found, b03 is skipped and said; with bisect.jsonl's last record
// removed (an interruption in that step), -resume measures only that build
// again and gives the same answer.
func TestBisectTwoCellsSkipResume(t *testing.T) {
	// Two bisections of 8 builds, 200–260 s on 2 cores: behind a variable
	// so that make test stays short; the decision and the resume are
	// also tested in internal/command/bisect (TestRunResumes, TestRunFindsFirstBad).
	if os.Getenv("SLOGATE_BISECT_E2E") == "" {
		t.Skip("SLOGATE_BISECT_E2E=1 runs the two-cell bisection with a skipped build and a resume (200–260 s)")
	}
	t.Parallel()
	mark := newMark(t)
	defer noLeftovers(t, mark)
	out := filepath.Join(t.TempDir(), "bisect")
	sp := bisectSpec(t, freePort(t), "matrix \"decode\" {\n  contexts = [\"1K\"]\n  concurrency = [1, 8]\n}\n")
	builds := buildList(t, 8)
	// A 10 % tolerance against changes of 30 % and more: in CI's full
	// suite, at load average 11, an unchanged build's 8-stream total_tps
	// (-1.9 %) stayed inconclusive at 5 % even with the most repeats, and
	// the bisection rightly ended undecided (exit 4). This test is of the
	// two answers, the skip and the resume, not of the gate's precision.
	args := []string{"bisect", "-sim", "-var-name", "build", "-var", "k=5", "-var", "k8=2", "-var", "fail=b03",
		"-tolerance", "10%", "-good", "b00", "-bad", "b07", "-candidates", builds, "-out", out, sp}
	r := slogate(t, mark, 5*time.Minute, "", nil, args...)
	if r.Code != 0 {
		t.Fatalf("exit %d, want 0\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	for _, want := range []string{"first bad: b02 (decode/ctx=1K/conc=8)\n", "first bad: b05 (decode/ctx=1K/conc=1)\n", "b03 (step 1): skipped: "} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.Stdout)
		}
	}
	log := filepath.Join(out, "bisect.jsonl")
	lines := jsonlLines(t, log)
	last := lines[len(lines)-1]
	if err := os.WriteFile(log, []byte(strings.Join(lines[:len(lines)-1], "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rr := slogate(t, mark, 5*time.Minute, "", nil, append([]string{args[0], "-resume"}, args[1:]...)...)
	if rr.Code != 0 {
		t.Fatalf("resume: exit %d, want 0\n%s\n%s", rr.Code, rr.Stdout, rr.Stderr)
	}
	if want := fmt.Sprintf("resuming the bisection in %s: %d build(s) measured are read back", out, len(lines)-1); !strings.Contains(rr.Stdout, want) {
		t.Errorf("resume stdout lacks %q:\n%s", want, rr.Stdout)
	}
	after := jsonlLines(t, log)
	if len(after) != len(lines) || after[len(after)-1] == "" {
		t.Fatalf("bisect.jsonl after the resume: %d lines, want %d", len(after), len(lines))
	}
	// Only the removed step was measured again: the other lines are the
	// same bytes, and the answer is the same.
	if strings.Join(after[:len(after)-1], "\n") != strings.Join(lines[:len(lines)-1], "\n") {
		t.Errorf("the resume rewrote finished steps' records")
	}
	if !strings.Contains(after[len(after)-1], strings.SplitN(last, ",", 2)[0]) {
		t.Errorf("the resume measured %s, want the removed step %s", after[len(after)-1][:40], last[:40])
	}
	for _, want := range []string{"first bad: b02 (decode/ctx=1K/conc=8)\n", "first bad: b05 (decode/ctx=1K/conc=1)\n"} {
		if !strings.Contains(rr.Stdout, want) {
			t.Errorf("resume stdout lacks %q:\n%s", want, rr.Stdout)
		}
	}
}

// TestBisectBadInput: a candidates file without good or bad, or an -out
// holding a bisection, is a usage error (exit 2) before anything starts;
// good no better than bad on any cell exits 1 with the comparison; a
// -max-gpu-time the endpoints spend exits 4, undecided, saying so.
func TestBisectBadInput(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	defer noLeftovers(t, mark)
	sp := bisectSpec(t, freePort(t), "matrix \"decode\" {\n  contexts = [\"1K\"]\n  concurrency = [4]\n}\n")
	builds := buildList(t, 4)
	tests := []struct {
		name    string
		args    []string
		code    int
		want    string
		wantOut bool
		held    bool // -out already holds a bisect.jsonl
	}{
		{name: "good not in the candidates", args: []string{"-good", "b09", "-bad", "b03"}, code: 2, want: "the candidates list does not contain -good b09"},
		{name: "bad not in the candidates", args: []string{"-good", "b00", "-bad", "b09"}, code: 2, want: "the candidates list does not contain -bad b09"},
		{name: "good after bad", args: []string{"-good", "b03", "-bad", "b00"}, code: 2, want: "-good b03 must come before -bad b00"},
		{name: "an unknown metric", args: []string{"-good", "b00", "-bad", "b03", "-metric", "server_itl_ms"}, code: 2,
			want: `-metric: unknown metric "server_itl_ms" (did you mean server_itl_ms_mean?)`},
		// The bad build is twice as fast (kfast): with identical builds a
		// load swing on a 2-core CI machine once made b03 look 21 %
		// slower than b00 and the bisection went on (a CI run).
		{name: "good no better than bad", args: []string{"-good", "b00", "-bad", "b03", "-var", "kfast=3"}, code: 1, wantOut: true,
			want: "the good build b00 is not better than the bad build b03 on any cell: nothing to bisect"},
		{name: "budget out after the endpoints", args: []string{"-good", "b00", "-bad", "b03", "-var", "k=2", "-max-gpu-time", "1s"}, code: 4, wantOut: true,
			want: "undecided: decode/ctx=1K/conc=4: the first bad is one of b01, b02, b03 (last good b00)\nthe GPU time budget ran out (-max-gpu-time): "},
		{name: "a folder holding a bisection", args: []string{"-good", "b00", "-bad", "b03"}, held: true, code: 2,
			want: "already holds a bisection (bisect.jsonl): continue it with -resume, or give another -out"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "b")
			if tt.held {
				os.MkdirAll(dir, 0o755)
				os.WriteFile(filepath.Join(dir, "bisect.jsonl"), []byte("{}\n"), 0o644)
			}
			args := append([]string{"bisect", "-sim", "-var-name", "build", "-candidates", builds, "-out", dir}, tt.args...)
			r := slogate(t, mark, 3*time.Minute, "", nil, append(args, sp)...)
			got := r.Stderr
			if tt.wantOut {
				got = r.Stdout
			}
			if r.Code != tt.code || !strings.Contains(got, tt.want) {
				t.Fatalf("exit %d, want %d with %q\nstdout:\n%s\nstderr:\n%s", r.Code, tt.code, tt.want, r.Stdout, r.Stderr)
			}
			if tt.code == 1 && !strings.Contains(r.Stdout, "total_tps") {
				t.Errorf("no comparison printed:\n%s", r.Stdout)
			}
		})
	}
}
