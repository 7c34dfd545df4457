package assert

import (
	"math"
	"strings"
	"testing"

	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/views"
	"github.com/slogate/slogate/internal/vocab"
)

// rateSearchSpec has a concurrency search and a rate search side by side:
// the `search` variable holds both kinds.
const rateSearchSpec = `
server "qwen" { model = "m" }
traffic "chat" {
  context = "1K"
  rate    = [1]
  slo     = { ttft_ms = 500 }
}
search "max_users" {
  context     = "8K"
  concurrency = [1, 64]
  objective   = cell.per_request_tps >= 50
}
search "capacity" {
  traffic   = "chat"
  rate      = [0.5, 16]
  objective = cell.goodput_share >= 0.95 && cell.ttft_ms_p99 <= 500
}
assert "serves_4" {
  condition = search["capacity"].rate >= 4
}
assert "surely_3" {
  condition = search["capacity"].rate_lower >= 3
}
assert "bounded_below_8" {
  condition = search["capacity"].rate_upper <= 8
}
assert "goodput_at_answer" {
  condition = search["capacity"].cell.goodput_rps >= 3
}
`

// TestEvaluateRateSearch: assertions read a rate search's answer, bounds
// and the cell at the answer; none meeting it at lo fails them; an
// unbounded upper bound fails a read of it; a stopped search is an
// infrastructure Error; a condition that fails only for want of probes
// decided with confidence, holding at a capacity the search's decisions
// leave possible, is Inconclusive, with why (docs/method.md#undecided-searches).
func TestEvaluateRateSearch(t *testing.T) {
	probe := func(rate float64, d string, goodput float64) result.SearchProbe {
		return result.SearchProbe{Rate: rate, Passed: d == result.DecisionMet, Decision: d,
			Traffic: &result.TrafficCell{Traffic: "chat", Search: "capacity", Context: 1024, Rate: rate, Status: vocab.StatusValid,
				Launched: 100, Completed: 100, GoodputRPS: goodput, GoodputShare: 0.99}}
	}
	tests := []struct {
		name      string
		search    *result.Search
		want      [4]vocab.Outcome
		wantInfra bool
		wantMsg   string
	}{
		{name: "answer with bounds",
			search: &result.Search{Name: "capacity", Traffic: "chat", RateRange: [2]float64{0.5, 16}, Found: true, Monotone: true,
				Rate: 4.5, RateLower: 4.2, RateUpper: 4.9,
				Probes: []result.SearchProbe{probe(0.5, "met", 0.5), probe(16, "failed", 3), probe(4.2, "met", 4.1), probe(4.5, "undecided", 4.4), probe(4.9, "failed", 4)}},
			want: [4]vocab.Outcome{vocab.Pass, vocab.Pass, vocab.Pass, vocab.Pass}},
		{name: "answer below the floor fails with the value",
			search: &result.Search{Name: "capacity", Traffic: "chat", RateRange: [2]float64{0.5, 16}, Found: true, Monotone: true,
				Rate: 2.5, RateLower: 2.25, RateUpper: 2.75,
				Probes: []result.SearchProbe{probe(0.5, "met", 0.5), probe(2.5, "met", 2.4), probe(2.75, "failed", 2)}},
			want: [4]vocab.Outcome{vocab.Fail, vocab.Fail, vocab.Pass, vocab.Fail}, wantMsg: `search["capacity"].rate = 2.5, want >= 4`},
		{name: "answer above a floor its lower bound is not",
			search: &result.Search{Name: "capacity", Traffic: "chat", RateRange: [2]float64{0.5, 16}, Found: true, Monotone: true,
				Rate: 4.1, RateLower: 2.9, RateUpper: 4.4,
				Probes: []result.SearchProbe{probe(0.5, "met", 0.5), probe(2.9, "met", 2.9), probe(4.1, "undecided", 4), probe(4.4, "failed", 3.5)}},
			want:    [4]vocab.Outcome{vocab.Pass, vocab.Inconclusive, vocab.Pass, vocab.Pass},
			wantMsg: `undecided: search "capacity" decided its capacity only to be at least 2.9 req/s and below 4.4 req/s (95% confidence; 1 of 4 probes undecided or unmeasurable), and the condition holds at a capacity in that range`},
		{name: "every probe decided, the floor within the last step: failed at the search's precision",
			search: &result.Search{Name: "capacity", Traffic: "chat", RateRange: [2]float64{0.5, 16}, Found: true, Monotone: true,
				Rate: 3.8, RateLower: 3.8, RateUpper: 4.2,
				Probes: []result.SearchProbe{probe(0.5, "met", 0.5), probe(16, "failed", 3), probe(3.8, "met", 3.7), probe(4.2, "failed", 3.5)}},
			want: [4]vocab.Outcome{vocab.Fail, vocab.Pass, vocab.Pass, vocab.Pass}, wantMsg: `search["capacity"].rate = 3.8, want >= 4`},
		{name: "every probe undecided: inconclusive, never failed",
			search: &result.Search{Name: "capacity", Traffic: "chat", RateRange: [2]float64{0.5, 16}, Found: true, Monotone: true, Confidence: 0.95,
				Rate: 2.83, Probes: []result.SearchProbe{probe(0.5, "undecided", 0.5), probe(16, "undecided", 3), probe(2.83, "undecided", 2.8), probe(6.73, "undecided", 3)}},
			want:    [4]vocab.Outcome{vocab.Inconclusive, vocab.Inconclusive, vocab.Inconclusive, vocab.Fail},
			wantMsg: `undecided: search "capacity" decided nothing of its capacity (no probe met or failed with confidence) (95% confidence; 4 of 4 probes undecided or unmeasurable)`},
		// specs/llamacpp/search.hcl in a CI rehearsal: both probes
		// undecided and taken as met, the answer the top of the range
		// from point estimates, rate_lower 0.
		{name: "every probe undecided, the answer the range's top: inconclusive, never failed",
			search: &result.Search{Name: "capacity", Traffic: "chat", RateRange: [2]float64{0.5, 16}, Found: true, Monotone: true, Confidence: 0.95,
				Rate: 16, Probes: []result.SearchProbe{probe(0.5, "undecided", 0.5), probe(16, "undecided", 15)}},
			want:    [4]vocab.Outcome{vocab.Pass, vocab.Inconclusive, vocab.Inconclusive, vocab.Pass},
			wantMsg: `(95% confidence; 2 of 2 probes undecided or unmeasurable)`},
		{name: "an undecided upper bound is not known, not absent",
			search: &result.Search{Name: "capacity", Traffic: "chat", RateRange: [2]float64{0.5, 16}, Found: true, Monotone: true,
				Rate: 16, RateLower: 4, Probes: []result.SearchProbe{probe(0.5, "met", 0.5), probe(16, "undecided", 15), probe(4, "met", 4)}},
			want:    [4]vocab.Outcome{vocab.Pass, vocab.Pass, vocab.Inconclusive, vocab.Pass},
			wantMsg: `search "capacity" decided no probe failed with confidence (1 of 3 probes undecided or unmeasurable), so its capacity has no upper bound it can tell`},
		{name: "lo undecided, taken as failed: not an answer of none",
			search: &result.Search{Name: "capacity", Traffic: "chat", RateRange: [2]float64{0.5, 16}, Monotone: true,
				Probes: []result.SearchProbe{probe(0.5, "undecided", 0.3)}},
			want:    [4]vocab.Outcome{vocab.Inconclusive, vocab.Inconclusive, vocab.Pass, vocab.Inconclusive},
			wantMsg: `search "capacity" has no cell at an answer: its probe at lo = 0.5 req/s was not decided with confidence (undecided)`},
		{name: "an upper bound below the floor decides the failure",
			search: &result.Search{Name: "capacity", Traffic: "chat", RateRange: [2]float64{0.5, 16}, Found: true, Monotone: true,
				Rate: 2.83, RateUpper: 3, Probes: []result.SearchProbe{probe(0.5, "undecided", 0.5), probe(16, "failed", 3), probe(2.83, "undecided", 2.8), probe(3, "failed", 2)}},
			want: [4]vocab.Outcome{vocab.Fail, vocab.Fail, vocab.Pass, vocab.Fail}, wantMsg: `search["capacity"].rate_lower = 0, want >= 3`},
		{name: "hi met: the upper bound is not bounded",
			search: &result.Search{Name: "capacity", Traffic: "chat", RateRange: [2]float64{0.5, 16}, Found: true, Monotone: true,
				Rate: 16, RateLower: 16, Probes: []result.SearchProbe{probe(0.5, "met", 0.5), probe(16, "met", 15.8)}},
			want: [4]vocab.Outcome{vocab.Pass, vocab.Pass, vocab.Fail, vocab.Pass}, wantMsg: "has no upper bound"},
		{name: "none meets it at lo",
			search: &result.Search{Name: "capacity", Traffic: "chat", RateRange: [2]float64{0.5, 16}, Monotone: true,
				RateUpper: 0.5, Probes: []result.SearchProbe{probe(0.5, "failed", 0.1)}},
			want: [4]vocab.Outcome{vocab.Fail, vocab.Fail, vocab.Pass, vocab.Fail}, wantMsg: `search "capacity" found no rate in [0.5, 16] that meets the objective`},
		{name: "stopped by an error: infrastructure error",
			search: &result.Search{Name: "capacity", Traffic: "chat", RateRange: [2]float64{0.5, 16}, Error: "the probe at 4 req/s could not be measured: boom"},
			want:   [4]vocab.Outcome{vocab.Error, vocab.Error, vocab.Error, vocab.Error}, wantInfra: true, wantMsg: "boom"},
	}
	sp, diags := spec.LoadSource("s.hcl", []byte(rateSearchSpec), spec.LoadOptions{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if d := Check(sp); d.HasErrors() {
		t.Fatalf("static checks: %v", d)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := &result.Results{Server: result.Server{Name: "qwen"}, Search: []result.Search{*tt.search}}
			vs := Evaluate(sp, sp.Servers[0], res, views.AssertWords{})
			if len(vs) != 4 {
				t.Fatalf("got %d verdicts, want 4", len(vs))
			}
			var all string
			for i, v := range vs {
				if v.Outcome != tt.want[i] || v.Infra != (tt.wantInfra && v.Outcome == vocab.Error) {
					t.Errorf("%s: outcome %v infra %v, want %v infra %v (%s; %q)", v.Test, v.Outcome, v.Infra, tt.want[i], tt.wantInfra, v.Message, v.Details)
				}
				all += v.Message + "\n" + strings.Join(v.Details, "\n") + "\n"
			}
			if !strings.Contains(all, tt.wantMsg) {
				t.Errorf("verdicts say %q, want them to contain %q", all, tt.wantMsg)
			}
		})
	}
}

