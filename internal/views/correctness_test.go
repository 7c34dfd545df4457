package views

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/slogate/slogate/internal/compare"
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
// block as measured; against one, one verdict per check (agreement,
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
			verdicts: []want{{"", vocab.Pass, false, "outputs recorded; 10 of 10 prompts answered; accuracy 0.900 (9 of 10; 95% interval 0.596–0.982)"}},
			details:  []string{"10 prompts, greedy, max_output 4, top-2 logprobs, 1 at a time; 1.0s wall, 2.0 GPU-s (apart from the speed cells)"}},
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
			vs := CorrectnessVerdicts(tt.b, c)
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
	for _, v := range CorrectnessVerdicts(b, c) {
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
