package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slogate/slogate/internal/vocab"
)

// TestUnmeasurableCell: a decode cell whose 1 s window holds a handful of
// tokens (the simulator's steps 150 ms apart) cannot be measured by the
// client: it is unmeasurable with the count in its reason, never gated.
// Against a baseline that measured it (steps 5 ms apart, valid) it is not
// compared, neither regressed nor passed; the assertion that reads it is
// inconclusive; the run exits 4 and says why, on the console and in
// report.md (docs/method.md#unmeasurable). About 15 s: two runs of one
// decode cell of a 1 s window.
func TestUnmeasurableCell(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	defer noLeftovers(t, mark)
	body := `
measure {
  duration   = "1s"
  max_output = 64
}
matrix "decode" {
  contexts    = ["1K"]
  concurrency = [1]
}
assert "decodes" {
  condition = decode["1K"][1].total_tps >= 1
}
`
	port := freePort(t)
	fast := writeSpecLen(t, port, 4096, `"--sim-tbt", "5ms", "--sim-ttft", "20ms"`, body)
	slow := writeSpecLen(t, port, 4096, `"--sim-tbt", "150ms", "--sim-ttft", "20ms"`, body)
	base := filepath.Join(t.TempDir(), "base")
	r := slogate(t, mark, 2*time.Minute, "", nil, "run", "-sim", "-out", base, fast)
	if r.Code != 0 {
		t.Fatalf("baseline: exit %d, want 0\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if c := readResults(t, base).Decode[0]; c.Status != vocab.StatusValid {
		t.Fatalf("baseline cell %s (%s), want valid", c.Status, c.Reason)
	}
	out := filepath.Join(t.TempDir(), "now")
	r = slogate(t, mark, 2*time.Minute, "", nil, "run", "-sim", "-out", out, "-baseline", filepath.Join(base, "results.json"), slow)
	all := r.Stdout + r.Stderr
	if r.Code != 4 {
		t.Fatalf("exit %d, want 4 (inconclusive: the cell is unmeasurable)\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	c := readResults(t, out).Decode[0]
	if c.Status != vocab.StatusUnmeasurable || c.OutputTokens >= 20 || !strings.Contains(c.Reason, "fewer than the 20 its throughput needs") {
		t.Fatalf("cell %s (%q), %d tokens; want unmeasurable for its few tokens", c.Status, c.Reason, c.OutputTokens)
	}
	for _, want := range []string{
		"\n    unmeasurable: the window held ",                                   // the cell's test
		"sim/decode/ctx=1K/conc=1 (inconclusive): unmeasurable: the window held", // its test, recapped
		"not compared: this run's cell is unmeasurable: the window held",         // the baseline comparison
		"cell unmeasurable: the window held",                                     // the assertion
	} {
		if !strings.Contains(all, want) {
			t.Errorf("the run's output lacks %q:\n%s", want, all)
		}
	}
	if strings.Contains(all, "regressed") {
		t.Errorf("the unmeasurable cell was called regressed:\n%s", all)
	}
	md := readFile(t, filepath.Join(out, "report.md"))
	if !strings.Contains(md, "## Unmeasurable") || !strings.Contains(md, "fewer than the 20 its throughput needs") {
		t.Errorf("report.md lacks the Unmeasurable section:\n%s", md)
	}
}
