package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// codifySpec declares the matrix and prefill contexts writeResults measures.
const codifySpec = `server "demo" {
  model = "demo/model"
}

prefill {
  contexts = ["8K"]
}

matrix "decode" {
  contexts    = ["8K", "16K"]
  concurrency = [1, 64]
}
`

// TestCodifyValidates: `slogate codify` output pasted into a spec with the
// same matrix passes `slogate validate`.
func TestCodifyValidates(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	res := filepath.Join(dir, "results.json")
	writeResults(t, res, 6018.4, 50)
	markFinished(t, res) // codify refuses a run that did not finish
	mark := newMark(t)
	r := slogate(t, mark, 20*time.Second, "", nil, "codify", "-margin", "5%", res)
	if r.Code != 0 {
		t.Fatalf("codify: exit %d\nstderr:\n%s", r.Code, r.Stderr)
	}
	for _, want := range []string{`expect "decode_total_tps"`, `"16K" = [null, null]`, `assert "decode_peak_total_tps"`, "tolerance = 0.05"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("codify output lacks %q:\n%s", want, r.Stdout)
		}
	}
	specPath := filepath.Join(dir, "codified.hcl")
	if err := os.WriteFile(specPath, []byte(codifySpec+"\n"+r.Stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	v := slogate(t, mark, 20*time.Second, "", nil, "validate", specPath)
	if v.Code != 0 {
		t.Fatalf("validate of the codified spec: exit %d\nstdout:\n%s\nstderr:\n%s\nspec:\n%s", v.Code, v.Stdout, v.Stderr, codifySpec+r.Stdout)
	}
}

func TestCodifyUsage(t *testing.T) {
	t.Parallel()
	r := slogate(t, newMark(t), 20*time.Second, "", nil, "codify", filepath.Join(t.TempDir(), "missing.json"))
	if r.Code != 2 || !strings.Contains(r.Stderr, "missing.json") {
		t.Errorf("exit %d, want 2 with the file named on stderr:\n%s", r.Code, r.Stderr)
	}
}

// realRunSpec is a two-cell spec for the simulator with 1-second windows;
// %s is the simulator's flags (time between tokens, warm TTFT, prefill
// rate), so a test can measure the same server slower.
const realRunSpec = `server "qwen" {
  model             = "Qwen/Qwen3.5-4B"
  served_model_name = "qwen"
  max_model_len     = "64K"
  host              = "127.0.0.1"
  port              = %d
  ready_timeout     = "30s"
  args              = [%s]
}

measure {
  duration   = "1s"
  max_output = 256
}

prefill { contexts = ["8K"] }

matrix "decode" {
  contexts    = ["8K"]
  concurrency = [1, 4]
}
`

// Simulator settings of TestCodifyRealRun: the slow server takes 4× as
// long per token as the normal one, with the same TTFT and prefill rate.
const (
	normalSim = `"--sim-tbt", "10ms", "--sim-ttft", "300ms", "--sim-prefill-tps", "20000", "--sim-kv-tokens", "1000000"`
	slowSim   = `"--sim-tbt", "40ms", "--sim-ttft", "300ms", "--sim-prefill-tps", "20000", "--sim-kv-tokens", "1000000"`
	// codifyMargin leaves room for a loaded machine (throughput may fall,
	// latency rise, by half before a codified test fails) and is still
	// tight enough that the 4× slower server (a quarter of the throughput)
	// must fail.
	codifyMargin = "50%"
)

// TestCodifyRealRun measures the simulator, codifies the run, and measures
// again with the codified blocks and the first run as -baseline: on the same
// server every codified test and baseline comparison passes (exit 0); on a
// server 4× slower per token the throughput tests and the baseline fail
// (exit 1) while the TTFT and prefill tests, whose behaviour did not change,
// still pass; `slogate diff` agrees.
func TestCodifyRealRun(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("measures the simulator three times")
	}
	mark := newMark(t)
	defer noLeftovers(t, mark)
	dir := t.TempDir()
	writeSpec := func(name, sim string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(fmt.Sprintf(realRunSpec, freePort(t), sim)), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	first := slogate(t, mark, 90*time.Second, dir, nil, "run", "-sim", "-out", filepath.Join(dir, "first"), writeSpec("tiny.hcl", normalSim))
	if first.Code != 0 {
		t.Fatalf("first run: exit %d\nstdout:\n%s\nstderr:\n%s", first.Code, first.Stdout, first.Stderr)
	}
	firstResults := filepath.Join(dir, "first", "results.json")

	cod := slogate(t, mark, 20*time.Second, dir, nil, "codify", "-margin", codifyMargin, firstResults)
	if cod.Code != 0 {
		t.Fatalf("codify: exit %d\n%s", cod.Code, cod.Stderr)
	}
	codified := func(name, sim string) string {
		p := writeSpec(name, sim)
		spec, _ := os.ReadFile(p)
		if err := os.WriteFile(p, append(append(spec, '\n'), cod.Stdout...), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	throughputTests := []string{"qwen/assert/decode_peak_total_tps", "qwen/expect/decode_total_tps/ctx=8K/conc=1",
		"qwen/expect/decode_total_tps/ctx=8K/conc=4", "qwen/baseline/decode/ctx=8K/conc=4"}
	unchangedTests := []string{"qwen/assert/prefill_tps_8k", "qwen/assert/decode_ttft_8k_c1"}

	same := slogate(t, mark, 90*time.Second, dir, nil, "run", "-sim", "-out", filepath.Join(dir, "same"),
		"-baseline", firstResults, "-tolerance", codifyMargin, codified("same.hcl", normalSim))
	if same.Code != 0 {
		t.Fatalf("run of the same server: exit %d, want 0\nstdout:\n%s\nstderr:\n%s\ncodified:\n%s", same.Code, same.Stdout, same.Stderr, cod.Stdout)
	}
	for _, test := range append(throughputTests, unchangedTests...) {
		if !strings.Contains(same.Stdout, "--- PASS: "+test+" ") {
			t.Errorf("same server: %s did not pass:\n%s", test, same.Stdout)
		}
	}

	slow := slogate(t, mark, 90*time.Second, dir, nil, "run", "-sim", "-out", filepath.Join(dir, "slow"),
		"-baseline", firstResults, "-tolerance", codifyMargin, codified("slow.hcl", slowSim))
	if slow.Code != 1 {
		t.Fatalf("run of the slow server: exit %d, want 1\nstdout:\n%s\nstderr:\n%s", slow.Code, slow.Stdout, slow.Stderr)
	}
	for _, test := range throughputTests {
		if !strings.Contains(slow.Stdout, "--- FAIL: "+test+" ") {
			t.Errorf("slow server: %s did not fail:\n%s", test, slow.Stdout)
		}
	}
	for _, test := range unchangedTests {
		if !strings.Contains(slow.Stdout, "--- PASS: "+test+" ") {
			t.Errorf("slow server: %s (unchanged behaviour) did not pass:\n%s", test, slow.Stdout)
		}
	}
	if !strings.Contains(slow.Stdout, "total_tps and tbt_ms regressed beyond 50% against the baseline") {
		t.Errorf("slow server: the baseline failure does not say what regressed:\n%s", slow.Stdout)
	}

	slowResults := filepath.Join(dir, "slow", "results.json")
	if d := slogate(t, mark, 20*time.Second, dir, nil, "diff", "-tolerance", codifyMargin, firstResults, filepath.Join(dir, "same", "results.json")); d.Code != 0 {
		t.Errorf("diff first same: exit %d, want 0\n%s", d.Code, d.Stdout)
	}
	if d := slogate(t, mark, 20*time.Second, dir, nil, "diff", "-tolerance", codifyMargin, firstResults, slowResults); d.Code != 1 || !strings.Contains(d.Stdout, "✗") {
		t.Errorf("diff first slow: exit %d, want 1 with a regression marked\n%s", d.Code, d.Stdout)
	}
}
