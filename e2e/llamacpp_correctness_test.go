package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/slogate/slogate/internal/report"
	res "github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// TestLlamaCppCorrectness: a correctness block on the real llama-server
// (docs/method.md#correctness). Greedy outputs are deterministic for a
// build: tiny.gguf agrees with itself on every prompt over 5 runs (each
// against the first); other.gguf, a model of the same shape with other
// weights (as fast), mismatches on nearly every prompt and fails the gate
// with exit 1 while every speed verdict passes; and the same prompts sent
// 4 at a time (--parallel 4) agree with those sent one at a time on this
// build, which the test logs.
func TestLlamaCppCorrectness(t *testing.T) {
	server, models := llamaServer(t)
	tiny, other := llamaModel(t, models, "tiny.gguf"), llamaModel(t, models, "other.gguf")
	dir := t.TempDir()
	model := filepath.Join(dir, "model.gguf")
	swap := func(from string) {
		t.Helper()
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(model+".tmp", b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(model+".tmp", model); err != nil {
			t.Fatal(err)
		}
	}
	var lines strings.Builder
	for i := range 20 {
		b, _ := json.Marshal(map[string]string{"prompt": fmt.Sprintf("Item %d: the %d numbers after %d are", i, i%5+2, 7*i)})
		lines.Write(append(b, '\n'))
	}
	data := filepath.Join(dir, "prompts.jsonl")
	if err := os.WriteFile(data, []byte(lines.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	spec := func(conc int) string {
		return llamaSpec(t, llamaSpecOpts{Command: server, Model: model, Port: port, MaxModelLen: 512, MaxNumSeqs: conc,
			Body: llamaWorkload + fmt.Sprintf(`
measure {
  duration   = "1s"
  max_output = 64
}
matrix "decode" {
  contexts    = ["256"]
  concurrency = [1]
}
correctness "greedy" {
  dataset     = %q
  max_output  = 24
  concurrency = %d
}
`, data, conc)})
	}
	one, four := spec(1), spec(4)
	mark := newMark(t)
	swap(tiny)
	base := filepath.Join(dir, "base")
	r := runLlama(t, mark, "run", "-out", base, one)
	if r.Code != 0 && !starvedOnly(t, r.Code, base) {
		t.Fatalf("the baseline run exited %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	baseline := filepath.Join(base, "results.json")
	b := readResults(t, base).CorrectnessBlock("greedy")
	if b != nil && readResults(t, base).GPUTime.CPU && (b.GPUSeconds != 0 || !strings.Contains(r.Stdout, " server-s on a CPU server, no GPU)")) {
		t.Errorf("a CPU server's correctness block: %v GPU-s, want 0 and its server-s said so:\n%s", b.GPUSeconds, r.Stdout)
	}
	if b == nil || len(b.Outputs) != 20 || b.Errors != 0 || len(b.Unavailable) != 0 || len(b.Outputs[0].Tokens) == 0 ||
		b.Outputs[0].Tokens[0].ID < 0 || len(b.Outputs[0].Tokens[0].Top) != 5 {
		t.Fatalf("the baseline's block: %+v", b)
	}
	gate := func(name, specPath string) result {
		t.Helper()
		// The speed cells are compared at a wide tolerance: this test is
		// about the outputs. On this shared 2-core machine one 1-second
		// cell's ttft_ms (about 3 ms) moved by up to 65% between runs of
		// the same build (load average 7); the speed gate only has to show
		// that it does not see the other weights, and its own precision is
		// TestLlamaCppRegression's.
		return runLlama(t, mark, "run", "-out", filepath.Join(dir, name), "-baseline", baseline, "-tolerance", "95%", specPath)
	}
	for run := 1; run <= 4; run++ {
		r := gate(fmt.Sprint("same-", run), one)
		agree := strings.Contains(r.Stdout, "20 of 20 prompts agree exactly, 0 near ties, 0 mismatches")
		// Only the speed cell failed, or was left undecided (exit 4: it
		// regressed while the server waited for a CPU), and the outputs
		// agree: logged, not failed, at any load. This test's subject is
		// the outputs; a 2 ms TTFT doubled when another process took a
		// core for a second, with the load average still under 2× the
		// cores (a CI run, while a package's tests ran beside it; a
		// rehearsal read 2.6 → 5.1 ms, undecided).
		if (r.Code == 1 || r.Code == 4) && agree && speedFailuresOnly(r.Stdout) {
			t.Logf("tiny.gguf again (run %d of 5), load average %.1f: only the speed cell failed, the outputs agree", run+1, loadAverage())
			continue
		}
		if (r.Code != 0 && !starvedOnly(t, r.Code, filepath.Join(dir, fmt.Sprint("same-", run)))) || !agree {
			t.Errorf("tiny.gguf again (run %d of 5): exit %d, want 0 with every prompt agreeing\nstdout:\n%s\nstderr:\n%s", run+1, r.Code, r.Stdout, r.Stderr)
		}
	}
	r = gate("four", four)
	agree4 := strings.Contains(r.Stdout, "20 of 20 prompts agree exactly")
	t.Logf("tiny.gguf, 4 requests at a time (--parallel 4) against 1 at a time: exit %d, every prompt agrees: %v", r.Code, agree4)
	if !agree4 {
		t.Errorf("4 at a time changed greedy outputs on this build:\n%s", r.Stdout)
	}
	swap(other)
	r = gate("other", one)
	speedPassed := !strings.Contains(r.Stdout, "--- FAIL: tiny/baseline/") && strings.Contains(r.Stdout, "--- PASS: tiny/baseline/decode/ctx=256/conc=1")
	// A starved cell on either side is not compared (the baseline's
	// starved 58 % of its wait at load average 12 in CI): the speed cell
	// then has nothing to pass on, and this test's subject is the outputs.
	unmeasurable := strings.Contains(r.Stdout, "this run's cell is unmeasurable: ") || strings.Contains(r.Stdout, "not compared: the baseline's cell is unmeasurable: ")
	if !speedPassed && (loadedMachine() || unmeasurable) {
		t.Logf("other.gguf, load average %.1f: the speed cell failed beside the correctness test", loadAverage())
		speedPassed = true
	}
	if r.Code != 1 || !strings.Contains(r.Stdout, "--- FAIL: tiny/correctness/greedy/agreement") || !strings.Contains(r.Stdout, "mismatch the baseline") || !speedPassed {
		t.Fatalf("other.gguf: exit %d, want 1 with the correctness test failed and the speed cell passed\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	o := readResults(t, filepath.Join(dir, "other"))
	cc := o.Comparison.Correctness[0]
	if cc.Mismatches < 18 {
		t.Errorf("other.gguf mismatches on %d of 20 prompts, want nearly all: %+v", cc.Mismatches, cc)
	}
	t.Logf("other.gguf: %d of %d prompts mismatch, %d near ties, %d exact; the first: line %d at token %d, %s", cc.Mismatches, cc.Prompts, cc.NearTies, cc.Exact,
		cc.Diverged[0].Line, cc.Diverged[0].Position, report.DivergenceWhy(&cc.Diverged[0]))
	noLlamaLeft(t, port)
}

// speedFailuresOnly reports whether every test a run's go-test-style
// output failed is a speed cell's comparison with the baseline
// (tiny/baseline/…): the outputs' test passed.
func speedFailuresOnly(stdout string) bool {
	failed := false
	for _, line := range strings.Split(stdout, "\n") {
		name, ok := strings.CutPrefix(strings.TrimSpace(line), "--- FAIL: ")
		if !ok {
			continue
		}
		if !strings.HasPrefix(name, "tiny/baseline/") {
			return false
		}
		failed = true
	}
	return failed
}

// loadedMachine reports whether the machine is loaded past twice its
// cores: CI saw a 1-second speed cell of the CPU server 20× slower at load
// average 20 than its baseline, so a 95 % tolerance cannot hold there and
// the speed cells beside a correctness test are logged, not failed.
func loadedMachine() bool { return loadAverage() > 2*float64(runtime.NumCPU()) }

// starvedOnly reports whether a run that exited 4 did so only because the
// client could not measure some of its cells on this machine (status
// unmeasurable: its clock against the server's, a window of too few
// tokens, docs/method.md#unmeasurable), or could not measure the
// baseline's it is compared with: nothing failed or errored. That is
// the honest answer on a machine other work starves, so the tests of a
// real server take it as a pass and log it; the cells it names are left
// out of their checks (measuredOrStarved).
func starvedOnly(t *testing.T, code int, out string) bool {
	t.Helper()
	if code != 4 {
		return false
	}
	r, err := res.Read(filepath.Join(out, "results.json"))
	if err != nil {
		return false
	}
	starved := r.Unmeasurable()
	// A baseline whose cell was starved leaves this run's cell not
	// compared, whatever this run measured.
	baselineStarved := false
	for _, v := range r.Verdicts {
		if v.Outcome == vocab.Fail || v.Outcome == vocab.Error {
			return false
		}
		if v.Outcome == vocab.Inconclusive && strings.Contains(v.Message, "not compared: the baseline's cell is unmeasurable: ") {
			baselineStarved = true
			continue
		}
		// Every inconclusive verdict must be one of those cells' (saying
		// so, or quoting one's reason, as an assert on a search stopped at
		// such a probe does): an undecided comparison of measured cells
		// is not the machine's.
		if v.Outcome == vocab.Inconclusive && !quotesUnmeasurable(v.Message+strings.Join(v.Details, "\n"), starved) {
			t.Logf("exit 4, but %s is inconclusive on measured cells: %s", v.Test, v.Message)
			return false
		}
	}
	if len(starved) == 0 && !baselineStarved {
		return false
	}
	t.Logf("exit 4 (load average %.1f): the client could not measure %d cell(s) of this run (the baseline's: %v), so nothing was gated on them:\n  %s",
		loadAverage(), len(starved), baselineStarved, strings.Join(starved, "\n  "))
	return true
}

// quotesUnmeasurable reports whether text says "unmeasurable" or quotes
// the reason of one of starved's "name: reason" lines.
func quotesUnmeasurable(text string, starved []string) bool {
	if strings.Contains(text, "unmeasurable") {
		return true
	}
	for _, line := range starved {
		if _, reason, ok := strings.Cut(line, ": "); ok && reason != "" && strings.Contains(text, reason) {
			return true
		}
	}
	return false
}

// measuredOrStarved reports whether status is want, or unmeasurable on a
// run starvedOnly took.
func measuredOrStarved(status, want vocab.Status, starved bool) bool {
	return status == want || starved && status == vocab.StatusUnmeasurable
}

// TestStarvedOnly pins the rule the real-server tests take a starved run
// by: exit 4, an unmeasurable cell, and nothing failed or errored.
func TestStarvedOnly(t *testing.T) {
	starved := res.DecodeCell{Matrix: "decode", Context: 256, Concurrency: 2, Status: vocab.StatusUnmeasurable, Reason: "the client's per_request_tps …"}
	valid := res.DecodeCell{Matrix: "decode", Context: 256, Concurrency: 1, Status: vocab.StatusValid}
	tests := []struct {
		name     string
		code     int
		cells    []res.DecodeCell
		searches []res.Search
		verdicts []res.Verdict
		want     bool
	}{
		{name: "a starved cell, an inconclusive assert", code: 4, cells: []res.DecodeCell{valid, starved},
			verdicts: []res.Verdict{{Test: "tiny/assert/a", Outcome: vocab.Inconclusive, Message: "cell unmeasurable: the client's per_request_tps …"}}, want: true},
		{name: "a search stopped at a starved probe, the assert reading it quoting the reason", code: 4, cells: []res.DecodeCell{valid},
			searches: []res.Search{{Name: "slots", Error: "the probe at concurrency 3 could not be measured: the client's per_request_tps …",
				Probes: []res.SearchProbe{{Concurrency: 3, Cell: starved}}}},
			verdicts: []res.Verdict{{Test: "tiny/assert/slots", Outcome: vocab.Inconclusive,
				Message: `search "slots" has no answer: the probe at concurrency 3 could not be measured: the client's per_request_tps …`}}, want: true},
		{name: "a measured cell against a baseline's starved one", code: 4, cells: []res.DecodeCell{valid},
			verdicts: []res.Verdict{{Test: "tiny/baseline/decode/ctx=256/conc=1", Outcome: vocab.Inconclusive,
				Message: `decode["256"][1]: not compared: the baseline's cell is unmeasurable: the server was starved: …`}}, want: true},
		{name: "a baseline's starved cell beside a comparison undecided on measured cells", code: 4, cells: []res.DecodeCell{valid},
			verdicts: []res.Verdict{{Test: "tiny/baseline/decode/ctx=256/conc=1", Outcome: vocab.Inconclusive,
				Message: `decode["256"][1]: not compared: the baseline's cell is unmeasurable: the server was starved: …`},
				{Test: "tiny/baseline/decode/ctx=256/conc=2", Outcome: vocab.Inconclusive, Message: "total_tps inconclusive against the baseline"}}},
		{name: "a starved cell beside an assert undecided for another reason", code: 4, cells: []res.DecodeCell{valid, starved},
			verdicts: []res.Verdict{{Test: "tiny/assert/a", Outcome: vocab.Inconclusive, Message: "ttft_ms_p99 from 12 requests: a p99 needs ≥ 299"}}},
		{name: "a starved cell beside a comparison undecided on measured cells", code: 4, cells: []res.DecodeCell{valid, starved},
			verdicts: []res.Verdict{{Test: "tiny/baseline/decode/ctx=256/conc=1", Outcome: vocab.Inconclusive, Message: "total_tps inconclusive against the baseline"}}},
		{name: "a starved cell beside a failed assert", code: 4, cells: []res.DecodeCell{valid, starved},
			verdicts: []res.Verdict{{Test: "tiny/assert/a", Outcome: vocab.Fail}}},
		{name: "inconclusive without a starved cell", code: 4, cells: []res.DecodeCell{valid}},
		{name: "exit 1", code: 1, cells: []res.DecodeCell{valid, starved}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			r := &res.Results{Schema: res.Schema, Decode: tt.cells, Search: tt.searches, Verdicts: tt.verdicts}
			if err := r.Write(filepath.Join(dir, "results.json")); err != nil {
				t.Fatal(err)
			}
			if got := starvedOnly(t, tt.code, dir); got != tt.want {
				t.Errorf("starvedOnly = %v, want %v", got, tt.want)
			}
		})
	}
}
