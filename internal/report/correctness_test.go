package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// correctnessRuns are a baseline and a run of one correctness block of 4
// prompts; the run's line 3 mismatches at token 1 and its accuracy drops
// on line 2.
func correctnessRuns() (a, b *result.Results) {
	tok := func(text string, lp float64, top ...string) result.Token {
		t := result.Token{ID: -1, Text: text, Logprob: lp}
		for i, x := range top {
			t.Top = append(t.Top, result.TopToken{ID: -1, Text: x, Logprob: lp - float64(i)})
		}
		return t
	}
	run := func(mismatch bool, wrong int) *result.Results {
		c := result.Correctness{Name: "greedy", Dataset: "p.jsonl", Endpoint: "completions", MaxOutput: 8, Logprobs: 2, Concurrency: 1,
			Scorer: "exact", Margin: 0.01, NearTieGap: 0.1, Prompts: 4, ElapsedS: 2.5, GPUSeconds: 5}
		for line := 1; line <= 4; line++ {
			o := result.CorrectnessOutput{Block: "greedy", Line: line, Prompt: "What is the capital of France?", Tokens: []result.Token{tok(" Paris", -0.1, " Paris", " Lyon"), tok(".", -0.2, ".", "!")}}
			if mismatch && line == 3 {
				o.Tokens[1] = tok(" zz", -0.2, " zz", " yy")
			}
			right := line != wrong
			o.Correct = &right
			c.Outputs = append(c.Outputs, o)
			c.Scored++
			if right {
				c.Correct++
			}
		}
		return &result.Results{Schema: result.Schema, Server: result.Server{Name: "qwen"}, Correctness: []result.Correctness{c}}
	}
	a, b = run(false, 0), run(true, 2)
	b.Comparison = compare.Build(a, b, compare.Policy{Tolerance: 0.05}).Record()
	return a, b
}

// refusedRun is b as compared with a baseline whose max_output was 8
// against its 16: not compared.
func refusedRun(b *result.Results) *result.Results {
	r := *b
	r.Comparison = &result.Comparison{Correctness: []result.CorrectnessComparison{{Name: "greedy", Outcome: vocab.Error,
		Refusal: &result.CorrectnessRefusal{Rule: result.RefusedMaxOutput, BaselineMaxOutput: 8, MaxOutput: 16}}}}
	return &r
}

// legacyRefusedRun is b not compared, as a results.json written before
// refusals were rules recorded it: in words.
func legacyRefusedRun(b *result.Results) *result.Results {
	r := *b
	r.Comparison = &result.Comparison{Correctness: []result.CorrectnessComparison{{Name: "greedy", Outcome: vocab.Error, Refused: "max_output 8 → 16"}}}
	return &r
}

func TestCorrectnessSection(t *testing.T) {
	a, b := correctnessRuns()
	tests := []struct {
		name  string
		res   *result.Results
		write func(*bytes.Buffer, *result.Results) error
		want  []string
	}{
		{name: "markdown against the baseline", res: b, write: func(w *bytes.Buffer, r *result.Results) error { return WriteMarkdown(w, r) }, want: []string{
			"## Correctness: greedy", "Cost: 2.5s wall, 5.0 GPU-s, after the speed cells",
			"Accuracy: 0.750 (3 of 4; 95% interval 0.301–0.954); the baseline 1.000 [0.510, 1.000] on the same 4 items",
			"Against the baseline (FAIL): 3 of 4 prompts agree exactly (75%), 0 near ties (0%), 1 mismatches (25%; max_mismatch 0%)",
			`| 3 | What is the capital of France? | mismatch | token 1 | " Paris" | "." | " zz" | "." -0.20, "!" -1.20 | " zz" -0.20, " yy" -1.20 | the candidate's token " zz" is not in the baseline's top 2 |`,
			"Paired accuracy: -25.0 points"}},
		{name: "markdown, not compared", res: refusedRun(b), write: func(w *bytes.Buffer, r *result.Results) error { return WriteMarkdown(w, r) }, want: []string{
			"- Not compared with the baseline: max_output differs: 8 in the baseline, 16 here"}},
		{name: "markdown, not compared, recorded before refusals were", res: legacyRefusedRun(b), write: func(w *bytes.Buffer, r *result.Results) error { return WriteMarkdown(w, r) },
			want: []string{"- Not compared with the baseline: max_output 8 → 16"}},
		{name: "markdown without a baseline", res: a, write: func(w *bytes.Buffer, r *result.Results) error { return WriteMarkdown(w, r) }, want: []string{
			"## Correctness: greedy", "Accuracy: 1.000 (4 of 4;", "No baseline: the outputs are recorded in correctness.jsonl"}},
		{name: "html", res: b, write: func(w *bytes.Buffer, r *result.Results) error { return WriteHTML(w, r) }, want: []string{
			"<h2>Correctness: greedy</h2>", "<td class=\"left\"><code>&#34; zz&#34;</code></td>"}},
		{name: "csv", res: b, write: func(w *bytes.Buffer, r *result.Results) error { return WriteCSV(w, r) }, want: []string{
			"qwen,correctness,greedy,,1,,accuracy,0.75,share,fail,4,1", "qwen,correctness,greedy,,1,,mismatch_rate,0.25,share,fail,4,1",
			"qwen,correctness,greedy,,1,,gpu_seconds,5,GPU-s,fail,4,1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := tt.write(&buf, tt.res); err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(buf.String(), w) {
					t.Errorf("lacks %q:\n%s", w, buf.String())
				}
			}
		})
	}
}

