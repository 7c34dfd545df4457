package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/slogate/slogate/internal/warning"
)

// qwenPerRequestTPS is the simulator's own per-request decode rate of the
// qwen profile at context ctx and concurrency c, for a server launched
// without a speculative block, computed from internal/sim/profiles/qwen.json the way
// the simulator builds its curves (internal/sim/profile.go buildModel): the per-
// sequence rate total_tps ÷ active_avg at batch active_avg, interpolated
// log–log; the profile was measured with speculative decoding, so a plain
// server makes one token per step at 1 ÷ draft_overhead of the step time,
// acceptance_length tokens fewer per step.
func qwenPerRequestTPS(t *testing.T, ctx int) func(c float64) float64 {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "internal", "sim", "profiles", "qwen.json"))
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		Speculative struct {
			AcceptLen     float64 `json:"acceptance_length"`
			DraftOverhead float64 `json:"draft_overhead"`
		} `json:"speculative"`
		Decode []struct {
			Context   int     `json:"context"`
			Status    string  `json:"status"`
			TotalTPS  float64 `json:"total_tps"`
			ActiveAvg float64 `json:"active_avg"`
		} `json:"decode"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatal(err)
	}
	type pt struct{ x, y float64 }
	var pts []pt
	for _, d := range p.Decode {
		if d.Context == ctx && d.Status != "over_capacity" && d.TotalTPS > 0 {
			b := math.Max(d.ActiveAvg, 0.5)
			pts = append(pts, pt{b, d.TotalTPS / b})
		}
	}
	if len(pts) < 2 || p.Speculative.AcceptLen == 0 {
		t.Fatalf("qwen.json has no decode rows at context %d (or no speculative section)", ctx)
	}
	sort.Slice(pts, func(i, j int) bool { return pts[i].x < pts[j].x })
	scale := p.Speculative.DraftOverhead / p.Speculative.AcceptLen
	return func(c float64) float64 {
		i := sort.Search(len(pts), func(i int) bool { return pts[i].x >= c })
		switch {
		case i == 0:
			return pts[0].y * scale
		case i == len(pts):
			return pts[len(pts)-1].y * scale
		}
		a, b := pts[i-1], pts[i]
		f := math.Log(c/a.x) / math.Log(b.x/a.x)
		return math.Exp(math.Log(a.y)+f*(math.Log(b.y)-math.Log(a.y))) * scale
	}
}

// searchSpec writes a spec of one qwen simulator server (extra vLLM/sim
// args) with body, 1 s windows and 1,024-token outputs (no stream restarts
// inside a window at these rates).
func searchSpec(t *testing.T, args, body string) string {
	t.Helper()
	src := fmt.Sprintf(`server "qwen" {
  model         = "Qwen/Qwen3.5-4B"
  host          = "127.0.0.1"
  port          = %d
  ready_timeout = "20s"
  args          = [%s]
}
measure {
  duration   = "1s"
  max_output = 1024
}
%s`, freePort(t), args, body)
	return specFile(t, "spec.hcl", src)
}

// TestSearchFindsTheProfileCrossing: the search over the qwen profile at
// 8K lands where the simulator's own per-request curve crosses the
// threshold, computed from the profile (not from a run), and is confirmed
// by answer + 1 failing; an assert on the answer passes at it and fails
// one above it (exit 1, the FAIL line quoting the value).
func TestSearchFindsTheProfileCrossing(t *testing.T) {
	// Not parallel: per_request_tps must land within 2 % of the profile's curve.
	if testing.Short() {
		t.Skip("measures ~8 probes")
	}
	tps := qwenPerRequestTPS(t, 8192)
	// The crossing whose neighbours differ most, so that timing noise
	// cannot move it: the threshold is their geometric mean, a margin of
	// half the gap on each side (about 2 % here).
	want, gap := 0, 0.0
	for c := 2; c <= 30; c++ {
		if g := tps(float64(c))/tps(float64(c+1)) - 1; g > gap {
			want, gap = c, g
		}
	}
	threshold := math.Sqrt(tps(float64(want)) * tps(float64(want+1)))
	if gap < 0.03 {
		t.Fatalf("the profile's curve is too flat for a robust crossing: best gap %.1f%% at %d", gap*100, want)
	}
	t.Logf("per-request tok/s at 8K: %d → %.1f, %d → %.1f; threshold %.1f", want, tps(float64(want)), want+1, tps(float64(want+1)), threshold)
	hi := 2 * want
	path := searchSpec(t, "", fmt.Sprintf(`
