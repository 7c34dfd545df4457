package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	res "github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/sim"
	"github.com/slogate/slogate/internal/vocab"
)

// correctnessDataset writes n completions prompts, each with the answer
// the simulator gives it when right (sim.AnswerFor), and returns its path.
func correctnessDataset(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	for i := range n {
		p := fmt.Sprintf("Question %d: how many apples are %d and %d apples?", i, i, 3*i+1)
		line, _ := json.Marshal(map[string]string{"prompt": p, "answer": sim.AnswerFor(p)})
		b.Write(append(line, '\n'))
	}
	path := filepath.Join(t.TempDir(), "prompts.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCorrectnessGate: a correctness block measured in the same boot as
// the speed cells; identical builds agree on every prompt and pass; a
// build whose outputs drift (--sim-drift) fails with exit 1 naming the
// mismatches while its speed verdicts pass; a planted accuracy drop
// (--sim-accuracy 0.9 → 0.6) fails as an accuracy regression; diff
// compares the blocks too; the block's wall and GPU time are reported
// apart from the speed cells'.
func TestCorrectnessGate(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	defer noLeftovers(t, mark)
	port := freePort(t)
	data := correctnessDataset(t, 60)
	body := fmt.Sprintf(`
measure {
  duration   = "1s"
  max_output = 256
}
matrix "decode" {
  contexts    = ["1K"]
  concurrency = [1]
}
correctness "greedy" {
  dataset    = %q
  max_output = 16
  scorer     = "regex"
  pattern    = "#### (\\d+)"
}
`, data)
	spec := func(args string) string {
		return writeSpecLen(t, port, 4096, `"--sim-tbt", "5ms", "--sim-ttft", "20ms", `+args, body)
	}
	dir := t.TempDir()
	outA := filepath.Join(dir, "a")
	r := slogate(t, mark, 2*time.Minute, "", nil, "run", "-sim", "-out", outA, spec(`"--sim-accuracy", "0.9"`))
	if r.Code != 0 {
		t.Fatalf("run A: exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	a := readResults(t, outA)
	c := a.CorrectnessBlock("greedy")
	if c == nil || c.Prompts != 60 || len(c.Outputs) != 60 || c.Scored != 60 || c.Errors != 0 || c.ElapsedS <= 0 || c.GPUSeconds <= 0 {
		t.Fatalf("run A's block: %+v", c)
	}
	if c.Correct < 45 || c.Correct > 59 {
		t.Errorf("--sim-accuracy 0.9: %d of 60 right", c.Correct)
	}
	if n := len(c.Outputs[0].Tokens); n != 16 || len(c.Outputs[0].Tokens[2].Top) != 5 {
		t.Errorf("an output has %d tokens, want 16 with a top-5 each", n)
	}
	// Nothing to compare with: informational, SKIP and never PASS.
	for _, want := range []string{"informational, nothing compared: no -baseline to compare with", "--- SKIP: sim/correctness/greedy ",
		"accuracy 0.", "95% interval", "GPU-s (apart from the speed cells)"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("run A's stdout lacks %q:\n%s", want, r.Stdout)
		}
	}
	baseline := filepath.Join(outA, "results.json")

	tests := []struct {
		name    string
		args    string
		code    int
		check   string // the check whose verdict decides
		want    []string
		notWant []string
	}{
		{name: "identical builds agree", args: `"--sim-accuracy", "0.9"`, code: 0, check: "agreement",
			want: []string{"--- PASS: sim/correctness/greedy/agreement", "--- PASS: sim/correctness/greedy/accuracy", "60 of 60 prompts agree exactly, 0 near ties, 0 mismatches"}},
		{name: "drifted outputs fail while speed passes", args: `"--sim-accuracy", "0.9", "--sim-drift", "0.3"`, code: 1, check: "agreement",
			want: []string{"--- FAIL: sim/correctness/greedy/agreement", "mismatch the baseline", "> max_mismatch 0%", ": mismatch at token ",
				": near tie at token ", "--- PASS: sim/baseline/decode/ctx=1K/conc=1"},
			notWant: []string{"--- FAIL: sim/baseline/"}},
		{name: "a planted accuracy drop fails", args: `"--sim-accuracy", "0.6"`, code: 1, check: "accuracy",
			want: []string{"--- FAIL: sim/correctness/greedy/accuracy", "accuracy regressed: 0.", "--- PASS: sim/baseline/decode/ctx=1K/conc=1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-"))
			r := slogate(t, mark, 2*time.Minute, "", nil, "run", "-sim", "-baseline", baseline, "-tolerance", "50%", "-out", out, spec(tt.args))
			if r.Code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.Code, tt.code, r.Stdout, r.Stderr)
			}
			for _, want := range tt.want {
				if !strings.Contains(r.Stdout, want) {
					t.Errorf("stdout lacks %q:\n%s", want, r.Stdout)
				}
			}
			for _, no := range tt.notWant {
				if strings.Contains(r.Stdout, no) {
					t.Errorf("stdout has %q:\n%s", no, r.Stdout)
				}
			}
			b := readResults(t, out)
			if v := verdictOf(b, "sim/correctness/greedy/"+tt.check); v == nil || (v.Outcome == vocab.Pass) != (tt.code == 0) {
				t.Errorf("results.json's verdict of %s: %+v", tt.check, v)
			}
			// JUnit has a case per check, the deciding one failed when the
			// run fails.
			junit, err := os.ReadFile(filepath.Join(out, "junit.xml"))
			if err != nil {
				t.Fatal(err)
			}
			for _, check := range []string{"agreement", "accuracy"} {
				if !strings.Contains(string(junit), `name="sim/correctness/greedy/`+check+`"`) {
					t.Errorf("junit.xml has no case of the %s check:\n%s", check, junit)
				}
			}
			if failed := `name="sim/correctness/greedy/` + tt.check + `" time="0.000">` + "\n      <failure"; strings.Contains(string(junit), failed) != (tt.code != 0) {
				t.Errorf("junit.xml: the %s case failed %v, want %v:\n%s", tt.check, !(tt.code != 0), tt.code != 0, junit)
			}
			if b.Comparison == nil || len(b.Comparison.Correctness) != 1 {
				t.Fatalf("results.json has no correctness comparison: %+v", b.Comparison)
			}
			if tt.code == 0 {
				return
			}
			d := slogate(t, mark, 20*time.Second, "", nil, "diff", "-tolerance", "50%", baseline, filepath.Join(out, "results.json"))
			if d.Code != 1 || !strings.Contains(d.Stdout, `correctness "greedy": fail`) {
				t.Errorf("diff: exit %d\nstdout:\n%s\nstderr:\n%s", d.Code, d.Stdout, d.Stderr)
			}
		})
	}
}

