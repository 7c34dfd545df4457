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

// rateProbeRow is the n-th probe p of a rate search as its table shows
// it, with metrics.
func rateProbeRow(n int, p *result.SearchProbe, metrics []string) []string {
	row := []string{strconv.Itoa(n + 1), rateText(p.Rate), dash}
	c := p.Traffic
	if c != nil {
		row[2] = statusWord(c.Status)
	}
	for _, m := range metrics {
		row = append(row, rateProbeMetric(c, m))
	}
	return append(row, strconv.Itoa(max(p.Windows, 1)), probeDecision(p))
}

// checkView is a paired check's windows as figures
// (docs/method.md#paired-capacity-check): the check, whether it replays
// the baseline's, and its metrics averaged over its windows. line words
// it.
type checkView struct {
	check  *result.SearchCheck
	replay bool
	means  []metricMean
}

// metricMean is a metric averaged over a check's windows.
type metricMean struct {
	metric string
	mean   float64
}

// newCheckViews are search s's paired checks: its check at the answer,
// then its replay of the baseline's; none without either.
func newCheckViews(s *result.Search) []checkView {
	var out []checkView
	for i, c := range []*result.SearchCheck{s.Check, s.Replay} {
		if c != nil {
			out = append(out, checkView{check: c, replay: i == 1, means: checkMeans(c)})
		}
	}
	return out
}

// checkMeans are check c's metrics averaged over its windows, by name.
func checkMeans(c *result.SearchCheck) []metricMean {
	sums, counts := map[string]float64{}, map[string]int{}
	for _, w := range c.Windows {
		for k, v := range w.Values {
			sums[k] += v
			counts[k]++
		}
	}
	out := make([]metricMean, 0, len(sums))
	for _, k := range slices.Sorted(maps.Keys(sums)) {
		out = append(out, metricMean{metric: k, mean: sums[k] / float64(counts[k])})
	}
	return out
}

// line is the check in words: "Check: 24 windows at 5 req/s, for a
// later run's paired check of capacity lost; goodput_share 0.9612 on
// average", or the replay of the baseline's.
func (v checkView) line() string {
	c := v.check
	if v.replay {
		return fmt.Sprintf("Replay of the baseline's check: %s at %s req/s (the baseline's answer %s req/s less %s)%s",
			windowCount(len(c.Windows)), rateText(c.Rate), rateText(c.BaselineRate), numfmt.Percent(c.Tolerance), v.meansText())
	}
	return fmt.Sprintf("Check: %s at %s req/s, for a later run's paired check of capacity lost%s", windowCount(len(c.Windows)), rateText(c.Rate), v.meansText())
}

// windowCount is n windows in words: "1 window", "24 windows".
func windowCount(n int) string { return strconv.Itoa(n) + " " + plural(n, "window", "windows") }

