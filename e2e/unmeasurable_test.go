package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slogate/slogate/internal/vocab"
)

// TestFewTokensOfASlowServer: a decode cell whose 1 s window holds a
// handful of tokens because the server is slow (the simulator's steps
// 150 ms apart, its own token counter agreeing) is measured, not
// unmeasurable: against a baseline at 5 ms a step it regressed, exit 1
// (docs/method.md#unmeasurable: only the client's own evidence makes a
// window of few tokens unmeasurable; leaving a slow build's slow windows
// out would pass it). About 15 s: two runs of one decode cell of a 1 s
// window.
func TestFewTokensOfASlowServer(t *testing.T) {
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
	if r.Code != 1 {
		t.Fatalf("exit %d, want 1 (the slow server regressed)\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	c := readResults(t, out).Decode[0]
	if c.Status != vocab.StatusValid || c.OutputTokens >= 20 || c.ServerTotalTPS == nil {
		t.Fatalf("cell %s (%q), %d tokens, server_total_tps %v; want a valid window of few tokens the server counted", c.Status, c.Reason, c.OutputTokens, c.ServerTotalTPS)
	}
	for _, want := range []string{"--- FAIL: sim/baseline/decode/ctx=1K/conc=1", "total_tps", "regressed beyond 5%"} {
		if !strings.Contains(all, want) {
			t.Errorf("the run's output lacks %q:\n%s", want, all)
		}
	}
	if strings.Contains(all, "unmeasurable") {
		t.Errorf("the slow server's cell was called unmeasurable:\n%s", all)
	}
}
