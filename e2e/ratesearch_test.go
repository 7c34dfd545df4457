package e2e

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/slogate/slogate/internal/report"
	res "github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// Rate searches (docs/method.md#rate-search) on the simulator of
// trafficSim: 8 slots, flat timings (20 ms to the first token, then 10 ms
// a token for 40 tokens), so a request holds its slot about 0.41 s and the
// server completes at most 8 ÷ 0.41 ≈ 19.5 requests a second.

// Its shape, as the true capacity is computed from it.
const (
	rsSlots    = 8
	rsServiceS = 0.41 // 20 ms + 39 gaps of 10 ms: the first token, then the other 39
	rsTTFTS    = 0.02
	rsWarmS    = 1.0
	rsWindowS  = 4.0
	rsSLOS     = 0.3 // slo ttft_ms = 300
	rsTarget   = 0.5 // goodput_share >= 0.5
)

// constantQueueShare is the share of the requests launched in the window
// [warm, warm + window) whose TTFT is at most slo, for constant arrivals
// at rate (request i at (i + 1) ÷ rate, as the traffic cell schedules
// them) to c slots served first come first served, each request holding
// its slot service seconds and seeing its first token ttft after it gets
// one: the simulator's model at flat timings, the queue empty at the
// start as each window's is.
func constantQueueShare(rate float64, c int, service, ttft, warm, window, slo float64) float64 {
	free := make([]float64, c)
	good, n := 0, 0
	for i := 0; ; i++ {
		t := float64(i+1) / rate
		if t >= warm+window {
			break
		}
		k := 0
		for j := range free {
			if free[j] < free[k] {
				k = j
			}
		}
		start := math.Max(t, free[k])
		free[k] = start + service
		if t >= warm {
			n++
			if start-t+ttft <= slo {
				good++
			}
		}
	}
	if n == 0 {
		return 0
	}
	return float64(good) / float64(n)
}