// meansText are the check's means in words ("; goodput_share 0.9612 on
// average"), and why it stopped, if it did.
func (v checkView) meansText() string {
	parts := make([]string, len(v.means))
	for i, m := range v.means {
		parts[i] = m.metric + " " + numfmt.Value(m.mean)
	}
	out := ""
	if len(parts) > 0 {
		out = "; " + strings.Join(parts, ", ") + " on average"
	}
	if why := checkStopped(v.check); why != "" {
		out += "; stopped: " + why
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
	if why := ProbeReason(p); why != "" {
		d += ": " + why
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
	c := newRateChart(v, base)
	title := fmt.Sprintf("%s: goodput and %s by offered rate (traffic %q)", v.Title(), c.pc.Metric, v.search.Traffic)
	c.b.f(`<svg class="chart" viewBox="0 0 %.0f %.0f" style="max-width:%.0fpx" role="img" aria-label="%s">`, rateChartW, c.h, rateChartW*1.25, html.EscapeString(title))
	c.b.text(c.left, 22, "start", "ctitle", title)
	c.bands() // under everything, across both panels
	c.panel(c.gTop, c.gt, c.gy, "goodput req/s")
	c.panel(c.pTop, c.pt, c.py, c.pc.Metric)
	c.b.text(c.left+c.pw/2, c.h-10, "middle", "atitle", "offered rate, requests/s")
	// goodput = offered, and the thresholds.
	c.b.f(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#777" stroke-width="1.2" stroke-dasharray="2 4"><title>goodput = offered rate</title></line>`,
		c.px(0), c.gy(0), c.px(math.Min(c.xtop, c.gt[len(c.gt)-1])), c.gy(math.Min(c.xtop, c.gt[len(c.gt)-1])))
	c.whiskers()
	c.objectives()
	c.probes()
	c.legend()
	c.b.f(`</svg>`)
	return c.b.String()
}

// rateChartW is the rate search chart's width.
const rateChartW = 680.0

// rateChart is one rate search chart as it is drawn: its runs, the
// percentile panel's metric, its geometry and scales, and the SVG so far.
type rateChart struct {
	runs    []rateRun
	pc      comparison  // the percentile charted
	goodCmp *comparison // the goodput objective, when the search has one

	left, right, top, panelH, gap, bottom, h, pw float64
	gTop, pTop                                   float64 // the panels' tops

	xt, gt, pt []float64 // the ticks of the rate, goodput and percentile axes
	xtop       float64   // the rate axis's end

	b svgBuilder
}

// newRateChart lays out rate search v's chart (base: the baseline's
// search, or nil): the x axis from 0 to the highest rate either run
// searched or probed; the goodput panel above the highest goodput; the
// percentile panel around the threshold.
func newRateChart(v searchView, base *result.Search) *rateChart {
	c := &rateChart{runs: []rateRun{{name: "this run", color: palette[0], marker: markerCircle, s: v.search}}, pc: chartedPercentile(v.compare),
		left: 64, right: 150, top: 40, panelH: 180, gap: 46, bottom: 50}
	if base != nil {
		c.runs = append(c.runs, rateRun{name: "baseline", color: palette[1], dash: "6 4", marker: markerSquare, s: base})
	}
	for i, cm := range v.compare {
		if cm.Metric == metric.GoodputRPS {
			c.goodCmp = &v.compare[i]
			break
		}
	}
	c.h = c.top + 2*c.panelH + c.gap + c.bottom
	c.pw = rateChartW - c.left - c.right
	xmax := 0.0
	gmax, pmax, metMax := 0.0, 0.0, 0.0
	for _, r := range c.runs {
		xmax = math.Max(xmax, r.s.RateRange[1])
		for _, p := range r.s.Probes {
			xmax = math.Max(xmax, p.Rate)
			if t := p.Traffic; t != nil && t.Status.Measured() {
				gmax = math.Max(gmax, t.GoodputRPS)
				if y, ok := t.Metric(c.pc.Metric); ok {
					pmax = math.Max(pmax, y)
					if p.Passed {
						metMax = math.Max(metMax, y)
					}
				}
			}
		}
	}
	c.xt = niceTicks(xmax, 8)
	c.xtop = c.xt[len(c.xt)-1]
	// The goodput panel ends above the highest goodput, not the highest
	// rate offered: past capacity goodput falls, and the diagonal leaves.
	c.gt = niceTicks(gmax*1.1, 4)
	// The percentile panel shows the threshold's neighbourhood (without
	// one, that of the probes that met the objective): values far above
	// it (an overloaded probe's seconds) are drawn at the top, marked.
	switch {
	case !math.IsNaN(c.pc.Value) && c.pc.Value > 0:
		pmax = math.Min(math.Max(pmax, c.pc.Value*1.2), c.pc.Value*3)
	case metMax > 0:
		pmax = math.Min(pmax, metMax*3)
	}
	c.pt = niceTicks(pmax*1.05, 4)
	c.gTop, c.pTop = c.top, c.top+c.panelH+c.gap
	return c
}

// px, gy and py place a rate, a goodput and a percentile value.
func (c *rateChart) px(x float64) float64 { return c.left + x/c.xtop*c.pw }

func (c *rateChart) gy(y float64) float64 {
	return c.gTop + c.panelH - math.Min(y, c.gt[len(c.gt)-1])/c.gt[len(c.gt)-1]*c.panelH
}

func (c *rateChart) py(y float64) float64 {
	return c.pTop + c.panelH - math.Min(y, c.pt[len(c.pt)-1])/c.pt[len(c.pt)-1]*c.panelH
}

// panel draws a panel's grid, ticks, axes and title, its top at y0.
func (c *rateChart) panel(y0 float64, ticks []float64, y func(float64) float64, yTitle string) {
	b := &c.b
	for _, t := range ticks {
		b.f(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" class="grid"/>`, c.left, y(t), c.left+c.pw, y(t))
		b.text(c.left-8, y(t)+4, "end", "tick", tickLabel(t))
	}
	for _, t := range c.xt {
		b.f(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" class="grid"/>`, c.px(t), y0, c.px(t), y0+c.panelH)
		b.text(c.px(t), y0+c.panelH+16, "middle", "tick", tickLabel(t))
	}
	b.f(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" class="axis"/>`, c.left, y0+c.panelH, c.left+c.pw, y0+c.panelH)
	b.f(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" class="axis"/>`, c.left, y0, c.left, y0+c.panelH)
	b.f(`<text transform="translate(16 %.1f) rotate(-90)" text-anchor="middle" class="atitle">%s</text>`, y0+c.panelH/2, html.EscapeString(yTitle))
}

// bands draws each answer's band from its lower to its upper bound (from
// 0 without a lower one, to the axis's end without an upper one) across
// both panels, and the answer's line and label.
func (c *rateChart) bands() {
	b := &c.b
	for i, r := range c.runs {
		s := r.s
		if !s.Found && s.RateLower <= 0 {
			continue
		}
		lo, hi := s.RateLower, s.RateUpper
		if hi <= 0 {
			hi = c.xtop
		}
		for _, y0 := range []float64{c.gTop, c.pTop} {
			b.f(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" fill-opacity="0.13"><title>%s</title></rect>`,
				c.px(lo), y0, math.Max(c.px(hi)-c.px(lo), 1), c.panelH, r.color, html.EscapeString(r.name+": "+boundsText(s)))
		}
		if s.Found {
			ax := c.px(s.Rate)
			for _, y0 := range []float64{c.gTop, c.pTop} {
				b.f(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="1.5"%s/>`, ax, y0, ax, y0+c.panelH, r.color, dashAttr(r.dash))
			}
			label := fmt.Sprintf("%s %s", map[bool]string{true: "answer", false: "baseline"}[i == 0], rateText(s.Rate))
			ly := c.gTop + 12 + float64(i)*26
			if ax+4+textWidth(label) <= c.left+c.pw {
				b.text(ax+4, ly, "start", "tick", label)
			} else {
				b.text(ax-4, ly, "end", "tick", label)
			}
		}
	}
}

// whiskers draws each answer's bounds as whiskers too, under its label:
// a band narrower than a few pixels still shows.
func (c *rateChart) whiskers() {
	for i, r := range c.runs {
		s := r.s
		if !s.Found {
			continue
		}
		hi := s.RateUpper
		if hi <= 0 {
			hi = c.xtop
		}
		wy := c.gTop + 21 + float64(i)*26
		c.b.f(`<path d="M%.1f %.1fv8m0 -4H%.1fm0 -4v8" stroke="%s" stroke-width="1.5" fill="none"><title>%s</title></path>`,
			c.px(math.Max(s.RateLower, 0)), wy-4, c.px(hi), r.color, html.EscapeString(r.name+": "+boundsText(s)))
	}
}

// objectives draws the goodput and percentile thresholds, the latter's
// label where it covers none of the probes' marks.
func (c *rateChart) objectives() {
	b := &c.b
	if c.goodCmp != nil {
		b.f(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#D55E00" stroke-width="1.5" stroke-dasharray="6 4"/>`, c.left, c.gy(c.goodCmp.Value), c.left+c.pw, c.gy(c.goodCmp.Value))
		b.text(c.left+c.pw-4, c.gy(c.goodCmp.Value)-6, "end", "tick", "objective: "+c.goodCmp.String())
	}
	if math.IsNaN(c.pc.Value) {
		return
	}
	var marks [][2]float64
	for _, r := range c.runs {
		for _, p := range r.s.Probes {
			if t := p.Traffic; t != nil && t.Status.Measured() {
				if y, ok := t.Metric(c.pc.Metric); ok {
					marks = append(marks, [2]float64{c.px(p.Rate), c.py(y)})
				}
			}
		}
	}
	ty, label := c.py(c.pc.Value), "objective: "+c.pc.String()
	b.f(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#D55E00" stroke-width="1.5" stroke-dasharray="6 4"/>`, c.left, ty, c.left+c.pw, ty)
	lx, ly, anchor := labelSpot(label, ty, c.left, c.left+c.pw, c.pTop, c.pTop+c.panelH, marks)
	b.text(lx, ly, anchor, "tick", label)
}

// probes draws each run's probes, the baseline first so that this run's
// are on top: a line through the measured ones in each panel, a filled
// mark where a probe met the objective, hollow where it failed, a cross
// on the rate axis where it was unmeasurable.
func (c *rateChart) probes() {
	for i := len(c.runs) - 1; i >= 0; i-- {
		r := c.runs[i]
		probes := slices.Clone(r.s.Probes)
		slices.SortStableFunc(probes, func(a, b result.SearchProbe) int { return cmp.Compare(a.Rate, b.Rate) })
		c.probeLines(r, probes)
		lastOff := math.Inf(-1) // the x of this run's last off-scale label
		for _, p := range probes {
			lastOff = c.probeMarks(r, i, &p, lastOff)
		}
	}
}

// probeLines draws the lines through run r's measured probes.
func (c *rateChart) probeLines(r rateRun, probes []result.SearchProbe) {
	var gpts, ppts []string
	for _, p := range probes {
		t := p.Traffic
		if t == nil || !t.Status.Measured() || p.Decision == result.DecisionUnmeasurable {
			continue
		}
		gpts = append(gpts, fmt.Sprintf("%.1f,%.1f", c.px(p.Rate), c.gy(t.GoodputRPS)))
		if y, ok := t.Metric(c.pc.Metric); ok {
			ppts = append(ppts, fmt.Sprintf("%.1f,%.1f", c.px(p.Rate), c.py(y)))
		}
	}
	for _, pts := range [][]string{gpts, ppts} {
		if len(pts) > 1 {
			c.b.f(`<polyline points="%s" fill="none" stroke="%s" stroke-width="2"%s/>`, strings.Join(pts, " "), r.color, dashAttr(r.dash))
		}
	}
}

// probeMarks draws probe p of run r (the i-th run), returning the x of
// the run's last off-scale label (lastOff, or this probe's when it wrote
// one): a value above the percentile panel is written beside its mark,
// this run's to the left and the baseline's to the right, 40 px apart
// at least.
func (c *rateChart) probeMarks(r rateRun, i int, p *result.SearchProbe, lastOff float64) float64 {
	b := &c.b
	label := rateProbeLabel(r.name, p, c.pc.Metric)
	t := p.Traffic
	if t == nil || !t.Status.Measured() || p.Decision == result.DecisionUnmeasurable {
		// Unmeasurable or not measured: a cross on the rate axis.
		x, y := c.px(p.Rate), c.gTop+c.panelH
		b.f(`<path d="M%.1f %.1fl8 8m0 -8l-8 8" stroke="%s" stroke-width="2"><title>%s</title></path>`, x-4, y-4, r.color, html.EscapeString(label))
		return lastOff
	}
	fill := r.color
	if !p.Passed {
		fill = "#fff"
	}
	b.mark(r.marker, c.px(p.Rate), c.gy(t.GoodputRPS), fill, r.color, label)
	y, ok := t.Metric(c.pc.Metric)
	if !ok {
		return lastOff
	}
	b.mark(r.marker, c.px(p.Rate), c.py(y), fill, r.color, label)
	if y <= c.pt[len(c.pt)-1] || c.px(p.Rate)-lastOff < 40 {
		return lastOff
	}
	x, anchor := c.px(p.Rate)-6, "end"
	if i > 0 {
		x, anchor = c.px(p.Rate)+6, "start"
	}
	b.text(x, c.py(y)+14, anchor, "tick", "↑ "+tickLabel(math.Round(y)))
	return c.px(p.Rate)
}

// legend draws the runs' lines and marks, then "not met" and the bounds'
// band.
func (c *rateChart) legend() {
	b := &c.b
	lx := rateChartW - c.right + 12
	for i, r := range c.runs {
		ly := c.top + 8 + float64(i)*18
		b.f(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2"%s/>`, lx, ly, lx+28, ly, r.color, dashAttr(r.dash))
		b.mark(r.marker, lx+14, ly, r.color, r.color, "")
		b.text(lx+34, ly+4, "start", "tick", r.name)
	}
	ly := c.top + 8 + float64(len(c.runs))*18 + 6
	b.f(`<circle cx="%.1f" cy="%.1f" r="3.5" fill="#fff" stroke="#555" stroke-width="1.5"/>`, lx+14, ly)
	b.text(lx+34, ly+4, "start", "tick", "not met")
	b.f(`<rect x="%.1f" y="%.1f" width="28" height="12" fill="#555" fill-opacity="0.13"/>`, lx, ly+12)
	b.text(lx+34, ly+22, "start", "tick", "capacity bounds")
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
// which report.md links to (the run command writes them in report.md's folder).
func SearchCharts(res *result.Results) []SearchChart { return NewModel(res).SearchCharts() }

// searchCharts are the rate searches' charts of searches as standalone
// SVG files.
func searchCharts(searches []searchView) []SearchChart {
	var out []SearchChart
	for _, v := range searches {
		if !v.search.IsRate() {
			continue
		}
		out = append(out, SearchChart{File: searchChartFile(v.search), SVG: []byte(standaloneSVG(v.chart()))})
	}
	return out
}

// searchChartFile is the name of a rate search's SVG file.
func searchChartFile(s *result.Search) string { return "search-" + svgID(s.Name) + ".svg" }

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

// rateText is a rate to three significant digits, the search's precision
// being a few percent: "6.23", "12.3", "123".
func rateText(v float64) string {
	if v <= 0 {
		return numfmt.Shortest(v)
	}
	return numfmt.Fixed(v, max(0, 2-int(math.Floor(math.Log10(v)))))
}

// checkStopped is why check c stopped: its Stop worded, else its Error
// ("" when it did not stop).
func checkStopped(c *result.SearchCheck) string {
	if c.Stop != nil {
		return CheckStopText(c.Stop)
	}
	return c.Error
}
