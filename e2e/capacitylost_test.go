package e2e

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	res "github.com/slogate/slogate/internal/result"
)

// capacityLostSpec is a rate search on the 8-slot simulator of trafficSim
// (about 19.5 requests a second at most, docs/method.md#rate-search) at a
// coarse precision and short windows, its server's arguments followed by
// the sim_args variable (a slower build: --sim-slowdown).
func capacityLostSpec(t *testing.T) string {
	return specFile(t, "spec.hcl", fmt.Sprintf(`server "sim" {
  model             = "Qwen/Qwen3.5-4B"
  served_model_name = "qwen"
  host              = "127.0.0.1"
  port              = %d
  max_model_len     = 4096
  ready_timeout     = "20s"
  args              = concat([%s], var.sim_args)
}
variable "sim_args" {
  type    = list(string)
  default = []
}
measure { max_output = 40 }
traffic "chat" {
  context  = "1K"
  rate     = [8]
  arrivals = "constant"
  duration = "2s"
  warmup   = "1s"
  slo      = { ttft_ms = 300 }
}
search "capacity" {
  traffic   = "chat"
  rate      = [8, 40]
  precision = "10%%"
  objective = cell.goodput_share >= 0.5
}
`, freePort(t), trafficSim))
}

// TestCapacityLostGates: a build 50 % slower per step loses about a
// third of the rate search's capacity (far enough for its probes above
// its capacity to be decided failed in their 2 s windows), and -baseline fails it as a
// verdict of its own (exit 1, "capacity lost", both answers with their
// bounds), as diff does (its line and -format json's capacity entry).
func TestCapacityLostGates(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	defer noLeftovers(t, mark)
	spec := capacityLostSpec(t)
	dir := t.TempDir()
	base, slow := filepath.Join(dir, "base"), filepath.Join(dir, "slow")
	r := slogate(t, mark, 4*time.Minute, "", nil, "run", "-sim", "-out", base, spec)
	if r.Code != 0 {
		t.Fatalf("baseline: exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	b := readResults(t, base).Search
	if len(b) != 1 || !b[0].Found || b[0].RateLower == 0 {
		t.Fatalf("baseline search %+v, want an answer with a lower bound", b)
	}
	r = slogate(t, mark, 4*time.Minute, "", nil, "run", "-sim", "-out", slow, "-baseline", filepath.Join(base, "results.json"),
		"-var", `sim_args=["--sim-slowdown", "1.5"]`, spec)
	s := readResults(t, slow).Search
	if len(s) != 1 || !s[0].Found || s[0].RateUpper == 0 || s[0].RateUpper >= b[0].RateLower*0.95 {
		t.Fatalf("slower search %+v, want an upper bound below the baseline's lower bound %v less 5%%\nstdout:\n%s", s, b[0].RateLower, r.Stdout)
	}
	if r.Code != 1 {
		t.Errorf("-baseline: exit %d, want 1 (capacity lost)", r.Code)
	}
	for _, want := range []string{
		"=== RUN   sim/baseline/search/capacity\n",
		fmt.Sprintf("    baseline %s req/s [", trimRate(b[0].Rate)),
		"capacity lost: the candidate's upper bound ",
		"--- FAIL: sim/baseline/search/capacity",
	} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("-baseline's stdout lacks %q\n%s", want, r.Stdout)
		}
	}

	d := slogate(t, mark, 30*time.Second, "", nil, "diff", "-format", "json", filepath.Join(base, "results.json"), filepath.Join(slow, "results.json"))
	var doc struct {
		ExitCode int                      `json:"exit_code"`
		Capacity []res.CapacityComparison `json:"capacity"`
	}
	if err := json.Unmarshal([]byte(d.Stdout), &doc); err != nil {
		t.Fatalf("diff -format json: %v\n%s", err, d.Stdout)
	}
	if d.Code != 1 || doc.ExitCode != 1 || len(doc.Capacity) != 1 || doc.Capacity[0].Decision != "regressed" ||
		doc.Capacity[0].Baseline.Lower != b[0].RateLower || doc.Capacity[0].Now.Upper != s[0].RateUpper {
		t.Errorf("diff: exit %d, document's %d, capacity %+v; want exit 1 and the search regressed with both runs' bounds", d.Code, doc.ExitCode, doc.Capacity)
	}
	txt := slogate(t, mark, 30*time.Second, "", nil, "diff", filepath.Join(base, "results.json"), filepath.Join(slow, "results.json"))
	if !strings.Contains(txt.Stdout, `search "capacity": regressed: baseline `) {
		t.Errorf("diff's text lacks the capacity line\n%s", txt.Stdout)
	}
}

// trimRate is a rate as the verdict lines print it (numfmt.Value: two
// decimals from 1 up, no trailing zeros).
func trimRate(r float64) string {
	s := fmt.Sprintf("%.2f", r)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s
}
