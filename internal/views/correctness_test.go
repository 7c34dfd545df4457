package views

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/judge"
	"github.com/slogate/slogate/internal/report"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// block is a run of one correctness block "greedy" over n prompts whose
// outputs are " a" except the lines in other (" z", outside the top-k);
// right answers except the lines in wrong.
func block(n int, other, wrong map[int]bool, errors int) *result.Results {
	c := result.Correctness{Name: "greedy", Endpoint: "completions", MaxOutput: 4, Logprobs: 2, Concurrency: 1, Scorer: "exact",
		Margin: 0.01, NearTieGap: 0.1, Prompts: n, Errors: errors, ElapsedS: 1, GPUSeconds: 2}
	for line := 1; line <= n; line++ {
		t := result.Token{ID: 1, Text: " a", Logprob: -0.1, Top: []result.TopToken{{ID: 1, Text: " a", Logprob: -0.1}, {ID: 2, Text: " b", Logprob: -2}}}
		if other[line] {
			t = result.Token{ID: 9, Text: " z", Logprob: -0.1, Top: []result.TopToken{{ID: 9, Text: " z", Logprob: -0.1}}}
		}
		right := !wrong[line]
		c.Outputs = append(c.Outputs, result.CorrectnessOutput{Block: "greedy", Line: line, Prompt: "p", Tokens: []result.Token{t}, Text: t.Text, Correct: &right})
		c.Scored++
		if right {
			c.Correct++
		}
	}
	return &result.Results{Schema: result.Schema, Server: result.Server{Name: "qwen"}, Correctness: []result.Correctness{c}}
}

