package views

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/judge"
	"github.com/slogate/slogate/internal/ratesearch"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// capacityRuns are two runs with five rate searches: one that lost a
// third of its capacity, one unchanged, one too close to call, one
// whose candidate met its objective at no rate, and one decided by its
// paired check.
func capacityRuns() (a, b *result.Results) {
	s := func(name string, rate, lower, upper float64) result.Search {
		return result.Search{Name: name, Traffic: "chat", RateRange: [2]float64{1, 32}, Objective: "cell.goodput_share >= 0.95",
			Found: rate > 0, Rate: rate, RateLower: lower, RateUpper: upper, Precision: 0.025, Confidence: 0.95}
	}
	a = &result.Results{Server: result.Server{Name: "srv"}, Search: []result.Search{s("lost", 10, 9.6, 10.4), s("same", 10, 9.6, 10.4), s("close", 10, 9.6, 10.4), s("none", 10, 9.6, 10.4)}}
	none := s("none", 0, 0, 1)
	b = &result.Results{Server: result.Server{Name: "srv"}, Search: []result.Search{s("lost", 6.6, 6.3, 6.9), s("same", 10, 9.6, 0), s("close", 9.3, 8.9, 9.7), none}}
	b.Search[1].ClientLimit = 12
	// "paired": the bounds say within, the paired check (the baseline's
	// check windows replayed at 9.5 req/s) says regressed, and decides.
	pa, pb := s("paired", 10, 9.6, 10.4), s("paired", 10, 9.6, 10.4)
	pa.Check = &result.SearchCheck{Rate: 10}
	pb.Replay = &result.SearchCheck{Rate: 9.5, BaselineRate: 10, Tolerance: 0.05}
	for i, v := range []float64{0.96, 0.95, 0.97} {
		pa.Check.Windows = append(pa.Check.Windows, result.CheckWindow{Seed: int64(i), Values: map[string]float64{"goodput_share": v}, Launched: 300})
		pb.Replay.Windows = append(pb.Replay.Windows, result.CheckWindow{Seed: int64(i), Values: map[string]float64{"goodput_share": v - 0.05 - 0.01*float64(i)}, Launched: 300})
	}
	a.Search, b.Search = append(a.Search, pa), append(b.Search, pb)
	return a, b
}

// TestCapacityGolden renders the rate searches compared as diff's text,
// Markdown and JSON (the JSON validated against docs/diff.schema.json)
// and as -baseline's verdicts, against testdata/capacity.golden.
// Regenerate with: go test ./internal/views -run TestCapacityGolden -update
func TestCapacityGolden(t *testing.T) {
	a, b := capacityRuns()
	d := Diff{PathA: "a.json", PathB: "b.json", C: compare.Build(a, b, compare.Policy{Tolerance: 0.05})}
	if d.C.Outcome != vocab.Fail || d.C.ExitCode() != 1 {
		t.Errorf("outcome %s exit %d, want fail, exit 1 (a search lost capacity)", d.C.Outcome, d.C.ExitCode())
	}
	var buf bytes.Buffer
	buf.WriteString("== text\n")
	if err := d.Text(&buf); err != nil {
		t.Fatal(err)
	}
	buf.WriteString("== markdown\n")
	if err := d.Markdown(&buf); err != nil {
		t.Fatal(err)
	}
	var js bytes.Buffer
	if err := d.JSON(&js); err != nil {
		t.Fatal(err)
	}
	schema, err := jsonschema.NewCompiler().Compile(filepath.Join("..", "..", "docs", "diff.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(js.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if err := schema.Validate(doc); err != nil {
		t.Fatalf("the document does not fit docs/diff.schema.json: %v\n%s", err, js.String())
	}
	buf.WriteString("== json\n")
	buf.Write(js.Bytes())
	buf.WriteString("== -baseline verdicts\n")
	for _, v := range judge.Baseline(d.C, JudgeWords{}) {
		buf.WriteString(v.Test + ": " + v.Outcome.String() + ": " + v.Message + "\n")
		for _, l := range v.Details {
			buf.WriteString("  " + l + "\n")
		}
	}
	golden := filepath.Join("testdata", "capacity.golden")
	if *update {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/views -run TestCapacityGolden -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), buf.String()); diff != "" {
		t.Errorf("differs from %s (-want +got); if intended, run go test ./internal/views -run TestCapacityGolden -update:\n%s", golden, diff)
	}
	// Whatever the golden file is regenerated to, each search's decision.
	var got []string
	for _, v := range judge.Baseline(d.C, JudgeWords{}) {
		got = append(got, v.Test+" "+v.Outcome.String())
	}
	wantV := []string{"srv/baseline/search/lost fail", "srv/baseline/search/same pass", "srv/baseline/search/close inconclusive", "srv/baseline/search/none fail", "srv/baseline/search/paired fail"}
	if diff := cmp.Diff(wantV, got); diff != "" {
		t.Errorf("-baseline verdicts (-want +got):\n%s", diff)
	}
	if !strings.Contains(buf.String(), "client limit 12 req/s") {
		t.Errorf("the client limit is not shown")
	}
}