search "max_users" {
  context     = "8K"
  concurrency = [1, %d]
  objective   = cell.per_request_tps >= %.1f
}
assert "holds_answer" {
  condition = search["max_users"].concurrency >= %d
}
assert "holds_one_more" {
  condition = search["max_users"].concurrency >= %d
}
`, hi, threshold, want, want+1))
	mark := newMark(t)
	out := filepath.Join(t.TempDir(), "out")
	start := time.Now()
	r := slogate(t, mark, 4*time.Minute, "", nil, "run", "-sim", "-out", out, path)
	t.Logf("search took %v", time.Since(start).Round(time.Second))
	noLeftovers(t, mark)
	if r.Code != 1 {
		t.Fatalf("exit %d, want 1 (holds_one_more fails)\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	res := readResults(t, out)
	if len(res.Search) != 1 {
		t.Fatalf("results.json has %d searches, want 1", len(res.Search))
	}
	s := res.Search[0]
	var probes []string
	for _, p := range s.Probes {
		probes = append(probes, fmt.Sprintf("%d:%.1f:%v", p.Concurrency, p.Cell.PerRequestTPS, p.Passed))
	}
	if s.Concurrency != want || !s.Found || !s.Monotone || s.ConfirmedBy != want+1 {
		t.Fatalf("search answer %d (found %v, monotone %v, confirmed by %d), want %d confirmed by %d; probes (c:tps:passed) %s",
			s.Concurrency, s.Found, s.Monotone, s.ConfirmedBy, want, want+1, strings.Join(probes, " "))
	}
	if p, ok := s.Probe(want + 1); !ok || p.Passed || !strings.Contains(p.Reason, "cell.per_request_tps = ") {
		t.Errorf("probe at %d: %+v, want a failing probe whose reason quotes per_request_tps", want+1, p)
	}
	if s.Objective != fmt.Sprintf("cell.per_request_tps >= %.1f", threshold) || s.Range != [2]int{1, hi} || s.Context != 8192 {
		t.Errorf("search record: objective %q range %v context %d", s.Objective, s.Range, s.Context)
	}
	// Each probe is a test with its metrics and objective line: PASS when
	// it met the objective, SKIP (never PASS) when it missed it.
	for _, line := range []string{
		fmt.Sprintf("--- PASS: qwen/search/max_users/conc=%d ", want),
		fmt.Sprintf("--- SKIP: qwen/search/max_users/conc=%d ", want+1),
		"skipped, not failed: a search takes a probe that misses its objective as a bound",
		"tok/s/request",
		"objective met",
		"objective not met: cell.per_request_tps = ",
		fmt.Sprintf("search qwen/search/max_users: concurrency %d meets the objective at ctx=8K (%d fails;", want, want+1),
		"--- PASS: qwen/assert/holds_answer",
		"--- FAIL: qwen/assert/holds_one_more",
		fmt.Sprintf(`search["max_users"].concurrency = %d, want >= %d`, want, want+1),
	} {
		if !strings.Contains(r.Stdout, line) {
			t.Errorf("console lacks %q:\n%s", line, r.Stdout)
		}
	}
	// The reports show the search: its answer, a row per probe, the chart.
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(out, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("Largest concurrency meeting the objective at context 8K, concurrency 1 to %d: %d (confirmed: %d fails). %d probes.", hi, want, want+1, len(s.Probes)); !strings.Contains(string(md), want) {
		t.Errorf("report.md lacks %q", want)
	}
	if n := strings.Count(string(page), "<circle"); !strings.Contains(string(page), "<h2>Search max_users</h2>") || n != len(s.Probes) {
		t.Errorf("report.html: search section %v, %d chart points, want %d", strings.Contains(string(page), "<h2>Search max_users</h2>"), n, len(s.Probes))
	}
	// Probes are persisted like cells.
	n := 0
	for _, rec := range readCellsFile(t, out) {
		if rec.Decode != nil && rec.Decode.Search == "max_users" {
			n++
		}
	}
	if n != len(s.Probes) {
		t.Errorf("cells.jsonl holds %d probe records, want %d", n, len(s.Probes))
	}
}

// TestSearchNonMonotone: a server slow at exactly 2 running requests
// (--sim-slow-at-concurrency 2:4) fails the objective at 2 and passes it at
// 4: the search says so (monotone false, a warning) and answers 1, the
// largest concurrency with every probe at or below it passing.
func TestSearchNonMonotone(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("measures 3 probes")
	}
	tps := qwenPerRequestTPS(t, 8192)
	// Half the rate at 1: the slowed 2 (a quarter of its rate) is far
	// below it, 4 (unslowed) far above.
	threshold := tps(1) / 2
	if !(tps(2)/4 < 0.6*threshold && tps(4) > 1.4*threshold) {
		t.Fatalf("threshold %.1f does not separate the slowed 2 (%.1f) from 4 (%.1f)", threshold, tps(2)/4, tps(4))
	}
	path := searchSpec(t, `"--sim-slow-at-concurrency", "2:4"`, fmt.Sprintf(`
