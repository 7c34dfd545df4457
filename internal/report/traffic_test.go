package report

import (
	"html"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// trafficResults is a traffic block of three rates: every request good at
// the lowest two (goodput = achieved), half at the highest.
func trafficResults() *result.Results {
	cell := func(rate, achieved, good float64, launched, completed int, st vocab.Status) result.TrafficCell {
		return result.TrafficCell{Traffic: "steady", Context: 1024, Rate: rate, Arrivals: vocab.ArrivalsPoisson, Status: st,
			AchievedRPS: achieved, GoodputRPS: good, GoodputShare: good / achieved, Launched: launched, Completed: completed,
			MeasuredS: 10, E2EMs: 300, TTFTMs: 20, TTFTMsP99: 40, TBTMs: 5, ConcurrencyAvg: achieved * 0.3}
	}
	return &result.Results{Server: result.Server{Name: "qwen"}, Traffic: []result.TrafficCell{
		cell(0.5, 0.2, 0.2, 2, 2, vocab.StatusValid),
		cell(4, 3.9, 3.9, 39, 39, vocab.StatusValid),
		cell(16, 15.8, 7.9, 158, 150, vocab.StatusQueued),
	}}
}

// TestTrafficSummary: the traffic line says how many requests were
// launched and finished, and the rate offered, before the rates achieved.
func TestTrafficSummary(t *testing.T) {
	cells := trafficResults().Traffic
	for i, want := range map[int]string{
		0: "2 launched, 2 completed in 10s: 0.20 of 0.5 req/s achieved · goodput 0.20 req/s (100.0%) · TTFT p99 40 ms · e2e p50 300 ms · 0.1 in flight · valid",
		2: "158 launched, 150 completed in 10s: 15.80 of 16 req/s achieved · goodput 7.90 req/s (50.0%) · TTFT p99 40 ms · e2e p50 300 ms · 4.7 in flight · queued",
	} {
		if got := TrafficSummary(&cells[i]); got != want {
			t.Errorf("TrafficSummary =\n%s\nwant\n%s", got, want)
		}
	}
	// Where no request completed the latencies are unmeasured (the fields
	// hold 0), and with none launched the goodput share too: dashes.
	none := result.TrafficCell{Traffic: "steady", Context: 1024, Rate: 4, Status: vocab.StatusValid, Launched: 3, MeasuredS: 1}
	want := "3 launched, 0 completed in 1s: 0.00 of 4 req/s achieved · goodput 0.00 req/s (0.0%) · TTFT p99 — · e2e p50 — · 0.0 in flight · valid"
	if got := TrafficSummary(&none); got != want {
		t.Errorf("none completed: TrafficSummary =\n%s\nwant\n%s", got, want)
	}
	none.Launched = 0
	want = "0 launched, 0 completed in 1s: 0.00 of 4 req/s achieved · goodput 0.00 req/s (—) · TTFT p99 — · e2e p50 — · 0.0 in flight · valid"
	if got := TrafficSummary(&none); got != want {
		t.Errorf("none launched: TrafficSummary =\n%s\nwant\n%s", got, want)
	}
	closed := cells[1]
	closed.Rate, closed.Concurrency = 0, 4
	want = "39 launched, 39 completed in 10s: 3.90 req/s achieved at concurrency 4 · goodput 3.90 req/s (100.0%) · TTFT p99 40 ms · e2e p50 300 ms · 1.2 in flight · valid"
	if got := TrafficSummary(&closed); got != want {
		t.Errorf("closed loop: TrafficSummary =\n%s\nwant\n%s", got, want)
	}
}

// TestGoodputChart: goodput is drawn last (on top), solid and thin, over
// achieved, wide and dashed with square marks, so that both show where
// they coincide; the dotted achieved = offered line runs through each
// configured rate.
func TestGoodputChart(t *testing.T) {
	charts := trafficCharts(newTrafficBlocks(trafficResults()))
	if len(charts) != 2 {
		t.Fatalf("%d charts, want goodput and TTFT p99", len(charts))
	}
	svg := string(charts[0].SVG)
	lines := regexp.MustCompile(`<polyline points="[^"]*" fill="none" stroke="([^"]+)" stroke-width="([0-9.]+)"( stroke-dasharray="([^"]+)")?/>`).FindAllStringSubmatch(svg, -1)
	if len(lines) != 3 {
		t.Fatalf("%d lines, want achieved = offered, achieved, goodput:\n%s", len(lines), svg)
	}
	offered, achieved, good := lines[0], lines[1], lines[2]
	if offered[1] != "#777" || offered[4] == "" {
		t.Errorf("the first line is not the dotted grey achieved = offered: %q", offered[0])
	}
	aw, _ := strconv.ParseFloat(achieved[2], 64)
	gw, _ := strconv.ParseFloat(good[2], 64)
	if achieved[4] == "" || aw <= gw {
		t.Errorf("achieved (%q) must be dashed and wider than goodput (%q), drawn before it", achieved[0], good[0])
	}
	if good[4] != "" || good[1] == achieved[1] {
		t.Errorf("goodput (%q) must be solid, in another colour than achieved", good[0])
	}
	if n := strings.Count(svg, `width="9" height="9"`); n < 3 {
		t.Errorf("%d square marks, want one per achieved point (and the legend's)", n)
	}
	for _, want := range []string{"achieved = offered", ">achieved<", ">goodput<"} {
		if !strings.Contains(svg, want) {
			t.Errorf("legend lacks %q", want)
		}
	}
	// The reference passes through (rate, rate): at rate 16 it is the top point.
	if !strings.Contains(svg, "<title>offered rate 16 req/s</title>") {
		t.Errorf("no reference point at the offered rate 16")
	}
}

// TestHTMLTrafficTable: report.html has the Traffic table report.md has.
func TestHTMLTrafficTable(t *testing.T) {
	html := renderHTML(t, trafficResults())
	for _, want := range []string{
		"<h2>Traffic steady at 1K (poisson arrivals, seed 0)</h2>",
		"<th>Launched requests</th>", "<th>Completed requests</th>", "<th>Goodput req/s</th>",
		"<td>158</td><td>150</td><td>15.80</td><td>7.90</td>",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
}

// TestReasoningTrafficColumns: a block one of whose cells streamed
// reasoning gets the TTFO, its p99 and the phases' tokens after the TTFT
// p99 (a cell without them shows a dash); a block without reasoning keeps
// its columns.
func TestReasoningTrafficColumns(t *testing.T) {
	cell := func(rate float64, ttfo float64) result.TrafficCell {
		c := result.TrafficCell{Traffic: "think", Rate: rate, Arrivals: vocab.ArrivalsPoisson, Status: vocab.StatusValid,
			AchievedRPS: rate, GoodputRPS: rate, GoodputShare: 1, Launched: 10, Completed: 10, MeasuredS: 10, TTFTMs: 50, TTFTMsP99: 80}
		if ttfo > 0 {
			for name, v := range map[string]float64{metric.TTFOMs: ttfo, metric.TTFOMsP99: 2 * ttfo, metric.ReasoningTokens: 90, metric.ContentTokens: 64} {
				c.SetValue(metric.Must(vocab.PhaseTraffic, name), v)
			}
		}
		return c
	}
	tests := []struct {
		name  string
		cells []result.TrafficCell
		want  []string // the header after TTFT p99, and the rows there
		rows  [][]string
	}{
		{name: "reasoning", cells: []result.TrafficCell{cell(2, 230), cell(4, 0)},
			want: []string{"TTFO", "TTFO p99", "Reasoning tokens", "Content tokens", "Time between tokens"},
			rows: [][]string{{"230 ms", "460 ms", "90", "64"}, {"—", "—", "—", "—"}}},
		{name: "no reasoning", cells: []result.TrafficCell{cell(2, 0)}, want: []string{"Time between tokens"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := &result.Results{Server: result.Server{Name: "qwen"}, Traffic: tc.cells}
			tb := trafficTables(newTrafficBlocks(res))[0]
			i := slices.Index(tb.Header(), "TTFT p99") + 1
			if got := tb.Header()[i : i+len(tc.want)]; !slices.Equal(got, tc.want) {
				t.Errorf("header after TTFT p99 %q, want %q", got, tc.want)
			}
			for r, want := range tc.rows {
				if got := tb.Rows()[r][i : i+len(want)]; !slices.Equal(got, want) {
					t.Errorf("row %d after TTFT p99 %q, want %q", r, got, want)
				}
			}
		})
	}
}

// TestClosedLoopTraffic: a closed-loop block without a context is tabled
// and charted by its concurrency (no rate, no achieved = offered line),
// and a block whose server has the prefix-cache counters gets their hit
// rate as a column.
func TestClosedLoopTraffic(t *testing.T) {
	cell := func(conc int, achieved float64) result.TrafficCell {
		c := result.TrafficCell{Traffic: "replay", Concurrency: conc, Arrivals: vocab.ArrivalsPoisson, Status: vocab.StatusValid,
			AchievedRPS: achieved, GoodputRPS: achieved, GoodputShare: 1, Launched: 10, Completed: 10, MeasuredS: 10}
		c.SetValue(metric.Must(vocab.PhaseTraffic, metric.PrefixCacheHitRate), 0.5)
		return c
	}
	res := &result.Results{Server: result.Server{Name: "qwen"}, Traffic: []result.TrafficCell{cell(8, 4), cell(32, 9)}}
	tables := trafficTables(newTrafficBlocks(res))
	if len(tables) != 1 {
		t.Fatalf("%d tables, want 1", len(tables))
	}
	tb := tables[0]
	h, rows := tb.Header(), tb.Rows()
	if tb.Title() != "Traffic replay (closed loop)" || h[0] != "Concurrency" || rows[1][0] != "32" ||
		h[len(h)-1] != "Prefix cache hit rate" || rows[0][len(rows[0])-1] != "0.500" || !strings.Contains(tb.Intro(), "closed loop") {
		t.Errorf("table %q %q %q %q", tb.Title(), h, rows, tb.Intro())
	}
	charts := trafficCharts(newTrafficBlocks(res))
	if len(charts) != 2 {
		t.Fatalf("%d charts, want 2", len(charts))
	}
	svg := string(charts[0].SVG)
	if strings.Contains(svg, "achieved = offered") || strings.Contains(svg, "NaN") || strings.Contains(svg, "Inf") || !strings.Contains(svg, "concurrency 32") {
		t.Errorf("closed-loop goodput chart: want points by concurrency, no offered line:\n%.600s", svg)
	}
}

// TestTurnTable: a conversation block's report has, after its Traffic
// table, a table of its per-turn TTFT (ttft_ms_turn1, …), a column per
// turn any cell measured and a dash where a cell lacks one; a block
// without conversations has none. report.md's section is golden
// (testdata/traffic-turns.md; go test ./report -update) and report.html
// holds the same table.
func TestTurnTable(t *testing.T) {
	cell := func(conc int, status vocab.Status, turns ...float64) result.TrafficCell {
		c := result.TrafficCell{Traffic: "chat", Concurrency: conc, Arrivals: vocab.ArrivalsPoisson, Status: status,
			AchievedRPS: 4, GoodputRPS: 4, GoodputShare: 1, Launched: 20, Completed: 20, MeasuredS: 5}
		for i, v := range turns {
			c.SetValue(metric.Must(vocab.PhaseTraffic, metric.TurnName(i+1)), v)
		}
		return c
	}
	tests := []struct {
		name   string
		cells  []result.TrafficCell
		tables int
	}{
		{name: "conversations", cells: []result.TrafficCell{cell(4, vocab.StatusValid, 88.3, 12.4, 12.6), cell(16, vocab.StatusValid, 120.7, 30.2), cell(64, vocab.StatusError)}, tables: 2},
		{name: "no conversations", cells: []result.TrafficCell{cell(4, vocab.StatusValid)}, tables: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := &result.Results{Server: result.Server{Name: "qwen"}, Traffic: tt.cells}
			if got := len(trafficTables(newTrafficBlocks(res))); got != tt.tables {
				t.Fatalf("%d tables, want %d", got, tt.tables)
			}
			if tt.tables == 1 {
				return
			}
			var b strings.Builder
			if err := WriteMarkdown(&b, res); err != nil {
				t.Fatal(err)
			}
			md := b.String()
			start := strings.Index(md, "## Traffic chat (closed loop): TTFT by conversation turn")
			if start < 0 {
				t.Fatalf("report.md has no per-turn table:\n%s", md)
			}
			end := strings.Index(md[start+3:], "\n## ")
			if end < 0 {
				end = len(md) - start - 3
			}
			golden(t, "traffic-turns.md", []byte(md[start:start+3+end]))
			page := renderHTML(t, res)
			for _, want := range []string{"<h2>Traffic chat (closed loop): TTFT by conversation turn</h2>",
				"<th>Turn 1</th><th>Turn 2</th><th>Turn 3</th>", "<td>4</td><td class=\"left\">Valid</td><td>88</td><td>12</td><td>13</td>",
				"<td>16</td><td class=\"left\">Valid</td><td>121</td><td>30</td><td>—</td>"} {
				if !strings.Contains(page, want) {
					t.Errorf("report.html lacks %q", want)
				}
			}
		})
	}
}

// TestTrafficChartWords: each measured cell's points in a traffic
// block's charts carry its own line (TrafficSummary) after its rate or
// concurrency, and each rate or concurrency labels the x axis.
func TestTrafficChartWords(t *testing.T) {
	closed := trafficResults()
	for i := range closed.Traffic {
		closed.Traffic[i].Concurrency = 2 << i
	}
	tests := []struct {
		name string
		res  *result.Results
		head func(c *result.TrafficCell) string
	}{
		{"open loop", trafficResults(), func(c *result.TrafficCell) string { return "rate " + vocab.FormatRate(c.Rate) + ": " }},
		{"closed loop", closed, func(c *result.TrafficCell) string { return "concurrency " + strconv.Itoa(c.Concurrency) + ": " }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			charts := trafficCharts(newTrafficBlocks(tt.res))
			if len(charts) != 2 {
				t.Fatalf("%d charts, want goodput and TTFT p99", len(charts))
			}
			for _, ch := range charts {
				svg := string(ch.SVG)
				for i := range tt.res.Traffic {
					c := &tt.res.Traffic[i]
					tip := "<title>" + html.EscapeString(tt.head(c)+TrafficSummary(c)) + "</title>"
					if !strings.Contains(svg, tip) {
						t.Errorf("%s: no point with the tooltip %q", ch.Title, tip)
					}
					if tick := ">" + trafficLoad(c) + "</text>"; !strings.Contains(svg, tick) {
						t.Errorf("%s: no x axis label %q", ch.Title, tick)
					}
				}
			}
		})
	}
}

