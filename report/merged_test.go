package report

import "testing"

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
