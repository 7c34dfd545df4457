package spec_test

import (
	"strings"
	"testing"

	"github.com/slogate/slogate/internal/spec"
)

// TestSearchRangeDetails: a search's [lo, hi] written wrong says what the
// range is and what to write, for concurrency and for rate alike.
func TestSearchRangeDetails(t *testing.T) {
	tests := []struct {
		name, search, summary, detail string
	}{
		{name: "concurrency reversed", search: `context = "1K"
  concurrency = [16, 4]`, summary: "Invalid search range",
			detail: "The range [16, 4] is empty: its lower end must be below its upper end, as in [1, 256]."},
		{name: "concurrency not a pair", search: `context = "1K"
  concurrency = [4]`, summary: "Invalid search range",
			detail: "concurrency is the range searched, a pair [lo, hi] such as [1, 256]."},
		{name: "concurrency zero", search: `context = "1K"
  concurrency = [0, 4]`, summary: "Invalid concurrency", detail: "."},
		{name: "rate reversed", search: `traffic = "chat"
  rate = [8, 2]`, summary: "Invalid search range",
			detail: "The range [8, 2] is empty: its lower end must be below its upper end, as in [2, 8]."},
		{name: "rate not a pair", search: `traffic = "chat"
  rate = [8]`, summary: "Invalid search range",
			detail: "rate is the range of request rates searched, a pair [lo, hi] in requests per second such as [0.5, 32]."},
		{name: "rate zero", search: `traffic = "chat"
  rate = [0, 8]`, summary: "Invalid rate",
			detail: ": the range searched is [lo, hi] with 0 < lo < hi, such as [0.5, 32]."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			objective := "cell.goodput_share >= 0.9"
			if strings.HasPrefix(tc.search, "context") {
				objective = "cell.total_tps >= 1"
			}
			src := `server "s" {
  model = "m"
  command = ["m"]
}
traffic "chat" {
  context = "1K"
  rate    = [1]
}
search "x" {
  ` + tc.search + `
  objective = ` + objective + `
}
`
			_, diags := spec.LoadSource("x.hcl", []byte(src), spec.LoadOptions{})
			for _, d := range diags {
				if d.Summary == tc.summary && strings.HasSuffix(d.Detail, tc.detail) {
					return
				}
			}
			t.Errorf("diagnostics %v, want %q ending %q", diags, tc.summary, tc.detail)
		})
	}
}
