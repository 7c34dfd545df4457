package report

import (
	"regexp"
	"strings"
	"testing"

	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

func TestDemoteHeadings(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{name: "headings move one level down", in: "# T\n\ntext\n## S\n", want: "## T\n\ntext\n### S\n"},
		{name: "a fenced block is left alone", in: "## Launch\n\n```sh\n# not a heading\n```\n## After\n", want: "### Launch\n\n```sh\n# not a heading\n```\n### After\n"},
		{name: "a longer fence ends only at its own length", in: "````\n```\n# in\n````\n# out\n", want: "````\n```\n# in\n````\n## out\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := demoteHeadings(tt.in); got != tt.want {
				t.Errorf("demoteHeadings(%q) =\n%q, want\n%q", tt.in, got, tt.want)
			}
		})
	}
}

// TestMergedHTMLUniqueIDs: two runs with the same matrix label keep unique
// element ids on the merged page, and every url(#…) points at one of them.
func TestMergedHTMLUniqueIDs(t *testing.T) {
	run := func(name string) result.MergedRun {
		res := &result.Results{Schema: result.Schema, Spec: "s.hcl", Server: result.Server{Name: name, Model: "m"}}
		for _, c := range []int{1, 2} {
			res.Decode = append(res.Decode, result.DecodeCell{Matrix: "decode", Context: 1024, Concurrency: c, Status: vocab.StatusValid, TotalTPS: 100 * float64(c)})
		}
		return result.MergedRun{Dir: name, Results: res}
	}
	m := &result.Merged{Schema: result.MergedSchema, Runs: []result.MergedRun{run("a"), run("b")}}
	var b strings.Builder
	if err := WriteMergedHTML(&b, m); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	ids := map[string]int{}
	for _, m := range regexp.MustCompile(`id="([^"]+)"`).FindAllStringSubmatch(page, -1) {
		ids[m[1]]++
	}
	if len(ids) < 2 {
		t.Fatalf("only %d ids on the page; the runs' sections are missing", len(ids))
	}
	for id, n := range ids {
		if n > 1 {
			t.Errorf("id %q appears %d times", id, n)
		}
	}
	for _, m := range regexp.MustCompile(`url\(#([^)]+)\)`).FindAllStringSubmatch(page, -1) {
		if ids[m[1]] != 1 {
			t.Errorf("url(#%s) points at no element", m[1])
		}
	}
}

// TestMergedSideBySide: a merged report puts the same cells of the servers
// of one model side by side, a column per server named with its engine
// and version: prefill and decode cells lined up by reference, a status
// word for a cell without numbers, a dash where a server lacks the cell;
// a model only one server measured gets no comparison. The section is
// golden (testdata/merged-side-by-side.md; go test ./report -update).
func TestMergedSideBySide(t *testing.T) {
	run := func(dir, engine, version, model string, prefill []result.PrefillCell, decode []result.DecodeCell) result.MergedRun {
		res := &result.Results{Schema: result.Schema, Spec: "engines.hcl", Prefill: prefill, Decode: decode,
			Server: result.Server{Name: dir, Engine: engine, Version: version, Model: model}}
		return result.MergedRun{Dir: dir, Results: res}
	}
	valid := func(ctx, conc int, tps, ttft, tbt float64) result.DecodeCell {
		return result.DecodeCell{Matrix: "decode", Context: ctx, Concurrency: conc, Status: vocab.StatusValid, TotalTPS: tps, TTFTMs: ttft, TBTMs: tbt}
	}
	queued := valid(8192, 64, 2612, 1900.4, 21.2)
	queued.Status = vocab.StatusQueued
	m := &result.Merged{Schema: result.MergedSchema, Runs: []result.MergedRun{
		run("vllm", "", "0.26.1", "Qwen/Qwen3.5-4B",
			[]result.PrefillCell{{Context: 8192, Status: vocab.StatusValid, TPS: 46712.3, TTFTMs: 175.4}},
			[]result.DecodeCell{valid(8192, 1, 408.2, 31.6, 2.4), queued,
				{Matrix: "decode", Context: 256000, Concurrency: 128, Status: vocab.StatusOverCapacity}}),
		run("glm", "vllm", "0.26.1", "nvidia/GLM-5.3-Flash-NVFP4", nil, []result.DecodeCell{valid(8192, 1, 90, 50, 11)}),
		run("sglang", "sglang", "0.5.5", "Qwen/Qwen3.5-4B",
			[]result.PrefillCell{{Context: 8192, Status: vocab.StatusValid, TPS: 9819, TTFTMs: 834.3}},
			[]result.DecodeCell{valid(8192, 64, 3100.5, 700, 19.9), valid(8192, 1, 390.1, 35, 2.5),
				{Matrix: "decode", Search: "max_conc", Context: 8192, Concurrency: 96, Status: vocab.StatusValid, TotalTPS: 1}}),
	}}
	var b strings.Builder
	if err := WriteMergedMarkdown(&b, m); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	start := strings.Index(md, "## Side by side")
	end := strings.Index(md, "---\n")
	if start < 0 || end < start {
		t.Fatalf("no side-by-side section before the runs:\n%s", md)
	}
	if strings.Count(md, "## Side by side") != 1 {
		t.Errorf("want one comparison (GLM was measured by one server only):\n%s", md[start:end])
	}
	golden(t, "merged-side-by-side.md", []byte(md[start:end]))
	// The CI summary and the merged page hold the same comparison.
	var sum strings.Builder
	if err := WriteMergedSummary(&sum, m); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sum.String(), md[start:end]) {
		t.Errorf("the merged summary lacks the side-by-side section:\n%s", sum.String())
	}
	var page strings.Builder
	if err := WriteMergedHTML(&page, m); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"<h2>Side by side: Qwen/Qwen3.5-4B</h2>", "<th>vllm (vLLM 0.26.1)</th><th>sglang (SGLang 0.5.5)</th>",
		"<tr><td class=\"left\">decode 8K × 64</td><td>2,612.0 tok/s · TTFT 1,900 ms · TBT 21.2 ms · Requests queued</td><td>3,100.5 tok/s · TTFT 700 ms · TBT 19.9 ms</td></tr>",
		"<tr><td class=\"left\">decode 250K × 128</td><td>Over capacity</td><td>—</td></tr>", "<td class=\"left\">sglang · 0.5.5</td></tr>"} {
		if !strings.Contains(page.String(), w) {
			t.Errorf("the merged page lacks %q", w)
		}
	}
	if strings.Count(page.String(), "<h2>Side by side") != 1 {
		t.Errorf("the merged page has %d comparisons, want 1", strings.Count(page.String(), "<h2>Side by side"))
	}
}
