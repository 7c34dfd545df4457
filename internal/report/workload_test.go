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
// has the Workload line when a cell sent the workload block's prompts (a
// decode, prefill or search cell, a traffic cell without a named
// workload), and the Decode test and Prefill mode lines only for the
// cells they describe; results without a workload record have none, nor
// a run of named-workload traffic cells alone (they send their own).
func TestReportsShowWorkload(t *testing.T) {
	rec := requests.NewBuilder(nil, workload.Options{}).Record()
	decode := []result.DecodeCell{{Context: 8192, Concurrency: 1}}
	for _, tc := range []struct {
		name                 string
		workload             *workload.Record
		decode               []result.DecodeCell
		prefill              []result.PrefillCell
		traffic              []result.TrafficCell
		search               []result.Search
		want, decodeRow, pre bool
	}{
		{name: "recorded, decode cells", workload: &rec, decode: decode, want: true, decodeRow: true, pre: true},
		{name: "not recorded", decode: decode, decodeRow: true, pre: true},
		{name: "recorded, prefill cells alone", workload: &rec, prefill: []result.PrefillCell{{Context: 8192}}, want: true, pre: true},
		{name: "recorded, traffic on the workload block's prompts", workload: &rec, traffic: []result.TrafficCell{{Traffic: "steady", Context: 8192, Rate: 1}}, want: true},
		{name: "recorded, a rate search alone: no decode lines", workload: &rec, search: []result.Search{{Name: "capacity", Traffic: "steady", RateRange: [2]float64{1, 8}, Found: true, Rate: 4,
			Probes: []result.SearchProbe{{Rate: 4, Decision: result.DecisionMet, Windows: 1, Traffic: &result.TrafficCell{Traffic: "steady", Search: "capacity", Context: 8192, Rate: 4}}}}}, want: true},
		{name: "recorded, traffic of named workloads alone", workload: &rec, traffic: []result.TrafficCell{{Traffic: "chat", Concurrency: 4, Workload: "chat"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := &result.Results{Schema: result.Schema, Server: result.Server{Name: "q", Model: "Qwen/Q"}, Workload: tc.workload,
				Decode: tc.decode, Prefill: tc.prefill, Traffic: tc.traffic, Search: tc.search}
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
				if got := strings.Contains(out, "Fixed duration"); got != tc.decodeRow {
					t.Errorf("%s shows the Decode test line: %v, want %v", name, got, tc.decodeRow)
				}
				if got := strings.Contains(out, "Measured during decode warm-up"); got != tc.pre {
					t.Errorf("%s shows the Prefill mode line: %v, want %v", name, got, tc.pre)
				}
			}
		})
	}
}
