package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/result"
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
			`| 3 | What is the capital of France? | mismatch | token 1 | " Paris" | "." | " zz" | "." -0.20, "!" -1.20 | " zz" -0.20, " yy" -1.20 |`,
			"Paired accuracy: -25.0 points"}},
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
