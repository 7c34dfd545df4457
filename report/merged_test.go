package report

import (
	"regexp"
	"strings"
	"testing"

	"github.com/slogate/slogate/result"
	"github.com/slogate/slogate/vocab"
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
	if len(ids) < 4 {
		t.Fatalf("only %d ids on the page; the charts are missing", len(ids))
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
