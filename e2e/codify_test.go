package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	slores "github.com/slogate/slogate/result"
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
	dir := t.TempDir()
	res := filepath.Join(dir, "results.json")
	writeResults(t, res, 6018.4, 50)
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
	r := slogate(t, newMark(t), 20*time.Second, "", nil, "codify", filepath.Join(t.TempDir(), "missing.json"))
	if r.Code != 2 || !strings.Contains(r.Stderr, "missing.json") {
		t.Errorf("exit %d, want 2 with the file named on stderr:\n%s", r.Code, r.Stderr)
	}
}

// realRunSpec is a two-cell spec for the simulator with 1-second windows.
const realRunSpec = `server "qwen" {
  model             = "Qwen/Qwen3.5-4B"
  served_model_name = "qwen"
  max_model_len     = "64K"
  host              = "127.0.0.1"
  port              = %d
  ready_timeout     = "30s"
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

// TestCodifyRealRun measures the simulator, codifies the run with a wide
// margin (the machine is shared and busy), and measures again with the
// codified blocks and the first run as -baseline: the codified tests pass.
// A baseline three times faster than the simulator makes the same run fail
// its baseline comparisons (exit 1), and `slogate diff` agrees.
func TestCodifyRealRun(t *testing.T) {
	if testing.Short() {
		t.Skip("measures the simulator twice")
	}
	mark := newMark(t)
	defer noLeftovers(t, mark)
	dir := t.TempDir()
	specPath := filepath.Join(dir, "tiny.hcl")
	if err := os.WriteFile(specPath, []byte(fmt.Sprintf(realRunSpec, freePort(t))), 0o644); err != nil {
		t.Fatal(err)
	}
	first := slogate(t, mark, 90*time.Second, dir, nil, "run", "-sim", "-out", filepath.Join(dir, "first"), specPath)
	if first.Code != 0 {
		t.Fatalf("first run: exit %d\nstdout:\n%s\nstderr:\n%s", first.Code, first.Stdout, first.Stderr)
	}
	firstResults := filepath.Join(dir, "first", "results.json")

	cod := slogate(t, mark, 20*time.Second, dir, nil, "codify", "-margin", "90%", firstResults)
	if cod.Code != 0 {
		t.Fatalf("codify: exit %d\n%s", cod.Code, cod.Stderr)
	}
	spec, _ := os.ReadFile(specPath)
	codified := filepath.Join(dir, "codified.hcl")
	if err := os.WriteFile(codified, append(append(spec, '\n'), cod.Stdout...), 0o644); err != nil {
		t.Fatal(err)
	}

	// A baseline three times faster than what the simulator delivers.
	fast, err := slores.Read(firstResults)
	if err != nil {
		t.Fatal(err)
	}
	for i := range fast.Decode {
		fast.Decode[i].TotalTPS *= 3
	}
	fastPath := filepath.Join(dir, "fast.json")
	if err := fast.Write(fastPath); err != nil {
		t.Fatal(err)
	}

	second := slogate(t, mark, 90*time.Second, dir, nil, "run", "-sim", "-out", filepath.Join(dir, "second"),
		"-baseline", fastPath, "-tolerance", "50%", codified)
	if second.Code != 1 {
		t.Fatalf("second run: exit %d, want 1 (baseline regression)\nstdout:\n%s\nstderr:\n%s", second.Code, second.Stdout, second.Stderr)
	}
	for _, want := range []string{
		"--- PASS: qwen/assert/decode_peak_total_tps",
		"--- PASS: qwen/assert/prefill_tps_8k",
		"--- PASS: qwen/expect/decode_total_tps/ctx=8K/conc=4",
		"--- FAIL: qwen/baseline/decode/ctx=8K/conc=4",
		"total_tps regressed beyond 50% against the baseline",
	} {
		if !strings.Contains(second.Stdout, want) {
			t.Errorf("second run output lacks %q:\n%s", want, second.Stdout)
		}
	}
	secondResults := filepath.Join(dir, "second", "results.json")
	if d := slogate(t, mark, 20*time.Second, dir, nil, "diff", "-tolerance", "90%", firstResults, secondResults); d.Code != 0 {
		t.Errorf("diff first second: exit %d, want 0\n%s", d.Code, d.Stdout)
	}
	if d := slogate(t, mark, 20*time.Second, dir, nil, "diff", fastPath, secondResults); d.Code != 1 || !strings.Contains(d.Stdout, "✗") {
		t.Errorf("diff fast second: exit %d, want 1 with a regression marked\n%s", d.Code, d.Stdout)
	}
}