// TestCorrectnessVerdicts: without a baseline one verdict per block, the
// block as measured, informational (a Skip, whatever its accuracy); against one, one verdict per check (agreement,
// accuracy with a scorer, lossless for a speculative run against a
// baseline without), each with its own outcome.
func TestCorrectnessVerdicts(t *testing.T) {
	many := map[int]bool{}
	for i := 1; i <= 40; i++ {
		many[2*i] = true
	}
	type want struct {
		test    string // after "qwen/correctness/greedy"
		outcome vocab.Outcome
		infra   bool
		message string
	}
	agreeAll := "10 of 10 prompts agree exactly, 0 near ties, 0 mismatches (0%)"
	tests := []struct {
		name         string
		base, b      *result.Results
		inconclusive compare.InconclusivePolicy
		verdicts     []want
		details      []string
		diffText     []string
	}{
		{name: "no baseline", b: block(10, nil, map[int]bool{3: true}, 0),
			verdicts: []want{{"", vocab.Skip, false, "informational, nothing compared: no -baseline to compare with; outputs recorded, 10 of 10 prompts answered"}},
			details: []string{"10 prompts, greedy, max_output 4, top-2 logprobs, 1 at a time; 1.0s wall, 2.0 GPU-s (apart from the speed cells)",
				"accuracy 0.900 (9 of 10; 95% interval 0.596–0.982)"}},
		{name: "no baseline, every answer wrong: still no pass", b: block(4, nil, map[int]bool{1: true, 2: true, 3: true, 4: true}, 0),
			verdicts: []want{{"", vocab.Skip, false, "informational, nothing compared: no -baseline to compare with; outputs recorded, 4 of 4 prompts answered"}},
			details:  []string{"accuracy 0.000 (0 of 4; 95% interval 0.000–0.490)"}},
		{name: "no baseline, failed requests", b: block(10, nil, nil, 2), verdicts: []want{{"", vocab.Error, true, "2 of 10 requests failed"}}},
		{name: "identical", base: block(10, nil, nil, 0), b: block(10, nil, nil, 0),
			verdicts: []want{{"/agreement", vocab.Pass, false, agreeAll},
				{"/accuracy", vocab.Pass, false, "accuracy 1.000 (10 of 10; 95% interval 0.722–1.000) now, 1.000 (10 of 10; 95% interval 0.722–1.000) in the baseline, over 10 paired items: 0 right only in the baseline, 0 only now; change +0.0 points [+0.0, +0.0], McNemar p = 1.0000"}},
			diffText: []string{`correctness "greedy": pass: 10 of 10 prompts agree exactly`}},
		{name: "a mismatch", base: block(10, nil, nil, 0), b: block(10, map[int]bool{4: true}, nil, 0),
			verdicts: []want{{"/agreement", vocab.Fail, false, "1 of 10 prompts mismatch the baseline (10% > max_mismatch 0%)"}, {"/accuracy", vocab.Pass, false, ""}},
			details:  []string{`line 4: mismatch at token 0: …"" + baseline " a" | now " z" (the candidate's token " z" is not in the baseline's top 2)`},
			diffText: []string{`correctness "greedy": fail: 9 of 10 prompts agree exactly, 0 near ties, 1 mismatches (10%; max_mismatch 0%)`, "line 4: mismatch at token 0"}},
		{name: "two mismatches: a line each", base: block(10, nil, nil, 0), b: block(10, map[int]bool{4: true, 7: true}, nil, 0),
			verdicts: []want{{"/agreement", vocab.Fail, false, "2 of 10 prompts mismatch the baseline (20% > max_mismatch 0%)"}, {"/accuracy", vocab.Pass, false, ""}},
			details: []string{`line 4: mismatch at token 0: …"" + baseline " a" | now " z" (the candidate's token " z" is not in the baseline's top 2)`,
				`line 7: mismatch at token 0: …"" + baseline " a" | now " z" (the candidate's token " z" is not in the baseline's top 2)`},
			diffText: []string{"line 4: mismatch at token 0", "line 7: mismatch at token 0"}},
		{name: "max_output differs: not compared", base: block(10, nil, nil, 0), b: maxOutput(block(10, nil, nil, 0), 8),
			verdicts: []want{{"", vocab.Error, true, "not compared: max_output differs: 4 in the baseline, 8 here"}},
			diffText: []string{`correctness "greedy": error: not compared: max_output differs: 4 in the baseline, 8 here`}},
		{name: "a failed request", base: block(10, nil, nil, 0), b: block(10, nil, nil, 1),
			verdicts: []want{{"/agreement", vocab.Error, true, "1 of 10 requests failed"}, {"/accuracy", vocab.Error, true, ""}}},
		{name: "speculative against a baseline without: lossless", base: block(10, nil, nil, 0), b: speculative(block(10, nil, nil, 0)),
			verdicts: []want{{"/agreement", vocab.Pass, false, agreeAll},
				{"/lossless", vocab.Pass, false, "speculative decoding is lossless under greedy: against the baseline without speculation, " + agreeAll},
				{"/accuracy", vocab.Pass, false, ""}},
			diffText: []string{"B decodes speculatively and A does not: this is speculative decoding's losslessness under greedy"}},
		{name: "speculative and a mismatch: not lossless", base: block(10, nil, nil, 0), b: speculative(block(10, map[int]bool{2: true}, nil, 0)),
			verdicts: []want{{"/agreement", vocab.Fail, false, "1 of 10 prompts mismatch the baseline (10% > max_mismatch 0%)"},
				{"/lossless", vocab.Fail, false, "1 of 10 prompts mismatch the baseline (10% > max_mismatch 0%)"}, {"/accuracy", vocab.Pass, false, ""}},
			details: []string{"speculative decoding is NOT lossless under greedy: against the baseline without speculation, 9 of 10 prompts agree exactly, 0 near ties, 1 mismatches (10%)"}},
		{name: "an accuracy drop", base: block(100, nil, nil, 0), b: block(100, nil, many, 0),
			verdicts: []want{{"/agreement", vocab.Pass, false, "100 of 100 prompts agree exactly, 0 near ties, 0 mismatches (0%)"},
				{"/accuracy", vocab.Fail, false, "accuracy regressed: 1.000 → 0.600 (-40.0 points, a drop the exact McNemar test shows at p = 0.0000)"}},
			diffText: []string{"accuracy regressed: 1.000 → 0.600"}},
		{name: "an inconclusive accuracy", base: block(10, nil, nil, 0), b: block(10, nil, map[int]bool{3: true}, 0),
			verdicts: []want{{"/agreement", vocab.Pass, false, agreeAll}, {"/accuracy", vocab.Inconclusive, false, "accuracy inconclusive: "}}},
		{name: "an inconclusive accuracy, -inconclusive pass", base: block(10, nil, nil, 0), b: block(10, nil, map[int]bool{3: true}, 0), inconclusive: compare.InconclusivePass,
			verdicts: []want{{"/agreement", vocab.Pass, false, agreeAll}, {"/accuracy", vocab.Pass, false, "accuracy inconclusive: "}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c *compare.Comparison
			if tt.base != nil {
				c = compare.Build(tt.base, tt.b, compare.Policy{Tolerance: 0.05, Inconclusive: tt.inconclusive})
			}
			vs := judge.Correctness(tt.b, c, JudgeWords{})
			if len(vs) != len(tt.verdicts) {
				t.Fatalf("%d verdicts, want %d: %+v", len(vs), len(tt.verdicts), vs)
			}
			var details []string
			for i, w := range tt.verdicts {
				v := vs[i]
				details = append(details, v.Details...)
				if v.Test != "qwen/correctness/greedy"+w.test || v.Outcome != w.outcome || v.Infra != w.infra || !strings.Contains(v.Message, w.message) {
					t.Errorf("verdict %s %v infra=%v %q, want %s %v infra=%v %q", v.Test, v.Outcome, v.Infra, v.Message, "qwen/correctness/greedy"+w.test, w.outcome, w.infra, w.message)
				}
			}
			for _, d := range tt.details {
				if !slices.Contains(details, d) {
					t.Errorf("details lack %q:\n%s", d, strings.Join(details, "\n"))
				}
			}
			if c == nil {
				return
			}
			var buf bytes.Buffer
			if err := (Diff{PathA: "a.json", PathB: "b.json", C: c}).Text(&buf); err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.diffText {
				if !strings.Contains(buf.String(), w) {
					t.Errorf("diff lacks %q:\n%s", w, buf.String())
				}
			}
		})
	}
}

