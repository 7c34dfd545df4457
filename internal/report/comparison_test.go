package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/result"
)

// baselineRun is sampleRun compared with a baseline that measured 8K × 1
// at 500 tok/s and prefill 8K at 50,000 tok/s: a regression of each, and
// what the -baseline run's results.json records (compare's Record).
func baselineRun(t *testing.T) *result.Results {
	t.Helper()
	base, res := sampleRun("specs/a.hcl", "qwen"), sampleRun("specs/a.hcl", "qwen")
	base.Decode[0].TotalTPS, base.Prefill[0].TPS = 500, 50000
	c := compare.Build(base, res, compare.Policy{Tolerance: 0.05})
	if c.Refused {
		t.Fatalf("settings differ: %v", c.Settings)
	}
	res.Comparison = c.Record()
	return res
}

// TestComparisonTable: a -baseline run's report.md, its GitHub step
// summary and report.html hold a table per cell and metric (baseline,
// now, change, bounds, outcome), and
// the charts draw the baseline beside the run; a run without a baseline
// has neither.
func TestComparisonTable(t *testing.T) {
	res := baselineRun(t)
	var md bytes.Buffer
	if err := WriteMarkdown(&md, res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"## Baseline comparison\n\nAgainst the baseline server qwen, Qwen/Qwen3.5-4B, vLLM 0.26.1, simulated, 2026-11-30 09:00 UTC, tolerance 5%, α = 0.05.",
		"| Cell | Metric | Baseline | Now | Change | Bounds (95% confidence) | Outcome |\n",
		"| prefill/ctx=8K | tps (tok/s) | 50000 | 46700 | -6.6% | — | FAIL: regressed |\n",
		"| decode/ctx=8K/conc=1 | total_tps (tok/s) | 500 | 408.2 | -18.4% | — | FAIL: regressed |\n",
		"| decode/ctx=8K/conc=1 | ttft_ms (ms) | 78 | 78 | 0.0% | — | pass: unchanged |\n",
		"| decode/ctx=16K/conc=1 | total_tps (tok/s) | error | error | — | — | skip: neither |\n",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("report.md lacks %q:\n%s", want, md.String())
		}
	}
	var summary bytes.Buffer
	if err := WriteSummary(&summary, res); err != nil {
		t.Fatal(err)
	}
	if row := "| decode/ctx=8K/conc=1 | total_tps (tok/s) | 500 | 408.2 | -18.4% | — | FAIL: regressed |\n"; !strings.Contains(summary.String(), row) {
		t.Errorf("the step summary lacks %q:\n%s", row, summary.String())
	}
	h := renderHTML(t, res)
	for _, want := range []string{
		"<h2>Baseline comparison</h2>",
		`<td class="left">decode/ctx=8K/conc=1</td><td class="left">total_tps (tok/s)</td><td>500</td><td>408.2</td><td>-18.4%</td><td>—</td><td class="left">FAIL: regressed</td>`,
		">8K baseline<", // the legend of the decode chart's dashed line
		"8K × 1: baseline 500 tok/s",
		"8K: baseline 50000 tok/s",
	} {
		if !strings.Contains(h, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	plain := sampleRun("specs/a.hcl", "qwen")
	var pmd bytes.Buffer
	if err := WriteMarkdown(&pmd, plain); err != nil {
		t.Fatal(err)
	}
	if ph := renderHTML(t, plain); strings.Contains(pmd.String(), "Baseline comparison") || strings.Contains(ph, "Baseline comparison") || strings.Contains(ph, "baseline") {
		t.Error("a run without a baseline shows a comparison")
	}
}

// TestComparisonTableMachineDiffers: a comparison across machines whose
// CPU calibration differs beyond the bound says so in report.md's intro,
// and the row of a regression on the slower machine reads INCONCLUSIVE:
// regressed (docs/method.md#machine-against-the-baseline).
func TestComparisonTableMachineDiffers(t *testing.T) {
	base, res := sampleRun("specs/a.hcl", "qwen"), sampleRun("specs/a.hcl", "qwen")
	base.Decode[0].TotalTPS = 500
	for i := range base.Decode {
		base.Decode[i].Environment = []result.Environment{{CalibrationMs: 0.5, CalibrationAfterMs: 0.5}}
		res.Decode[i].Environment = []result.Environment{{CalibrationMs: 0.9, CalibrationAfterMs: 0.9}}
	}
	c := compare.Build(base, res, compare.Policy{Tolerance: 0.05})
	if c.Machine == nil {
		t.Fatal("the machines do not differ")
	}
	res.Comparison = c.Record()
	var md bytes.Buffer
	if err := WriteMarkdown(&md, res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		" (docs/method.md#machine-against-the-baseline).",
		"| decode/ctx=8K/conc=1 | total_tps (tok/s) | 500 | 408.2 | -18.4% | — | INCONCLUSIVE: regressed |\n",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("report.md lacks %q:\n%s", want, md.String())
		}
	}
}
