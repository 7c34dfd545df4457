package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slogate/slogate/internal/compare"
	res "github.com/slogate/slogate/internal/result"
)

// pairedSim is a simulator whose requests take long enough (300 ms to the
// first token, 30 ms a token for 24 tokens, 32 running at once) that a
// loaded machine's scheduling jitter of tens of ms is small beside them.
const pairedSim = `"--max-num-seqs", "32", "--sim-kv-tokens", "10000000", "--sim-tbt", "30ms", "--sim-ttft", "300ms", "--sim-prefill-tps", "1000000"`

// pairedSpec is a traffic block of seed seed at 8 req/s for a 10 s window
// on that simulator, slowdown the simulator's --sim-slowdown.
func pairedSpec(t *testing.T, port int, seed int, slowdown string) string {
	args := pairedSim
	if slowdown != "" {
		args += `, "--sim-slowdown", "` + slowdown + `"`
	}
	return writeSpecLen(t, port, 4096, args, fmt.Sprintf(`
measure { max_output = 24 }
traffic "steady" {
  context  = "1K"
  rate     = [8]
  duration = "10s"
  warmup   = "2s"
  seed     = %d
  slo      = { ttft_ms = 2000 }
}
`, seed))
}

// TestPairedBaseline: `run -baseline` compares a traffic cell request for
// request with the baseline's of the same schedule
// (docs/method.md#comparing-traffic): an identical simulator is within
// the tolerance on every median (at -tolerance 25 %, a margin a loaded
// machine's jitter cannot break) and inconclusive on its p99s, which 80
// requests cannot decide (a p99 needs ≥ 299 at α 0.05:
// docs/method.md#undecidable-percentiles), exit 4; one 20 % slower
// (--sim-slowdown 1.2) is regressed at the default 5 % (exit 1), the
// verdict quoting the rule, then the value, and against the baseline's
// folder without its requests.jsonl it is still decided, on the values,
// saying the baseline has no per-request records; a
// baseline of another seed is refused as unlike before the run starts,
// naming the seed (exit 2).
func TestPairedBaseline(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	defer noLeftovers(t, mark)
	port := freePort(t)
	dir := t.TempDir()
	base := filepath.Join(dir, "base")
	r := slogate(t, mark, 2*time.Minute, "", nil, "run", "-sim", "-out", base, pairedSpec(t, port, 7, ""))
	if r.Code != 0 {
		t.Fatalf("baseline: exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	baseline := filepath.Join(base, "results.json")
	// The same run without its requests.jsonl: an older run's folder.
	bare := filepath.Join(dir, "bare")
	if err := os.MkdirAll(bare, 0o755); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(baseline); err != nil {
		t.Fatal(err)
	} else if err := os.WriteFile(filepath.Join(bare, "results.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if c := readResults(t, base).Traffic; len(c) != 1 || c[0].Schedule == nil || len(c[0].Requests) == 0 {
		t.Fatalf("the baseline's traffic cell has no schedule or no requests: %+v", c)
	}
	const test = "sim/baseline/traffic/steady/ctx=1K/rate=8"
	tests := []struct {
		name      string
		seed      int
		slowdown  string
		tolerance string
		baseline  string // the baseline's results.json; "" for base's
		code      int
		want      []string // in stdout, or stderr for exit 2
		// tailsOnly: every median decided within the tolerance, only
		// p99s inconclusive (onlyTailsUndecided)
		tailsOnly bool
	}{
		{name: "identical: the medians within tolerance, the p99s undecidable", seed: 7, tolerance: "25%", code: 4, tailsOnly: true,
			want: []string{test + " ", "; paired, ", "ttft_ms within 25%: ", "requests: a p99 needs ≥ 299)"}},
		{name: "20% slower: regressed", seed: 7, slowdown: "1.2", code: 1,
			want: []string{"--- FAIL: " + test, "; paired, ", "ttft_ms within 5%: +", "): regressed", "regressed beyond 5% against the baseline"}},
		{name: "20% slower against a baseline without requests: unpaired, said so", seed: 7, slowdown: "1.2", baseline: filepath.Join(bare, "results.json"), code: 1,
			want: []string{"--- FAIL: " + test, "; unpaired, on the cells' values alone (not statistical): the baseline has no per-request records (no requests.jsonl beside its results.json)",
				"ttft_ms within 5%: +", ", values only): regressed"}},
		{name: "another seed: refused as unlike", seed: 8, code: 2,
			want: []string{"different settings", "traffic/steady/ctx=1K/rate=8 seed: 7 → 8"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "_"))
			against := baseline
			if tt.baseline != "" {
				against = tt.baseline
			}
			args := []string{"run", "-sim", "-v", "-baseline", against, "-out", out}
			if tt.tolerance != "" {
				args = append(args, "-tolerance", tt.tolerance)
			}
			r := slogate(t, mark, 2*time.Minute, "", nil, append(args, pairedSpec(t, port, tt.seed, tt.slowdown))...)
			if tt.tailsOnly && !onlyTailsUndecided(r.Stdout) {
				t.Errorf("identical builds: want every median decided, only p99s inconclusive\nstdout:\n%s", r.Stdout)
			}
			if r.Code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.Code, tt.code, r.Stdout, r.Stderr)
			}
			where := r.Stdout
			if tt.code == 2 {
				where = r.Stderr
			}
			for _, w := range tt.want {
				if !strings.Contains(where, w) {
					t.Errorf("output lacks %q\nstdout:\n%s\nstderr:\n%s", w, r.Stdout, r.Stderr)
				}
			}
			if tt.code == 2 && strings.Contains(r.Stdout, "RUN") {
				t.Errorf("the refusal came after a cell ran:\n%s", r.Stdout)
			}
		})
	}
}