// maxOutput sets r's block's max_output to n.
func maxOutput(r *result.Results, n int) *result.Results {
	r.Correctness[0].MaxOutput = n
	return r
}

// TestCorrectnessDiffJSON: diff's JSON carries each correctness rule with
// its figures and, beside it, its words: why the blocks were not compared
// (refusal, refused) and why a prompt diverged (cause, why).
func TestCorrectnessDiffJSON(t *testing.T) {
	type divergence struct {
		Cause result.DivergenceCause `json:"cause"`
		Why   string                 `json:"why"`
	}
	type blockJSON struct {
		Refusal  *result.CorrectnessRefusal `json:"refusal"`
		Refused  string                     `json:"refused"`
		Diverged []divergence               `json:"diverged"`
	}
	tests := []struct {
		name    string
		base, b *result.Results
		want    blockJSON
	}{
		{name: "a mismatch", base: block(10, nil, nil, 0), b: block(10, map[int]bool{4: true}, nil, 0),
			want: blockJSON{Diverged: []divergence{{Cause: result.DivergenceCause{Rule: result.DivergedNotInTop, Side: result.SideNow, Token: " z", TopK: 2},
				Why: `the candidate's token " z" is not in the baseline's top 2`}}}},
		{name: "not compared", base: block(10, nil, nil, 0), b: maxOutput(block(10, nil, nil, 0), 8),
			want: blockJSON{Refusal: &result.CorrectnessRefusal{Rule: result.RefusedMaxOutput, BaselineMaxOutput: 4, MaxOutput: 8},
				Refused: "max_output differs: 4 in the baseline, 8 here"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := compare.Build(tt.base, tt.b, compare.Policy{Tolerance: 0.05})
			var buf bytes.Buffer
			if err := (Diff{PathA: "a.json", PathB: "b.json", C: c}).JSON(&buf); err != nil {
				t.Fatal(err)
			}
			var doc struct {
				Correctness []blockJSON `json:"correctness"`
			}
			if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
				t.Fatal(err)
			}
			if len(doc.Correctness) != 1 {
				t.Fatalf("%d correctness blocks in %s", len(doc.Correctness), buf.String())
			}
			if d := cmp.Diff(tt.want, doc.Correctness[0]); d != "" {
				t.Errorf("correctness (-want +got):\n%s", d)
			}
		})
	}
}

