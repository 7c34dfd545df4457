package report

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// rateProbe is a rate search's probe at rate: its traffic cell with the
// goodput, TTFT p99 and output tok/s given.
func rateProbe(rate, goodput, share, ttftP99, outTPS float64, decision string, windows int) result.SearchProbe {
	c := &result.TrafficCell{Traffic: "steady", Context: 1024, Rate: rate, Arrivals: "poisson", Seed: 1, Status: vocab.StatusValid,
		AchievedRPS: rate, GoodputRPS: goodput, GoodputShare: share, TTFTMsP99: ttftP99, Launched: 100, Completed: 100, MeasuredS: 10,
		Stats: map[string]float64{"output_tps": outTPS}}
	return result.SearchProbe{Rate: rate, Passed: decision == result.DecisionMet, Traffic: c, Decision: decision, Windows: windows}
}

// rateSearchFixture is a run whose rate search answered 6.2 req/s
// (bounds 5.9 to 6.6) at 1,250 output tok/s on 2 GPUs at $3.50 an hour,
// compared with a baseline that answered 6.8 req/s (6.5 to 7.2) at 1,400
// output tok/s on the same: a million output tokens cost 2 × 3.50 ÷ 3600
// ÷ 1,250 × 10⁶ = $1.56 now and 2 × 3.50 ÷ 3600 ÷ 1,400 × 10⁶ = $1.39 in
// the baseline (+12.0%); the search took 180 s × 2 GPUs = 0.100 GPU-hours.
func rateSearchFixture() *result.Results {
	price := 3.5
	objective := "cell.goodput_share >= 0.95 && cell.ttft_ms_p99 <= 500"
	now := result.Search{Name: "capacity", Traffic: "steady", RateRange: [2]float64{1, 16}, Objective: objective,
		Rate: 6.2, RateLower: 5.9, RateUpper: 6.6, Precision: 0.025, Confidence: 0.95, Found: true, Monotone: true, ElapsedS: 180,
		Probes: []result.SearchProbe{
			rateProbe(1, 1, 1, 120, 200, result.DecisionMet, 1),
			rateProbe(16, 9.1, 0.57, 9400, 1820, result.DecisionFailed, 1),
			rateProbe(8.5, 7.4, 0.87, 1450, 1600, result.DecisionFailed, 1),
			rateProbe(4.75, 4.75, 1, 260, 950, result.DecisionMet, 1),
			rateProbe(6.6, 6.2, 0.94, 540, 1330, result.DecisionFailed, 2),
			rateProbe(5.7, 5.7, 0.99, 390, 1150, result.DecisionMet, 1),
			rateProbe(6.2, 6.0, 0.97, 470, 1250, result.DecisionMet, 2),
		}}
	base := result.Search{Name: "capacity", Traffic: "steady", RateRange: [2]float64{1, 16}, Objective: objective,
		Rate: 6.8, RateLower: 6.5, RateUpper: 7.2, Precision: 0.025, Confidence: 0.95, Found: true, Monotone: true, ElapsedS: 170,
		Probes: []result.SearchProbe{
			rateProbe(1, 1, 1, 110, 205, result.DecisionMet, 1),
			rateProbe(16, 9.8, 0.61, 8800, 1900, result.DecisionFailed, 1),
			rateProbe(8.5, 7.9, 0.93, 760, 1700, result.DecisionFailed, 1),
			rateProbe(4.75, 4.75, 1, 230, 980, result.DecisionMet, 1),
			rateProbe(6.8, 6.7, 0.98, 440, 1400, result.DecisionMet, 2),
			rateProbe(7.6, 7.2, 0.94, 560, 1550, result.DecisionFailed, 2),
		}}
	return &result.Results{Schema: result.Schema, Server: result.Server{Name: "qwen", PricePerGPUHour: &price},
		GPUTime: &result.GPUTime{GPUs: 2, ServerS: 400, GPUSeconds: 800},
		Search:  []result.Search{now},
		Comparison: &result.Comparison{Baseline: "qwen (vllm 0.11, 2026-11-30)", Tolerance: 0.05, Alpha: 0.05,
			Searches: []result.BaselineSearch{{Search: base, GPUs: 2, PricePerGPUHour: &price}}},
	}
}