search "max_users" {
  context     = "8K"
  concurrency = [1, 8]
  objective   = cell.per_request_tps >= %.1f
}
`, threshold))
	mark := newMark(t)
	out := filepath.Join(t.TempDir(), "out")
	r := slogate(t, mark, 3*time.Minute, "", nil, "run", "-sim", "-out", out, path)
	noLeftovers(t, mark)
	if r.Code != 0 {
		t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	s := readResults(t, out).Search[0]
	var got []string
	for _, p := range s.Probes {
		got = append(got, fmt.Sprintf("%d:%v", p.Concurrency, p.Passed))
	}
	if s.Monotone || s.Concurrency != 1 || !s.Found || strings.Join(got, " ") != "1:true 2:false 4:true" {
		t.Fatalf("search: answer %d, monotone %v, probes %v; want answer 1, not monotone, probes 1:true 2:false 4:true", s.Concurrency, s.Monotone, got)
	}
	// The run's search_not_monotone warning, answer 1, printed as
	// recorded; the search's own line says it too.
	ws := readResults(t, out).Warnings
	i := slices.IndexFunc(ws, func(w warning.Warning) bool {
		return w.Code == warning.SearchNotMonotone && w.Figures[warning.FigAnswer] == 1
	})
	if i < 0 || !strings.Contains(r.Stdout+r.Stderr, "warning: "+ws[i].String()) {
		t.Errorf("no search_not_monotone warning of answer 1 recorded and printed: %+v\n%s%s", ws, r.Stdout, r.Stderr)
	}
	if line := "not monotone: a probe passed above a failing one"; !strings.Contains(r.Stdout+r.Stderr, line) {
		t.Errorf("output lacks %q:\n%s%s", line, r.Stdout, r.Stderr)
	}
}

// TestSearchStaticErrors: an objective that is not a bool, or reads an
// unknown metric, is a spec error at its file and line before any server
// starts (exit 2).
func TestSearchStaticErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, objective string
		want            []string
	}{
		{name: "not a bool", objective: "cell.per_request_tps * 2",
			want: []string{"Error: Objective is not a bool", "spec.hcl line 15", "The objective is a number"}},
		{name: "unknown metric", objective: "cell.per_request_tsp >= 50",
			want: []string{"Error: Unknown metric", "spec.hcl line 15", `no metric "per_request_tsp"`, `Did you mean "per_request_tps"?`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := searchSpec(t, "", fmt.Sprintf(`search "max_users" {
  context     = "8K"
  concurrency = [1, 8]
  objective   = %s
}
`, tt.objective))
			mark := newMark(t)
			r := slogate(t, mark, time.Minute, "", nil, "run", "-sim", "-out", filepath.Join(t.TempDir(), "out"), path)
			noLeftovers(t, mark)
			if r.Code != 2 {
				t.Fatalf("exit %d, want 2\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
			}
			flat := strings.Join(strings.Fields(r.Stderr), " ") // the diagnostic wraps its detail
			for _, w := range tt.want {
				if !strings.Contains(flat, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.Stderr)
				}
			}
			if strings.Contains(r.Stdout+r.Stderr, "starting server") {
				t.Errorf("a server was started:\n%s", r.Stdout)
			}
		})
	}
}

// TestSearchProbeError: a probe that cannot be measured (the server breaks
// every stream) stops the search without an answer; the run exits 3 (an
// infrastructure problem, never a slow server) even with no assert reading
// the search.
func TestSearchProbeError(t *testing.T) {
	t.Parallel()
	path := searchSpec(t, `"--sim-midstream-error-after", "50"`, `
search "max_users" {
  context     = "8K"
  concurrency = [1, 8]
  objective   = cell.per_request_tps >= 10
}
`)
	mark := newMark(t)
	out := filepath.Join(t.TempDir(), "out")
	r := slogate(t, mark, 2*time.Minute, "", nil, "run", "-sim", "-out", out, path)
	noLeftovers(t, mark)
	if r.Code != 3 {
		t.Fatalf("exit %d, want 3\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if want := "search/max_users: the probe at concurrency 1 could not be measured: server error in stream"; !strings.Contains(r.Stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, r.Stderr)
	}
	s := readResults(t, out).Search[0]
	if s.Error == "" || s.Found || len(s.Probes) != 1 {
		t.Errorf("search: error %q, found %v, %d probes; want an error, not found, the one probe", s.Error, s.Found, len(s.Probes))
	}
}
