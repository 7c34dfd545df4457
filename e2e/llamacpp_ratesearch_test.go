package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	res "github.com/slogate/slogate/internal/result"
)

// llamaRateSpec is a rate search on the real llama-server's 2 slots
// (--parallel 2): a named workload of random 64-to-128-token prompts and
// 64-token outputs, Poisson arrivals, 5 s windows after a 1 s warm-up (15
// requests a window at the range's bottom, enough for three alike windows
// to bound goodput_share above 0.7), an SLO generous enough (TTFT 2 s)
// that the answer is where the slots saturate rather than where a loaded
// machine's jitter crosses a tight limit, and a precision of 25 % over
// [3, 12]: 5 probes at most (ln 4 ÷ ln 1.25 needs 3 bisections; [2, 12]
// needed 4, and its 6 probes took the test to 384 s of a 729 s make test).
// A run takes 1 to 3 minutes; the capacity is about 11 req/s on an idle
// machine, 5 beside stress --cpu 2.
const llamaRateSpec = llamaWorkload + llamaMix + `
measure {
  duration   = "2s"
  max_output = 64
}
traffic "open" {
  workload = "mix"
  rate     = [2]
  duration = "5s"
  warmup   = "1s"
  slo      = { ttft_ms = 2000 }
}
search "capacity" {
  traffic   = "open"
  rate      = [3, 12]
  precision = "25%"
  objective = cell.goodput_share >= 0.7
}
`

// llamaMix is a named workload of random 64-to-128-token prompts and
// 64-token outputs, for traffic on tiny.gguf's 512-token slots.
const llamaMix = `
workload "mix" {
  prompt        = "random"
  input_tokens  = { min = 64, max = 128 }
  output_tokens = 64
}
`

