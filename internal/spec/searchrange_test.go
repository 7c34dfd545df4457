package spec_test

import (
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"

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

// TestCheckWindows: a rate search's check_windows is a whole number of
// windows from 2 to spec.MaxCheckWindows; anything else is "Invalid
// check_windows" saying what it is, the range, and what was written.
func TestCheckWindows(t *testing.T) {
	const detail = "check_windows is the number of windows the search measures at its answer for a later run's paired check of capacity lost, a whole number from 2 to 200 such as 24 (docs/method.md#paired-capacity-check); got "
	tests := []struct {
		name  string
		value string // "" writes no check_windows
		want  int    // CheckWindows when accepted
		got   string // the detail's "got …" when refused; "" when accepted
	}{
		{name: "absent measures none", want: 0},
		{name: "24", value: "24", want: 24},
		{name: "2, the fewest", value: "2", want: 2},
		{name: "200, the most", value: "200", want: spec.MaxCheckWindows},
		{name: "1 has no spread", value: "1", got: "1"},
		{name: "0", value: "0", got: "0"},
		{name: "negative", value: "-24", got: "-24"},
		{name: "a fraction", value: "2.5", got: "2.5"},
		{name: "one past the most", value: "201", got: "201"},
		{name: "a string", value: `"24"`, got: `"24"`},
		{name: "a bool", value: "true", got: "bool"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			line := ""
			if tc.value != "" {
				line = "check_windows = " + tc.value
			}
			src := `server "s" { model = "m" }
traffic "chat" {
  context = "1K"
  rate    = [1]
}
search "x" {
  traffic   = "chat"
  rate      = [1, 8]
  ` + line + `
  objective = cell.goodput_share >= 0.9
}
`
			sp, diags := spec.LoadSource("x.hcl", []byte(src), spec.LoadOptions{})
			if tc.got == "" {
				if diags.HasErrors() {
					t.Fatalf("check_windows = %s refused: %v", tc.value, diags)
				}
				if got := sp.Searches[0].CheckWindows; got != tc.want {
					t.Errorf("CheckWindows = %d, want %d", got, tc.want)
				}
				return
			}
			errs := diags.Errs()
			if len(errs) != 1 {
				t.Fatalf("want one diagnostic, got %v", diags)
			}
			d := errs[0].(*hcl.Diagnostic)
			if want := detail + tc.got + "."; d.Summary != "Invalid check_windows" || d.Detail != want {
				t.Errorf("diagnostic %q: %q\nwant %q: %q", d.Summary, d.Detail, "Invalid check_windows", want)
			}
			if d.Subject == nil || d.Subject.Start.Line != 9 {
				t.Errorf("subject %v, want the value on line 9", d.Subject)
			}
		})
	}
}
