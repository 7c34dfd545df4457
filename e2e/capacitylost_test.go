package e2e

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
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
	return capacityLostSpecWith(t, "2s", "1s", "[8, 40]", "10%", "")
}

// capacityLostSpecWith is capacityLostSpec with windows of duration after
// warmup, searching rate ("[lo, hi]") to precision, with extra attributes
// in its search block.
func capacityLostSpecWith(t *testing.T, duration, warmup, rate, precision, searchAttrs string) string {
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
  duration = %q
  warmup   = %q
  slo      = { ttft_ms = 300 }
}
search "capacity" {
  traffic   = "chat"
  rate      = %s
  precision = %q
  objective = cell.goodput_share >= 0.5
  %s
}
`, freePort(t), trafficSim, duration, warmup, rate, precision, searchAttrs))
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

// TestCapacityLostPaired: a baseline whose search has check_windows = 3
// measures three windows at its answer (results.json's check, a line
// each); a run with -baseline replays them at the answer less the 5 %
// tolerance, seed for seed (its replay), and the paired check decides
// (docs/method.md#paired-capacity-check): a build 50 % slower per step is
// regressed ("capacity lost: at …", exit 1, method paired in diff -format
// json), an identical build is not (within tolerance or inconclusive).
func TestCapacityLostPaired(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	t.Cleanup(func() { noLeftovers(t, mark) }) // after the parallel subtests
	// 1 s windows and a coarse search over a narrow range (both builds'
	// answers, about 22 and 15 req/s, inside it): the check decides here,
	// not the bounds, and each run stays under a minute.
	spec := capacityLostSpecWith(t, "1s", "0.5s", "[12, 30]", "25%", "check_windows = 3")
	dir := t.TempDir()
	base := filepath.Join(dir, "base")
	r := slogate(t, mark, 4*time.Minute, "", nil, "run", "-sim", "-out", base, spec)
	if r.Code != 0 {
		t.Fatalf("baseline: exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	b := readResults(t, base).Search
	if len(b) != 1 || !b[0].Found || b[0].Check == nil || len(b[0].Check.Windows) != 3 || b[0].Check.Rate != b[0].Rate {
		t.Fatalf("baseline search %+v, want an answer with 3 check windows at it", b)
	}
	for i, w := range b[0].Check.Windows {
		if w.Seed != int64(i) || w.Launched == 0 {
			t.Errorf("check window %d: seed %d, %d launched; want seed %d (the block's 0, one more a window) and requests", i+1, w.Seed, w.Launched, i)
		}
		if _, ok := w.Values["goodput_share"]; !ok {
			t.Errorf("check window %d holds no goodput_share: %v", i+1, w.Values)
		}
	}
	if want := fmt.Sprintf("search capacity: check window 3 of 3 at %s req/s: goodput_share ", trimRate(b[0].Rate)); !strings.Contains(r.Stdout, want) {
		t.Errorf("baseline's stdout lacks %q\n%s", want, r.Stdout)
	}
	baseJSON := filepath.Join(base, "results.json")
	for _, tt := range []struct {
		name      string
		args      []string
		codes     []int
		want      []string
		not       string
		decisions []string // the search's capacity decision in diff -format json
	}{
		{name: "slower", args: []string{"-var", `sim_args=["--sim-slowdown", "1.5"]`}, codes: []int{1}, decisions: []string{"regressed"},
			want: []string{"capacity lost: at " + trimRate(b[0].Rate*0.95) + " req/s (the baseline's " + trimRate(b[0].Rate) + " req/s less 5%), on the baseline's 3 windows, the candidate's goodput_share is worse",
				"--- FAIL: sim/baseline/search/capacity",
				"search capacity: replay window 3 of 3 at " + trimRate(b[0].Rate*0.95) + " req/s: goodput_share "}},
		// Identical: the search's verdict passes or is inconclusive; the
		// run's exit may also carry the traffic cell's own comparison,
		// which a loaded machine can tip (not this test's subject).
		{name: "identical", codes: []int{0, 1, 4}, not: "--- FAIL: sim/baseline/search/capacity", decisions: []string{"within", "inconclusive"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// The two candidates at once, each on its own port (a port is
			// no setting the comparison checks).
			t.Parallel()
			spec := capacityLostSpecWith(t, "1s", "0.5s", "[12, 30]", "25%", "check_windows = 3")
			out := filepath.Join(dir, tt.name)
			r := slogate(t, mark, 4*time.Minute, "", nil, append(append([]string{"run", "-sim", "-out", out, "-baseline", baseJSON}, tt.args...), spec)...)
			if !slices.Contains(tt.codes, r.Code) {
				t.Errorf("exit %d, want one of %v\nstdout:\n%s\nstderr:\n%s", r.Code, tt.codes, r.Stdout, r.Stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.Stdout, w) {
					t.Errorf("stdout lacks %q\n%s", w, r.Stdout)
				}
			}
			if tt.not != "" && strings.Contains(r.Stdout, tt.not) {
				t.Errorf("stdout says %q\n%s", tt.not, r.Stdout)
			}
			s := readResults(t, out).Search
			if len(s) != 1 || s[0].Replay == nil || len(s[0].Replay.Windows) != 3 || s[0].Replay.BaselineRate != b[0].Rate || s[0].Replay.Tolerance != 0.05 {
				t.Fatalf("search %+v, want a replay of the baseline's 3 windows at its answer less 5%%", s)
			}
			d := slogate(t, mark, 30*time.Second, "", nil, "diff", "-format", "json", baseJSON, filepath.Join(out, "results.json"))
			var doc struct {
				Capacity []res.CapacityComparison `json:"capacity"`
			}
			if err := json.Unmarshal([]byte(d.Stdout), &doc); err != nil {
				t.Fatalf("diff -format json: %v\n%s", err, d.Stdout)
			}
			if len(doc.Capacity) != 1 || doc.Capacity[0].Method != "paired" || len(doc.Capacity[0].Paired) != 1 || doc.Capacity[0].Paired[0].Windows != 3 ||
				!slices.Contains(tt.decisions, doc.Capacity[0].Decision) {
				t.Errorf("diff's capacity %+v, want the search decided %v by its paired check over 3 windows", doc.Capacity, tt.decisions)
			}
		})
	}
}
