package report

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// TestReportsHeadEngine: every report is headed with the run's engine and
// version, from one function: report.md's summary line, report.html's, the
// CI summary's, and a merged report's index and each of its runs (md and
// html). An SGLang run's reports said "vllm" (the engine label's fallback)
// though its Engine table said sglang. The headers are golden
// (testdata/engine-headers.txt; go test ./report -update).
func TestReportsHeadEngine(t *testing.T) {
	tests := []struct {
		name string
		srv  result.Server
		want string // the engine part of every header
	}{
		{name: "sglang field", srv: result.Server{Name: "sg", Engine: "sglang", Version: "0.5.5-slogate-sim", Model: "Qwen/Qwen3.5-4B", Simulated: true}, want: "sglang · 0.5.5-slogate-sim"},
		{name: "vllm field", srv: result.Server{Name: "vl", Engine: "vllm", Version: "0.11.0-slogate-sim", Model: "Qwen/Qwen3.5-4B", Simulated: true}, want: "vllm · 0.11.0-slogate-sim"},
		{name: "older results: the label", srv: result.Server{Name: "old", Version: "0.26.1", Model: "Qwen/Qwen3.5-4B", Labels: map[string]string{"engine": "sglang"}}, want: "sglang · 0.26.1"},
		{name: "the field wins over the label", srv: result.Server{Name: "both", Engine: "sglang", Version: "0.5.5", Model: "m", Labels: map[string]string{"engine": "vllm"}}, want: "sglang · 0.5.5"},
		{name: "no version", srv: result.Server{Name: "nv", Engine: "sglang", Model: "m"}, want: "sglang"},
	}
	summary := regexp.MustCompile(`<p class="summary">([^<]*)</p>`)
	var got strings.Builder
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := &result.Results{Schema: result.Schema, Spec: "specs/x.hcl", Server: tt.srv,
				Decode: []result.DecodeCell{{Matrix: "decode", Context: 8192, Concurrency: 1, Status: vocab.StatusValid, TotalTPS: 100, TTFTMs: 10, TBTMs: 2}}}
			var md, sum, page strings.Builder
			if err := WriteMarkdown(&md, res); err != nil {
				t.Fatal(err)
			}
			if err := WriteSummary(&sum, res); err != nil {
				t.Fatal(err)
			}
			if err := WriteHTML(&page, res); err != nil {
				t.Fatal(err)
			}
			m := &result.Merged{Schema: result.MergedSchema, Runs: []result.MergedRun{{Dir: tt.srv.Name, Results: res}}}
			var mmd, mpage strings.Builder
			if err := WriteMergedMarkdown(&mmd, m); err != nil {
				t.Fatal(err)
			}
			if err := WriteMergedHTML(&mpage, m); err != nil {
				t.Fatal(err)
			}
			line := func(doc, prefix string) string {
				for _, l := range strings.Split(doc, "\n") {
					if strings.HasPrefix(l, prefix) {
						return l
					}
				}
				return ""
			}
			mdSummary := strings.Split(md.String(), "\n")[4] // "Speed test matrix", "", "# title", "", summary
			htmlSummary := summary.FindStringSubmatch(page.String())
			mergedHTMLSummary := summary.FindStringSubmatch(mpage.String())
			if htmlSummary == nil || mergedHTMLSummary == nil {
				t.Fatalf("no summary paragraph in report.html or the merged page")
			}
			headers := []struct{ where, text string }{
				{"report.md", mdSummary},
				{"summary", strings.Split(sum.String(), "\n")[2]},
				{"report.html", htmlSummary[1]},
				{"merged report.md index", line(mmd.String(), "| "+tt.srv.Name+" |")},
				{"merged report.md run", line(strings.SplitN(mmd.String(), "---\n", 2)[1], tt.want)},
				{"merged report.html run", mergedHTMLSummary[1]},
			}
			fmt.Fprintf(&got, "%s\n", tt.name)
			for _, h := range headers {
				if !strings.Contains(h.text, tt.want) {
					t.Errorf("%s is headed %q, want %q in it", h.where, h.text, tt.want)
				}
				fmt.Fprintf(&got, "  %s: %s\n", h.where, h.text)
			}
			if !strings.Contains(mpage.String(), `<td class="left">`+tt.want+`</td></tr>`) {
				t.Errorf("the merged page's index does not name %q", tt.want)
			}
		})
	}
	golden(t, "engine-headers.txt", []byte(got.String()))
}
