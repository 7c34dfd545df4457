package assert

import (
	"strings"
	"testing"

	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/views"
	"github.com/slogate/slogate/internal/vocab"
)

const searchSpec = `
server "qwen" { model = "m" }
search "max_users" {
  context     = "8K"
  concurrency = [1, 64]
  objective   = cell.per_request_tps >= 50
}
assert "holds_48" {
  condition = search["max_users"].concurrency >= 48
}
assert "fast_at_answer" {
  condition = search["max_users"].cell.ttft_ms <= 500
}
`

// TestEvaluateSearch: assertions over search["NAME"] read the answer, the
// cell at the answer and found; a search without an answer fails them (not
// found) or errs (not run, stopped by an error: exit 3).
func TestEvaluateSearch(t *testing.T) {
	probe := func(c int, passed bool, ttft float64) result.SearchProbe {
		return result.SearchProbe{Concurrency: c, Passed: passed,
			Cell: result.DecodeCell{Search: "max_users", Context: 8192, Concurrency: c, Status: vocab.StatusValid, PerRequestTPS: 60, TTFTMs: ttft}}
	}
	tests := []struct {
		name      string
		search    *result.Search
		want      [2]vocab.Outcome
		wantInfra bool
		wantMsg   string
	}{
		{name: "answer above the floor passes",
			search: &result.Search{Name: "max_users", Range: [2]int{1, 64}, Concurrency: 50, Found: true, Monotone: true,
				Probes: []result.SearchProbe{probe(32, true, 100), probe(64, false, 900), probe(50, true, 400), probe(51, false, 600)}},
			want: [2]vocab.Outcome{vocab.Pass, vocab.Pass}},
		{name: "answer below the floor fails with the value",
			search: &result.Search{Name: "max_users", Range: [2]int{1, 64}, Concurrency: 40, Found: true, Monotone: true,
				Probes: []result.SearchProbe{probe(40, true, 700), probe(41, false, 900)}},
			want: [2]vocab.Outcome{vocab.Fail, vocab.Fail}, wantMsg: "search[\"max_users\"].concurrency = 40, want >= 48"},
		{name: "not found: concurrency 0 fails, the cell at the answer fails",
			search: &result.Search{Name: "max_users", Range: [2]int{1, 64}, Monotone: true,
				Probes: []result.SearchProbe{probe(1, false, 900), probe(2, false, 900)}},
			want: [2]vocab.Outcome{vocab.Fail, vocab.Fail}, wantMsg: "search \"max_users\" found no concurrency in [1, 64] that meets the objective"},
		{name: "stopped by an error: infrastructure error",
			search: &result.Search{Name: "max_users", Range: [2]int{1, 64}, Error: "the probe at concurrency 4 could not be measured: boom"},
			want:   [2]vocab.Outcome{vocab.Error, vocab.Error}, wantInfra: true, wantMsg: "boom"},
		// Under load the client read a probe at half the server's own
		// rate: the search has no answer, which the machine made.
		{name: "stopped at a probe the client could not measure: inconclusive",
			search: &result.Search{Name: "max_users", Range: [2]int{1, 64},
				Error: "the probe at concurrency 1 could not be measured: the client's per_request_tps 76.9 is 0.57× the server's own 135.1 tok/s",
				Probes: []result.SearchProbe{{Concurrency: 1, Reason: "the client's per_request_tps 76.9 …",
					Cell: result.DecodeCell{Search: "max_users", Context: 8192, Concurrency: 1, Status: vocab.StatusUnmeasurable}}}},
			want: [2]vocab.Outcome{vocab.Inconclusive, vocab.Inconclusive}, wantMsg: "could not be measured: the client's per_request_tps 76.9"},
		{name: "not run: infrastructure error",
			want: [2]vocab.Outcome{vocab.Error, vocab.Error}, wantInfra: true, wantMsg: "was not run"},
	}
	sp, diags := spec.LoadSource("s.hcl", []byte(searchSpec), spec.LoadOptions{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := &result.Results{Server: result.Server{Name: "qwen"}}
			if tt.search != nil {
				res.Search = []result.Search{*tt.search}
			}
			vs := Evaluate(sp, sp.Servers[0], res, views.AssertWords{})
			if len(vs) != 2 {
				t.Fatalf("got %d verdicts, want 2", len(vs))
			}
			for i, v := range vs {
				if v.Outcome != tt.want[i] || v.Infra != (tt.wantInfra && v.Outcome == vocab.Error) {
					t.Errorf("%s: outcome %v infra %v, want %v infra %v (%s; %q)", v.Test, v.Outcome, v.Infra, tt.want[i], tt.wantInfra, v.Message, v.Details)
				}
			}
			var all string
			for _, v := range vs {
				all += v.Message + "\n" + strings.Join(v.Details, "\n") + "\n"
			}
			if tt.wantMsg != "" && !strings.Contains(all, tt.wantMsg) {
				t.Errorf("verdict says %q, want it to contain %q", all, tt.wantMsg)
			}
		})
	}
}

// TestObjective: a probe's objective gives pass/fail and the comparison
// that failed, k6-style.
func TestObjective(t *testing.T) {
	sp, diags := spec.LoadSource("s.hcl", []byte(searchSpec), spec.LoadOptions{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	s := sp.Searches[0]
	ok, read, err := Objective(sp, s, &result.DecodeCell{Status: vocab.StatusValid, PerRequestTPS: 43.2})
	lines := views.ReadingLines(read)
	if err != nil || ok {
		t.Fatalf("Objective = %v, %v; want false", ok, err)
	}
	if want := "cell.per_request_tps = 43.2, want >= 50"; len(lines) == 0 || !strings.HasPrefix(lines[0], want) {
		t.Errorf("lines = %q, want one starting %q", lines, want)
	}
	if ok, _, err := Objective(sp, s, &result.DecodeCell{Status: vocab.StatusValid, PerRequestTPS: 50}); err != nil || !ok {
		t.Errorf("at the threshold: Objective = %v, %v; want true", ok, err)
	}
}