// TestCostLines: the GPU time and the cost at the answer, computed from
// the fixture's figures (rateSearchFixture), beside the baseline's; a CPU
// server, a run without a price, a baseline without one and a search
// without an answer each say what they lack; a run without a price has
// no change beside a baseline with one.
func TestCostLines(t *testing.T) {
	cheaper := 2.0
	tests := []struct {
		name   string
		change func(*result.Results)
		want   []string
	}{
		{name: "priced, with the baseline", want: []string{
			"GPU time of the search: 0.100 GPU-hours (180.0 s × 2 GPUs)",
			"Cost at the answer: $1.56 per million output tokens at 6.20 req/s (2 GPUs × $3.50 an hour ÷ 1,250.0 output tok/s)",
			"Baseline's cost at its answer: $1.39 per million output tokens at 6.80 req/s (2 GPUs × $3.50 an hour ÷ 1,400.0 output tok/s)",
			"Cost change: +12.0% per million output tokens ($1.56 now, $1.39 in the baseline)",
		}},
		{name: "no price: GPU time only", change: func(r *result.Results) {
			r.Server.PricePerGPUHour, r.Comparison.Searches[0].PricePerGPUHour = nil, nil
		}, want: []string{"GPU time of the search: 0.100 GPU-hours (180.0 s × 2 GPUs)"}},
		{name: "a price only in the baseline: its cost, no change", change: func(r *result.Results) {
			r.Server.PricePerGPUHour = nil
		}, want: []string{
			"GPU time of the search: 0.100 GPU-hours (180.0 s × 2 GPUs)",
			"Baseline's cost at its answer: $1.39 per million output tokens at 6.80 req/s (2 GPUs × $3.50 an hour ÷ 1,400.0 output tok/s)",
		}},
		{name: "a baseline without a price takes this run's", change: func(r *result.Results) {
			r.Comparison.Searches[0].PricePerGPUHour = nil
		}, want: []string{
			"GPU time of the search: 0.100 GPU-hours (180.0 s × 2 GPUs)",
			"Cost at the answer: $1.56 per million output tokens at 6.20 req/s (2 GPUs × $3.50 an hour ÷ 1,250.0 output tok/s)",
			"Baseline's cost at its answer: $1.39 per million output tokens at 6.80 req/s (2 GPUs × $3.50 an hour ÷ 1,400.0 output tok/s), at this run's price (the baseline recorded none)",
			"Cost change: +12.0% per million output tokens ($1.56 now, $1.39 in the baseline)",
		}},
		{name: "a cheaper GPU now: 2 × 2.00 ÷ 3600 ÷ 1,250 × 10⁶ = $0.889", change: func(r *result.Results) {
			r.Server.PricePerGPUHour = &cheaper
		}, want: []string{
			"GPU time of the search: 0.100 GPU-hours (180.0 s × 2 GPUs)",
			"Cost at the answer: $0.889 per million output tokens at 6.20 req/s (2 GPUs × $2.00 an hour ÷ 1,250.0 output tok/s)",
			"Baseline's cost at its answer: $1.39 per million output tokens at 6.80 req/s (2 GPUs × $3.50 an hour ÷ 1,400.0 output tok/s)",
			"Cost change: -36.0% per million output tokens ($0.889 now, $1.39 in the baseline)",
		}},
		{name: "a CPU server has no GPU-hours", change: func(r *result.Results) {
			r.GPUTime = &result.GPUTime{CPU: true, ServerS: 400}
			r.Comparison = nil
		}, want: []string{
			"GPU time of the search: none: a CPU server, no GPU found (180.0 s of server time)",
			"Cost at the answer: none: a CPU server has no GPU-hours to price",
		}},
		{name: "no answer", change: func(r *result.Results) {
			r.Search[0].Found, r.Search[0].Rate = false, 0
			r.Comparison = nil
		}, want: []string{
			"GPU time of the search: 0.100 GPU-hours (180.0 s × 2 GPUs)",
			"Cost at the answer: none: no answer to price",
		}},
		{name: "the answer's probe over its windows, not its last window's", change: func(r *result.Results) {
			r.Search[0].Probes[6].OutputTPS = 1000
			r.Comparison = nil
		}, want: []string{
			"GPU time of the search: 0.100 GPU-hours (180.0 s × 2 GPUs)",
			"Cost at the answer: $1.94 per million output tokens at 6.20 req/s (2 GPUs × $3.50 an hour ÷ 1,000.0 output tok/s)",
		}},
		{name: "the answer's probe without output_tps", change: func(r *result.Results) {
			delete(r.Search[0].Probes[6].Traffic.Stats, "output_tps")
			r.Comparison = nil
		}, want: []string{
			"GPU time of the search: 0.100 GPU-hours (180.0 s × 2 GPUs)",
			"Cost at the answer: unknown: the probe at 6.20 req/s recorded no output tokens per second",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := rateSearchFixture()
			if tc.change != nil {
				tc.change(res)
			}
			if diff := cmp.Diff(tc.want, newSearchViews(res)[0].Cost()); diff != "" {
				t.Errorf("cost lines (-want +got):\n%s", diff)
			}
		})
	}
}

