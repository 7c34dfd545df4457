package report

import (
	"bufio"
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/slogate/slogate/result"
)

// TestObjectiveComparisons: the `cell.M OP number` comparisons of an
// objective, in the order written, either side; others are left out.
func TestObjectiveComparisons(t *testing.T) {
	tests := []struct {
		name, text string
		want       []comparison
	}{
		{name: "two comparisons", text: "cell.per_request_tps >= 50 && cell.ttft_ms_p99 <= 2000",
			want: []comparison{{"per_request_tps", ">=", 50}, {"ttft_ms_p99", "<=", 2000}}},
		{name: "number on the left is flipped", text: "2000 > cell.ttft_ms",
			want: []comparison{{"ttft_ms", "<", 2000}}},
		{name: "var and equality are not charted", text: "cell.total_tps >= var.floor || cell.status == \"valid\"",
			want: nil},
		{name: "unparsable", text: "cell.(", want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, objectiveComparisons(tt.text)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func searchResults() *result.Results {
	probe := func(c int, tps float64, passed bool) result.SearchProbe {
		return result.SearchProbe{Concurrency: c, Passed: passed, Cell: result.DecodeCell{Search: "max_users", Context: 8192, Concurrency: c,
			Status: result.StatusValid, PerRequestTPS: tps, TTFTMsP99: 100}}
	}
	return &result.Results{Server: result.Server{Name: "qwen"}, Search: []result.Search{{
		Name: "max_users", Context: 8192, Range: [2]int{1, 16}, Objective: "cell.per_request_tps >= 50 && cell.ttft_ms_p99 <= 2000",
		Concurrency: 8, Found: true, Monotone: true, ConfirmedBy: 9,
		Probes: []result.SearchProbe{probe(1, 90, true), probe(8, 60, true), probe(16, 30, false), probe(9, 48, false)},
	}}}
}

// TestSearchMarkdown: report.md shows the answer, the objective and one
// row per probe in the order measured.
func TestSearchMarkdown(t *testing.T) {
	var buf bytes.Buffer
	b := bufio.NewWriter(&buf)
	writeSearches(b, searchResults())
	b.Flush()
	for _, want := range []string{
		"## Search max_users",
		"Largest concurrency meeting the objective at context 8K, concurrency 1 to 16: 8 (confirmed: 9 fails). 4 probes.",
		"charts `per_request_tps >= 50` against concurrency; the objective also requires `ttft_ms_p99 <= 2000`",
		"| # | Concurrency | Status | per_request_tps | ttft_ms_p99 | Objective |",
		"| 3 | 16 | Valid | 30.0 | 100 | not met |",
		"| 4 | 9 | Valid | 48.0 | 100 | not met |",
	} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, buf.String())
		}
	}
}

// TestSearchChart: one point per measured probe, failing ones hollow, the
// threshold line at its value and the answer marked.
func TestSearchChart(t *testing.T) {
	v := newSearchViews(searchResults())[0]
	svg := searchChart(v)
	if n := strings.Count(svg, "<circle"); n != 4 {
		t.Errorf("%d points, want 4", n)
	}
	if n := strings.Count(svg, `fill="#fff" stroke="#D55E00"`); n != 2 {
		t.Errorf("%d hollow (failing) points, want 2", n)
	}
	for _, want := range []string{"objective: per_request_tps &gt;= 50", "answer 8", "per_request_tps by concurrency at 8K"} {
		if !strings.Contains(svg, want) {
			t.Errorf("chart lacks %q", want)
		}
	}
	// The threshold (50) and the top probe (90) scale on the same axis:
	// niceTicks(99) tops at 100, so 50 sits half-way down the plot.
	if !strings.Contains(svg, `y1="164.0"`) {
		t.Errorf("threshold line not at y=164 (half of the 256-px plot below y=36):\n%s", svg)
	}
}