// TestCapacityCost: when both runs are priced, the capacity lines add the
// cost at both answers: 2 GPUs × $3.50 an hour ÷ 1,200 output tok/s =
// $1.62 per million now, ÷ 1,800 = $1.08 in the baseline (+50.0%); an
// unpriced pair adds nothing.
func TestCapacityCost(t *testing.T) {
	price := 3.5
	withProbe := func(r *result.Results, tps float64) {
		s := &r.Search[0]
		s.Probes = []result.SearchProbe{{Rate: s.Rate, Passed: true, Decision: result.DecisionMet,
			Traffic: &result.TrafficCell{Traffic: "chat", Rate: s.Rate, Status: vocab.StatusValid, Completed: 10, Stats: map[string]float64{"output_tps": tps}}}}
		r.GPUTime = &result.GPUTime{GPUs: 2}
	}
	tests := []struct {
		name  string
		price *float64
		want  []string
	}{
		{name: "priced", price: &price, want: []string{`search "lost" cost: $1.62 per million output tokens at the answer, $1.08 in the baseline (+50.0%)`}},
		{name: "unpriced"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, b := capacityRuns()
			a.Search, b.Search = a.Search[:1], b.Search[:1]
			withProbe(a, 1800)
			withProbe(b, 1200)
			a.Server.PricePerGPUHour, b.Server.PricePerGPUHour = tc.price, tc.price
			lines := CapacityLines(compare.Build(a, b, compare.Policy{Tolerance: 0.05}))
			var got []string
			for _, l := range lines {
				if strings.Contains(l, " cost: ") {
					got = append(got, l)
				}
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") || len(lines) != 1+len(tc.want) {
				t.Errorf("lines %q, want the capacity line and %q", lines, tc.want)
			}
		})
	}
}