// TestLlamaCppRateSearch: on the real llama-server with 2 slots, a rate
// search answers within its range with bounds around the answer, its
// report says a CPU server has no GPU-hours to price and writes the chart
// beside report.md; an identical rerun with -baseline is not regressed:
// capacity within the tolerance or inconclusive. A machine shared with
// other work can truly be slower on the rerun: a capacity lost is then
// accepted only when the server's own account of its requests
// (requests.jsonl's server_timings: prompt_ms + predicted_ms) says it
// took longer per request by more than the tolerance, and fails the test
// otherwise.
func TestLlamaCppRateSearch(t *testing.T) {
	t.Parallel()
	server, models := llamaServer(t)
	mark := newMark(t)
	spec := llamaSpec(t, llamaSpecOpts{Command: server, Model: llamaModel(t, models, "tiny.gguf"), Port: freePort(t), MaxModelLen: 512, MaxNumSeqs: 2,
		Server: "  price_per_gpu_hour = 3.50\n", Body: llamaRateSpec})
	dir := t.TempDir()
	base, cand := filepath.Join(dir, "base"), filepath.Join(dir, "cand")

	// A search of 6 probes took 3m51s of runLlama's 4 minutes in a CI
	// rehearsal at load average 8, and over 6 beside stress --cpu 2 (its
	// 12 req/s probe, 2.5x a capacity the busy loops halved, drained for
	// 45 s a window): 10 minutes a run here.
	run := func(args ...string) result {
		t.Helper()
		r := slogate(t, mark, 10*time.Minute, "", nil, args...)
		noLeftovers(t, mark)
		return r
	}
	r := run("run", "-out", base, spec)
	if r.Code != 0 {
		t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	a := readResults(t, base)
	s := rateSearch(t, a)
	if !s.Found && lowestUndecided(s) {
		// The lowest probe undecided and taken as failed by its point
		// estimate: the machine starved the server below the range's
		// bottom (CI saw goodput 0.56 at 3 req/s, load average 12, 146
		// windows needed to decide it). The search has no answer and the
		// rerun nothing to compare: skipped with the reason, never passed.
		t.Skipf("the lowest probe stayed undecided and no rate met the objective (load average %.1f): nothing to gate on\n%s", loadAverage(), r.Stdout)
	}
	lower := s.RateLower > 0
	if !lower && lowestUndecided(s) {
		// A starved machine can leave even the lowest rate undecided
		// (CI saw 4 windows at 2 req/s "taken as met by the point
		// estimates"): the search then asserts no lower bound, which is
		// the honest answer (docs/method.md#undecided-searches).
		t.Logf("the lowest probe stayed undecided (load average %.1f): no lower bound\n%s", loadAverage(), r.Stdout)
		lower = true
	}
	if !s.Found && loadedMachine() && loSaturated(t, base) {
		// The server's queue grew without bound at lo on a machine the
		// suite loads (a rehearsal: e2e p50 1.5 s on 2 slots against
		// lo = 3 req/s): its capacity there, not slogate's fault; logged,
		// as TestLlamaCppSearchSpec does.
		t.Logf("lo saturated on a loaded machine (load average %.1f): no answer to gate on\n%s", loadAverage(), r.Stdout)
		return
	}
	if !s.Found || s.Rate < s.RateRange[0] || s.Rate > s.RateRange[1] || !lower || s.RateLower > s.Rate ||
		(s.RateUpper != 0 && s.RateUpper < s.Rate) {
		t.Errorf("search answered %v req/s with bounds [%v, %v] in %v (found %v): want an answer in the range between its bounds\n%s",
			s.Rate, s.RateLower, s.RateUpper, s.RateRange, s.Found, r.Stdout)
	}
	if a.Server.PricePerGPUHour == nil || *a.Server.PricePerGPUHour != 3.5 {
		t.Errorf("results.json's server.price_per_gpu_hour = %v, want 3.5", a.Server.PricePerGPUHour)
	}
	if want := "tiny: search capacity: none: a CPU server has no GPU-hours to price"; !strings.Contains(r.Stdout, want) {
		t.Errorf("the console does not say %q\n%s", want, r.Stdout)
	}
	md, _ := os.ReadFile(filepath.Join(base, "report.md"))
	for _, want := range []string{"## Search capacity", "- Cost at the answer: none: a CPU server has no GPU-hours to price", "](search-capacity.svg)"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	if _, err := os.Stat(filepath.Join(base, "search-capacity.svg")); err != nil {
		t.Errorf("no chart beside report.md: %v", err)
	}

	r = run("run", "-out", cand, "-baseline", filepath.Join(base, "results.json"), spec)
	if r.Code != 0 && r.Code != 1 && r.Code != 4 {
		t.Fatalf("exit %d, want 0, 1 (a traffic cell may differ) or 4\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	b := readResults(t, cand)
	if b.Comparison == nil || len(b.Comparison.Capacity) != 1 {
		t.Fatalf("the rerun's comparison has no capacity of the search: %+v\n%s", b.Comparison, r.Stdout)
	}
	c := b.Comparison.Capacity[0]
	t.Logf("capacity: baseline %v req/s [%v, %v], rerun %v req/s [%v, %v]: %s (%s)",
		c.Baseline.Rate, c.Baseline.Lower, c.Baseline.Upper, c.Now.Rate, c.Now.Lower, c.Now.Upper, c.Decision, c.Reason)
	if c.Decision == "regressed" {
		was, now := serverTimePerRequest(t, base), serverTimePerRequest(t, cand)
		if now <= was*(1+b.Comparison.Tolerance) {
			t.Errorf("an identical rerun lost capacity (%s) while the server's own time per request was %.1f ms, %.1f ms in the baseline: within the tolerance %v",
				c.Reason, now, was, b.Comparison.Tolerance)
		} else {
			t.Logf("the machine was slower on the rerun: the server's own time per request %.1f ms, %.1f ms in the baseline", now, was)
		}
	}
	if len(b.Comparison.Searches) != 1 || b.Comparison.Searches[0].Search.Rate != s.Rate {
		t.Errorf("the rerun's comparison does not keep the baseline's search for the chart: %+v", b.Comparison.Searches)
	}
	svg, _ := os.ReadFile(filepath.Join(cand, "search-capacity.svg"))
	if !strings.Contains(string(svg), ">baseline</text>") {
		t.Errorf("the rerun's chart does not draw the baseline")
	}
}

// rateSearch is the rate search "capacity" of r, failing the test without it.
func rateSearch(t *testing.T, r *res.Results) *res.Search {
	t.Helper()
	s, ok := r.SearchByName("capacity")
	if !ok || !s.IsRate() {
		t.Fatalf("results.json has no rate search capacity: %+v", r.Search)
	}
	return s
}

// serverTimePerRequest is the median over the rate search's requests of
// what llama-server says it spent on each (prompt_ms + predicted_ms).
func serverTimePerRequest(t *testing.T, out string) float64 {
	t.Helper()
	var ms []float64
	for _, q := range llamaRequests(t, out) {
		if strings.HasPrefix(q.Cell, "search/capacity/") && q.ServerTimings != nil {
			ms = append(ms, q.ServerTimings.PromptMs+q.ServerTimings.PredictedMs)
		}
	}
	if len(ms) == 0 {
		t.Fatalf("no request of the search in %s/requests.jsonl has the server's timings", out)
	}
	slices.Sort(ms)
	return ms[len(ms)/2]
}

// lowestUndecided reports whether the lowest-rate probe of s was left
// undecided.
func lowestUndecided(s *res.Search) bool {
	var low *res.SearchProbe
	for i := range s.Probes {
		if p := &s.Probes[i]; low == nil || p.Rate < low.Rate {
			low = p
		}
	}
	return low != nil && low.Decision == res.DecisionUndecided
}
