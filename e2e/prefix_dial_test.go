package e2e

import (
	"fmt"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/warning"
)

// TestPrefixHitDial: workloads dialling prefix = { hit_rate = H } at 0.2,
// 0.5 and 0.8 on the simulator (vLLM's block prefix cache, blocks of 16)
// measure, from the server's own vllm:prefix_cache_hits/queries, a
// prefix_cache_hit_rate within 5 points of each dial, recorded beside it
// (prefix_hit_rate_dial) with no prefix_hit_off_dial warning, nor
// prefix_block_mismatch (the server states blocks of 16); the cells
// run one after the other on one server, their cache salts keeping each
// cell from hitting what the one before left.
func TestPrefixHitDial(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	t.Cleanup(func() { noLeftovers(t, mark) })
	// Not hybrid: the simulator then states block_size 16, the block its
	// prefix cache keeps, so the dial's default block fits it.
	base := startSim(t, mark, "Qwen/Qwen3.5-4B", "--served-model-name", "qwen", "--max-model-len", "8192", "--sim-hybrid=false",
		"--sim-tbt", "1ms", "--sim-ttft", "5ms", "--sim-prefill-tps", "1000000", "--sim-kv-tokens", "10000000")
	dials := []float64{0.2, 0.5, 0.8}
	body := "measure { max_output = 4 }\n"
	for i, h := range dials {
		body += fmt.Sprintf(`workload "dial%d" {
  prompt        = "random"
  input_tokens  = { min = 400, max = 600 }
  output_tokens = 4
  prefix        = { hit_rate = %g }
}
traffic "dial%d" {
  workload    = "dial%d"
  concurrency = [4]
  duration    = "1s"
  warmup      = "200ms"
}
`, i, h, i, i)
	}
	spec := writeSpec(t, freePort(t), "", body)
	out := filepath.Join(t.TempDir(), "out")
	r := slogate(t, mark, 2*time.Minute, "", nil, "run", "-endpoint", base, "-out", out, spec)
	if r.Code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	results := readResults(t, out)
	if len(results.Traffic) != len(dials) {
		t.Fatalf("%d traffic cells, want %d", len(results.Traffic), len(dials))
	}
	for i, c := range results.Traffic {
		got, ok := c.Metric(metric.PrefixCacheHitRate)
		t.Logf("%s: dialled %.2f, measured %.4f over %d launched", c.Traffic, dials[i], got, c.Launched)
		switch {
		case c.Status != vocab.StatusValid:
			t.Errorf("%s: %s (%s); want valid", c.Traffic, c.Status, c.Reason)
		case c.PrefixHitRateDial == nil || *c.PrefixHitRateDial != dials[i]:
			t.Errorf("%s: prefix_hit_rate_dial %v, want %v", c.Traffic, c.PrefixHitRateDial, dials[i])
		case !ok || math.Abs(got-dials[i]) > 0.05:
			t.Errorf("%s: measured prefix_cache_hit_rate %v (%v), want within 0.05 of the dial %v", c.Traffic, got, ok, dials[i])
		}
		for _, w := range c.Warnings {
			if w.Code == warning.PrefixHitOffDial || w.Code == warning.PrefixBlockMismatch {
				t.Errorf("%s: %s", c.Traffic, w)
			}
		}
	}
}
