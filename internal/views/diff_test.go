package views

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// demoDiff is the diff of the demo's two runs (make demo: the seed-fitted
// simulator, then one 20 % slower per step), kept in testdata as
// results.json files.
func demoDiff(t *testing.T) Diff {
	t.Helper()
	read := func(name string) *result.Results {
		r, err := result.Read(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	a, b := read("demo-baseline.json"), read("demo-upgrade.json")
	return Diff{PathA: "baseline.json", PathB: "upgrade.json", C: compare.Build(a, b, compare.Policy{Tolerance: 0.05})}
}

// TestDiffMarkdownGolden compares the Markdown of the demo's regression
// with testdata/demo-diff.md. Regenerate with: go test ./internal/views -update
func TestDiffMarkdownGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := demoDiff(t).Markdown(&buf); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "demo-diff.md")
	if *update {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/views -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), buf.String()); diff != "" {
		t.Errorf("Markdown differs from %s (-want +got); if intended, run go test ./internal/views -update:\n%s", golden, diff)
	}
	// What the golden file must say, whatever it is regenerated to: the
	// verdict on top counting cells (2), not cell metrics (8); the rule in
	// plain words at 95% confidence, the method in a footnote; what failed
	// and why; the SLOs; per_request_tps, which the spec asserts, compared;
	// the full table collapsed; all of it short enough for a PR comment.
	got := buf.String()
	for _, line := range []string{
		"### slogate diff: FAIL (exit 1): 2 of 2 cells regressed\n",
		"A cell regressed when a metric is worse than the baseline by more than 5% with 95% confidence, passes when it is no more than 5% worse with 95% confidence, and is inconclusive in between.¹\n",
		"**What failed**\n",
		"- decode/ctx=8K/conc=1 regressed: total_tps 375.4 → 306.6 (-18.4%), ttft_ms 79.7 → 95.2 (+19.6%), tbt_ms 2.42 → 3.06 (+26.2%), per_request_tps 407.2 → 337.8 (-17.0%)\n",
		"**SLOs** (B's assert and expect blocks): 6 tests passed\n",
		"| qwen/assert/decode_8k_16 | PASS | PASS | decode[\"8K\"][16].per_request_tps = 207.1, want &gt;= 193: ok |\n",
		"<details><summary>Every cell and metric compared (8 rows)</summary>\n",
		"| Cell | Metric | Baseline | Now | Change | Bounds (95% confidence) | Outcome |\n",
		"| decode/ctx=8K/conc=1 | total_tps (tok/s) | 375.4 | 306.6 | -18.4% | -18.6…-18.0% | FAIL: regressed |\n",
		"| decode/ctx=8K/conc=16 | per_request_tps (tok/s) | 248.4 | 207.1 | -16.6% |",
		"<sub>¹ Each bound of a cell's change is one-sided at 95% confidence or more (95.2% attained with 5+5 repeats, α = 0.05): the Hodges–Lehmann estimate",
	} {
		if !strings.Contains(got, line) {
			t.Errorf("the demo's Markdown lacks %q", line)
		}
	}
	if !strings.HasPrefix(got, "### slogate diff: FAIL") {
		t.Errorf("the verdict does not head the Markdown:\n%s", got)
	}
	if n := strings.Count(got, "\n"); n >= 60 {
		t.Errorf("the demo's Markdown is %d lines, want under 60 for a PR comment", n)
	}
	for _, jargon := range []string{"(95.2%) |", "Hodges–Lehmann bounds, each one-sided"} {
		if i := strings.Index(got, jargon); i >= 0 && i < strings.Index(got, "<sub>") {
			t.Errorf("%q greets the reader before the footnote", jargon)
		}
	}
}

// TestDiffCellCounts: the verdict counts cells once each, by the worst
// decision of their metrics, not a row per metric.
func TestDiffCellCounts(t *testing.T) {
	a, b := runs()
	tests := []struct {
		name string
		diff Diff
		want string
	}{
		{"the demo: 2 cells, 8 cell metrics", demoDiff(t), "FAIL (exit 1): 2 of 2 cells regressed"},
		{"every kind of cell", Diff{PathA: "a.json", PathB: "b.json", C: compare.Build(a, b, compare.Policy{Tolerance: 0.05})},
			"ERROR (exit 3): 2 of 11 cells lost, 1 errored, 2 regressed, 1 inconclusive, 1 improved, 2 within tolerance, 1 on one side only, 1 measured in neither run"},
		{"total_tps alone: the decode cells, 8K×64's latencies no longer counted", Diff{PathA: "a.json", PathB: "b.json", C: compare.Build(a, b, compare.Policy{Tolerance: 0.05, Metrics: []string{"total_tps"}})},
			"ERROR (exit 3): 2 of 9 cells lost, 1 errored, 1 regressed, 1 inconclusive, 1 improved, 1 within tolerance, 1 on one side only, 1 measured in neither run"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.diff.Verdict(); got != tc.want {
				t.Errorf("Verdict() = %q\nwant        %q", got, tc.want)
			}
		})
	}
}