// TestTrafficTableRows: a traffic block's table has a row per cell, its
// load and its own status's word, then its figures, a dash each where it
// was not measured.
func TestTrafficTableRows(t *testing.T) {
	res := trafficResults()
	res.Traffic = append(res.Traffic, result.TrafficCell{Traffic: "steady", Context: 1024, Rate: 32, Arrivals: vocab.ArrivalsPoisson,
		Status: vocab.StatusError, Reason: "server gone"})
	tables := trafficTables(newTrafficBlocks(res))
	if len(tables) != 1 {
		t.Fatalf("%d tables, want 1", len(tables))
	}
	rows := tables[0].Rows()
	tests := []struct {
		name           string
		load, status   string
		measuredFigure bool
	}{
		{name: "rate 0.5, valid", load: "0.5", status: "Valid", measuredFigure: true},
		{name: "rate 4, valid", load: "4", status: "Valid", measuredFigure: true},
		{name: "rate 16, queued", load: "16", status: "Requests queued", measuredFigure: true},
		{name: "rate 32, an error", load: "32", status: "Error"},
	}
	if len(rows) != len(tests) {
		t.Fatalf("%d rows, want %d: %q", len(rows), len(tests), rows)
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := rows[i]
			if r[0] != tt.load || r[1] != tt.status {
				t.Errorf("row %q, want load %q and status %q first", r, tt.load, tt.status)
			}
			if got := r[2] != dash; got != tt.measuredFigure {
				t.Errorf("row %q: a figure in its first metric column is %v, want %v", r, got, tt.measuredFigure)
			}
		})
	}
}

