package e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	res "github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// Hardening tests (issue 6, item 3): `slogate run -resume OUT` continues an
// interrupted matrix from OUT/cells.jsonl, measuring only what is missing,
// and produces the same results.json shape as an uninterrupted run.

const resumeBody = `
measure {
  duration   = "1s"
  max_output = 4096
}
prefill { contexts = ["1K"] }
matrix "decode" {
  contexts    = ["1K"]
  concurrency = [1, 2, 3, 4]
}
`

// interruptedRun runs spec into out and interrupts it once n cells are in
// cells.jsonl; it returns the results.json left behind.
func interruptedRun(t *testing.T, mark, spec, out string, n int) *res.Results {
	t.Helper()
	b := startSlogate(t, mark, "run", "-sim", "-out", out, spec)
	b.waitFor(t, "finished cells", time.Minute, func() bool { return cellLines(out) >= n })
	b.cmd.Process.Signal(syscall.SIGINT)
	if code := b.exitAfter(t, 45*time.Second); code != 130 {
		t.Fatalf("interrupted run: exit %d, want 130\nstderr:\n%s", code, b.stderr.String())
	}
	r, err := res.Read(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestResumeAfterInterrupt: the resumed run measures only the missing
// cells; results.json and cells.jsonl then hold every cell once, in plan
// order, the earlier ones unchanged.
func TestResumeAfterInterrupt(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	defer noLeftovers(t, mark)
	spec := faultSpec(t, freePort(t), "", fastSim, resumeBody)
	out := filepath.Join(t.TempDir(), "out")
	first := interruptedRun(t, mark, spec, out, 3)
	kept := len(first.Decode)
	if !first.Interrupted || len(first.Prefill) != 1 || kept < 2 || kept >= 4 {
		t.Fatalf("interrupted run kept %d prefill and %d decode cells (interrupted %v)", len(first.Prefill), kept, first.Interrupted)
	}

	r := slogate(t, mark, 2*time.Minute, "", nil, "run", "-sim", "-resume", out, spec)
	if r.Code != 0 {
		t.Fatalf("resume: exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	for _, c := range first.Decode {
		if strings.Contains(r.Stdout, "=== RUN   "+c.Ref().TestName("sim")+"\n") {
			t.Errorf("resume measured %s again", c.Ref().Name())
		}
	}
	if strings.Contains(r.Stdout, "=== RUN   sim/prefill/ctx=1K\n") {
		t.Errorf("resume measured the prefill cell again")
	}
	if want := fmt.Sprintf("sim (simulated): %d cells left of 5, estimated ", 4-kept); !strings.Contains(r.Stdout, want) {
		t.Errorf("the resumed run's header does not count the cells left (%q):\n%s", want, r.Stdout)
	}
	got, err := res.Read(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if got.Interrupted || got.Error != "" || got.Schema != res.Schema || len(got.Prefill) != 1 || len(got.Decode) != 4 {
		t.Fatalf("resumed results.json: interrupted %v error %q, %d prefill and %d decode cells", got.Interrupted, got.Error, len(got.Prefill), len(got.Decode))
	}
	for i, c := range got.Decode {
		if c.Concurrency != i+1 || !c.Status.Measured() {
			t.Errorf("decode #%d is %s (%s), want conc=%d measured", i, c.Ref().Name(), c.Status, i+1)
		}
		if i < kept && (c.TotalTPS != first.Decode[i].TotalTPS || c.TTFTMs != first.Decode[i].TTFTMs) {
			t.Errorf("%s changed on resume: total_tps %v → %v", c.Ref().Name(), first.Decode[i].TotalTPS, c.TotalTPS)
		}
	}
	if got.Prefill[0].TPS != first.Prefill[0].TPS {
		t.Errorf("the prefill cell changed on resume")
	}
	if n := cellLines(out); n != 5 {
		b, _ := os.ReadFile(filepath.Join(out, "cells.jsonl"))
		t.Errorf("cells.jsonl has %d lines, want 5 (each cell once):\n%s", n, b)
	}
	if b, err := os.ReadFile(filepath.Join(out, "junit.xml")); err != nil || !bytes.Contains(b, []byte("sim/decode/ctx=1K/conc=4")) {
		t.Errorf("junit.xml not rewritten for the whole matrix: %v", err)
	}
	// The run's cost is both runs': the interrupted one's server time
	// and boot, then the resumed one's.
	if g, f := got.GPUTime, first.GPUTime; g == nil || f == nil || g.Boots != 2 || len(g.StartupS) != 2 || g.StartupS[0] != f.StartupS[0] ||
		g.ServerS <= f.ServerS || g.ServerS < g.CellsS || g.GPUSeconds != g.ServerS {
		t.Errorf("resumed gpu_time %+v, interrupted run's %+v: want both boots, more server time than the first run's and no less than the cells'", g, f)
	}
	// The interrupted run's server log (how it ended) is kept beside the
	// resumed run's.
	attempt := filepath.Join(out, "server.attempt1.log")
	if want := "-resume: the resumed run's server log is kept as " + attempt; !strings.Contains(r.Stdout, want) {
		t.Errorf("the resumed run does not say where the interrupted run's server log went (%q):\n%s", want, r.Stdout)
	}
	for name, want := range map[string]string{attempt: "slogate: the run ended early (interrupted by SIGINT", filepath.Join(out, "server.log"): "slogate: normal stop, the run is done"} {
		if b, err := os.ReadFile(name); err != nil || !bytes.Contains(b, []byte(want)) {
			t.Errorf("%s lacks %q (%v):\n%s", name, want, err, b)
		}
	}
}

// TestResumeComplete: resuming a finished run (spec taken from its
// results.json) measures nothing and does not start the server.
func TestResumeComplete(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	defer noLeftovers(t, mark)
	spec := faultSpec(t, freePort(t), "", fastSim, oneCell)
	out := filepath.Join(t.TempDir(), "out")
	if r := slogate(t, mark, 2*time.Minute, "", nil, "run", "-sim", "-out", out, spec); r.Code != 0 {
		t.Fatalf("first run: exit %d\n%s", r.Code, r.Stderr)
	}
	before, _ := os.ReadFile(filepath.Join(out, "cells.jsonl"))
	firstRun := readResults(t, out)
	r := slogate(t, mark, time.Minute, "", nil, "run", "-sim", "-resume", out)
	if r.Code != 0 {
		t.Fatalf("resume: exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if strings.Contains(r.Stdout, "starting server") || strings.Contains(r.Stdout, "=== RUN   sim/decode") {
		t.Errorf("resume of a complete run started the server or measured:\n%s", r.Stdout)
	}
	if !strings.Contains(r.Stdout+r.Stderr, "nothing left to measure") {
		t.Errorf("resume does not say there is nothing left to measure:\n%s%s", r.Stdout, r.Stderr)
	}
	after, _ := os.ReadFile(filepath.Join(out, "cells.jsonl"))
	if !bytes.Equal(before, after) {
		t.Errorf("cells.jsonl changed:\n%s\n→\n%s", before, after)
	}
	// The run's cost stays the first run's: nothing was started.
	if g, first := readResults(t, out).GPUTime, firstRun.GPUTime; g == nil || first == nil || g.ServerS != first.ServerS || g.GPUSeconds != first.GPUSeconds || g.Boots != 1 {
		t.Errorf("gpu_time after resuming a complete run %+v, want the first run's %+v", g, first)
	}
}

// TestResumeUsage: -resume of a folder that holds no run, or with a spec
// of another server, is a usage error (exit 2) that says what is wrong.
func TestResumeUsage(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	defer noLeftovers(t, mark)
	spec := faultSpec(t, freePort(t), "", fastSim, oneCell)
	empty := t.TempDir()
	r := slogate(t, mark, time.Minute, "", nil, "run", "-sim", "-resume", empty, spec)
	if r.Code != 2 || !strings.Contains(r.Stderr, "cells.jsonl") {
		t.Errorf("-resume of an empty folder: exit %d, want 2 naming cells.jsonl\n%s", r.Code, r.Stderr)
	}
	other := filepath.Join(t.TempDir(), "other.hcl")
	src, _ := os.ReadFile(spec)
	os.WriteFile(other, bytes.Replace(src, []byte(`server "sim"`), []byte(`server "other"`), 1), 0o644)
	out := filepath.Join(t.TempDir(), "out")
	interruptedRun(t, mark, spec, out, 1)
	// A run into the interrupted run's folder is refused naming -resume:
	// something is left to measure there.
	r = slogate(t, mark, time.Minute, "", nil, "run", "-sim", "-out", out, spec)
	if want := "already holds the results of a run (results.json, cells.jsonl): continue it with `-resume " + out + "`"; r.Code != 2 || !strings.Contains(r.Stderr, want) {
		t.Errorf("-out into an interrupted run's folder: exit %d, want 2 saying\n%s\nstderr:\n%s", r.Code, want, r.Stderr)
	}
	r = slogate(t, mark, time.Minute, "", nil, "run", "-sim", "-resume", out, other)
	if r.Code != 2 || !strings.Contains(r.Stderr, `"sim"`) {
		t.Errorf("-resume with another server's spec: exit %d, want 2 naming the recorded server\n%s", r.Code, r.Stderr)
	}
}

// TestResumeRemeasuresErrors: cells that could not be measured (a faulty
// server) are measured again on resume, against a healthy one; each cell
// is then recorded once.
func TestResumeRemeasuresErrors(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	t.Cleanup(func() { noLeftovers(t, mark) })
	faulty := startSim(t, mark, "Qwen/Qwen3.5-4B", "--served-model-name", "qwen", "--sim-tbt", "5ms", "--sim-ttft", "20ms",
		"--sim-kv-tokens", "1000000", "--sim-truncate-after", "5")
	healthy := startSim(t, mark, "Qwen/Qwen3.5-4B", "--served-model-name", "qwen", "--sim-tbt", "5ms", "--sim-ttft", "20ms",
		"--sim-kv-tokens", "1000000")
	spec := faultSpec(t, freePort(t), "", "", oneCell)
	out := filepath.Join(t.TempDir(), "out")
	r := slogate(t, mark, 2*time.Minute, "", nil, "run", "-endpoint", faulty, "-out", out, spec)
	if r.Code != 3 || !strings.Contains(r.Stderr, "-resume "+out) {
		t.Fatalf("faulty run: exit %d, want 3 suggesting -resume\nstderr:\n%s", r.Code, r.Stderr)
	}
	r = slogate(t, mark, 2*time.Minute, "", nil, "run", "-endpoint", healthy, "-resume", out, spec)
	if r.Code != 0 {
		t.Fatalf("resume: exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if strings.Contains(r.Stdout, "=== RUN   sim/prefill/ctx=1K\n") {
		t.Errorf("the valid prefill cell was measured again")
	}
	got, err := res.Read(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Prefill) != 1 || len(got.Decode) != 2 {
		t.Fatalf("results.json: %d prefill, %d decode cells", len(got.Prefill), len(got.Decode))
	}
	for _, c := range got.Decode {
		if c.Status != vocab.StatusValid {
			t.Errorf("%s: %s (%s) after resume, want valid", c.Ref().Name(), c.Status, c.Reason)
		}
	}
	if n := cellLines(out); n != 3 {
		b, _ := os.ReadFile(filepath.Join(out, "cells.jsonl"))
		t.Errorf("cells.jsonl has %d lines, want 3 (each cell once):\n%s", n, b)
	}
}

// TestResumeMeasuresLikeBefore: the resumed run keeps the first run's
// -duration and -sim without being told, refuses another -duration, and
// refuses a changed launch command.
func TestResumeMeasuresLikeBefore(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	defer noLeftovers(t, mark)
	spec := faultSpec(t, freePort(t), "", fastSim, strings.Replace(resumeBody, `"1s"`, `"30s"`, 1))
	out := filepath.Join(t.TempDir(), "out")
	b := startSlogate(t, mark, "run", "-sim", "-duration", "1s", "-out", out, spec)
	b.waitFor(t, "finished cells", time.Minute, func() bool { return cellLines(out) >= 2 })
	b.cmd.Process.Signal(syscall.SIGINT)
	if code := b.exitAfter(t, 45*time.Second); code != 130 {
		t.Fatalf("interrupted run: exit %d, want 130\nstderr:\n%s", code, b.stderr.String())
	}

	r := slogate(t, mark, time.Minute, "", nil, "run", "-resume", out, "-duration", "2s", spec)
	if r.Code != 2 || !strings.Contains(r.Stderr, "1s windows") {
		t.Errorf("-resume with another -duration: exit %d, want 2 naming the first run's window\n%s", r.Code, r.Stderr)
	}
	changed := filepath.Join(filepath.Dir(spec), "changed.hcl")
	src, _ := os.ReadFile(spec)
	os.WriteFile(changed, bytes.Replace(src, []byte(`"--sim-tbt", "5ms"`), []byte(`"--sim-tbt", "6ms"`), 1), 0o644)
	r = slogate(t, mark, time.Minute, "", nil, "run", "-resume", out, changed)
	if r.Code != 2 || !strings.Contains(r.Stderr, "launch command changed") {
		t.Errorf("-resume with a changed launch: exit %d, want 2\n%s", r.Code, r.Stderr)
	}

	start := time.Now()
	r = slogate(t, mark, 2*time.Minute, "", nil, "run", "-resume", out, spec)
	if r.Code != 0 {
		t.Fatalf("resume: exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	got, err := res.Read(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if got.Measure.DurationS != 1 || !got.Server.Simulated || len(got.Decode) != 4 {
		t.Errorf("resumed results: window %vs, simulated %v, %d decode cells; want 1s, true, 4", got.Measure.DurationS, got.Server.Simulated, len(got.Decode))
	}
	for _, c := range got.Decode {
		if c.MeasuredS > 5 { // 1 s kept, not the spec's 30 s (room for a loaded machine)
			t.Errorf("%s measured %.1fs: the resumed run did not keep the 1s window", c.Ref().Name(), c.MeasuredS)
		}
	}
	if el := time.Since(start); el > time.Minute {
		t.Errorf("resume took %v", el)
	}
}

// TestResumeKeepsWhatWasAsked (issue 29): a run interrupted under -run
// and -duration is resumed without them and measures exactly the rest of
// what it was asked: the header counts the cells its -run kept (3 decode
// cells and their context's prefill, of 5), no other cell is measured; resumed again when complete it says there is nothing
// left, starts nothing and exits 0; another -run is refused.
func TestResumeKeepsWhatWasAsked(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	defer noLeftovers(t, mark)
	spec := faultSpec(t, freePort(t), "", fastSim, strings.Replace(resumeBody, `"1s"`, `"30s"`, 1))
	out := filepath.Join(t.TempDir(), "out")
	const filter = `ctx=1K/conc=(1|2|3)$`
	b := startSlogate(t, mark, "run", "-sim", "-run", filter, "-duration", "1s", "-out", out, spec)
	b.waitFor(t, "finished cells", time.Minute, func() bool { return cellLines(out) >= 2 }) // the prefill and a decode cell
	b.cmd.Process.Signal(syscall.SIGINT)
	if code := b.exitAfter(t, 45*time.Second); code != 130 {
		t.Fatalf("interrupted run: exit %d, want 130\nstderr:\n%s", code, b.stderr.String())
	}
	first := readResults(t, out)
	if f := first.Flags; f == nil || f.Run != filter || f.Duration != "1s" {
		t.Fatalf("results.json records flags %+v, want -run %q -duration 1s", f, filter)
	}
	kept := len(first.Decode)
	if kept < 1 || kept >= 3 {
		c, _ := os.ReadFile(filepath.Join(out, "cells.jsonl"))
		t.Fatalf("interrupted run kept %d decode cells, want 1 or 2\n%s\n%s", kept, c, b.stdout.String())
	}

	r := slogate(t, mark, 2*time.Minute, "", nil, "run", "-resume", out)
	if r.Code != 0 {
		t.Fatalf("resume: exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if want := fmt.Sprintf("sim (simulated): %d cells left of 4, estimated ", 3-kept); !strings.Contains(r.Stdout, want) {
		t.Errorf("the resumed run's header does not count the cells -run kept (%q):\n%s", want, r.Stdout)
	}
	if want := "slogate: -resume: -run '" + filter + "', as the interrupted run was given"; !strings.Contains(r.Stderr, want) {
		t.Errorf("the resumed run does not say it keeps -run (%q):\n%s", want, r.Stderr)
	}
	for _, other := range []string{"sim/prefill/ctx=1K", "sim/decode/ctx=1K/conc=1", "sim/decode/ctx=1K/conc=4"} {
		if strings.Contains(r.Stdout, "=== RUN   "+other+"\n") {
			t.Errorf("the resumed run measured %s, which the first run measured or -run left out", other)
		}
	}
	got := readResults(t, out)
	if got.Interrupted || got.Error != "" || len(got.Prefill) != 1 || len(got.Decode) != 3 || got.Flags == nil || got.Flags.Run != filter {
		t.Fatalf("resumed results.json: interrupted %v error %q, %d prefill and %d decode cells, flags %+v; want 1 + 3 under -run %q",
			got.Interrupted, got.Error, len(got.Prefill), len(got.Decode), got.Flags, filter)
	}
	for _, c := range got.Decode {
		if c.MeasuredS > 5 { // 1 s kept, not the spec's 30 s (room for a loaded machine)
			t.Errorf("%s measured %.1fs: the resumed run did not keep -duration 1s", c.Ref().Name(), c.MeasuredS)
		}
	}

	r = slogate(t, mark, time.Minute, "", nil, "run", "-resume", out)
	if r.Code != 0 || !strings.Contains(r.Stdout+r.Stderr, "nothing left to measure") || strings.Contains(r.Stdout, "starting server") {
		t.Errorf("resume of the completed run: exit %d, want 0 saying nothing is left, no server started\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	r = slogate(t, mark, time.Minute, "", nil, "run", "-resume", out, "-run", "conc=4")
	if want := "that run was given -run '" + filter + "', not -run conc=4"; r.Code != 2 || !strings.Contains(r.Stderr, want) {
		t.Errorf("-resume with another -run: exit %d, want 2 saying %q\n%s", r.Code, want, r.Stderr)
	}
}