// TestPairedWidth measures, on the same simulated traffic, the interval
// width of the traffic comparison's changes paired and unpaired
// (docs/method.md#comparing-traffic): two runs of one schedule on
// identical simulators with 3 % noise per step (--sim-noise 0.03), Poisson
// arrivals at three quarters of the server's capacity, their
// traffic cell compared request for request, then the same requests as
// two independent samples (the baseline's schedule dropped). It prints the
// widths and how many times the requests an unpaired comparison needs for
// the paired width (the width falls as 1/√n). Behind SLOGATE_PAIRED_WIDTH=1:
//
//	SLOGATE_PAIRED_WIDTH=1 go test -run TestPairedWidth -v ./e2e
func TestPairedWidth(t *testing.T) {
	if os.Getenv("SLOGATE_PAIRED_WIDTH") != "1" {
		t.Skip("SLOGATE_PAIRED_WIDTH=1 measures the paired and unpaired interval widths")
	}
	mark := newMark(t)
	defer noLeftovers(t, mark)
	port := freePort(t)
	// 4 running at once, each request about 1 s: capacity 4 req/s, and
	// Poisson arrivals at 3 req/s queue in their bursts — the same bursts
	// on both sides of one schedule.
	sim := `"--max-num-seqs", "4", "--sim-kv-tokens", "10000000", "--sim-tbt", "30ms", "--sim-ttft", "300ms", "--sim-prefill-tps", "1000000", "--sim-noise", "0.03"`
	spec := writeSpecLen(t, port, 4096, sim, `
measure { max_output = 24 }
traffic "steady" {
  context  = "1K"
  rate     = [3]
  duration = "60s"
  warmup   = "5s"
  seed     = 7
}
`)
	var runs []*res.Results
	for i := range 2 {
		out := filepath.Join(t.TempDir(), fmt.Sprint(i))
		if r := slogate(t, mark, 3*time.Minute, "", nil, "run", "-sim", "-out", out, spec); r.Code != 0 {
			t.Fatalf("run %d: exit %d\nstdout:\n%s\nstderr:\n%s", i, r.Code, r.Stdout, r.Stderr)
		}
		runs = append(runs, readResults(t, out))
	}
	p := compare.Policy{Tolerance: 0.05}
	paired := compare.Traffic(runs[0], runs[1], p, false)[0]
	runs[0].Traffic[0].Schedule = nil // the same requests, as two samples
	unpaired := compare.Traffic(runs[0], runs[1], p, false)[0]
	if paired.Mode != compare.TrafficPaired || unpaired.Mode != compare.TrafficUnpaired {
		t.Fatalf("modes %v and %v, want paired and unpaired", paired.Mode, unpaired.Mode)
	}
	width := func(tp compare.TrafficPair, name string) float64 {
		for _, v := range tp.Values {
			if v.Metric.Name == name && v.Bounded {
				return v.Upper - v.Lower
			}
		}
		t.Fatalf("%s not bounded", name)
		return 0
	}
	for _, name := range []string{"ttft_ms", "ttft_ms_p99", "e2e_ms", "e2e_ms_p99"} {
		wp, wu := width(paired, name), width(unpaired, name)
		t.Logf("%s: interval width paired %.2f%%, unpaired %.2f%% (%d requests): unpaired needs %.1f× the requests (repeats) for the paired width",
			name, 100*wp, 100*wu, paired.Requests, (wu/wp)*(wu/wp))
		if name == "ttft_ms" && wp >= wu {
			t.Errorf("ttft_ms: paired width %.4f not below unpaired %.4f", wp, wu)
		}
	}
}

// onlyTailsUndecided reports whether a paired comparison's output decided
// every metric but some p99s: nothing regressed, every mean unchanged, and
// each inconclusive line a _p99 metric's.
func onlyTailsUndecided(stdout string) bool {
	if strings.Contains(stdout, "): regressed") {
		return false
	}
	undecided := 0
	for _, line := range strings.Split(stdout, "\n") {
		line = strings.TrimSpace(line)
		if !strings.Contains(line, " within ") || !strings.Contains(line, "): inconclusive") {
			continue
		}
		metric, _, _ := strings.Cut(line, " ")
		if !strings.HasSuffix(metric, "_p99") {
			return false
		}
		undecided++
	}
	return undecided > 0
}

// TestOnlyTailsUndecided pins the rule TestPairedBaseline's identical case
// accepts on a loaded machine, on the lines of a real run's comparison.
func TestOnlyTailsUndecided(t *testing.T) {
	const (
		mean    = "    ttft_ms within 25%: +0.9% [+0.1%, +1.8%] (345.3 → 348.4 ms): unchanged\n"
		tail    = "    ttft_ms_p99 within 25%: +17.8% [+6.1%, +26.0%] (361.9 → 426.4 ms): inconclusive (about 198 requests a side would decide it)\n"
		meanUnd = "    e2e_ms within 25%: +10.1% [-2%, +30%] (1006 → 1106 ms): inconclusive (about 400 requests a side would decide it)\n"
		regress = "    tbt_ms_p99 within 25%: +40% [+30%, +50%] (28.99 → 40.01 ms): regressed\n"
	)
	tests := []struct {
		name   string
		stdout string
		want   bool
	}{
		{name: "a p99 undecided, the means unchanged", stdout: mean + tail, want: true},
		{name: "a mean undecided", stdout: mean + tail + meanUnd, want: false},
		{name: "a p99 regressed", stdout: mean + tail + regress, want: false},
		{name: "nothing undecided", stdout: mean, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := onlyTailsUndecided(tt.stdout); got != tt.want {
				t.Errorf("onlyTailsUndecided = %v, want %v for\n%s", got, tt.want, tt.stdout)
			}
		})
	}
}