// TestTrafficChartsNeedTwoLoads: a traffic block of one rate gets no chart
// in report.html (one dot a line draws no trend; its table holds the
// figures); two rates or more get the goodput and TTFT p99 charts.
func TestTrafficChartsNeedTwoLoads(t *testing.T) {
	tests := []struct {
		name   string
		cells  int
		charts int
	}{
		{"one rate: its table only", 1, 0},
		{"two rates: both charts", 2, 2},
		{"three rates: both charts", 3, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := trafficResults()
			res.Traffic = res.Traffic[:tc.cells]
			h := renderHTML(t, res)
			if n := strings.Count(h, "<svg "); n != tc.charts {
				t.Errorf("%d charts, want %d", n, tc.charts)
			}
			if !strings.Contains(h, `<table class="traffic">`) {
				t.Error("the block's table is missing")
			}
		})
	}
}

// TestTrafficDialColumn: a block whose workload dialled a prefix-cache hit
// rate has the measured rate and the dial side by side, the dial on every
// row whatever the cell's status; a block without a dial has neither
// column unless its server counted hits.
func TestTrafficDialColumn(t *testing.T) {
	dial := 0.5
	tests := []struct {
		name     string
		dial     *float64
		header   []string // the last columns
		firstRow []string
	}{
		{name: "dialled", dial: &dial, header: []string{"Prefix cache hit rate", "Dialled hit rate"}, firstRow: []string{"0.480", "0.500"}},
		{name: "not dialled", header: []string{"Prefix cache hit rate"}, firstRow: []string{"0.480"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := trafficResults()
			for i := range res.Traffic {
				res.Traffic[i].PrefixHitRateDial = tt.dial
				res.Traffic[i].SetValue(metric.Must(vocab.PhaseTraffic, metric.PrefixCacheHitRate), 0.48)
			}
			tables := trafficTables(newTrafficBlocks(res))
			h, r := tables[0].Header(), tables[0].Rows()[0]
			if got := h[len(h)-len(tt.header):]; strings.Join(got, "|") != strings.Join(tt.header, "|") {
				t.Errorf("header ends %q, want %q", got, tt.header)
			}
			if got := r[len(r)-len(tt.firstRow):]; strings.Join(got, "|") != strings.Join(tt.firstRow, "|") {
				t.Errorf("first row ends %q, want %q", got, tt.firstRow)
			}
		})
	}
}