// speculative marks r's block as measured with speculative decoding.
func speculative(r *result.Results) *result.Results {
	r.Correctness[0].Speculative = true
	return r
}

// TestCorrectnessNotesShown: a comparison's notes (here: the blocks sent
// at other concurrencies) are among the agreement verdict's details and
// the comparison's text lines, each as its String() says.
func TestCorrectnessNotesShown(t *testing.T) {
	base, b := block(10, nil, nil, 0), block(10, nil, nil, 0)
	b.Correctness[0].Concurrency = 4
	c := compare.Build(base, b, compare.Policy{Tolerance: compare.DefaultTolerance})
	notes := c.Correctness[0].Notes
	if len(notes) == 0 {
		t.Fatal("no notes: the blocks' concurrencies differ")
	}
	var details []string
	for _, v := range judge.Correctness(b, c, JudgeWords{}) {
		if strings.HasSuffix(v.Test, "/agreement") {
			details = v.Details
		}
	}
	lines := CorrectnessLines(c)
	for _, n := range notes {
		if !slices.Contains(details, n.String()) || !slices.Contains(lines, "  "+n.String()) {
			t.Errorf("note %q missing from the agreement details %q or the lines %q", n, details, lines)
		}
	}
}

// TestCorrectnessWithoutBaselinePrinted: a block with nothing to compare
// with prints its accuracy and says it is informational, then SKIP, never
// PASS, on the console as go test prints it: with no -baseline, and
// with a baseline that lacks the block (docs/method.md#correctness).
func TestCorrectnessWithoutBaselinePrinted(t *testing.T) {
	wrong := map[int]bool{1: true, 2: true, 3: true, 4: true}
	other := block(4, nil, nil, 0)
	other.Correctness[0].Name = "other"
	tests := []struct {
		name string
		c    *compare.Comparison
		why  string
	}{
		{name: "no baseline", why: "no -baseline to compare with"},
		{name: "baseline without the block", c: compare.Build(other, block(4, nil, wrong, 0), compare.Policy{Tolerance: 0.05}),
			why: `the baseline has no block "greedy" to compare with`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			console := report.NewConsole(&buf, "s.hcl", report.ConsoleOptions{})
			for _, v := range judge.Correctness(block(4, nil, wrong, 0), tt.c, JudgeWords{}) {
				StreamVerdict(console, v)
			}
			want := "=== RUN   qwen/correctness/greedy\n" +
				"    4 prompts, greedy, max_output 4, top-2 logprobs, 1 at a time; 1.0s wall, 2.0 GPU-s (apart from the speed cells)\n" +
				"    accuracy 0.000 (0 of 4; 95% interval 0.000–0.490)\n" +
				"        informational, nothing compared: " + tt.why + "; outputs recorded, 4 of 4 prompts answered\n" +
				"--- SKIP: qwen/correctness/greedy (0.00s)\n"
			if d := cmp.Diff(want, buf.String()); d != "" {
				t.Errorf("console (-want +got):\n%s", d)
			}
		})
	}
}
