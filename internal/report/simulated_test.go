package report

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// TestSimulatedRunSaysSo: every place that names the hardware of a run of
// the built-in simulator — report.md and report.html titles, the GitHub
// step summary, JUnit properties — says the run was simulated, even when the
// spec names real hardware (a seed spec's gpu label); a real run's do not.
func TestSimulatedRunSaysSo(t *testing.T) {
	renderers := []struct {
		name   string
		render func(io.Writer, *result.Results) error
		want   string // in the output of a simulated run; absent from a real one's
	}{
		{"report.md title", WriteMarkdown, "\n# Qwen3.5-4B on H200 (simulated)\n"},
		{"report.html title", WriteHTML, "<title>Qwen3.5-4B on H200 (simulated) · slogate</title>"},
		{"report.html heading", WriteHTML, "<h1>Qwen3.5-4B on H200 (simulated) "},
		{"step summary", WriteSummary, ": Qwen3.5-4B on H200 (simulated) (specs/qwen.hcl)"},
		{"JUnit hardware", func(w io.Writer, r *result.Results) error { return WriteJUnit(w, []*result.Results{r}) },
			`<property name="qwen.hardware" value="H200 (simulated)"></property>`},
		{"JUnit property", func(w io.Writer, r *result.Results) error { return WriteJUnit(w, []*result.Results{r}) },
			`<property name="qwen.simulated" value="true"></property>`},
	}
	for _, r := range renderers {
		t.Run(r.name, func(t *testing.T) {
			for _, simulated := range []bool{true, false} {
				res := &result.Results{
					Schema: result.Schema, Spec: "specs/qwen.hcl",
					Server: result.Server{Name: "qwen", Model: "Qwen/Qwen3.5-4B", Simulated: simulated, Labels: map[string]string{"gpu": "H200"}},
					Decode: []result.DecodeCell{{Matrix: "decode", Context: 8192, Concurrency: 1, Status: vocab.StatusValid, TotalTPS: 400}},
				}
				var b bytes.Buffer
				if err := r.render(&b, res); err != nil {
					t.Fatal(err)
				}
				switch got := b.String(); {
				case simulated && !strings.Contains(got, r.want):
					t.Errorf("simulated run: output lacks %q:\n%s", r.want, got)
				case !simulated && strings.Contains(got, "simulated"):
					t.Errorf("real run: output says simulated:\n%s", got)
				}
			}
		})
	}
}

// TestHardwareTitleSaysSimulatedOnce: a gpu label that already says the
// hardware is simulated gets no second "(simulated)".
func TestHardwareTitleSaysSimulatedOnce(t *testing.T) {
	tests := []struct {
		name, gpu string
		want      string
	}{
		{name: "plain label", gpu: "H200 NVL", want: "H200 NVL (simulated)"},
		{name: "label that says so", gpu: "simulated H200 NVL", want: "simulated H200 NVL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := newHeader(&result.Results{Server: result.Server{Simulated: true, Labels: map[string]string{"gpu": tc.gpu}}}).hardwareName(); got != tc.want {
				t.Errorf("hardwareName = %q, want %q", got, tc.want)
			}
		})
	}
}
