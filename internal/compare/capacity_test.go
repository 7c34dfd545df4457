package compare

import (
	"testing"

	"github.com/slogate/slogate/internal/ratesearch"
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
		{name: "engines differ, straddles", b: rateSearch("capacity", 9.3, 8.9, 9.7), engine: "sglang", wantDecision: "inconclusive", want: vocab.Pass, exit: 0},
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
				t.Errorf("exit %d, want %d (%+v)", c.ExitCode(), tt.exit, got.Reason)
			}
			rec := c.Record()
			if len(rec.Capacity) != 1 || rec.Capacity[0].Decision != tt.wantDecision || rec.Capacity[0].Now.Rate != tt.b.Rate || rec.Capacity[0].Baseline.Lower != 9.6 {
				t.Errorf("record %+v", rec.Capacity)
			}
		})
	}
}

// checked is a rate search with check windows at its answer: one window a
// seed, its goodput_share from shares.
func checked(s result.Search, shares ...float64) result.Search {
	s.Check = &result.SearchCheck{Rate: s.Rate}
	for i, v := range shares {
		s.Check.Windows = append(s.Check.Windows, result.CheckWindow{Seed: int64(i), Values: map[string]float64{"goodput_share": v}, Launched: 100})
	}
	return s
}

// replayed is s with a replay of a check at rate less tol, its windows'
// goodput_share from shares, seed for seed.
func replayed(s result.Search, rate, tol float64, shares ...float64) result.Search {
	s.Replay = &result.SearchCheck{Rate: rate * (1 - tol), BaselineRate: rate, Tolerance: tol}
	for i, v := range shares {
		s.Replay.Windows = append(s.Replay.Windows, result.CheckWindow{Seed: int64(i), Values: map[string]float64{"goodput_share": v}, Launched: 100})
	}
	return s
}

// TestBuildCapacityPaired: where the baseline's search has check windows
// and the candidate replayed them at the same tolerance, the paired check
// decides (method paired, its metric's interval in the record), however
// the bounds say; where either is missing or they do not match, the
// bounds decide and NoPaired says why no paired check (its words are
// views', TestCapacityReason there).
func TestBuildCapacityPaired(t *testing.T) {
	base := checked(rateSearch("capacity", 10, 9.6, 10.4), 0.96, 0.95, 0.97, 0.96, 0.94, 0.96)
	same := rateSearch("capacity", 10, 9.6, 10.4) // bounds: within
	tests := []struct {
		name         string
		a, b         result.Search
		wantDecision string
		wantMethod   string
		wantRule     ratesearch.CapacityRule
		wantNoPaired NoPairedCheck
	}{
		{name: "worse on the same windows", a: base, b: replayed(same, 10, 0.05, 0.90, 0.89, 0.92, 0.90, 0.88, 0.91),
			wantDecision: "regressed", wantMethod: "paired", wantRule: ratesearch.PairedWorse},
		{name: "better on the same windows", a: base, b: replayed(same, 10, 0.05, 0.98, 0.97, 0.99, 0.98, 0.97, 0.98),
			wantDecision: "within", wantMethod: "paired", wantRule: ratesearch.PairedAsGood},
		{name: "no replay", a: base, b: same, wantDecision: "within", wantMethod: "bounds", wantRule: ratesearch.BoundsWithin, wantNoPaired: NotReplayed},
		{name: "replayed at another tolerance", a: base, b: replayed(same, 10, 0.1, 0.9, 0.9), wantDecision: "within", wantMethod: "bounds",
			wantRule: ratesearch.BoundsWithin, wantNoPaired: ReplayedOtherTolerance},
		{name: "replayed another baseline", a: base, b: replayed(same, 12, 0.05, 0.9, 0.9), wantDecision: "within", wantMethod: "bounds",
			wantRule: ratesearch.BoundsWithin, wantNoPaired: ReplayedOtherAnswer},
		{name: "baseline without windows", a: rateSearch("capacity", 10, 9.6, 10.4), b: replayed(same, 10, 0.05, 0.9, 0.9), wantDecision: "within", wantMethod: "bounds",
			wantRule: ratesearch.BoundsWithin, wantNoPaired: NoBaselineCheck},
		{name: "neither has windows", a: rateSearch("capacity", 10, 9.6, 10.4), b: same, wantDecision: "within", wantMethod: "bounds", wantRule: ratesearch.BoundsWithin},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Build(&result.Results{Search: []result.Search{tt.a}}, &result.Results{Search: []result.Search{tt.b}}, Policy{Tolerance: 0.05})
			if len(c.Capacity) != 1 {
				t.Fatalf("%d capacity results, want 1", len(c.Capacity))
			}
			got := c.Capacity[0]
			if got.Decision() != tt.wantDecision || got.Method != tt.wantMethod || got.Reason.Rule != tt.wantRule || got.NoPaired != tt.wantNoPaired {
				t.Errorf("%s by %s (%s, no paired check %q), want %s by %s (%s, %q)", got.Decision(), got.Method, got.Reason.Rule, got.NoPaired,
					tt.wantDecision, tt.wantMethod, tt.wantRule, tt.wantNoPaired)
			}
			rec := c.Record().Capacity[0]
			if rec.Method != tt.wantMethod || (tt.wantMethod == "paired") != (len(rec.Paired) == 1 && rec.Paired[0].Windows == 6) {
				t.Errorf("record: method %q, paired %+v", rec.Method, rec.Paired)
			}
			if rec.Rule != string(tt.wantRule) || rec.NoPairedCheck != string(tt.wantNoPaired) || rec.Reason != "" {
				t.Errorf("record: rule %q, no paired check %q, reason %q; want %q, %q and no sentence", rec.Rule, rec.NoPairedCheck, rec.Reason, tt.wantRule, tt.wantNoPaired)
			}
			if tt.wantRule == ratesearch.PairedWorse && (rec.WorseMetric != "goodput_share" || rec.CheckRate != 9.5 || rec.CheckBaselineRate != 10) {
				t.Errorf("record: worse %q at %v against %v, want goodput_share at 9.5 against 10", rec.WorseMetric, rec.CheckRate, rec.CheckBaselineRate)
			}
		})
	}
}
