package report

import (
	"bufio"
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
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
			Status: vocab.StatusValid, PerRequestTPS: tps, TTFTMsP99: 100}}
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
	writeSearches(b, newSearchViews(searchResults()))
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

// svgText finds the <text> whose content starts with prefix: its x, y and
// anchor.
func svgText(t *testing.T, svg, prefix string) (x, y float64, anchor string) {
	t.Helper()
	re := regexp.MustCompile(`<text x="([0-9.]+)" y="([0-9.]+)" text-anchor="(\w+)" class="tick">` + regexp.QuoteMeta(prefix))
	m := re.FindStringSubmatch(svg)
	if m == nil {
		t.Fatalf("no text %q in\n%s", prefix, svg)
	}
	x, _ = strconv.ParseFloat(m[1], 64)
	y, _ = strconv.ParseFloat(m[2], 64)
	return x, y, m[3]
}

// TestSearchChartLabels: the answer's label stays inside the plot when the
// answer is the top of the range (it read "ans", cut by the frame), and the
// objective's label covers no probe (it sat on the last one).
func TestSearchChartLabels(t *testing.T) {
	const plotLeft, plotRight = 64.0, 616.0 // lineChart's frame: W 640, margins 64 and 24
	circles := regexp.MustCompile(`<circle cx="([0-9.]+)" cy="([0-9.]+)"`)
	tests := []struct {
		name        string
		answer      int
		probes      [][2]float64 // concurrency, per_request_tps
		answerStart bool         // the answer's label right of its line
	}{
		{name: "answer at the top of the range, a probe on the threshold's right end", answer: 16,
			probes: [][2]float64{{1, 90}, {2, 80}, {4, 70}, {8, 60}, {16, 50}}},
		{name: "answer inside the range, a probe on the threshold's left end", answer: 8, answerStart: true,
			probes: [][2]float64{{1, 50}, {8, 60}, {16, 30}, {9, 48}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := searchResults()
			s := &res.Search[0]
			s.Concurrency, s.ConfirmedBy, s.Probes = tt.answer, 0, nil
			for _, p := range tt.probes {
				c := int(p[0])
				s.Probes = append(s.Probes, result.SearchProbe{Concurrency: c, Passed: c <= tt.answer, Cell: result.DecodeCell{
					Search: "max_users", Context: 8192, Concurrency: c, Status: vocab.StatusValid, PerRequestTPS: p[1]}})
			}
			svg := searchChart(newSearchViews(res)[0])
			label := fmt.Sprintf("answer %d", tt.answer)
			x, _, anchor := svgText(t, svg, label)
			lo, hi := x, x+textWidth(label)
			if anchor == "end" {
				lo, hi = x-textWidth(label), x
			}
			if lo < plotLeft || hi > plotRight {
				t.Errorf("%q spans x %.0f–%.0f, outside the plot %.0f–%.0f", label, lo, hi, plotLeft, plotRight)
			}
			if (anchor == "start") != tt.answerStart {
				t.Errorf("%q anchored %s", label, anchor)
			}
			obj := "objective: per_request_tps &gt;= 50"
			ox, oy, oanchor := svgText(t, svg, obj)
			w := textWidth("objective: per_request_tps >= 50")
			x0, x1 := ox, ox+w
			if oanchor == "end" {
				x0, x1 = ox-w, ox
			}
			for _, m := range circles.FindAllStringSubmatch(svg, -1) {
				cx, _ := strconv.ParseFloat(m[1], 64)
				cy, _ := strconv.ParseFloat(m[2], 64)
				if cx+4 >= x0 && cx-4 <= x1 && cy+4 >= oy-12 && cy-4 <= oy+3 {
					t.Errorf("the objective's label (x %.0f–%.0f, baseline %.0f) covers the probe at (%.0f, %.0f)", x0, x1, oy, cx, cy)
				}
			}
		})
	}
}