// TestDivergenceWhy: why a diverged prompt is a near tie or a mismatch,
// worded from the rule and figures compare records: every rule, each
// side, and a divergence recorded before its cause was (its words).
func TestDivergenceWhy(t *testing.T) {
	tests := []struct {
		name string
		d    result.Divergence
		want string
	}{
		{name: "near tie", d: result.Divergence{Cause: &result.DivergenceCause{Rule: result.DivergedNearTie, LogprobGap: 0.049999999999999996}},
			want: "both tokens in each other's top-k, 0.05 apart in logprob"},
		{name: "gap too wide", d: result.Divergence{Cause: &result.DivergenceCause{Rule: result.DivergedGapWide, LogprobGap: 0.8, NearTieGap: 0.1}},
			want: "both tokens in each other's top-k, but 0.8 apart in logprob (the near-tie gap is 0.1)"},
		{name: "the candidate's token not in the baseline's top-k", d: result.Divergence{Cause: &result.DivergenceCause{Rule: result.DivergedNotInTop,
			Side: result.SideNow, Token: " z", TopK: 2}}, want: `the candidate's token " z" is not in the baseline's top 2`},
		{name: "the baseline's token not in the candidate's top-k", d: result.Divergence{Cause: &result.DivergenceCause{Rule: result.DivergedNotInTop,
			Side: result.SideBaseline, Token: "the", TopK: 5}}, want: `the baseline's token "the" is not in the candidate's top 5`},
		{name: "no logprobs", d: result.Divergence{Cause: &result.DivergenceCause{Rule: result.DivergedNoLogprobs}},
			want: "no top-k logprobs to tell a near tie"},
		{name: "the candidate stops early", d: result.Divergence{Position: 12, Cause: &result.DivergenceCause{Rule: result.DivergedEnds, Side: result.SideNow}},
			want: "the candidate stops after 12 tokens, the other goes on"},
		{name: "the baseline stops early", d: result.Divergence{Position: 1, Cause: &result.DivergenceCause{Rule: result.DivergedEnds, Side: result.SideBaseline}},
			want: "the baseline stops after 1 tokens, the other goes on"},
		{name: "texts differ", d: result.Divergence{ByText: true, Position: 2, Cause: &result.DivergenceCause{Rule: result.DivergedTexts}},
			want: "the texts differ (no tokens to compare)"},
		{name: "a failed request", d: result.Divergence{Cause: &result.DivergenceCause{Rule: result.DivergedRequestFailed}}, want: "a request failed"},
		{name: "recorded before causes were", d: result.Divergence{Why: "the candidate stops after 3 tokens, the other goes on"},
			want: "the candidate stops after 3 tokens, the other goes on"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := DivergenceWhy(&tt.d); got != tt.want {
				t.Errorf("DivergenceWhy =\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

// TestCorrectnessRefused: why two correctness blocks were not compared,
// worded from the rule and figures compare records: every rule, and a
// comparison recorded before its refusal was (its words).
func TestCorrectnessRefused(t *testing.T) {
	refused := func(r result.CorrectnessRefusal) *result.CorrectnessComparison {
		return &result.CorrectnessComparison{Name: "greedy", Refusal: &r}
	}
	tests := []struct {
		name string
		cc   *result.CorrectnessComparison
		want string
	}{
		{name: "no baseline outputs", cc: refused(result.CorrectnessRefusal{Rule: result.RefusedNoOutputs}),
			want: `the baseline has no outputs of block "greedy" (correctness.jsonl missing beside its results.json)`},
		{name: "max_output differs", cc: refused(result.CorrectnessRefusal{Rule: result.RefusedMaxOutput, BaselineMaxOutput: 8, MaxOutput: 16}),
			want: "max_output differs: 8 in the baseline, 16 here"},
		{name: "the endpoint differs", cc: refused(result.CorrectnessRefusal{Rule: result.RefusedEndpoint, BaselineEndpoint: "completions", Endpoint: "chat"}),
			want: "the endpoint differs: completions in the baseline, chat here"},
		{name: "the prompts differ", cc: refused(result.CorrectnessRefusal{Rule: result.RefusedPrompts, Line: 4}),
			want: "the prompts differ: line 4 of the dataset is not the baseline's"},
		{name: "recorded before refusals were", cc: &result.CorrectnessComparison{Name: "greedy", Refused: "max_output differs: 8 in the baseline, 16 here"},
			want: "max_output differs: 8 in the baseline, 16 here"},
		{name: "compared", cc: &result.CorrectnessComparison{Name: "greedy"}, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CorrectnessRefused(tt.cc); got != tt.want {
				t.Errorf("CorrectnessRefused =\n%q\nwant\n%q", got, tt.want)
			}
			if got := tt.cc.WasRefused(); got != (tt.want != "") {
				t.Errorf("WasRefused = %v", got)
			}
		})
	}
}
