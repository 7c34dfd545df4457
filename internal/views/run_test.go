package views

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

func TestGitHubEscaping(t *testing.T) {
	if got, want := ghData("50% of\nrequests"), "50%25 of%0Arequests"; got != want {
		t.Errorf("ghData = %q, want %q", got, want)
	}
	if got, want := ghProperty("a:b,c"), "a%3Ab%2Cc"; got != want {
		t.Errorf("ghProperty = %q, want %q", got, want)
	}
}

// TestGateLines: the run's own lines from their figures.
func TestGateLines(t *testing.T) {
	tests := []struct {
		name, got, want string
	}{
		{"header", RunHeaderLine(RunHeader{Server: "qwen", Cells: 4, Estimated: 61400 * time.Millisecond, OutDir: "out"}),
			"qwen: 4 cells, estimated 1m1s (server start-up not included); results in out"},
		{"header simulated and resumed", RunHeaderLine(RunHeader{Server: "sim", Sim: true, Resumed: true, Cells: 0, Of: 6, Estimated: 0, OutDir: "o"}),
			"sim (simulated): 0 cells left of 6, estimated 0s (server start-up not included); results in o"},
		{"no match", NoMatchLine("qwen", "ctx=9K"), `qwen: no cell or assertion matches -run "ctx=9K"; the server is not started`},
		{"replacing with the error", ReplacingLine("sim", "o", "port busy"), "sim: o held a run that measured nothing (port busy): replacing it"},
		{"replacing without", ReplacingLine("sim", "o", ""), "sim: o held a run that measured nothing: replacing it"},
		{"step summary", StepSummaryWarning(errors.New("denied")), "slogate: warning: GITHUB_STEP_SUMMARY: denied"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got  %q\nwant %q", tt.got, tt.want)
			}
		})
	}
}

// TestWriteAnnotations: one ::error per failed verdict, with its file,
// line and test, the message added when the details lack it.
func TestWriteAnnotations(t *testing.T) {
	var b strings.Builder
	WriteAnnotations(&b, []result.Verdict{
		{Test: "assert/a", Outcome: vocab.Pass, File: "s.hcl", Line: 3},
		{Test: "assert/b", Outcome: vocab.Fail, File: "s.hcl", Line: 9, Details: []string{"x = 1, want >= 2"}, Message: "too slow"},
		{Test: "assert/c", Outcome: vocab.Error},
	})
	want := "::error file=s.hcl,line=9,title=assert/b::x = 1, want >= 2%0Atoo slow\n::error title=assert/c::" + vocab.Error.String() + "\n"
	if b.String() != want {
		t.Errorf("annotations:\n%q\nwant\n%q", b.String(), want)
	}
}

// TestSearchCostLines: with a price, a line per search with its cost at
// the answer: 1 GPU × $3.50 an hour ÷ 1,750 output tok/s = $0.556 per
// million output tokens; none without a price.
func TestSearchCostLines(t *testing.T) {
	price := 3.5
	probe := result.SearchProbe{Rate: 16.5, Passed: true, Decision: result.DecisionMet,
		Traffic: &result.TrafficCell{Traffic: "steady", Rate: 16.5, Status: vocab.StatusValid, Completed: 50, Stats: map[string]float64{"output_tps": 1750}}}
	res := &result.Results{Server: result.Server{Name: "qwen", PricePerGPUHour: &price}, GPUTime: &result.GPUTime{GPUs: 1},
		Search: []result.Search{{Name: "capacity", Traffic: "steady", Rate: 16.5, Found: true, Probes: []result.SearchProbe{probe}}}}
	tests := []struct {
		name  string
		price *float64
		want  []string
	}{
		{name: "priced", price: &price, want: []string{"qwen: search capacity: $0.556 per million output tokens at 16.5 req/s (1 GPU × $3.50 an hour ÷ 1,750.0 output tok/s)"}},
		{name: "no price"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res.Server.PricePerGPUHour = tc.price
			got := SearchCostLines("qwen", res)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("lines = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestStreamVerdict: a verdict is a test; a failed one's first detail
// line carries the rule's file:line (or the rule itself when it has no
// detail), and the author's message follows indented unless a detail
// already says it.
func TestStreamVerdict(t *testing.T) {
	tests := []struct {
		name string
		v    result.Verdict
		want []string
	}{
		{"passed", result.Verdict{Test: "q/assert/a", Outcome: vocab.Pass, File: "s.hcl", Line: 3, Details: []string{"x = 2, want >= 1: ok"}, Message: "slow"},
			[]string{"RUN q/assert/a", "  x = 2, want >= 1: ok", "END " + vocab.Pass.String() + " q/assert/a"}},
		{"failed", result.Verdict{Test: "q/assert/b", Outcome: vocab.Fail, File: "s.hcl", Line: 9, Details: []string{"x = 1, want >= 2", "y = 3"}, Message: "too slow"},
			[]string{"RUN q/assert/b", "  s.hcl:9: x = 1, want >= 2", "  y = 3", "      too slow", "END " + vocab.Fail.String() + " q/assert/b"}},
		{"failed without details", result.Verdict{Test: "q/assert/c", Outcome: vocab.Fail, File: "s.hcl", Line: 4, Rule: "x >= 2"},
			[]string{"RUN q/assert/c", "  s.hcl:4: x >= 2", "END " + vocab.Fail.String() + " q/assert/c"}},
		{"message already said", result.Verdict{Test: "q/assert/d", Outcome: vocab.Error, Details: []string{"condition is null"}, Message: "condition is null"},
			[]string{"RUN q/assert/d", "  condition is null", "END " + vocab.Error.String() + " q/assert/d"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs := &recordStream{}
			StreamVerdict(rs, tt.v)
			if d := cmp.Diff(tt.want, rs.lines); d != "" {
				t.Errorf("stream (-want +got):\n%s", d)
			}
		})
	}
}

// TestWriteMergedWords: merge's table says ok for a run that passed or
// whose worst test was skipped (an informational correctness block, a
// probe that missed), FAIL for one that failed the gate.
func TestWriteMergedWords(t *testing.T) {
	run := func(dir string, o vocab.Outcome, code int) result.MergedRun {
		return result.MergedRun{Dir: dir, Outcome: o, ExitCode: code, Results: &result.Results{Spec: "s.hcl"}, Source: "src"}
	}
	tests := []struct {
		name string
		m    result.Merged
		want string
	}{
		{name: "a skipped test passes", m: result.Merged{Outcome: vocab.Skip, Runs: []result.MergedRun{run("a", vocab.Pass, 0), run("b", vocab.Skip, 0)}},
			want: "ok    a\ts.hcl\texit 0\tsrc\nok    b\ts.hcl\texit 0\tsrc\nok    merged 2 runs into out (exit 0)\n"},
		{name: "inconclusive fails", m: result.Merged{Outcome: vocab.Inconclusive, ExitCode: 4, Runs: []result.MergedRun{run("a", vocab.Inconclusive, 4)}},
			want: "FAIL  a\ts.hcl\texit 4\tsrc\nFAIL  merged 1 runs into out (exit 4)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			WriteMerged(&b, &tt.m, "out")
			if d := cmp.Diff(tt.want, b.String()); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}
