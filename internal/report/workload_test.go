package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/slogate/slogate/internal/requests"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/workload"
)

func TestWorkloadText(t *testing.T) {
	seed := uint64(42)
	def := requests.NewBuilder(nil, workload.Options{}).Record()
	own := requests.NewBuilder(nil, workload.Options{Document: "My text.", Instruction: "Summarise.", Distinct: true,
		Sampling:           map[string]json.Number{"top_p": "0.95", "temperature": "0.6"},
		ChatTemplateKwargs: map[string]any{"enable_thinking": false}}).Record()
	tests := []struct {
		name string
		rec  workload.Record
		want string
	}{
		{name: "default", rec: def, want: "article (built-in corpus), shared prompt, server-default sampling"},
		{name: "own document and instruction, distinct, sampling, kwargs", rec: own,
			want: "article (own document, sha256 " + own.DocumentSHA256[:12] + ", own instruction, sha256 " + own.InstructionSHA256[:12] +
				`), distinct prompt per stream, sampling temperature 0.6, top_p 0.95, chat_template_kwargs {"enable_thinking":false}`},
		{name: "random", rec: workload.Record{Prompt: "random", RandomSeed: &seed},
			want: "random token IDs (seed 42), shared prompt, server-default sampling"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := workloadText(&tc.rec); got != tc.want {
				t.Errorf("workloadText = %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestReportsShowWorkload: the Run section of report.md and report.html
// has the Workload line; results without a workload record have none.
func TestReportsShowWorkload(t *testing.T) {
	rec := requests.NewBuilder(nil, workload.Options{}).Record()
	for _, tc := range []struct {
		name     string
		workload *workload.Record
		want     bool
	}{{"recorded", &rec, true}, {"not recorded", nil, false}} {
		t.Run(tc.name, func(t *testing.T) {
			res := &result.Results{Schema: result.Schema, Server: result.Server{Name: "q", Model: "Qwen/Q"}, Workload: tc.workload}
			var md, html bytes.Buffer
			if err := WriteMarkdown(&md, res); err != nil {
				t.Fatal(err)
			}
			if err := WriteHTML(&html, res); err != nil {
				t.Fatal(err)
			}
			const line = "article (built-in corpus), shared prompt, server-default sampling"
			for name, out := range map[string]string{"report.md": md.String(), "report.html": html.String()} {
				if got := strings.Contains(out, "Workload") && strings.Contains(out, line); got != tc.want {
					t.Errorf("%s shows the workload line: %v, want %v\n%s", name, got, tc.want, out)
				}
			}
		})
	}
}
