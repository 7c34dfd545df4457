package report

import (
	"math"
	"testing"

	"github.com/slogate/slogate/internal/result"
)

// TestProbeReason: how a rate probe was judged, worded from the rule and
// figures it records (the runner decides; this words it for the console,
// the reports and JUnit): every rule, a metric known exactly, bounds that
// are infinite, a spread that cannot be told, and a probe recorded before
// its judgement was.
func TestProbeReason(t *testing.T) {
	share := result.ProbeInterval{Metric: "goodput_share", Point: 0.9, Lower: 0.5, Upper: 1, DesignEffect: 12.5}
	const head = "undecided after 4 windows, taken as met by the point estimates: goodput_share 0.9 (0.5 to 1, design effect 12.5)"
	judged := func(rule result.ProbeRule, windows int, ivs ...result.ProbeInterval) *result.SearchProbe {
		return &result.SearchProbe{Windows: windows, Judgement: &result.ProbeJudgement{Rule: rule, Intervals: ivs}}
	}
	undecided := func(rule result.ProbeRule, toDecide int) *result.SearchProbe {
		p := judged(rule, 4, share)
		p.Judgement.Point, p.Judgement.ToDecide = result.DecisionMet, toDecide
		return p
	}
	beyond := undecided(result.ProbeUndecidedBeyond, 3400)
	beyond.Judgement.MaxWindowsAllowed = 1000
	failedOne := judged(result.ProbeUndecided, 1, result.ProbeInterval{Metric: "ttft_ms_p99", Point: result.Figure(math.Inf(1)), Lower: 310,
		Upper: result.Figure(math.Inf(1)), DesignEffect: result.Figure(math.Inf(1))})
	failedOne.Judgement.Point = result.DecisionFailed
	tests := []struct {
		name string
		p    *result.SearchProbe
		want string
	}{
		{name: "met", p: judged(result.ProbeMet, 2, share, result.ProbeInterval{Metric: "output_tps", Point: 812.25, Lower: 812.25, Upper: 812.25}),
			want: "met even at the pessimistic bounds: goodput_share 0.9 (0.5 to 1, design effect 12.5), output_tps 812.2"},
		{name: "independent requests", p: judged(result.ProbeFailed, 3, result.ProbeInterval{Metric: "goodput_share", Point: 0.42, Lower: 0.4, Upper: 0.44, DesignEffect: 1}),
			want: "failed even at the optimistic bounds: goodput_share 0.42 (0.4 to 0.44)"},
		{name: "undecided, before its last window", p: undecided(result.ProbeUndecided, 0), want: head},
		{name: "undecided at its last window", p: undecided(result.ProbeUndecidedWindows, 234),
			want: head + "; at the spread seen, about 234 windows would decide it (max_windows)"},
		{name: "undecided beyond max_windows", p: beyond,
			want: head + "; at the spread seen, about 3,400 windows would decide it, more than max_windows allows (1,000): longer windows would"},
		{name: "undecided on the edge", p: undecided(result.ProbeUndecidedEdge, 10000),
			want: head + "; at the spread seen, 10,000 windows or more would decide it (its values sit at or near the objective's edge)"},
		{name: "one window, unbounded", p: failedOne,
			want: "undecided after 1 window, taken as failed by the point estimates: ttft_ms_p99 +Inf (310 to +Inf, windows alike or too few to tell their spread)"},
		{name: "saturated", p: &result.SearchProbe{Decision: result.DecisionFailed, Windows: 1, Reason: "past the server's capacity at 8 req/s",
			Judgement: &result.ProbeJudgement{Rule: result.ProbeSaturated, Intervals: []result.ProbeInterval{}}},
			want: "saturated: past the server's capacity at 8 req/s"},
		{name: "not judged", p: &result.SearchProbe{Decision: result.DecisionUnmeasurable, Reason: "the client fell behind"}, want: "the client fell behind"},
		{name: "written before the judgement", p: &result.SearchProbe{Decision: result.DecisionMet, Reason: "met even at the pessimistic bounds: goodput_share 1"},
			want: "met even at the pessimistic bounds: goodput_share 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ProbeReason(tt.p); got != tt.want {
				t.Errorf("ProbeReason =\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

// TestCheckStopped: why a paired check stopped, worded from the window
// that stopped it, or the error a check recorded before (or when the run
// ended during it).
func TestCheckStopped(t *testing.T) {
	tests := []struct {
		name string
		c    *result.SearchCheck
		want string
	}{
		{name: "a window not measured", c: &result.SearchCheck{Stop: &result.CheckStop{Rule: result.CheckWindowUnmeasured, Seed: 2, CellReason: "server down"}},
			want: "the window of seed 2 could not be measured: server down"},
		{name: "written before the stop", c: &result.SearchCheck{Error: "the window of seed 1 could not be measured: HTTP 500"},
			want: "the window of seed 1 could not be measured: HTTP 500"},
		{name: "not stopped", c: &result.SearchCheck{}, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := checkStopped(tt.c); got != tt.want {
				t.Errorf("checkStopped = %q, want %q", got, tt.want)
			}
		})
	}
}
