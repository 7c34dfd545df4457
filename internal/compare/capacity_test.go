package compare

import (
	"testing"

	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// rateSearch is a rate search's record with an answer and its bounds.
func rateSearch(name string, rate, lower, upper float64) result.Search {
	return result.Search{Name: name, Traffic: "chat", RateRange: [2]float64{1, 32}, Objective: "cell.goodput_share >= 0.95",
		Found: rate > 0, Rate: rate, RateLower: lower, RateUpper: upper, Precision: 0.025, Confidence: 0.95}
}

// TestBuildCapacity: Build compares each rate search both runs have, and
// merges its outcome into the comparison's: a third of the capacity lost
// fails (exit 1), the same answer passes, bounds straddling the tolerance
// line are inconclusive (exit 4); searches asking different things, or a
// concurrency search, are not decided; across engines a loss informs only.
func TestBuildCapacity(t *testing.T) {
	base := rateSearch("capacity", 10, 9.6, 10.4)
	tests := []struct {
		name         string
		b            result.Search
		engine       string
		wantDecision string
		want         vocab.Outcome
		exit         int
	}{
		{name: "a third lost", b: rateSearch("capacity", 6.6, 6.3, 6.9), wantDecision: "regressed", want: vocab.Fail, exit: 1},
		{name: "same", b: base, wantDecision: "within", want: vocab.Pass, exit: 0},
		{name: "straddles", b: rateSearch("capacity", 9.3, 8.9, 9.7), wantDecision: "inconclusive", want: vocab.Inconclusive, exit: 4},
		{name: "another objective", b: func() result.Search {
			s := rateSearch("capacity", 6, 5, 7)
			s.Objective = "cell.goodput_share >= 0.9"
			return s
		}(), wantDecision: "skipped", want: vocab.Skip, exit: 0},
		{name: "candidate's search errored", b: func() result.Search {
			s := rateSearch("capacity", 0, 0, 0)
			s.Error = "probe at 4 req/s: server down"
			return s
		}(), wantDecision: "error", want: vocab.Error, exit: 3},
		{name: "engines differ", b: rateSearch("capacity", 6.6, 6.3, 6.9), engine: "sglang", wantDecision: "regressed", want: vocab.Pass, exit: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &result.Results{Search: []result.Search{base, {Name: "max_users", Range: [2]int{1, 64}, Concurrency: 8, Found: true}}}
			b := &result.Results{Search: []result.Search{tt.b, {Name: "max_users", Range: [2]int{1, 64}, Concurrency: 8, Found: true}}}
			if tt.engine != "" {
				a.Server.Engine, b.Server.Engine = "vllm", tt.engine
			}
			c := Build(a, b, Policy{Tolerance: 0.05, AllowSettingsChange: tt.engine != ""})
			if len(c.Capacity) != 1 {
				t.Fatalf("%d capacity results, want 1 (the rate search only)", len(c.Capacity))
			}
			got := c.Capacity[0]
			wantC := tt.want // a Skip leaves the comparison's outcome alone
			if wantC == vocab.Skip {
				wantC = vocab.Pass
			}
			if got.Decision() != tt.wantDecision || got.Outcome != tt.want || c.Outcome != wantC {
				t.Errorf("decision %s, outcome %s, comparison %s; want %s, %s, comparison %s", got.Decision(), got.Outcome, c.Outcome, tt.wantDecision, tt.want, wantC)
			}
			if c.ExitCode() != tt.exit {
				t.Errorf("exit %d, want %d (%s)", c.ExitCode(), tt.exit, got.Reason)
			}
			rec := c.Record()
			if len(rec.Capacity) != 1 || rec.Capacity[0].Decision != tt.wantDecision || rec.Capacity[0].Now.Rate != tt.b.Rate || rec.Capacity[0].Baseline.Lower != 9.6 {
				t.Errorf("record %+v", rec.Capacity)
			}
		})
	}
}
