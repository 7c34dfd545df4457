package assert

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slogate/slogate/internal/requests"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/views"
	"github.com/slogate/slogate/internal/vocab"
)

const correctnessSpec = `
server "qwen" { model = "m" }
correctness "greedy" {
  dataset = "p.jsonl"
  scorer  = "exact"
}
assert "no_mismatch" {
  condition = correctness["greedy"].mismatch_rate <= 0
}
assert "accurate" {
  condition = correctness["greedy"].accuracy_lower >= 0.5
}
`

// TestEvaluateCorrectness: conditions read correctness["NAME"]'s figures:
// the run's (accuracy and its interval) always, the comparison's
// (mismatch_rate) against a baseline; without one, or without the block
// measured, a read is an infrastructure Error saying why; but a read of a
// comparison's figure with no baseline block to compare with (no
// -baseline, or a baseline without the block) is a Skip: the run on main
// that makes the first baseline passes.
func TestEvaluateCorrectness(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "p.jsonl"), []byte("{\"prompt\": \"a\", \"answer\": \"x\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sp, diags := spec.LoadSource(filepath.Join(dir, "s.hcl"), []byte(correctnessSpec), spec.LoadOptions{ReadItems: requests.ReadItems})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	block := result.Correctness{Name: "greedy", Prompts: 100, Scored: 100, Correct: 90}
	tests := []struct {
		name     string
		blocks   []result.Correctness
		compared *result.CorrectnessComparison
		want     [2]vocab.Outcome
		wantMsg  string
	}{
		{name: "against a baseline: no mismatch, accurate", blocks: []result.Correctness{block},
			compared: &result.CorrectnessComparison{Name: "greedy", Prompts: 100, Exact: 100, AgreementRate: 1},
			want:     [2]vocab.Outcome{vocab.Pass, vocab.Pass}},
		{name: "against a baseline: mismatches fail", blocks: []result.Correctness{block},
			compared: &result.CorrectnessComparison{Name: "greedy", Prompts: 100, Exact: 97, Mismatches: 3, MismatchRate: 0.03},
			want:     [2]vocab.Outcome{vocab.Fail, vocab.Pass}, wantMsg: `correctness["greedy"].mismatch_rate = 0.03, want <= 0`},
		{name: "no baseline: the comparison's figure skips", blocks: []result.Correctness{block},
			want: [2]vocab.Outcome{vocab.Skip, vocab.Pass}, wantMsg: `correctness["greedy"].mismatch_rate is measured against the baseline's block, and no baseline was given (-baseline): skipped`},
		{name: "a baseline without the block: skips", blocks: []result.Correctness{block}, compared: &result.CorrectnessComparison{Name: "greedy", Missing: true},
			want: [2]vocab.Outcome{vocab.Skip, vocab.Pass}, wantMsg: `correctness["greedy"].mismatch_rate is measured against the baseline's block, and the baseline has no correctness block "greedy": skipped`},
		{name: "blocks not compared: an error", blocks: []result.Correctness{block}, compared: &result.CorrectnessComparison{Name: "greedy",
			Refusal: &result.CorrectnessRefusal{Rule: result.RefusedMaxOutput, BaselineMaxOutput: 64, MaxOutput: 32}},
			want: [2]vocab.Outcome{vocab.Error, vocab.Pass}, wantMsg: `correctness["greedy"].mismatch_rate is measured against the baseline's block, and the blocks were not compared: max_output differs: 64 in the baseline, 32 here`},
		{name: "blocks not compared, recorded in words: an error", blocks: []result.Correctness{block}, compared: &result.CorrectnessComparison{Name: "greedy", Refused: "max_output 64 → 32"},
			want: [2]vocab.Outcome{vocab.Error, vocab.Pass}, wantMsg: `correctness["greedy"].mismatch_rate is measured against the baseline's block, and the blocks were not compared: max_output 64 → 32`},
		{name: "not measured", want: [2]vocab.Outcome{vocab.Error, vocab.Error}, wantMsg: `correctness "greedy" was not measured`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := &result.Results{Server: result.Server{Name: "qwen"}, Correctness: tt.blocks}
			if tt.compared != nil {
				res.Comparison = &result.Comparison{Correctness: []result.CorrectnessComparison{*tt.compared}}
			}
			vs := Evaluate(sp, sp.Servers[0], res, views.AssertWords{})
			if len(vs) != 2 {
				t.Fatalf("got %d verdicts, want 2", len(vs))
			}
			var all string
			for i, v := range vs {
				if v.Outcome != tt.want[i] || v.Infra != (v.Outcome == vocab.Error) {
					t.Errorf("%s: outcome %v infra %v, want %v (%s; %q)", v.Test, v.Outcome, v.Infra, tt.want[i], v.Message, v.Details)
				}
				all += v.Message + "\n" + strings.Join(v.Details, "\n") + "\n"
			}
			if tt.wantMsg != "" && !strings.Contains(all, tt.wantMsg) {
				t.Errorf("verdicts say %q, want %q", all, tt.wantMsg)
			}
		})
	}
}
