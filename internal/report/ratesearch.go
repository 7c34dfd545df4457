package report

import (
	"cmp"
	"fmt"
	"html"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/numfmt"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// This file renders a rate search (`search { traffic = … rate = [lo, hi] }`,
// docs/method.md#rate-search): its answer with its bounds, its probes'
// table, and the chart of goodput and a percentile against the offered
// rate, this run's and the baseline's on one chart with each answer
// inside its band of confidence bounds.

// newRateSearchView is rate search s of res as the reports show it.
func newRateSearchView(res *result.Results, s *result.Search) searchView {
	v := searchView{Title: "Search " + s.Name, Rule: s.Objective, search: s, compare: objectiveComparisons(s.Objective)}
	v.Answer = rateAnswerText(s)
	v.Charted = "goodput_rps and " + chartedPercentile(v.compare).Metric
	v.Header = []string{"#", "Rate (req/s)", "Status"}
	var metrics []string
	for _, c := range v.compare {
		if !containsStr(metrics, c.Metric) {
			metrics = append(metrics, c.Metric)
		}
	}
	v.Header = append(v.Header, metrics...)
	v.Header = append(v.Header, "Windows", "Decision")
	for n, p := range s.Probes {
		row := []string{strconv.Itoa(n + 1), rateText(p.Rate), dash}
		c := p.Traffic
		if c != nil {
			row[2] = statusWord(c.Status)
		}
		for _, m := range metrics {
			row = append(row, rateProbeMetric(c, m))
		}
		row = append(row, strconv.Itoa(max(p.Windows, 1)), probeDecision(&p))
		v.Rows = append(v.Rows, row)
	}
	v.Cost = costLines(res, s)
	v.Checks = checkLines(s)
	return v
}

// checkLines are search s's paired-check windows in words: "Check: 24
// windows at 5 req/s, for a later run's paired check of capacity lost;
// goodput_share 0.9612 on average" and the replay of the baseline's.
func checkLines(s *result.Search) []string {
	var out []string
	if c := s.Check; c != nil {
		out = append(out, fmt.Sprintf("Check: %s at %s req/s, for a later run's paired check of capacity lost%s", windowCount(len(c.Windows)), rateText(c.Rate), checkMeans(c)))
	}
	if c := s.Replay; c != nil {
		out = append(out, fmt.Sprintf("Replay of the baseline's check: %s at %s req/s (the baseline's answer %s req/s less %s)%s",
			windowCount(len(c.Windows)), rateText(c.Rate), rateText(c.BaselineRate), numfmt.Percent(c.Tolerance), checkMeans(c)))
	}
	return out
}

// windowCount is n windows in words: "1 window", "24 windows".
func windowCount(n int) string { return strconv.Itoa(n) + " " + plural(n, "window", "windows") }

// checkMeans are a check's metrics averaged over its windows (";
// goodput_share 0.9612 on average"), and why it stopped, if it did.
func checkMeans(c *result.SearchCheck) string {
	sums, counts := map[string]float64{}, map[string]int{}
	for _, w := range c.Windows {
		for k, v := range w.Values {
			sums[k] += v
			counts[k]++
		}
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(sums)) {
		parts = append(parts, k+" "+numfmt.Value(sums[k]/float64(counts[k])))
	}
	out := ""
	if len(parts) > 0 {
		out = "; " + strings.Join(parts, ", ") + " on average"
	}
	if c.Error != "" {
		out += "; stopped: " + c.Error
	}
	return out
}

// rateProbeMetric is a rate probe's metric as the table shows it.
func rateProbeMetric(c *result.TrafficCell, name string) string {
	if c == nil || !c.Status.Measured() {
		return dash
	}
	if _, ok := metric.Lookup(vocab.PhaseTraffic, name); !ok {
		return dash
	}
	return trafficText(c, name)
}

// probeDecision is a rate probe's decision in words, with its reason.
func probeDecision(p *result.SearchProbe) string {
	d := p.Decision
	if d == "" {
		d = map[bool]string{true: result.DecisionMet, false: result.DecisionFailed}[p.Passed]
	}
	if p.Reason != "" {
		d += ": " + p.Reason
	}
	return d
}

// rateAnswerText says what a rate search found, in one line.
func rateAnswerText(s *result.Search) string {
	where := fmt.Sprintf("with traffic %q, %s to %s req/s", s.Traffic, rateText(s.RateRange[0]), rateText(s.RateRange[1]))
	var line string
	switch {
	case s.Error != "":
		line = fmt.Sprintf("No answer %s: %s.", where, s.Error)
	case !s.Found:
		line = fmt.Sprintf("No rate meets the objective %s: none meets it at %s req/s (rate = 0, found = false).", where, rateText(s.RateRange[0]))
	default:
		line = fmt.Sprintf("Highest rate meeting the objective %s: %s req/s", where, rateText(s.Rate))
		if s.Rate >= s.RateRange[1] {
			line += ", the top of the range"
		}
		line += "; " + boundsText(s) + "."
	}
	line += fmt.Sprintf(" %d probes.", len(s.Probes))
	if s.ClientLimit > 0 {
		line += fmt.Sprintf(" The client could not keep the schedule at %s req/s: the answer is within the rates it could drive.", rateText(s.ClientLimit))
	}
	if !s.Monotone && s.Found {
		line += " Not monotone: a probe met the objective above a failing one."
	}
	return line
}

// boundsText is a rate search's confidence bounds of the true capacity:
// "capacity 5.90 to 6.60 req/s at 95% (precision 2.5%)".
func boundsText(s *result.Search) string {
	conf := ""
	if s.Confidence > 0 {
		conf = " at " + numfmt.Shortest(s.Confidence*100) + "%"
	}
	var b string
	switch {
	case s.RateLower <= 0 && s.RateUpper > 0:
		b = fmt.Sprintf("capacity at most %s req/s%s (no lower bound: no probe met the objective with confidence)", rateText(s.RateUpper), conf)
	case s.RateUpper > 0:
		b = fmt.Sprintf("capacity %s to %s req/s%s", rateText(s.RateLower), rateText(s.RateUpper), conf)
	case s.RateLower <= 0:
		b = "capacity not bounded (no probe decided with confidence)"
	default:
		b = fmt.Sprintf("capacity at least %s req/s%s (not bounded above: the top of the range met it)", rateText(s.RateLower), conf)
	}
	if s.Precision > 0 {
		b += " (precision " + numfmt.Shortest(s.Precision*100) + "%)"
	}
	return b
}

// chartedPercentile is the comparison of the objective the chart's lower
// panel plots: its first comparison of a latency (a metric in ms), or
// ttft_ms_p99 with no threshold when it has none.
func chartedPercentile(cs []comparison) comparison {
	for _, c := range cs {
		if m, ok := metric.Lookup(vocab.PhaseTraffic, c.Metric); ok && m.Unit == "ms" {
			return c
		}
	}
	return comparison{Metric: metric.TTFTMsP99, Value: math.NaN()}
}

// rateRun is one run's probes and answer on the rate chart.
type rateRun struct {
	name   string
	color  string
	dash   string
	marker marker
	s      *result.Search
}

// rateSearchChart is the chart of rate search v (base: the baseline's
// same search, nil without one): goodput_rps (top panel, with the
// goodput = offered diagonal) and the charted percentile (bottom panel,
// with the objective's threshold dashed) against the offered rate on a
// linear axis; each run's probes as a line, a filled mark where the probe
// met the objective, hollow where it failed, a cross where it was
// unmeasurable; each answer a vertical line inside a band from its lower
// to its upper confidence bound (to the axis's end when not bounded).
func rateSearchChart(v searchView, base *result.Search) string {
	runs := []rateRun{{name: "this run", color: palette[0], marker: markerCircle, s: v.search}}
	if base != nil {
		runs = append(runs, rateRun{name: "baseline", color: palette[1], dash: "6 4", marker: markerSquare, s: base})
	}
	pc := chartedPercentile(v.compare)
	var goodCmp *comparison
	for i, c := range v.compare {
		if c.Metric == metric.GoodputRPS {
			goodCmp = &v.compare[i]
			break
		}
	}
	const W = 680.0
	left, right, top := 64.0, 150.0, 40.0
	panelH, gap, bottom := 180.0, 46.0, 50.0
	H := top + 2*panelH + gap + bottom
	pw := W - left - right

	// The x axis: 0 to the highest rate either run searched or probed.
	xmax := 0.0
	gmax, pmax, metMax := 0.0, 0.0, 0.0
	for _, r := range runs {
		xmax = math.Max(xmax, r.s.RateRange[1])
		for _, p := range r.s.Probes {
			xmax = math.Max(xmax, p.Rate)
			if c := p.Traffic; c != nil && c.Status.Measured() {
				gmax = math.Max(gmax, c.GoodputRPS)
				if y, ok := c.Metric(pc.Metric); ok {
					pmax = math.Max(pmax, y)
					if p.Passed {
						metMax = math.Max(metMax, y)
					}
				}
			}
		}
	}
	xt := niceTicks(xmax, 8)
	xtop := xt[len(xt)-1]
	// The goodput panel ends above the highest goodput, not the highest
	// rate offered: past capacity goodput falls, and the diagonal leaves.
	gt := niceTicks(gmax*1.1, 4)
	// The percentile panel shows the threshold's neighbourhood (without
	// one, that of the probes that met the objective): values far above
	// it (an overloaded probe's seconds) are drawn at the top, marked.
	switch {
	case !math.IsNaN(pc.Value) && pc.Value > 0:
		pmax = math.Min(math.Max(pmax, pc.Value*1.2), pc.Value*3)
	case metMax > 0:
		pmax = math.Min(pmax, metMax*3)
	}
	pt := niceTicks(pmax*1.05, 4)
	px := func(x float64) float64 { return left + x/xtop*pw }
	gTop, pTop := top, top+panelH+gap
	var gy func(float64) float64
	gy = func(y float64) float64 {
		return gTop + panelH - math.Min(y, gt[len(gt)-1])/gt[len(gt)-1]*panelH
	}
	py := func(y float64) float64 {
		return pTop + panelH - math.Min(y, pt[len(pt)-1])/pt[len(pt)-1]*panelH
	}

	var b svgBuilder
	title := fmt.Sprintf("%s: goodput and %s by offered rate (traffic %q)", v.Title, pc.Metric, v.search.Traffic)
	b.f(`<svg class="chart" viewBox="0 0 %.0f %.0f" style="max-width:%.0fpx" role="img" aria-label="%s">`, W, H, W*1.25, html.EscapeString(title))
	b.text(left, 22, "start", "ctitle", title)
	panel := func(y0 float64, ticks []float64, y func(float64) float64, yTitle string) {
		for _, t := range ticks {
			b.f(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" class="grid"/>`, left, y(t), left+pw, y(t))
			b.text(left-8, y(t)+4, "end", "tick", tickLabel(t))
		}
		for _, t := range xt {
			b.f(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" class="grid"/>`, px(t), y0, px(t), y0+panelH)
			b.text(px(t), y0+panelH+16, "middle", "tick", tickLabel(t))
		}
		b.f(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" class="axis"/>`, left, y0+panelH, left+pw, y0+panelH)
		b.f(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" class="axis"/>`, left, y0, left, y0+panelH)
		b.f(`<text transform="translate(16 %.1f) rotate(-90)" text-anchor="middle" class="atitle">%s</text>`, y0+panelH/2, html.EscapeString(yTitle))
	}
	// The bands first, under everything, across both panels.
	for i, r := range runs {
		s := r.s
		if !s.Found && s.RateLower <= 0 {
			continue
		}
		// No lower bound is a band from 0; no upper one to the axis's end.
		lo, hi := s.RateLower, s.RateUpper
		if hi <= 0 {
			hi = xtop
		}
		for _, y0 := range []float64{gTop, pTop} {
			b.f(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" fill-opacity="0.13"><title>%s</title></rect>`,
				px(lo), y0, math.Max(px(hi)-px(lo), 1), panelH, r.color, html.EscapeString(r.name+": "+boundsText(s)))
		}
		if s.Found {
			ax := px(s.Rate)
			for _, y0 := range []float64{gTop, pTop} {
				b.f(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="1.5"%s/>`, ax, y0, ax, y0+panelH, r.color, dashAttr(r.dash))
			}
			label := fmt.Sprintf("%s %s", map[bool]string{true: "answer", false: "baseline"}[i == 0], rateText(s.Rate))
			ly := gTop + 12 + float64(i)*26
			if ax+4+textWidth(label) <= left+pw {
				b.text(ax+4, ly, "start", "tick", label)
			} else {
				b.text(ax-4, ly, "end", "tick", label)
			}
		}
	}
	panel(gTop, gt, gy, "goodput req/s")
	panel(pTop, pt, py, pc.Metric)
	b.text(left+pw/2, H-10, "middle", "atitle", "offered rate, requests/s")
	// goodput = offered, and the thresholds.
	b.f(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#777" stroke-width="1.2" stroke-dasharray="2 4"><title>goodput = offered rate</title></line>`,
		px(0), gy(0), px(math.Min(xtop, gt[len(gt)-1])), gy(math.Min(xtop, gt[len(gt)-1])))
	// Each answer's bounds as whiskers too, under its label: a band
	// narrower than a few pixels still shows.
	for i, r := range runs {
		s := r.s
		if !s.Found {
			continue
		}
		hi := s.RateUpper
		if hi <= 0 {
			hi = xtop
		}
		wy := gTop + 21 + float64(i)*26
		b.f(`<path d="M%.1f %.1fv8m0 -4H%.1fm0 -4v8" stroke="%s" stroke-width="1.5" fill="none"><title>%s</title></path>`,
			px(math.Max(s.RateLower, 0)), wy-4, px(hi), r.color, html.EscapeString(r.name+": "+boundsText(s)))
	}
	if goodCmp != nil {
		b.f(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#D55E00" stroke-width="1.5" stroke-dasharray="6 4"/>`, left, gy(goodCmp.Value), left+pw, gy(goodCmp.Value))
		b.text(left+pw-4, gy(goodCmp.Value)-6, "end", "tick", "objective: "+goodCmp.String())
	}
	if !math.IsNaN(pc.Value) {
		// Its label where it covers none of the probes' marks.
		var marks [][2]float64
		for _, r := range runs {
			for _, p := range r.s.Probes {
				if c := p.Traffic; c != nil && c.Status.Measured() {
					if y, ok := c.Metric(pc.Metric); ok {
						marks = append(marks, [2]float64{px(p.Rate), py(y)})
					}
				}
			}
		}
		ty, label := py(pc.Value), "objective: "+pc.String()
		b.f(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#D55E00" stroke-width="1.5" stroke-dasharray="6 4"/>`, left, ty, left+pw, ty)
		lx, ly, anchor := labelSpot(label, ty, left, left+pw, pTop, pTop+panelH, marks)
		b.text(lx, ly, anchor, "tick", label)
	}
	// Each run's probes, the baseline first so that this run's are on top.
	for i := len(runs) - 1; i >= 0; i-- {
		r := runs[i]
		probes := slices.Clone(r.s.Probes)
		slices.SortStableFunc(probes, func(a, b result.SearchProbe) int { return cmp.Compare(a.Rate, b.Rate) })
		var gpts, ppts []string
		for _, p := range probes {
			c := p.Traffic
			if c == nil || !c.Status.Measured() || p.Decision == result.DecisionUnmeasurable {
				continue
			}
			gpts = append(gpts, fmt.Sprintf("%.1f,%.1f", px(p.Rate), gy(c.GoodputRPS)))
			if y, ok := c.Metric(pc.Metric); ok {
				ppts = append(ppts, fmt.Sprintf("%.1f,%.1f", px(p.Rate), py(y)))
			}
		}
		for _, pts := range [][]string{gpts, ppts} {
			if len(pts) > 1 {
				b.f(`<polyline points="%s" fill="none" stroke="%s" stroke-width="2"%s/>`, strings.Join(pts, " "), r.color, dashAttr(r.dash))
			}
		}
		lastOff := math.Inf(-1) // the x of this run's last off-scale label
		for _, p := range probes {
			label := rateProbeLabel(r.name, &p, pc.Metric)
			c := p.Traffic
			if c == nil || !c.Status.Measured() || p.Decision == result.DecisionUnmeasurable {
				// Unmeasurable or not measured: a cross on the rate axis.
				x, y := px(p.Rate), gTop+panelH
				b.f(`<path d="M%.1f %.1fl8 8m0 -8l-8 8" stroke="%s" stroke-width="2"><title>%s</title></path>`, x-4, y-4, r.color, html.EscapeString(label))
				continue
			}
			fill := r.color
			if !p.Passed {
				fill = "#fff"
			}
			b.mark(r.marker, px(p.Rate), gy(c.GoodputRPS), fill, r.color, label)
			if y, ok := c.Metric(pc.Metric); ok {
				b.mark(r.marker, px(p.Rate), py(y), fill, r.color, label)
				if y > pt[len(pt)-1] && px(p.Rate)-lastOff >= 40 {
					lastOff = px(p.Rate)
					// Off the scale: its value beside the mark, this run's
					// to the left and the baseline's to the right.
					x, anchor := px(p.Rate)-6, "end"
					if i > 0 {
						x, anchor = px(p.Rate)+6, "start"
					}
					b.text(x, py(y)+14, anchor, "tick", "↑ "+tickLabel(math.Round(y)))
				}
			}
		}
	}
	// The legend.
	lx := W - right + 12
	for i, r := range runs {
		ly := top + 8 + float64(i)*18
		b.f(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2"%s/>`, lx, ly, lx+28, ly, r.color, dashAttr(r.dash))
		b.mark(r.marker, lx+14, ly, r.color, r.color, "")
		b.text(lx+34, ly+4, "start", "tick", r.name)
	}
	ly := top + 8 + float64(len(runs))*18 + 6
	b.f(`<circle cx="%.1f" cy="%.1f" r="3.5" fill="#fff" stroke="#555" stroke-width="1.5"/>`, lx+14, ly)
	b.text(lx+34, ly+4, "start", "tick", "not met")
	b.f(`<rect x="%.1f" y="%.1f" width="28" height="12" fill="#555" fill-opacity="0.13"/>`, lx, ly+12)
	b.text(lx+34, ly+22, "start", "tick", "capacity bounds")
	b.f(`</svg>`)
	return b.String()
}

// rateProbeLabel is a rate probe's tooltip: "this run, 6.2 req/s: goodput
// 6.10 req/s, ttft_ms_p99 420 ms (met, 2 windows)".
func rateProbeLabel(run string, p *result.SearchProbe, pm string) string {
	s := fmt.Sprintf("%s, %s req/s: ", run, rateText(p.Rate))
	if c := p.Traffic; c != nil && c.Status.Measured() {
		s += fmt.Sprintf("goodput %s req/s, %s %s", trafficText(c, metric.GoodputRPS), pm, rateProbeMetric(c, pm))
	} else if c != nil {
		s += statusWord(c.Status)
	}
	return s + fmt.Sprintf(" (%s, %d window%s)", probeDecision(p), max(p.Windows, 1), plural(max(p.Windows, 1), "", "s"))
}

func dashAttr(d string) string {
	if d == "" {
		return ""
	}
	return fmt.Sprintf(` stroke-dasharray="%s"`, d)
}

// SearchChart is a rate search's chart as a standalone SVG file, written
// beside report.md (search-NAME.svg).
type SearchChart struct {
	// File is the file's name, "search-NAME.svg".
	File string
	SVG  []byte
}

// SearchCharts are res's rate searches' charts as standalone SVG files,
// which report.md links to (gate writes them in report.md's folder).
func SearchCharts(res *result.Results) []SearchChart { return NewModel(res).SearchCharts() }

// searchCharts are the rate searches' charts of searches as standalone
// SVG files.
func searchCharts(searches []searchView) []SearchChart {
	var out []SearchChart
	for _, v := range searches {
		if !v.search.IsRate() {
			continue
		}
		out = append(out, SearchChart{File: searchChartFile(v.search), SVG: []byte(standaloneSVG(v.chart))})
	}
	return out
}

// searchChartFile is the name of a rate search's SVG file.
func searchChartFile(s *result.Search) string { return "search-" + svgID(s.Name) + ".svg" }

// baselineSearchOf is the baseline's search called name, nil without one.
func baselineSearchOf(res *result.Results, name string) *result.Search {
	if bs := baselineSearch(res, name); bs != nil {
		return &bs.Search
	}
	return nil
}

// chartStyle is report.html's chart style, for an SVG file on its own.
const chartStyle = `<style>text{font-family:system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif}` +
	`.ctitle{font-size:13px;font-weight:600;fill:#1f2328}.tick{font-size:11px;fill:#59636e}.atitle{font-size:12px;fill:#1f2328}` +
	`.grid{stroke:#eceff2}.axis{stroke:#8a939e}</style><rect width="100%" height="100%" fill="#fff"/>`

// standaloneSVG makes one of the charts an SVG file: the namespace, and
// report.html's chart style inline.
func standaloneSVG(svg string) string {
	head, rest, _ := strings.Cut(svg, ">")
	head = strings.Replace(head, `<svg class="chart"`, `<svg xmlns="http://www.w3.org/2000/svg" class="chart"`, 1)
	return `<?xml version="1.0" encoding="UTF-8"?>` + "\n" + head + ">" + chartStyle + rest + "\n"
}