// TestTrafficObjective: a rate probe's objective over a traffic cell,
// infinite values included (a quantile bound past the samples).
func TestTrafficObjective(t *testing.T) {
	sp, diags := spec.LoadSource("s.hcl", []byte(rateSearchSpec), spec.LoadOptions{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	s := sp.Search("capacity")
	cell := func(share, p99 float64) *result.TrafficCell {
		return &result.TrafficCell{Status: vocab.StatusValid, Launched: 10, Completed: 10, GoodputShare: share, TTFTMsP99: p99}
	}
	tests := []struct {
		name  string
		cell  *result.TrafficCell
		want  bool
		wantL string // a line of the explanation
	}{
		{name: "met", cell: cell(0.97, 420), want: true},
		{name: "share short", cell: cell(0.9, 420), want: false, wantL: "cell.goodput_share = 0.9, want >= 0.95"},
		{name: "p99 beyond the samples", cell: cell(0.97, math.Inf(1)), want: false},
		{name: "p99 at minus infinity", cell: cell(0.97, math.Inf(-1)), want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok, read, err := TrafficObjective(sp, s, tt.cell)
			lines := views.ReadingLines(read)
			if err != nil || ok != tt.want {
				t.Fatalf("TrafficObjective = %v, %v; want %v", ok, err, tt.want)
			}
			if tt.wantL != "" && !strings.Contains(strings.Join(lines, "\n"), tt.wantL) {
				t.Errorf("lines = %q, want one with %q", lines, tt.wantL)
			}
		})
	}
}