// trueCapacity is the highest rate in [lo, hi] whose window meets
// goodput_share >= target on that model (the share falls with the rate:
// bisection to 1e-6 req/s).
func trueCapacity(lo, hi, target float64) float64 {
	share := func(r float64) float64 {
		return constantQueueShare(r, rsSlots, rsServiceS, rsTTFTS, rsWarmS, rsWindowS, rsSLOS)
	}
	for hi-lo > 1e-6 {
		mid := (lo + hi) / 2
		if share(mid) >= target {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// TestConstantQueueModel: the model's share is 1 below the running cap,
// falls past it, and its capacity lies above the cap by what a queue
// building for the warm-up and half the window allows (the wait grows by
// (λ − μ) ÷ μ a second; a request waits at most 0.28 s).
func TestConstantQueueModel(t *testing.T) {
	mu := rsSlots / rsServiceS
	tests := []struct {
		name string
		rate float64
		want func(float64) bool
	}{
		{name: "below the cap every request meets the SLO", rate: 0.95 * mu, want: func(s float64) bool { return s == 1 }},
		{name: "far above it none does", rate: 2 * mu, want: func(s float64) bool { return s == 0 }},
		{name: "just above it most do", rate: 1.02 * mu, want: func(s float64) bool { return s > 0.9 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if s := constantQueueShare(tt.rate, rsSlots, rsServiceS, rsTTFTS, rsWarmS, rsWindowS, rsSLOS); !tt.want(s) {
				t.Errorf("share at %.2f req/s = %.3f", tt.rate, s)
			}
		})
	}
	// The fluid approximation: the wait at time t is t·(λ − μ)/μ, so half
	// the window's requests (launched from 1 s to 5 s) wait at most 0.28 s
	// when 3 s·(λ − μ)/μ = 0.28.
	fluid := mu * (1 + (rsSLOS-rsTTFTS)/(rsWarmS+rsWindowS/2))
	if c := trueCapacity(1, 100, rsTarget); !within(c, fluid, 0.03) {
		t.Errorf("true capacity %.3f req/s, want the fluid approximation's %.3f within 3%%", c, fluid)
	}
}

// rateSearchSpec is the spec of a rate search over [8, 40] req/s at 5 %
// on trafficSim's server, with objective goodput_share >= rsTarget and
// the SLO rsSLOS, plus body.
func rateSearchSpec(t *testing.T, sloMs int, body string) string {
	return writeSpecLen(t, freePort(t), 4096, trafficSim, fmt.Sprintf(`
measure { max_output = 40 }
traffic "chat" {
  context  = "1K"
  rate     = [8]
  arrivals = "constant"
  duration = "%gs"
  warmup   = "%gs"
  slo      = { ttft_ms = %d }
}
search "capacity" {
  traffic   = "chat"
  rate      = [8, 40]
  precision = "5%%"
  objective = cell.goodput_share >= %g
}
%s`, rsWindowS, rsWarmS, sloMs, rsTarget, body))
}

// rateSearchRuns is how many real searches TestRateSearchBoundsTheCapacity
// makes: 1, or SLOGATE_RATESEARCH_RUNS (docs/method.md#rate-search).
func rateSearchRuns(t *testing.T) int {
	if v := os.Getenv("SLOGATE_RATESEARCH_RUNS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("SLOGATE_RATESEARCH_RUNS=%q: want a whole number ≥ 1", v)
		}
		return n
	}
	return 1
}

// TestRateSearchBoundsTheCapacity: a rate search on the simulator finds
// an answer in its range with its bounds around it, its lower bound
// below the true capacity computed from the simulator's model (not from a
// run; 10 % above it allowed for the simulator catching up on lost time),
// each probe a test with its decision, the answer's probe met at its
// point estimate and the upper bound's failed; results.json, cells.jsonl
// (every window, marked with the search), requests.jsonl (the probes'
// requests under search/capacity/rate=R), report.md and junit.xml hold it;
// asserts read search["capacity"].rate_lower.
func TestRateSearchBoundsTheCapacity(t *testing.T) {
	if testing.Short() {
		t.Skip("measures ~15 windows of 5 s")
	}
	t.Parallel()
	truth := trueCapacity(8, 40, rsTarget)
	t.Logf("true capacity at goodput_share >= %g: %.3f req/s (running cap %.2f)", rsTarget, truth, rsSlots/rsServiceS)
	for run := 1; run <= rateSearchRuns(t); run++ {
		mark := newMark(t)
		spec := rateSearchSpec(t, int(rsSLOS*1000), `
assert "serves_4" {
  condition = search["capacity"].rate_lower >= 4
}
`)
		out := filepath.Join(t.TempDir(), "out")
		start := time.Now()
		r := slogate(t, mark, 6*time.Minute, "", nil, "run", "-sim", "-out", out, spec)
		noLeftovers(t, mark)
		t.Logf("run %d took %v", run, time.Since(start).Round(time.Second))
		if r.Code != 0 {
			t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
		}
		results := readResults(t, out)
		if len(results.Search) != 1 {
			t.Fatalf("%d searches in results.json, want 1", len(results.Search))
		}
		s := results.Search[0]
		t.Logf("run %d: answer %.3f, bounds [%.3f, %.3f], %d probes", run, s.Rate, s.RateLower, s.RateUpper, len(s.Probes))
		if s.Error != "" || !s.Found || s.Traffic != "chat" || s.RateRange != [2]float64{8, 40} || s.Precision != 0.05 || s.Confidence != 0.95 {
			t.Fatalf("search %+v, want found over chat in [8, 40] at 5%%, 95%%", s)
		}
		if s.Rate < 8 || s.Rate > 40 || s.RateLower > s.Rate || (s.RateUpper != 0 && s.RateUpper < s.Rate) || s.RateLower <= 0 {
			t.Errorf("answer %.3f with bounds [%.3f, %.3f], want lo ≤ lower ≤ answer ≤ upper ≤ hi", s.Rate, s.RateLower, s.RateUpper)
		}
		if s.RateLower > 1.1*truth {
			t.Errorf("lower bound %.3f req/s above the true capacity %.3f (+10%%)", s.RateLower, truth)
		}
		probes := 0
		for _, p := range s.Probes {
			if p.Traffic == nil || p.Traffic.Search != "capacity" || p.Traffic.Rate != p.Rate || p.Windows < 1 || p.Windows > 4 {
				t.Errorf("probe %+v: want its traffic cell at its rate, 1 to 4 windows", p)
				continue
			}
			probes += p.Windows
			switch p.Decision {
			case res.DecisionMet, res.DecisionFailed, res.DecisionUndecided:
			default:
				t.Errorf("probe at %v: decision %q", p.Rate, p.Decision)
			}
			test := fmt.Sprintf("sim/search/capacity/rate=%s", vocab.FormatRate(p.Rate))
			word := "--- PASS: " // a probe that missed the objective is skipped, never PASS
			if !p.Passed {
				word = "--- SKIP: "
			}
			if !strings.Contains(r.Stdout, "=== RUN   "+test+"\n") || !strings.Contains(r.Stdout, word+test+" ") {
				t.Errorf("stdout lacks the probe's test %s ending %q", test, word)
			}
		}
		if ap, ok := s.RateProbe(s.Rate); !ok || ap.Decision == res.DecisionFailed {
			t.Errorf("the answer %v is no probe judged met: %+v", s.Rate, ap)
		}
		if s.RateUpper != 0 {
			if up, ok := s.RateProbe(s.RateUpper); !ok || up.Decision != res.DecisionFailed || up.Traffic.GoodputShare >= rsTarget {
				t.Errorf("the upper bound %v is no probe decided failed below the target: %+v", s.RateUpper, up)
			}
		}
		for _, want := range []string{
			"search sim/search/capacity: ", " req/s meets the objective (95% bounds ",
			"--- PASS: sim/assert/serves_4", `search["capacity"].rate_lower = `,
		} {
			if !strings.Contains(r.Stdout, want) {
				t.Errorf("stdout lacks %q\n%s", want, r.Stdout)
			}
		}
		windows := 0
		seeds := map[float64][]int64{} // each probe's windows' seeds, in order
		tokens, seconds := map[float64]float64{}, map[float64]float64{}
		for _, rec := range readCellsFile(t, out) {
			if c := rec.Traffic; c != nil && c.Search == "capacity" {
				windows++
				seeds[c.Rate] = append(seeds[c.Rate], c.Seed)
				tps, _ := c.Metric("output_tps")
				tokens[c.Rate] += tps * c.MeasuredS
				seconds[c.Rate] += c.MeasuredS
			}
		}
		for _, p := range s.Probes {
			// A probe stopped as saturated ran a part of its window, in
			// which nothing may have completed (docs/method.md#saturation).
			saturated := p.Judgement != nil && p.Judgement.Rule == res.ProbeSaturated
			if want := tokens[p.Rate] / seconds[p.Rate]; (p.OutputTPS <= 0 && !saturated) || math.Abs(p.OutputTPS-want) > 0.001*want {
				t.Errorf("probe at %v: output_tps %v, want its %d windows' in cells.jsonl pooled, %.3f", p.Rate, p.OutputTPS, p.Windows, want)
			}
		}
		for rate, ss := range seeds {
			for i, seed := range ss {
				if seed != int64(i) {
					t.Errorf("probe at %v: window %d has seed %d, want %d (the block's seed 0, one more each window)", rate, i+1, seed, i)
				}
			}
		}
		if windows != probes {
			t.Errorf("cells.jsonl holds %d windows of the search, want the %d its probes measured", windows, probes)
		}
		reqs, err := os.ReadFile(filepath.Join(out, "requests.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf(`"cell":"search/capacity/rate=%s"`, vocab.FormatRate(s.Rate)); !strings.Contains(string(reqs), want) {
			t.Errorf("requests.jsonl lacks the answer's probe requests (%s)", want)
		}
		md, err := os.ReadFile(filepath.Join(out, "report.md"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(md), "## Search capacity") || !strings.Contains(string(md), "| # | Rate (req/s) |") || !strings.Contains(string(md), "| Decision |") {
			t.Errorf("report.md lacks the search's table:\n%s", md)
		}
		// slogate report re-renders report.md elsewhere with the chart
		// it links to beside it, the very chart the run wrote.
		again := filepath.Join(t.TempDir(), "report.md")
		if rr := slogate(t, mark, 30*time.Second, "", nil, "report", "-format", "md", "-o", again, filepath.Join(out, "results.json")); rr.Code != 0 {
			t.Fatalf("slogate report: exit %d\n%s", rr.Code, rr.Stderr)
		}
		ran, _ := os.ReadFile(filepath.Join(out, "search-capacity.svg"))
		rerendered, err := os.ReadFile(filepath.Join(filepath.Dir(again), "search-capacity.svg"))
		if err != nil || len(ran) == 0 || string(rerendered) != string(ran) {
			t.Errorf("slogate report -o %s: search-capacity.svg beside it (%v) differs from the run's (%d bytes)", again, err, len(ran))
		}
		junit, err := os.ReadFile(filepath.Join(out, "junit.xml"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(junit), fmt.Sprintf(`name="sim/search/capacity/rate=%s"`, vocab.FormatRate(s.Rate))) {
			t.Errorf("junit.xml lacks the answer's probe")
		}
	}
}

// TestRateSearchNoneAtLo: an SLO hardly a request can meet (TTFT ≤ 5 ms,
// the simulator's first token takes 20 ms) fails the lowest rate once
// its windows bound the share: no answer, "none meets the objective at lo", the probe shown
// with its bounds, and an assert on the rate fails (exit 1), rate = 0.
func TestRateSearchNoneAtLo(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	defer noLeftovers(t, mark)
	spec := rateSearchSpec(t, 5, `
assert "serves_8" {
  condition = search["capacity"].rate >= 8
}
`)
	out := filepath.Join(t.TempDir(), "out")
	r := slogate(t, mark, 3*time.Minute, "", nil, "run", "-sim", "-out", out, spec)
	if r.Code != 1 {
		t.Fatalf("exit %d, want 1 (serves_8 fails)\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	for _, want := range []string{
		"=== RUN   sim/search/capacity/rate=8\n",
		"objective not met: failed even at the optimistic bounds: goodput_share ",
		"search sim/search/capacity: none meets the objective at lo = 8 req/s (rates [8, 40] searched; 1 probes, ",
		"--- FAIL: sim/assert/serves_8",
		`search["capacity"].rate = 0, want >= 8`,
	} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("stdout lacks %q\n%s", want, r.Stdout)
		}
	}
	s := readResults(t, out).Search
	if len(s) != 1 || s[0].Found || s[0].Rate != 0 || len(s[0].Probes) != 1 || s[0].Probes[0].Decision != res.DecisionFailed || s[0].RateUpper != 8 {
		t.Fatalf("search %+v, want not found, one probe at 8 decided failed, the upper bound 8", s)
	}
	// Three alike windows decide (docs/method.md#rate-search-statistics);
	// a fourth when one request of a window met the SLO after all (CI saw
	// one of 128 do so: a simulator catching up on lost time sends its
	// first token early), which makes the windows differ.
	if p := s[0].Probes[0]; p.Windows < 3 || p.Windows > 4 || p.Traffic == nil || p.Traffic.GoodputShare > 0.05 {
		t.Errorf("probe %+v: want 3 windows (4 when one differs), a share near 0", p)
	}
}

// TestRateSearchBadInput: the rate search's spec errors, each at its file
// and line with what to do, exit 2 before any server starts.
func TestRateSearchBadInput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		attr string // the search's attributes
		want []string
	}{
		{name: "rate reversed", attr: `rate = [40, 8]
  objective = cell.goodput_share >= 0.5`,
			want: []string{"Error: Invalid search range", "line 12", "The range [40, 8] is empty: its lower end must be below its upper end, as in [8, 40]."}},
		{name: "rate zero", attr: `rate = [0, 8]
  objective = cell.goodput_share >= 0.5`,
			want: []string{"Error: Invalid rate", "line 12", "A rate must be more than 0 requests per second; got 0"}},
		{name: "rate negative", attr: `rate = [-1, 8]
  objective = cell.goodput_share >= 0.5`,
			want: []string{"Error: Invalid rate", "line 12", "got -1"}},
		{name: "objective reads no traffic metric", attr: `rate = [1, 8]
  objective = 1 < 2`,
			want: []string{"Error: Constant objective", "line 13", "The objective reads no traffic metric of the probe's cell", "cell.goodput_share >= 0.95"}},
		{name: "objective reads a decode metric", attr: `rate = [1, 8]
  objective = cell.per_request_tps >= 50`,
			want: []string{"Error: Unknown metric", "line 13", `Traffic cells have no metric "per_request_tps"`}},
		{name: "closed loop", attr: `rate = [1, 8]
  objective = cell.goodput_share >= 0.5
  traffic = "closed"`,
			want: []string{"Error: Closed-loop traffic in a rate search", "line 13", "a rate search sends open-loop arrivals"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			traffic := `traffic = "chat"`
			if strings.Contains(tt.attr, "traffic =") {
				traffic = ""
			}
			src := fmt.Sprintf(`server "qwen" { model = "Qwen/Qwen3.5-4B" }
traffic "chat" {
  context = "1K"
  rate    = [4]
}
traffic "closed" {
  context     = "1K"
  concurrency = [4]
}
search "capacity" {
  %s
  %s
}
`, traffic, tt.attr)
			if traffic == "" {
				src = strings.Replace(src, "\n  \n", "\n", 1)
			}
			path := specFile(t, "spec.hcl", src)
			mark := newMark(t)
			r := slogate(t, mark, 30*time.Second, "", nil, "run", "-sim", "-out", filepath.Join(t.TempDir(), "out"), path)
			noLeftovers(t, mark)
			if r.Code != 2 {
				t.Fatalf("exit %d, want 2\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
			}
			stderr := strings.Join(strings.Fields(r.Stderr), " ")
			for _, w := range tt.want {
				if w == tt.want[1] {
					w = "on " + path + " " + w
				}
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.Stderr)
				}
			}
		})
	}
}

// TestRateSearchClientLimit: a client the test hook starves (30 ms after
// every arrival's timer: it keeps any gap longer than 30 ms, lagging 30 ms,
// under the lag bound max(50 ms, 10 % of the gap), and falls further
// behind at every shorter one, above 33 req/s) cannot drive the higher
// probes: they are unmeasurable (skipped, the lag named), the
// search answers below the lowest of them and says so (client_limit).
func TestRateSearchClientLimit(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	defer noLeftovers(t, mark)
	spec := writeSpecLen(t, freePort(t), 4096, trafficSim, `
measure { max_output = 8 }
traffic "chat" {
  context  = "1K"
  rate     = [1]
  arrivals = "constant"
  duration = "4s"
  warmup   = "1s"
  slo      = { ttft_ms = 300 }
}
search "capacity" {
  traffic   = "chat"
  rate      = [1, 64]
  precision = "10%"
  objective = cell.goodput_share >= 0.1
}
`)
	out := filepath.Join(t.TempDir(), "out")
	r := slogate(t, mark, 4*time.Minute, "", []string{"SLOGATE_TEST_CLIENT_STALL=30ms"}, "run", "-sim", "-out", out, spec)
	if r.Code != 0 {
		t.Fatalf("exit %d, want 0 (no assertion reads the search)\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	s := readResults(t, out).Search
	if len(s) != 1 {
		t.Fatalf("%d searches, want 1", len(s))
	}
	got := s[0]
	t.Logf("answer %.3f, bounds [%.3f, %.3f], client limit %.3f, %d probes", got.Rate, got.RateLower, got.RateUpper, got.ClientLimit, len(got.Probes))
	lowestUnmeasurable := math.Inf(1)
	for _, p := range got.Probes {
		if p.Decision == res.DecisionUnmeasurable {
			lowestUnmeasurable = math.Min(lowestUnmeasurable, p.Rate)
			test := "sim/search/capacity/rate=" + vocab.FormatRate(p.Rate)
			if !strings.Contains(r.Stdout, "--- SKIP: "+test+" ") {
				t.Errorf("stdout lacks the skipped probe %s", test)
			}
		}
	}
	if math.IsInf(lowestUnmeasurable, 1) || got.ClientLimit != lowestUnmeasurable {
		t.Fatalf("client_limit %v, want the lowest unmeasurable probe's rate (%v)", got.ClientLimit, lowestUnmeasurable)
	}
	if !got.Found || got.Rate >= got.ClientLimit || got.ClientLimit > 64 {
		t.Errorf("answer %v (found %v), want one below the client limit %v", got.Rate, got.Found, got.ClientLimit)
	}
	for _, want := range []string{"unmeasurable: the client fell behind its schedule", "the client could not drive "} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("stdout lacks %q\n%s", want, r.Stdout)
		}
	}
}

// TestRateSearchPlan: `slogate plan` shows a rate search's probes as a
// test pattern with its range, precision and the most probes and windows
// it may take (lo, hi and ⌈log₂(ln(40/8) ÷ ln 1.05)⌉ = 6 bisection steps),
// and a search's check_windows, in text and JSON, before any server
// starts.
func TestRateSearchPlan(t *testing.T) {
	t.Parallel()
	spec := rateSearchSpec(t, 300, `
search "checked" {
  traffic       = "chat"
  rate          = [8, 40]
  precision     = "5%"
  check_windows = 24
  objective     = cell.goodput_share >= 0.95
}
`)
	mark := newMark(t)
	defer noLeftovers(t, mark)
	r := slogate(t, mark, 30*time.Second, "", nil, "plan", spec)
	if r.Code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if want := "  search: sim/search/capacity/rate=R  traffic chat, rate in [8, 40] req/s to 5%, at most 8 probes of at most 4 windows\n"; !strings.Contains(r.Stdout, want) {
		t.Errorf("plan lacks %q:\n%s", want, r.Stdout)
	}
	if want := "  search: sim/search/checked/rate=R  traffic chat, rate in [8, 40] req/s to 5%, at most 8 probes of at most 4 windows, then 24 check windows at the answer\n"; !strings.Contains(r.Stdout, want) {
		t.Errorf("plan lacks %q:\n%s", want, r.Stdout)
	}
	j := slogate(t, mark, 30*time.Second, "", nil, "plan", "-format", "json", spec)
	if j.Code != 0 {
		t.Fatalf("plan -format json: exit %d\n%s", j.Code, j.Stderr)
	}
	if want := `"traffic": "chat",`; !strings.Contains(j.Stdout, want) || !strings.Contains(j.Stdout, `"max_windows": 4`) || !strings.Contains(j.Stdout, `"rate_range": [`) || !strings.Contains(j.Stdout, `"check_windows": 24`) {
		t.Errorf("plan -format json lacks the rate search's traffic, rate_range, max_windows and check_windows:\n%s", j.Stdout)
	}
}

// TestRateSearchMaxWindows: a search's max_windows reaches its probes:
// at max_windows = 2 every probe stops at its second window (two windows'
// spread bounds little at the look's level, so none decides earlier
// unless it fails outright), each undecided probe saying in its reason
// that it went by its point estimates and about how many windows would
// decide it (docs/method.md#rate-search-precision), in results.json and
// on stdout.
func TestRateSearchMaxWindows(t *testing.T) {
	if testing.Short() {
		t.Skip("measures ~10 windows of 2.5 s")
	}
	t.Parallel()
	spec := writeSpecLen(t, freePort(t), 4096, trafficSim, `
measure { max_output = 40 }
traffic "chat" {
  context  = "1K"
  rate     = [8]
  arrivals = "constant"
  duration = "2s"
  warmup   = "0.5s"
  slo      = { ttft_ms = 300 }
}
search "capacity" {
  traffic     = "chat"
  rate        = [8, 40]
  precision   = "25%"
  max_windows = 2
  objective   = cell.goodput_share >= 0.5
}
`)
	mark := newMark(t)
	defer noLeftovers(t, mark)
	out := filepath.Join(t.TempDir(), "out")
	r := slogate(t, mark, 4*time.Minute, "", nil, "run", "-sim", "-out", out, spec)
	if r.Code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	s := readResults(t, out).Search[0]
	undecided := 0
	for _, p := range s.Probes {
		if p.Windows > 2 || (p.Windows < 2 && p.Decision != res.DecisionFailed) {
			t.Errorf("probe at %v: %d windows (%s), want 2 at max_windows = 2", p.Rate, p.Windows, p.Decision)
		}
		if p.Decision != res.DecisionUndecided {
			continue
		}
		undecided++
		j := p.Judgement
		if j == nil || j.ToDecide <= 0 || (j.Rule != res.ProbeUndecidedWindows && j.Rule != res.ProbeUndecidedEdge) {
			t.Errorf("probe at %v: judgement %+v, want it undecided after 2 windows with the windows that would decide it", p.Rate, j)
			continue
		}
		if why := report.ProbeReason(&p); !strings.HasPrefix(why, "undecided after 2 windows, taken as ") || !strings.Contains(r.Stdout, why) {
			t.Errorf("stdout lacks probe %v's reason %q", p.Rate, why)
		}
	}
	if undecided == 0 {
		t.Errorf("no probe undecided after its 2 windows: %+v", s.Probes)
	}
}

// TestRateSearchServerExits: a server that exits during the search (the
// simulator's --sim-exit-after) ends it without an answer: exit 3 naming
// the exit, results.json's search entry with the error, no rate, and the
// probes measured before it kept.
func TestRateSearchServerExits(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	defer noLeftovers(t, mark)
	spec := writeSpecLen(t, freePort(t), 4096, trafficSim+`, "--sim-exit-after", "9s"`, fmt.Sprintf(`
measure { max_output = 40 }
traffic "chat" {
  context  = "1K"
  rate     = [8]
  arrivals = "constant"
  duration = "%gs"
  warmup   = "%gs"
  slo      = { ttft_ms = 300 }
}
search "capacity" {
  traffic   = "chat"
  rate      = [8, 40]
  objective = cell.goodput_share >= 0.1
}
`, rsWindowS, rsWarmS))
	out := filepath.Join(t.TempDir(), "out")
	r := slogate(t, mark, 3*time.Minute, "", nil, "run", "-sim", "-run", "sim/search/capacity", "-out", out, spec)
	if r.Code != 3 {
		t.Fatalf("exit %d, want 3 (the server exited)\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if !strings.Contains(r.Stdout+r.Stderr, "simulated crash after 9s") && !strings.Contains(r.Stdout+r.Stderr, "exited") {
		t.Errorf("the output does not say the server exited:\nstdout:\n%s\nstderr:\n%s", r.Stdout, r.Stderr)
	}
	s := readResults(t, out).Search
	if len(s) != 1 || s[0].Found || s[0].Rate != 0 || !strings.HasPrefix(s[0].Error, "the run ended during the search: ") {
		t.Fatalf("search %+v, want no answer and the error", s)
	}
	// lo's window (about 5 s) ends before the exit unless the machine is
	// very slow; whatever was decided before it is kept.
	for i, p := range s[0].Probes {
		if p.Traffic == nil || p.Decision == "" || (i == 0 && p.Rate != 8) {
			t.Errorf("probe %d %+v, want a decided probe with its cell (lo = 8 first)", i+1, p)
		}
	}
}
