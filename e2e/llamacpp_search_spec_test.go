package e2e

import (
	"encoding/json"
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

// llamaSearchSpecFile is the CPU-scale twin of docs/spec.md's rate search,
// as committed.
const llamaSearchSpecFile = "../specs/llamacpp/search.hcl"

// TestLlamaCppSearchSpec: specs/llamacpp/search.hcl, the CPU-scale twin of
// docs/spec.md's rate search, on the real llama-server with 2 s windows
// (CI's): the search answers within its range, and its assert
// search["capacity"].rate_lower >= 4 passes or, where its probes could not
// be decided with confidence, is inconclusive (exit 4) saying so — never
// failed (docs/method.md#undecided-searches), but for a probe at lo whose
// server's queue grew without bound on a machine the suite loads: logged. `slogate plan`'s estimate of
// the search's time brackets what its windows recorded (each window's
// elapsed_s in cells.jsonl, settle waits included: not the test's clock;
// its low end when the search ran every probe),
// and the test logs how far the expected figure was from it
// (docs/method.md#rate-search-time): the expected figure is within 30 %
// of recorded runs (plan's TestSearchTimeAgainstRecordedRuns), not of a
// run on a machine other work loads. 83 s on an idle 2-core machine (plan
// +16 %), 152 s beside stress --cpu 2 (−37 %): the probes past the
// capacity drain longer.
//
// SLOGATE_LLAMACPP_SEARCH_WINDOW=10s runs the spec's own 10 s windows
// instead (about 5 minutes):
//
//	SLOGATE_LLAMACPP_SEARCH_WINDOW=10s go test -count=1 -v -run TestLlamaCppSearchSpec ./e2e
func TestLlamaCppSearchSpec(t *testing.T) {
	t.Parallel()
	server, models := llamaServer(t)
	window := "2s"
	if w := os.Getenv("SLOGATE_LLAMACPP_SEARCH_WINDOW"); w != "" {
		window = w
	}
	mark := newMark(t)
	port := freePort(t)
	vars := []string{"-var", "llama_server=" + server, "-var", "model=" + llamaModel(t, models, "tiny.gguf"),
		"-var", "window=" + window, "-var", "port=" + strconv.Itoa(port)}

	p := slogate(t, mark, time.Minute, "", nil, append(append([]string{"plan", "-format", "json"}, vars...), llamaSearchSpecFile)...)
	if p.Code != 0 {
		t.Fatalf("plan: exit %d\n%s\n%s", p.Code, p.Stdout, p.Stderr)
	}
	var doc struct {
		Servers []struct {
			Searches []struct {
				Name          string `json:"name"`
				MaxProbes     int    `json:"max_probes"`
				Estimated     int64  `json:"estimated_s"`
				EstimatedLow  int64  `json:"estimated_low_s"`
				EstimatedHigh int64  `json:"estimated_high_s"`
			} `json:"searches"`
		} `json:"servers"`
	}
	if err := json.Unmarshal([]byte(p.Stdout), &doc); err != nil || len(doc.Servers) != 1 || len(doc.Servers[0].Searches) != 1 {
		t.Fatalf("plan -format json: %v\n%s", err, p.Stdout)
	}
	est := doc.Servers[0].Searches[0]

	out := filepath.Join(t.TempDir(), "out")
	start := time.Now()
	// The plan's high end at 10 s windows is about 5 minutes: more than
	// runLlama's 4.
	r := slogate(t, mark, 10*time.Minute, "", nil, append(append([]string{"run", "-out", out}, vars...), llamaSearchSpecFile)...)
	noLeftovers(t, mark)
	t.Logf("slogate run %s took %.1f s", llamaSearchSpecFile, time.Since(start).Seconds())
	noLlamaLeft(t, port)
	if r.Code == 1 && loadedMachine() && loSaturated(t, out) {
		// The server's own queue grew without bound at lo: on a machine
		// the suite loads (at load average 12 llama-server took 1.4 s a
		// request on its 2 slots, 1.4 req/s) that is what it serves, a
		// fact of the machine, not a fault of slogate's; logged, as the
		// other loaded-machine checks are (docs/method.md#saturation).
		t.Logf("lo saturated on a loaded machine (load average %.1f), exit 1 logged:\n%s", loadAverage(), r.Stdout)
		return
	}
	if r.Code != 0 && r.Code != 4 {
		t.Fatalf("exit %d, want 0 (decided) or 4 (undecided), never 1\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	results := readResults(t, out)
	s := rateSearch(t, results)
	t.Logf("answer %v req/s, bounds [%v, %v]; probes %s", s.Rate, s.RateLower, s.RateUpper, probeDecisions(s))
	for _, p := range s.Probes {
		t.Logf("probe at %s req/s: %s", vocab.FormatRate(p.Rate), report.ProbeReason(&p))
	}
	if s.Error != "" || (s.Found && (s.Rate < s.RateRange[0] || s.Rate > s.RateRange[1])) {
		t.Errorf("search %+v: want an answer within [4, 9]", s)
	}
	const test = "tiny/assert/serves_4_rps"
	var v *res.Verdict
	for i := range results.Verdicts {
		if results.Verdicts[i].Test == test {
			v = &results.Verdicts[i]
		}
	}
	switch {
	case v == nil:
		t.Fatalf("no verdict of %s", test)
	case v.Outcome == vocab.Pass:
		if !strings.Contains(r.Stdout, "--- PASS: "+test) || s.RateLower < 2 {
			t.Errorf("%s passed with rate_lower %v, or the console did not say so\n%s", test, s.RateLower, r.Stdout)
		}
	case v.Outcome == vocab.Inconclusive:
		if r.Code != 4 || !strings.Contains(v.Message, `undecided: search "capacity" decided`) || !strings.Contains(r.Stdout, "tests inconclusive:") {
			t.Errorf("%s inconclusive (exit %d) without saying the search was undecided: %q\n%s", test, r.Code, v.Message, r.Stdout)
		}
	default:
		t.Errorf("%s: %v (%s), want pass or inconclusive: a healthy server's capacity is above 4 req/s\n%s", test, v.Outcome, v.Message, r.Stdout)
	}

	var spent float64
	f, err := os.Open(filepath.Join(out, "cells.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cells, err := res.ReadCells(f)
	if err != nil {
		t.Fatal(err)
	}
	windows := 0
	for _, c := range cells {
		if c.Traffic != nil && c.Traffic.Search == "capacity" {
			spent += c.Traffic.ElapsedS
			windows++
		}
	}
	t.Logf("plan: about %d s (%d to %d s); the search's %d windows recorded %.1f s (%+.0f%% from the expected)",
		est.Estimated, est.EstimatedLow, est.EstimatedHigh, windows, spent, 100*(float64(est.Estimated)-spent)/spent)
	// The low end counts a search that runs its course: one that ends at
	// lo (failed or unmeasurable there) or at hi met measures less.
	if spent > float64(est.EstimatedHigh) || (len(s.Probes) == est.MaxProbes && spent < float64(est.EstimatedLow)/2) {
		t.Errorf("the search's windows took %.1f s over %d probes, outside the plan's range %d to %d s (%d probes)",
			spent, len(s.Probes), est.EstimatedLow, est.EstimatedHigh, est.MaxProbes)
	}
}

// probeDecisions lists a rate search's probes: "2 met (3 windows), 11 failed (2 windows)".
func probeDecisions(s *res.Search) string {
	var parts []string
	for _, p := range s.Probes {
		parts = append(parts, vocab.FormatRate(p.Rate)+" "+p.Decision+" ("+strconv.Itoa(p.Windows)+" windows)")
	}
	return strings.Join(parts, ", ")
}

// loSaturated reports whether the rate search of the run in out stopped
// its probe at lo as saturated (judgement rule saturated): the server's
// queue grew without bound at the lowest rate searched.
func loSaturated(t *testing.T, out string) bool {
	t.Helper()
	s := rateSearch(t, readResults(t, out))
	for _, p := range s.Probes {
		if p.Rate == s.RateRange[0] {
			return p.Judgement != nil && p.Judgement.Rule == res.ProbeSaturated
		}
	}
	return false
}