// TestConcurrencySearchCost: a concurrency search is priced at its
// answer's decode cell's total tok/s: 8 streams at 60 tok/s each, 480
// tok/s on 1 GPU at $2.00 an hour: 2 ÷ 3600 ÷ 480 × 10⁶ = $1.16.
func TestConcurrencySearchCost(t *testing.T) {
	res := searchResults()
	price := 2.0
	res.Server.PricePerGPUHour = &price
	res.GPUTime = &result.GPUTime{GPUs: 1}
	res.Search[0].ElapsedS = 36
	res.Search[0].Probes[1].Cell.TotalTPS = 480
	want := []string{
		"GPU time of the search: 0.010 GPU-hours (36.0 s × 1 GPU)",
		"Cost at the answer: $1.16 per million output tokens at concurrency 8 (1 GPU × $2.00 an hour ÷ 480.0 output tok/s)",
	}
	if diff := cmp.Diff(want, newSearchViews(res)[0].Cost()); diff != "" {
		t.Errorf("cost lines (-want +got):\n%s", diff)
	}
}

// TestRateSearchGolden: report.md's section of a rate search (answer with
// its bounds, cost lines, the chart's link, one row per probe) and its
// chart as the SVG file written beside report.md, against
// testdata/ratesearch.md and testdata/ratesearch.svg (rewritten by `go
// test ./internal/report -update`; review the diff). The SVG is well-formed
// XML.
func TestRateSearchGolden(t *testing.T) {
	res := rateSearchFixture()
	var buf bytes.Buffer
	b := bufio.NewWriter(&buf)
	writeSearches(b, newSearchViews(res))
	b.Flush()
	charts := SearchCharts(res)
	if len(charts) != 1 || charts[0].File != "search-capacity.svg" {
		t.Fatalf("charts = %d, want search-capacity.svg", len(charts))
	}
	if err := xml.Unmarshal(charts[0].SVG, new(any)); err != nil {
		t.Errorf("the SVG is not well-formed XML: %v", err)
	}
	for name, got := range map[string][]byte{"ratesearch.md": buf.Bytes(), "ratesearch.svg": charts[0].SVG} {
		path := filepath.Join("testdata", name)
		if *update {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./internal/report -update)", err)
		}
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
}

// TestRateSearchChart: the chart draws both runs' probes (a mark per
// measured probe on each panel), each answer's band from its lower to its
// upper bound, the objective's threshold, and labels both answers.
func TestRateSearchChart(t *testing.T) {
	res := rateSearchFixture()
	v := newSearchViews(res)[0]
	svg := rateSearchChart(v, &baselineSearch(res, "capacity").Search)
	// 7 probes now (circles) and 6 in the baseline (squares), on two
	// panels each; the legend adds one of each and a hollow circle.
	if n := strings.Count(svg, "<circle"); n != 2*7+2 {
		t.Errorf("%d circles, want 2 × 7 probes + 2 in the legend", n)
	}
	if n := strings.Count(svg, "<rect") - strings.Count(svg, `fill-opacity="0.13"/>`); n != 2*6+1+4 {
		t.Errorf("%d squares and bands, want 2 × 6 probes + 1 in the legend + 2 bands × 2 panels", n)
	}
	for _, want := range []string{"answer 6.20", "baseline 6.80", "objective: ttft_ms_p99 &lt;= 500",
		"this run: capacity 5.90 to 6.60 req/s at 95% (precision 2.5%)", "baseline: capacity 6.50 to 7.20 req/s at 95% (precision 2.5%)",
		"this run, 6.20 req/s: goodput 6.00 req/s, ttft_ms_p99 470 ms (met, 2 windows)"} {
		if !strings.Contains(svg, want) {
			t.Errorf("the chart lacks %q", want)
		}
	}
	// The band spans lower to upper bound: x = 64 + rate ÷ 16 × 466 (the
	// axis ends at 16), 235.8 to 235.8 + 20.4; so do the whiskers.
	if !strings.Contains(svg, `<rect x="235.8" y="40.0" width="20.4" height="180.0"`) || !strings.Contains(svg, `<path d="M235.8 57.0v8m0 -4H256.2m0 -4v8"`) {
		t.Errorf("this run's band is not from 5.9 to 6.6 req/s:\n%s", svg)
	}
}

