package e2e

import (
	"fmt"
	"testing"
	"time"
)

// TestExitCodes: the verdicts of a real run map to the exit codes of README.md#exit-codes —
// 0 all pass, 1 a breach or an assertion that needs an over-capacity cell
// (the server's KV cache is too small: a failed SLO), 2 a condition that is
// not a bool (the spec is wrong; refused before the run). An assertion
// that reads an errored or unmeasured cell (3) is covered by assert's tests.
func TestExitCodes(t *testing.T) {
	t.Parallel()
	// 1K × 1 fits the 20,000-token KV cache; 1K × 16 (16 × 1,280) does not.
	const sim = `"--sim-tbt", "5ms", "--sim-ttft", "20ms", "--sim-prefill-tps", "1000000", "--sim-kv-tokens", "20000"`
	tests := []struct {
		name      string
		condition string
		want      int
		wantSaid  string
	}{
		{name: "pass", condition: `decode["1K"][1].total_tps >= 1`, want: 0},
		{name: "breach", condition: `decode["1K"][1].total_tps >= 1000000000`, want: 1, wantSaid: "want >= 1000000000"},
		{name: "not a bool", condition: `decode["1K"][1].total_tps > 0 ? "yes" : "no"`, want: 2, wantSaid: "Error: Condition is not a bool"},
		{name: "over-capacity cell", condition: `decode["1K"][16].total_tps >= 1`, want: 1,
			wantSaid: `decode["1K"][16] is over capacity: 16 × (1,024 + 256) = 20,480 tokens > KV cache 20,000 tokens (from metrics)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			mark := newMark(t)
			defer noLeftovers(t, mark)
			spec := faultSpec(t, freePort(t), "", sim, fmt.Sprintf(`
measure {
  duration   = "1s"
  max_output = 256
}
matrix "decode" {
  contexts    = ["1K"]
  concurrency = [1, 16]
}
assert "a" {
  condition = %s
}
`, tt.condition))
			o := runFault(t, mark, time.Minute, "-sim", spec)
			if o.r.Code != tt.want {
				t.Fatalf("exit %d, want %d\n%s", o.r.Code, tt.want, o.dump())
			}
			if tt.wantSaid != "" {
				o.wantSaid(t, tt.wantSaid)
			}
		})
	}
}
