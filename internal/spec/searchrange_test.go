package spec_test

import (
	"strconv"
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

// TestWindowCounts: a rate search's check_windows and max_windows are
// whole numbers of windows from 2 to spec.MaxCheckWindows and
// spec.MaxProbeWindows; anything else is "Invalid check_windows" (or
// max_windows) saying what it is, the range, and what was written.
func TestWindowCounts(t *testing.T) {
	attrs := []struct {
		name   string
		most   int
		detail string
		field  func(*spec.Search) int
	}{
		{name: "check_windows", most: spec.MaxCheckWindows,
			detail: "check_windows is the number of windows the search measures at its answer for a later run's paired check of capacity lost, a whole number from 2 to 200 such as 24 (docs/method.md#paired-capacity-check); got ",
			field:  func(s *spec.Search) int { return s.CheckWindows }},
		{name: "max_windows", most: spec.MaxProbeWindows,
			detail: "max_windows is the most windows one probe measures before it goes by its point estimates, a whole number from 2 to 1000 such as 16 (docs/method.md#rate-search-precision); got ",
			field:  func(s *spec.Search) int { return s.MaxWindows }},
	}
	tests := []struct {
		name  string
		value string // "" writes no attribute
		want  int    // the field when accepted; -1: the attribute's most
		got   string // the detail's "got …" when refused; "" when accepted
	}{
		{name: "absent", want: 0},
		{name: "24", value: "24", want: 24},
		{name: "2, the fewest", value: "2", want: 2},
		{name: "the most", value: "MOST", want: -1},
		{name: "1 has no spread", value: "1", got: "1"},
		{name: "0", value: "0", got: "0"},
		{name: "negative", value: "-24", got: "-24"},
		{name: "a fraction", value: "2.5", got: "2.5"},
		{name: "one past the most", value: "MOST+1", got: "MOST+1"},
		{name: "a string", value: `"24"`, got: `"24"`},
		{name: "a bool", value: "true", got: "bool"},
	}
	for _, at := range attrs {
		for _, tc := range tests {
			t.Run(at.name+"/"+tc.name, func(t *testing.T) {
				most := strconv.Itoa(at.most)
				value := strings.NewReplacer("MOST+1", strconv.Itoa(at.most+1), "MOST", most).Replace(tc.value)
				got := strings.ReplaceAll(tc.got, "MOST+1", strconv.Itoa(at.most+1))
				want := tc.want
				if want < 0 {
					want = at.most
				}
				line := ""
				if value != "" {
					line = at.name + " = " + value
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
				if got == "" {
					if diags.HasErrors() {
						t.Fatalf("%s refused: %v", line, diags)
					}
					if n := at.field(sp.Searches[0]); n != want {
						t.Errorf("%s: read %d, want %d", line, n, want)
					}
					return
				}
				errs := diags.Errs()
				if len(errs) != 1 {
					t.Fatalf("want one diagnostic, got %v", diags)
				}
				d := errs[0].(*hcl.Diagnostic)
				if summary, detail := "Invalid "+at.name, at.detail+got+"."; d.Summary != summary || d.Detail != detail {
					t.Errorf("diagnostic %q: %q\nwant %q: %q", d.Summary, d.Detail, summary, detail)
				}
				if d.Subject == nil || d.Subject.Start.Line != 9 {
					t.Errorf("subject %v, want the value on line 9", d.Subject)
				}
			})
		}
	}
}