// TestRateSearchHTML: report.html's section of a rate search has the
// answer with its bounds, the cost lines and the chart inline.
func TestRateSearchHTML(t *testing.T) {
	page := renderHTML(t, rateSearchFixture())
	for _, want := range []string{
		"Highest rate meeting the objective with traffic &#34;steady&#34;, 1.00 to 16.0 req/s: 6.20 req/s; capacity 5.90 to 6.60 req/s at 95% (precision 2.5%).",
		"<li>Cost at the answer: $1.56 per million output tokens at 6.20 req/s",
		"<li>Cost change: &#43;12.0% per million output tokens ($1.56 now, $1.39 in the baseline)</li>",
		`aria-label="Search capacity: goodput and ttft_ms_p99 by offered rate`,
		"baseline 6.80</text>",
		// The decision and its reason wrap rather than run off a 1280 px page.
		`<table class="all search">`,
		`class="left wrap">`,
		"table.search td.wrap { white-space: normal;",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
}

// TestRateAnswerText: the answer line of a rate search says its bounds,
// or which of them is missing, and when it has none.
func TestRateAnswerText(t *testing.T) {
	base := result.Search{Name: "capacity", Traffic: "steady", RateRange: [2]float64{4, 32}, Found: true, Monotone: true,
		Rate: 11.3, RateLower: 10.8, RateUpper: 12.1, Precision: 0.1, Confidence: 0.95, Probes: make([]result.SearchProbe, 7)}
	tests := []struct {
		name   string
		change func(*result.Search)
		want   string
	}{
		{name: "both bounds", want: `Highest rate meeting the objective with traffic "steady", 4.00 to 32.0 req/s: 11.3 req/s; capacity 10.8 to 12.1 req/s at 95% (precision 10%). 7 probes.`},
		{name: "no lower bound", change: func(s *result.Search) { s.RateLower = 0 },
			want: `Highest rate meeting the objective with traffic "steady", 4.00 to 32.0 req/s: 11.3 req/s; capacity at most 12.1 req/s at 95% (no lower bound: no probe met the objective with confidence) (precision 10%). 7 probes.`},
		{name: "the top of the range", change: func(s *result.Search) { s.Rate, s.RateLower, s.RateUpper = 32, 30.5, 0 },
			want: `Highest rate meeting the objective with traffic "steady", 4.00 to 32.0 req/s: 32.0 req/s, the top of the range; capacity at least 30.5 req/s at 95% (not bounded above: the top of the range met it) (precision 10%). 7 probes.`},
		{name: "none at lo", change: func(s *result.Search) { s.Found, s.Rate, s.RateLower, s.RateUpper = false, 0, 0, 4 },
			want: `No rate meets the objective with traffic "steady", 4.00 to 32.0 req/s: none meets it at 4.00 req/s (rate = 0, found = false). 7 probes.`},
		{name: "client limit", change: func(s *result.Search) { s.ClientLimit = 14 },
			want: `Highest rate meeting the objective with traffic "steady", 4.00 to 32.0 req/s: 11.3 req/s; capacity 10.8 to 12.1 req/s at 95% (precision 10%). 7 probes. The client could not keep the schedule at 14.0 req/s: the answer is within the rates it could drive.`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := base
			if tc.change != nil {
				tc.change(&s)
			}
			if got := rateAnswerText(&s); got != tc.want {
				t.Errorf("answer\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestCheckLines: a rate search's check windows and its replay of the
// baseline's are a line each in report.md's (and report.html's) search section, with their
// windows, rate, the objective's metrics averaged over the windows, and
// why a check stopped; a search without either has no such line.
func TestCheckLines(t *testing.T) {
	res := rateSearchFixture()
	s := &res.Search[0]
	s.Check = &result.SearchCheck{Rate: 6.2, Windows: []result.CheckWindow{
		{Seed: 1, Values: map[string]float64{"goodput_share": 0.96, "ttft_ms_p99": 470}},
		{Seed: 2, Values: map[string]float64{"goodput_share": 0.98, "ttft_ms_p99": 430}},
	}}
	s.Replay = &result.SearchCheck{Rate: 6.46, BaselineRate: 6.8, Tolerance: 0.05, Stop: &result.CheckStop{Rule: result.CheckWindowUnmeasured, Seed: 2, CellReason: "server down"},
		Windows: []result.CheckWindow{{Seed: 1, Values: map[string]float64{"goodput_share": 0.9}}}}
	var b bytes.Buffer
	if err := WriteMarkdown(&b, res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"- Check: 2 windows at 6.20 req/s, for a later run's paired check of capacity lost; goodput_share 0.97, ttft_ms_p99 450 on average\n",
		"- Replay of the baseline's check: 1 window at 6.46 req/s (the baseline's answer 6.80 req/s less 5%); goodput_share 0.9 on average; stopped: the window of seed 2 could not be measured: server down\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report.md lacks %q:\n%s", want, b.String())
		}
	}
	var h bytes.Buffer
	if err := WriteHTML(&h, res); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(h.String(), "<li>Check: 2 windows at 6.20 req/s") {
		t.Errorf("report.html lacks the check line")
	}
	res = rateSearchFixture()
	b.Reset()
	if err := WriteMarkdown(&b, res); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "Check: ") || strings.Contains(b.String(), "Replay of") {
		t.Errorf("a search without check windows has a check line:\n%s", b.String())
	}
}