// TestCapacityReason: each rule of a capacity comparison in words, from
// its figures and the two searches (compare and ratesearch decide; this
// view words it, as the console, the verdicts and diff's JSON show it).
func TestCapacityReason(t *testing.T) {
	search := func(found bool, rate, lower, upper float64) *result.Search {
		return &result.Search{Found: found, Rate: rate, RateLower: lower, RateUpper: upper, Precision: 0.025}
	}
	base := search(true, 10, 9.6, 10.4)
	iv := func(m string, mean, lo, hi float64, windows int) ratesearch.PairedInterval {
		return ratesearch.PairedInterval{Metric: m, Mean: mean, Lower: lo, Upper: hi, Windows: windows, Alpha: 0.05}
	}
	paired := func(rule ratesearch.CapacityRule, worse, need int, ivs ...ratesearch.PairedInterval) compare.CapacityResult {
		return compare.CapacityResult{A: base, B: base, Paired: ivs,
			Reason: ratesearch.CapacityDecision{Rule: rule, Rate: 9.5, BaselineRate: 10, Worse: worse, NeedWindows: need}}
	}
	bounds := func(b *result.Search, d ratesearch.CapacityDecision, no compare.NoPairedCheck) compare.CapacityResult {
		return compare.CapacityResult{A: base, B: b, Reason: d, NoPaired: no}
	}
	replay := &result.SearchCheck{Rate: 9.5, BaselineRate: 12, Tolerance: 0.1}
	replayed := search(true, 10, 9.6, 10.4)
	replayed.Replay = replay
	checkedBase := search(true, 10, 9.6, 10.4)
	checkedBase.Check = &result.SearchCheck{Rate: 10}
	stopped := search(false, 0, 0, 0)
	stopped.Error = "server gone"
	tests := []struct {
		name string
		r    compare.CapacityResult
		want string
	}{
		{name: "bounds below", r: bounds(search(true, 6.6, 6.3, 6.9), ratesearch.CapacityDecision{Rule: ratesearch.BoundsBelow, Line: 9.5}, ""),
			want: "capacity lost: the candidate's upper bound 6.9 req/s is below the baseline's lower bound 9.6 req/s by more than the tolerance 5%"},
		{name: "bounds within", r: bounds(base, ratesearch.CapacityDecision{Rule: ratesearch.BoundsWithin, Line: 9.5}, ""),
			want: "within tolerance: the candidate's lower bound 9.6 req/s is within 5% of the baseline's 10 req/s"},
		{name: "straddles: a finer search decides", r: bounds(search(true, 9.3, 8.9, 9.7), ratesearch.CapacityDecision{Rule: ratesearch.BoundsStraddle, Line: 9.5, DecidingPrecision: 0.01, SearchPrecision: 0.025}, ""),
			want: "the candidate's bounds [8.9, 9.7] req/s reach both sides of the tolerance line 9.5 req/s (the baseline's 10 less 5%): a precision of 1% (the searches' is 2.5%) or longer windows would decide it"},
		{name: "straddles unbounded: longer windows decide", r: bounds(search(true, 12, 9, 0), ratesearch.CapacityDecision{Rule: ratesearch.BoundsStraddle, Line: 9.5}, ""),
			want: "the candidate's bounds [9, unbounded] req/s reach both sides of the tolerance line 9.5 req/s (the baseline's 10 less 5%): longer windows (narrower bounds at each probe) would decide it"},
		{name: "no rate met", r: bounds(search(false, 0, 0, 0), ratesearch.CapacityDecision{Rule: ratesearch.NoRateMet, Line: 9.5}, ""),
			want: "the candidate met its objective at no rate, but not with confidence below the baseline's lower bound 9.6 req/s less 5%: longer windows (narrower bounds at each probe) would decide it"},
		{name: "no baseline answer", r: bounds(base, ratesearch.CapacityDecision{Rule: ratesearch.NoBaselineAnswer}, ""),
			want: "the baseline's search met its objective at no rate: no capacity to lose"},
		{name: "not replayed", r: bounds(base, ratesearch.CapacityDecision{Rule: ratesearch.BoundsWithin, Line: 9.5}, compare.NotReplayed),
			want: "within tolerance: the candidate's lower bound 9.6 req/s is within 5% of the baseline's 10 req/s (no paired check: the baseline's search has check windows, but this run replayed none (was it run with -baseline?))"},
		{name: "no baseline check", r: bounds(replayed, ratesearch.CapacityDecision{Rule: ratesearch.BoundsWithin, Line: 9.5}, compare.NoBaselineCheck),
			want: "within tolerance: the candidate's lower bound 9.6 req/s is within 5% of the baseline's 10 req/s (no paired check: the baseline's search has no check windows)"},
		{name: "replayed another answer", r: compare.CapacityResult{A: checkedBase, B: replayed, Reason: ratesearch.CapacityDecision{Rule: ratesearch.BoundsWithin, Line: 9.5}, NoPaired: compare.ReplayedOtherAnswer},
			want: "within tolerance: the candidate's lower bound 9.6 req/s is within 5% of the baseline's 10 req/s (no paired check: this run replayed a baseline answer of 12 req/s, not this baseline's 10 req/s)"},
		{name: "replayed at another tolerance", r: compare.CapacityResult{A: checkedBase, B: replayed, Reason: ratesearch.CapacityDecision{Rule: ratesearch.BoundsWithin, Line: 9.5}, NoPaired: compare.ReplayedOtherTolerance},
			want: "within tolerance: the candidate's lower bound 9.6 req/s is within 5% of the baseline's 10 req/s (no paired check: this run replayed the check at a tolerance of 0.1, not the 0.05 asked now)"},
		{name: "no objective metric", r: bounds(base, ratesearch.CapacityDecision{Rule: ratesearch.BoundsWithin, Line: 9.5}, compare.NoObjectiveMetric),
			want: "within tolerance: the candidate's lower bound 9.6 req/s is within 5% of the baseline's 10 req/s (no paired check: the check windows hold no metric of the objective)"},
		{name: "paired worse", r: paired(ratesearch.PairedWorse, 1, 0, iv("goodput_share", 0.02, 0.003141, 0.03686, 3), iv("ttft_ms_p99", -20, -36.9, -3.1, 3)),
			want: "capacity lost: at 9.5 req/s (the baseline's 10 req/s less 5%), on the baseline's 3 windows, the candidate's ttft_ms_p99 is worse than the baseline's at its answer: ttft_ms_p99 worse by 20 (−36.9 to −3.1 at one-sided 5%)"},
		{name: "paired as good", r: paired(ratesearch.PairedAsGood, -1, 0, iv("goodput_share", 0.02, 0.003141, 0.03686, 3)),
			want: "within tolerance: at 9.5 req/s (the baseline's 10 req/s less 5%), on the baseline's 3 windows, the candidate does at least as well as the baseline at its answer: goodput_share better by 0.02 (+0.003141 to +0.03686 at one-sided 5%)"},
		{name: "paired undecided: windows to decide", r: paired(ratesearch.PairedUndecided, -1, 232, iv("goodput_share", -0.01, -0.1, 0.08, 5)),
			want: "at 9.5 req/s (the baseline's 10 req/s less 5%), on the baseline's 5 windows, neither worse nor at least as good with confidence: goodput_share worse by 0.01 (−0.1 to +0.08 at one-sided 5%): about 232 windows a side (check_windows) would decide it at this spread"},
		{name: "paired undecided: one window", r: paired(ratesearch.PairedUndecided, -1, 0, iv("goodput_share", -0.2, math.Inf(-1), math.Inf(1), 1)),
			want: "at 9.5 req/s (the baseline's 10 req/s less 5%), on the baseline's 1 window, neither worse nor at least as good with confidence: goodput_share worse by 0.2 (unbounded to unbounded at one-sided 5%): two windows a side at least would bound it (check_windows)"},
		{name: "paired undecided: mean 0", r: paired(ratesearch.PairedUndecided, -1, 0, iv("goodput_share", 0, -0.01, 0.01, 4)),
			want: "at 9.5 req/s (the baseline's 10 req/s less 5%), on the baseline's 4 windows, neither worse nor at least as good with confidence: goodput_share better by 0 (−0.01 to +0.01 at one-sided 5%): more windows a side (check_windows) would decide it"},
		{name: "paired read no metric", r: paired(ratesearch.PairedNoMetric, -1, 0), want: "the paired check read no metric"},
		{name: "candidate stopped", r: compare.CapacityResult{A: base, B: stopped, Reason: ratesearch.CapacityDecision{Rule: compare.SearchStopped}},
			want: "the candidate's search stopped: server gone"},
		{name: "baseline stopped", r: compare.CapacityResult{A: stopped, B: base, Reason: ratesearch.CapacityDecision{Rule: compare.BaselineStopped}},
			want: "the baseline's search stopped: server gone"},
		{name: "searches differ", r: compare.CapacityResult{A: base, B: base, Reason: ratesearch.CapacityDecision{Rule: compare.SearchesDiffer}},
			want: "the searches differ (traffic block or objective): their answers are not comparable"},
		{name: "a rule of a later build", r: compare.CapacityResult{A: base, B: base, Reason: ratesearch.CapacityDecision{Rule: "bounds_tighter"}},
			want: "bounds_tighter"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CapacityReason(&tt.r, 0.05); got != tt.want {
				t.Errorf("CapacityReason =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}