// verdictOf is the verdict of test name in r, or nil.
func verdictOf(r *res.Results, name string) *res.Verdict {
	for i := range r.Verdicts {
		if r.Verdicts[i].Test == name {
			return &r.Verdicts[i]
		}
	}
	return nil
}

// TestCorrectnessBadDataset: a correctness dataset's problem is a
// diagnostic at the dataset's own line, with the line as its snippet,
// and exit 2 before any server starts (validate and run alike).
func TestCorrectnessBadDataset(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	defer noLeftovers(t, mark)
	tests := []struct {
		name, data, block string
		line              int
		summary           string
	}{
		{name: "a scorer without answers", data: "{\"prompt\": \"a\", \"answer\": \"1\"}\n{\"prompt\": \"b\"}\n", block: `scorer = "exact"`, line: 2, summary: "Answer missing"},
		{name: "neither prompt nor messages", data: "{\"prompt\": \"a\"}\n{\"question\": \"b\"}\n", line: 2, summary: "Invalid dataset line"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "prompts.jsonl")
			if err := os.WriteFile(data, []byte(tt.data), 0o644); err != nil {
				t.Fatal(err)
			}
			spec := writeSpec(t, freePort(t), `"--sim-tbt", "5ms"`, fmt.Sprintf("correctness \"greedy\" {\n  dataset = %q\n  %s\n}\n", data, tt.block))
			for _, cmd := range [][]string{{"validate", spec}, {"run", "-sim", "-out", filepath.Join(t.TempDir(), "out"), spec}} {
				r := slogate(t, mark, 20*time.Second, "", nil, cmd...)
				out := r.Stdout + r.Stderr
				snippet := strings.Split(tt.data, "\n")[tt.line-1]
				if r.Code != 2 || !strings.Contains(out, tt.summary) || !strings.Contains(out, fmt.Sprintf("on %s line %d", data, tt.line)) || !strings.Contains(out, snippet) {
					t.Errorf("%s: exit %d, want 2 with %q at %s:%d and its snippet\nstdout:\n%s\nstderr:\n%s", cmd[0], r.Code, tt.summary, data, tt.line, r.Stdout, r.Stderr)
				}
			}
		})
	}
}

