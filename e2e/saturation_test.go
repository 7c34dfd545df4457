package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/slogate/slogate/internal/vocab"
)

// TestSaturatedCellFails: constant arrivals at 60 req/s on the simulator
// whose running cap completes about 20 (trafficSim), with no rule that
// reads the cell: its queue grows, the cell stops early as saturated
// (saturation_after 1 s, of a 10 s window), and the run fails, exit 1,
// never a silent pass (docs/method.md#saturation). The console ends
// the cell's test FAIL and names it saturated; results.json keeps the
// part run, far shorter than the window.
func TestSaturatedCellFails(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	defer noLeftovers(t, mark)
	spec := writeSpecLen(t, freePort(t), 4096, trafficSim, `
measure { max_output = 40 }
traffic "over" {
  context          = "1K"
  rate             = [60]
  arrivals         = "constant"
  duration         = "10s"
  warmup           = "1s"
  saturation_after = "1s"
}
`)
	out := t.TempDir()
	r := slogate(t, mark, 3*time.Minute, "", nil, "run", "-sim", "-out", out, spec)
	if r.Code != 1 || !strings.Contains(r.Stdout, "--- FAIL: sim/traffic/over/ctx=1K/rate=60") || !strings.Contains(r.Stdout, "saturated") {
		t.Fatalf("exit %d, want 1 with the cell's test FAIL, saturated\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	res := readResults(t, out)
	if len(res.Traffic) != 1 || res.Traffic[0].Status != vocab.StatusSaturated || res.Traffic[0].MeasuredS > 5 {
		t.Fatalf("traffic %+v: want one cell saturated, stopped well within its 10 s window", res.Traffic)
	}
	t.Logf("saturated after %.2f s of the window: %s", res.Traffic[0].MeasuredS, res.Traffic[0].Reason)
}
