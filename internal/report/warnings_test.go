package report

import (
	"slices"
	"strings"
	"testing"

	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/warning"
)

// TestGroupCellWarnings: report.md lists each cell warning once, after the
// cells that carry it, counted when several repeat it word for word (every
// dataset cell repeated its dataset's two warnings).
func TestGroupCellWarnings(t *testing.T) {
	tests := []struct {
		name string
		in   []cellWarning
		want []string
	}{
		{name: "none", in: nil, want: []string{}},
		{name: "one cell", in: []cellWarning{{"decode/ctx=8K/conc=1", "slow scrapes"}}, want: []string{"decode/ctx=8K/conc=1: slow scrapes"}},
		{name: "repeated across cells, in first-seen order",
			in: []cellWarning{{"traffic/chat/conc=4", "reused"}, {"traffic/chat/conc=4", "counts"}, {"traffic/chat/conc=8", "reused"},
				{"traffic/chat/conc=8", "counts"}, {"traffic/chat/conc=16", "counts"}},
			want: []string{"traffic/chat/conc=4, traffic/chat/conc=8 (2 cells): reused",
				"traffic/chat/conc=4, traffic/chat/conc=8, traffic/chat/conc=16 (3 cells): counts"}},
		{name: "a cell's warning twice is one cell", in: []cellWarning{{"decode/ctx=8K/conc=1", "x"}, {"decode/ctx=8K/conc=1", "x"}},
			want: []string{"decode/ctx=8K/conc=1: x"}},
		{name: "different texts stay apart", in: []cellWarning{{"a", "9 turns for 64 requests"}, {"b", "9 turns for 128 requests"}},
			want: []string{"a: 9 turns for 64 requests", "b: 9 turns for 128 requests"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := []string{}
			for _, g := range groupCellWarnings(tt.in) {
				got = append(got, g.String())
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
	res := &result.Results{Server: result.Server{Name: "qwen"}, Traffic: []result.TrafficCell{
		{Traffic: "chat", Concurrency: 4, Status: vocab.StatusValid, Warnings: []warning.Warning{warning.New(warning.DatasetCounts, "the dataset's counts", "", nil)}},
		{Traffic: "chat", Concurrency: 8, Status: vocab.StatusValid, Warnings: []warning.Warning{warning.New(warning.DatasetCounts, "the dataset's counts", "", nil)}}}}
	var b strings.Builder
	if err := WriteMarkdown(&b, res); err != nil {
		t.Fatal(err)
	}
	if md := b.String(); strings.Count(md, "the dataset's counts") != 1 ||
		!strings.Contains(md, "- traffic/chat/conc=4, traffic/chat/conc=8 (2 cells): the dataset's counts\n") {
		t.Errorf("report.md does not list the warning once with its cells:\n%s", md)
	}
}