// TestCorrectnessResume: a run stopped while its correctness block is
// measured keeps the block as unfinished (exit 130); -resume measures that
// block again, and only it; resuming the complete run then keeps the block
// (its results.json record and correctness.jsonl) and starts no server.
func TestCorrectnessResume(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	defer noLeftovers(t, mark)
	data := correctnessDataset(t, 40)
	spec := writeSpecLen(t, freePort(t), 4096, `"--sim-tbt", "5ms", "--sim-ttft", "20ms", `, fmt.Sprintf(`
measure {
  duration   = "1s"
  max_output = 256
}
matrix "decode" {
  contexts    = ["1K"]
  concurrency = [1]
}
correctness "greedy" {
  dataset    = %q
  max_output = 32
}
`, data))
	out := filepath.Join(t.TempDir(), "out")
	measuring := `sim: correctness "greedy": 40 prompts, greedy, 1 at a time`
	b := startSlogate(t, mark, "run", "-sim", "-out", out, spec)
	b.waitFor(t, "the correctness block", 2*time.Minute, func() bool { return strings.Contains(b.stdout.String(), measuring) })
	time.Sleep(500 * time.Millisecond) // some outputs in, not all: 40 × 32 tokens × 5 ms
	b.cmd.Process.Signal(syscall.SIGINT)
	if code := b.exitAfter(t, 45*time.Second); code != 130 {
		t.Fatalf("interrupted run: exit %d, want 130\nstdout:\n%s\nstderr:\n%s", code, b.stdout.String(), b.stderr.String())
	}
	first := readResults(t, out)
	if c := first.CorrectnessBlock("greedy"); c == nil || !c.Unfinished || c.Errors == 0 || c.Errors == c.Prompts || !first.Interrupted {
		t.Fatalf("interrupted run's block: %+v (interrupted %v), want unfinished with some outputs", c, first.Interrupted)
	}

	r := slogate(t, mark, 2*time.Minute, "", nil, "run", "-sim", "-resume", out, spec)
	if r.Code != 0 {
		t.Fatalf("resume: exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	for _, want := range []string{`sim: -resume: correctness "greedy" is measured again: the run it continues was stopped while measuring it`, measuring} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("resume's stdout lacks %q:\n%s", want, r.Stdout)
		}
	}
	if strings.Contains(r.Stdout, "=== RUN   sim/decode/ctx=1K/conc=1\n") {
		t.Errorf("resume measured the decode cell again:\n%s", r.Stdout)
	}
	second := readResults(t, out)
	c := second.CorrectnessBlock("greedy")
	if c == nil || c.Unfinished || c.Errors != 0 || len(c.Outputs) != 40 || len(second.Correctness) != 1 {
		t.Fatalf("resumed block: %+v (%d blocks), want 40 outputs, none failed", c, len(second.Correctness))
	}
	before, _ := os.ReadFile(filepath.Join(out, res.CorrectnessFile))

	r = slogate(t, mark, time.Minute, "", nil, "run", "-sim", "-resume", out, spec)
	if r.Code != 0 {
		t.Fatalf("second resume: exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if want := `sim: -resume: correctness "greedy" is kept: 40 outputs in correctness.jsonl`; !strings.Contains(r.Stdout, want) || !strings.Contains(r.Stdout, "nothing left to measure") {
		t.Errorf("resuming the complete run: stdout lacks %q and \"nothing left to measure\":\n%s", want, r.Stdout)
	}
	if strings.Contains(r.Stdout, measuring) || strings.Contains(r.Stdout, "starting server") {
		t.Errorf("resuming the complete run measured the block again:\n%s", r.Stdout)
	}
	after, _ := os.ReadFile(filepath.Join(out, res.CorrectnessFile))
	if kept := readResults(t, out).CorrectnessBlock("greedy"); string(before) != string(after) || kept == nil || kept.ElapsedS != c.ElapsedS {
		t.Errorf("the kept block changed: correctness.jsonl equal %v, block %+v", string(before) == string(after), kept)
	}
}
