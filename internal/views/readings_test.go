package views

import (
	"testing"

	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// TestReadingLine: a comparison's line, k6-style, with the other side as
// written when it is no literal, then ": ok" or the distance from the
// threshold; a value read outside a comparison as name = value.
func TestReadingLine(t *testing.T) {
	tests := []struct {
		name string
		r    result.Reading
		want string
	}{
		{"failed", result.Reading{Subject: `decode["8K"][64].total_tps`, Value: "5421.3", Op: ">=", Threshold: "6000", Gap: -0.09645, HasGap: true},
			`decode["8K"][64].total_tps = 5421.3, want >= 6000 (-9.6% from the threshold)`},
		{"held", result.Reading{Subject: "x", Value: "1", Op: "<=", Threshold: "2", Held: true}, "x = 1, want <= 2: ok"},
		{"against an expression", result.Reading{Subject: "a", Value: "5421.3", Op: ">=", Threshold: "5714.8", Against: `14 * decode["8K"][1].total_tps`, Gap: -0.0513, HasGap: true},
			`a = 5421.3, want >= 5714.8 (14 * decode["8K"][1].total_tps) (-5.1% from the threshold)`},
		{"failed without a gap", result.Reading{Subject: "server.kv_cache_dtype", Value: `"auto"`, Op: "==", Threshold: `"fp8"`}, `server.kv_cache_dtype = "auto", want == "fp8"`},
		{"expected", result.Reading{Subject: "ttft_ms", Value: "50", Op: "<=", Threshold: "44", Against: "40 + 10%", Gap: 0.25, HasGap: true, FromExpected: true},
			"ttft_ms = 50, want <= 44 (40 + 10%) (+25.0% from expected)"},
		{"expected and held", result.Reading{Subject: "tps", Value: "38000", Op: ">=", Threshold: "36575", Against: "38500 - 5%", Held: true, Gap: -0.013, HasGap: true, FromExpected: true},
			"tps = 38000, want >= 36575 (38500 - 5%) (-1.3% from expected)"},
		{"read", result.Reading{Subject: `decode["8K"][1].total_tps`, Value: "408.2"}, `decode["8K"][1].total_tps = 408.2`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ReadingLine(tt.r); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
	if ReadingLines(nil) != nil {
		t.Error("ReadingLines(nil) is not nil")
	}
}

// TestUnknownRead: each rule of a figure an assert read without a value,
// in words (assert decides what the test is; this view says why).
func TestUnknownRead(t *testing.T) {
	tests := []struct {
		name string
		u    result.UnknownRead
		want string
	}{
		{name: "search not run", u: result.UnknownRead{Rule: result.SearchNotRun, Name: "cap"}, want: `search "cap" was not run`},
		{name: "search stopped", u: result.UnknownRead{Rule: result.SearchNoAnswer, Name: "cap", Text: "server gone"}, want: `search "cap" has no answer: server gone`},
		{name: "no concurrency", u: result.UnknownRead{Rule: result.SearchNoConcurrency, Name: "c", Lo: 1, Hi: 64},
			want: `search "c" found no concurrency in [1, 64] that meets the objective, so it has no cell`},
		{name: "no rate", u: result.UnknownRead{Rule: result.SearchNoRate, Name: "cap", Lo: 0.5, Hi: 32},
			want: `search "cap" found no rate in [0.5, 32] that meets the objective, so it has no cell`},
		{name: "lo undecided", u: result.UnknownRead{Rule: result.SearchLoUndecided, Name: "cap", Lo: 2, Decision: "undecided_met"},
			want: `search "cap" has no cell at an answer: its probe at lo = 2 req/s was not decided with confidence (undecided_met), so whether any rate meets the objective is not known`},
		{name: "top met", u: result.UnknownRead{Rule: result.SearchTopMet, Name: "cap", Hi: 32},
			want: `search "cap" met the objective at the top of its range (32 req/s), so its capacity has no upper bound`},
		{name: "none failed", u: result.UnknownRead{Rule: result.SearchNoneFailed, Name: "cap", Undecided: 3, Probes: 5},
			want: `search "cap" decided no probe failed with confidence (3 of 5 probes undecided or unmeasurable), so its capacity has no upper bound it can tell`},
		{name: "undecided, holds: bounded", u: result.UnknownRead{Rule: result.SearchUndecidedHolds, Name: "cap", Lower: 4, Upper: 9, Confidence: 0.9, Undecided: 2, Probes: 6},
			want: `undecided: search "cap" decided its capacity only to be at least 4 req/s and below 9 req/s (90% confidence; 2 of 6 probes undecided or unmeasurable), and the condition holds at a capacity in that range: longer windows, or more of them a probe (max_windows), would decide it`},
		{name: "undecided, holds: nothing known", u: result.UnknownRead{Rule: result.SearchUndecidedHolds, Name: "cap", Undecided: 4, Probes: 4},
			want: `undecided: search "cap" decided nothing of its capacity (no probe met or failed with confidence) (95% confidence; 4 of 4 probes undecided or unmeasurable), and the condition holds at a capacity in that range: longer windows, or more of them a probe (max_windows), would decide it`},
		{name: "correctness not measured", u: result.UnknownRead{Rule: result.CorrectnessNotMeasured, Name: "greedy"}, want: `correctness "greedy" was not measured`},
		{name: "unscored", u: result.UnknownRead{Rule: result.CorrectnessUnscored, Name: "g", Field: "accuracy"},
			want: `correctness["g"].accuracy: the block scored no output (it has no scorer)`},
		{name: "baseline unscored", u: result.UnknownRead{Rule: result.CorrectnessBaselineUnscored, Name: "g", Field: "accuracy_change"},
			want: `correctness["g"].accuracy_change: the baseline's block scored no output (it has no scorer)`},
		{name: "no baseline", u: result.UnknownRead{Rule: result.CorrectnessNoBaseline, Name: "g", Field: "agreement_rate"},
			want: `correctness["g"].agreement_rate is measured against the baseline's block, and no baseline was given (-baseline): skipped`},
		{name: "baseline lacks the block", u: result.UnknownRead{Rule: result.CorrectnessBaselineMissing, Name: "g", Field: "agreement_rate"},
			want: `correctness["g"].agreement_rate is measured against the baseline's block, and the baseline has no correctness block "g": skipped`},
		{name: "not compared", u: result.UnknownRead{Rule: result.CorrectnessNotCompared, Name: "g", Field: "mismatches", Text: "max_output differs: 8 in the baseline, 16 here"},
			want: `correctness["g"].mismatches is measured against the baseline's block, and the blocks were not compared: max_output differs: 8 in the baseline, 16 here`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := (AssertWords{}).UnknownRead(tt.u); got != tt.want {
				t.Errorf("UnknownRead =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// TestExpectWhy: each rule of an expect test that is not a pass, in
// words.
func TestExpectWhy(t *testing.T) {
	cell := vocab.CellRef{Phase: vocab.PhaseDecode, Matrix: "decode", Context: 8192, Concurrency: 64}
	tests := []struct {
		name string
		e    result.ExpectWhy
		want string
	}{
		{name: "unknown metric", e: result.ExpectWhy{Rule: result.ExpectUnknownMetric, Block: "tps", Metric: "total_tsp", Phase: "decode"},
			want: `expect tps: "total_tsp" is not a decode metric`},
		{name: "no matrix", e: result.ExpectWhy{Rule: result.ExpectNoMatrix, Block: "tps", Matrix: "long"},
			want: `expect tps: the spec has no matrix "long" to line the values up with`},
		{name: "row too long", e: result.ExpectWhy{Rule: result.ExpectRowTooLong, Block: "tps", Matrix: "decode", Context: 8192, Values: 3, Levels: 2},
			want: `row 8K has 3 values but matrix "decode" has 2 concurrency levels`},
		{name: "not reported", e: result.ExpectWhy{Rule: result.ExpectNotReported, Metric: "server_itl_ms_mean", Cell: cell},
			want: `server_itl_ms_mean was not reported for this cell (the server exposes no such metric)`},
		{name: "throughput fell", e: result.ExpectWhy{Rule: result.ExpectMissed, Metric: "total_tps", Cell: cell, Expected: 6018.4, Tolerance: 0.05},
			want: `total_tps at decode/ctx=8K/conc=64 is below the expected 6018.4 by more than 5%`},
		{name: "latency rose", e: result.ExpectWhy{Rule: result.ExpectMissed, Metric: "ttft_ms", Cell: cell, Expected: 40, Tolerance: 0.1, Above: true},
			want: `ttft_ms at decode/ctx=8K/conc=64 is above the expected 40 by more than 10%`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := (AssertWords{}).ExpectWhy(tt.e); got != tt.want {
				t.Errorf("ExpectWhy =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}