// TestDiffMarkdownSLOs: B's assert and expect verdicts are the SLO
// section, beside A's outcome, a failed one with its message; a run
// without them has no section; many are collapsed, the failed ones open.
func TestDiffMarkdownSLOs(t *testing.T) {
	slo := func(test string, o vocab.Outcome) result.Verdict {
		return result.Verdict{Test: test, Kind: vocab.KindAssert, Outcome: o, Message: "16 streams fell below 193 tok/s each",
			Details: []string{`decode["8K"][16].per_request_tps = 180, want >= 193 (-6.7% from the threshold)`}}
	}
	many := []result.Verdict{slo("q/assert/broken", vocab.Fail)}
	for i := range 12 {
		many = append(many, slo(fmt.Sprintf("q/assert/ok%d", i), vocab.Pass))
	}
	tests := []struct {
		name       string
		a, b       []result.Verdict
		want, lack []string
	}{
		{"a breach beside the baseline's pass", []result.Verdict{slo("q/assert/x", vocab.Pass)}, []result.Verdict{slo("q/assert/x", vocab.Fail), {Test: "q/baseline/decode/ctx=8K/conc=16", Kind: vocab.KindBaseline, Outcome: vocab.Fail}},
			[]string{"**SLOs** (B's assert and expect blocks): 1 test failed\n",
				"| q/assert/x | PASS | FAIL | decode[\"8K\"][16].per_request_tps = 180, want &gt;= 193 (-6.7% from the threshold) — 16 streams fell below 193 tok/s each |\n"},
			[]string{"q/baseline/", "<details><summary>Every SLO"}},
		{"a skip is counted apart, not passed", nil, []result.Verdict{slo("q/assert/x", vocab.Pass), slo("q/assert/needs_baseline", vocab.Skip)},
			[]string{"**SLOs** (B's assert and expect blocks): 1 of 2 tests skipped, 1 passed\n"}, []string{"2 passed"}},
		{"no SLOs, no section", nil, nil, nil, []string{"**SLOs**"}},
		{"many: the failed open, all collapsed", nil, many,
			[]string{"1 of 13 tests failed, 12 passed", "| q/assert/broken | — | FAIL |", "<details><summary>Every SLO (13)</summary>"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := demoDiff(t)
			a, b := *d.C.A, *d.C.B
			a.Verdicts, b.Verdicts = tc.a, tc.b
			d.C = compare.Build(&a, &b, compare.Policy{Tolerance: 0.05})
			var buf bytes.Buffer
			if err := d.Markdown(&buf); err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(buf.String(), w) {
					t.Errorf("lacks %q:\n%s", w, buf.String())
				}
			}
			for _, w := range tc.lack {
				if strings.Contains(buf.String(), w) {
					t.Errorf("has %q:\n%s", w, buf.String())
				}
			}
		})
	}
}

// TestDiffJSONSchema validates diff -format json's document of the demo's
// regression, and of a comparison with every kind of cell, against
// docs/diff.schema.json, and checks the figures it carries.
func TestDiffJSONSchema(t *testing.T) {
	c := jsonschema.NewCompiler()
	schema, err := c.Compile(filepath.Join("..", "..", "docs", "diff.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	a, b := runs()
	for _, tc := range []struct {
		name string
		diff Diff
	}{
		{"the demo's regression", demoDiff(t)},
		{"every kind of cell", Diff{PathA: "a.json", PathB: "b.json", C: compare.Build(a, b, compare.Policy{Tolerance: 0.05})}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := tc.diff.JSON(&buf); err != nil {
				t.Fatal(err)
			}
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(buf.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			if err := schema.Validate(doc); err != nil {
				t.Fatalf("the document does not fit docs/diff.schema.json: %v\n%s", err, buf.String())
			}
			var got struct {
				ExitCode int `json:"exit_code"`
				Rows     []result.ComparisonRow
			}
			if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			if got.ExitCode != tc.diff.C.ExitCode() || len(got.Rows) == 0 {
				t.Errorf("exit_code %d (want %d), %d rows", got.ExitCode, tc.diff.C.ExitCode(), len(got.Rows))
			}
		})
	}
	// The demo's first row: the figures of the comparison, not words.
	var buf bytes.Buffer
	if err := demoDiff(t).JSON(&buf); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Outcome string
		Rows    []result.ComparisonRow
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	r := doc.Rows[0]
	if doc.Outcome != "fail" || r.Cell != "decode/ctx=8K/conc=1" || r.Metric != "total_tps" || *r.Baseline != 375.4 || *r.Now != 306.6 ||
		r.Decision != "regressed" || *r.Lower > *r.Change || *r.Change > *r.Upper || *r.Upper > -0.05 {
		t.Errorf("outcome %s, first row %+v: want total_tps 375.4 → 306.6 regressed, its bounds around the change and beyond -5%%", doc.Outcome, r)
	}
}

// TestDiffRefusal: runs measured with different settings are refused (exit
// 2) naming each difference, whatever the format.
func TestDiffRefusal(t *testing.T) {
	d := demoDiff(t)
	b := *d.C.B
	b.Measure.MaxOutput = 1024
	refused := Diff{PathA: "baseline.json", PathB: "upgrade.json", C: compare.Build(d.C.A, &b, compare.Policy{Tolerance: 0.05})}
	err := refused.Refusal()
	if exit.Code(err) != exit.Usage || err == nil || !strings.Contains(err.Error(), "diff: baseline.json and upgrade.json were measured with different settings, so their numbers are not comparable:\n  max_output: 512 → 1024\n") {
		t.Errorf("refusal %v (exit %d), want exit 2 naming max_output", err, exit.Code(err))
	}
	if d.Refusal() != nil {
		t.Errorf("the demo's runs are refused: %v", d.Refusal())
	}
}
