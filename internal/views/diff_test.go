package views

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/result"
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
	// verdict on top, then a row per cell and metric with both values,
	// the change, its bounds and the outcome.
	for _, line := range []string{
		"**slogate diff: FAIL (exit 1): 6 regressed, 0 improved, 0 unchanged, 0 inconclusive, 0 on one side only; 0 cell(s) lost, 0 errored**\n",
		"| Cell | Metric | Baseline | Now | Change | Bounds | Outcome |\n",
		"| decode/ctx=8K/conc=1 | total_tps (tok/s) | 375.4 | 306.6 | -18.4% | -18.6…-18.0% (95.2%) | FAIL: regressed |\n",
	} {
		if !strings.Contains(buf.String(), line) {
			t.Errorf("the demo's Markdown lacks %q", line)
		}
	}
	if !strings.HasPrefix(buf.String(), "**slogate diff: FAIL") {
		t.Errorf("the verdict does not head the Markdown:\n%s", buf.String())
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
