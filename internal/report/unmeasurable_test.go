package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// TestUnmeasurableCells: cells the client could not measure, a decode cell
// and a traffic cell, are counted in every report: report.md and
// report.html under Unmeasurable with their reasons and among what did
// not pass (inconclusive), JUnit as failures of type unmeasurable
// (docs/method.md#unmeasurable).
func TestUnmeasurableCells(t *testing.T) {
	res := sampleRun("specs/a.hcl", "qwen")
	res.Decode[0].Status, res.Decode[0].Reason = vocab.StatusUnmeasurable, "the window held 4 output tokens in 1 s"
	res.Traffic = []result.TrafficCell{{Traffic: "steady", Context: 1024, Rate: 100, Status: vocab.StatusUnmeasurable,
		Reason: "the client fell behind its schedule"}}
	md, html, junit := renderReports(t, res)
	decode := res.Decode[0].Ref()
	tests := []struct {
		name, doc string
		want      []string
	}{
		{"report.md", md, []string{"## Unmeasurable\n", "the window held 4 output tokens in 1 s\n",
			"- traffic/steady/ctx=1K/rate=100: the client fell behind its schedule\n",
			"INCONCLUSIVE: unmeasurable: the window held 4 output tokens in 1 s", "Unmeasurable: the client could not measure the cell"}},
		{"report.html", html, []string{"<h2>Unmeasurable</h2>", "the window held 4 output tokens in 1 s</li>"}},
		{"JUnit", junit, []string{`<failure message="unmeasurable: the window held 4 output tokens in 1 s" type="unmeasurable">`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, w := range tc.want {
				if !strings.Contains(tc.doc, w) {
					t.Errorf("%s lacks %q (cell %s):\n%s", tc.name, w, decode.Name(), tc.doc)
				}
			}
		})
	}
}

// TestSaturatedCells: a traffic cell stopped as saturated is listed in
// report.md and report.html under Saturated with its evidence, among
// what did not pass (failed), in its traffic table as Saturated, the
// window it saved beside the GPU time, and in JUnit as a failure of type
// saturated (docs/method.md#saturation).
func TestSaturatedCells(t *testing.T) {
	res := sampleRun("specs/a.hcl", "qwen")
	evidence := "past the server's capacity at 60 req/s: its waiting requests grew from 0 to 38 over 1s (42.6 a second, fit 0.97; outstanding 0 to 43); stopped after its saturation_after of 1s, 2.95s of its 3s window saved"
	res.Traffic = []result.TrafficCell{{Traffic: "steady", Context: 1024, Rate: 60, Status: vocab.StatusSaturated, Reason: evidence,
		Reasons: []result.CellReason{{Code: result.ReasonSaturated, Figures: map[string]float64{
			result.FigRate: 60, result.FigWaitingStart: 0, result.FigWaitingEnd: 38, result.FigOutstandingStart: 0, result.FigOutstandingEnd: 43,
			result.FigObservedS: 1, result.FigSlopePerS: 42.6, result.FigFit: 0.97, result.FigSaturationAfterS: 1, result.FigSavedS: 2.95, result.FigWindowS: 3}}}}}
	res.GPUTime = &result.GPUTime{GPUs: 2, ServerS: 60, GPUSeconds: 120}
	md, html, junit := renderReports(t, res)
	tests := []struct {
		name, doc string
		want      []string
	}{
		{"report.md", md, []string{"## Saturated\n", "- traffic/steady/ctx=1K/rate=60: " + evidence + "\n", "FAIL: saturated: " + evidence, "| Saturated |",
			"3.0 s of windows not run (0.002 GPU-hours on 2 GPUs)"}},
		{"report.html", html, []string{"<h2>Saturated</h2>", "2.95s of its 3s window saved</li>"}},
		{"JUnit", junit, []string{`type="saturated"`, `message="saturated: past the server&#39;s capacity at 60 req/s`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, w := range tc.want {
				if !strings.Contains(tc.doc, w) {
					t.Errorf("%s lacks %q:\n%s", tc.name, w, tc.doc)
				}
			}
		})
	}
}

// renderReports is res written as report.md, report.html and JUnit, the
// three files a run's reports are checked in.
func renderReports(t *testing.T, res *result.Results) (md, html, junit string) {
	t.Helper()
	var m, h, j bytes.Buffer
	if err := WriteMarkdown(&m, res); err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(&h, res); err != nil {
		t.Fatal(err)
	}
	if err := WriteJUnit(&j, []*result.Results{res}); err != nil {
		t.Fatal(err)
	}
	return m.String(), h.String(), j.String()
}
