package report

import (
	"bufio"
	"fmt"
	"html"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/numfmt"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// comparison is one `cell.METRIC OP number` of a search objective.
type comparison struct {
	Metric string
	Op     string
	Value  float64
}

func (c comparison) String() string {
	return c.Metric + " " + c.Op + " " + strconv.FormatFloat(c.Value, 'f', -1, 64)
}

// relationalOps are HCL's comparison operations as written.
var relationalOps = map[*hclsyntax.Operation]string{
	hclsyntax.OpGreaterThan: ">", hclsyntax.OpGreaterThanOrEqual: ">=",
	hclsyntax.OpLessThan: "<", hclsyntax.OpLessThanOrEqual: "<=",
}

// flippedOp keeps a comparison's meaning when its sides swap.
var flippedOp = map[string]string{">": "<", ">=": "<=", "<": ">", "<=": ">="}

// objectiveComparisons parses a search objective's text for its
// `cell.METRIC OP number` comparisons, in the order written (others, such
// as comparisons with var.NAME, are left out).
func objectiveComparisons(text string) []comparison {
	expr, diags := hclsyntax.ParseExpression([]byte(text), "objective", hcl.InitialPos)
	if diags.HasErrors() {
		return nil
	}
	var out []comparison
	hclsyntax.VisitAll(expr, func(n hclsyntax.Node) hcl.Diagnostics {
		b, ok := n.(*hclsyntax.BinaryOpExpr)
		if !ok {
			return nil
		}
		op, ok := relationalOps[b.Op]
		if !ok {
			return nil
		}
		metric, v, ok := cellAndNumber(b.LHS, b.RHS)
		if !ok {
			if metric, v, ok = cellAndNumber(b.RHS, b.LHS); ok {
				op = flippedOp[op]
			}
		}
		if ok {
			out = append(out, comparison{Metric: metric, Op: op, Value: v})
		}
		return nil
	})
	return out
}

// cellAndNumber reads `cell.METRIC` from a and a number literal from b.
func cellAndNumber(a, b hclsyntax.Expression) (string, float64, bool) {
	t, ok := a.(*hclsyntax.ScopeTraversalExpr)
	if !ok || len(t.Traversal) != 2 || t.Traversal.RootName() != "cell" {
		return "", 0, false
	}
	attr, ok := t.Traversal[1].(hcl.TraverseAttr)
	if !ok {
		return "", 0, false
	}
	v, diags := b.Value(nil)
	if diags.HasErrors() || v.IsNull() || !v.IsKnown() || !v.Type().Equals(cty.Number) {
		return "", 0, false
	}
	f, _ := v.AsBigFloat().Float64()
	return attr.Name, f, true
}

// searchView is one search's section as figures: the search, its
// objective's comparisons and the metrics its table shows, the
// baseline's same search, its paired checks and its cost at the answer.
// Its methods word them for the writers (report.md, report.html) and
// its chart draws them.
type searchView struct {
	search  *result.Search
	compare []comparison
	// metrics are the objective's metrics, once each in the order
	// written: the table's columns between the status and the decision.
	metrics []string
	// base is the baseline's search of the same name that the
	// comparison kept, which a rate search's chart draws beside this
	// run's (cost prices it); nil without one.
	base *result.Search
	// checks are a rate search's paired-check windows
	// (docs/method.md#paired-capacity-check): its check at the answer,
	// its replay of the baseline's; none without either.
	checks []checkView
	// cost prices the search's answer (docs/method.md#cost).
	cost searchCost
}

// chart is the search's chart, an SVG that report.html shows and that a
// rate search's file beside report.md holds; "" when there is none. Its
// writers draw it: the model holds what it plots.
func (v searchView) chart() string {
	if v.search.IsRate() {
		return rateSearchChart(v, v.base)
	}
	return searchChart(v)
}

// newSearchViews are res's searches as the reports show them, in the
// spec's order: each with its objective's comparisons, the baseline's
// same search, its checks' means and its cost figures.
func newSearchViews(res *result.Results) []searchView {
	var out []searchView
	for i := range res.Search {
		s := &res.Search[i]
		v := searchView{search: s, compare: objectiveComparisons(s.Objective)}
		v.metrics = comparedMetrics(v.compare)
		bs := baselineSearch(res, s.Name)
		if bs != nil {
			v.base = &bs.Search
		}
		v.checks = newCheckViews(s)
		v.cost = newSearchCost(res, s, bs)
		out = append(out, v)
	}
	return out
}

// comparedMetrics are the metrics of cs, once each in the order written.
func comparedMetrics(cs []comparison) []string {
	var metrics []string
	for _, c := range cs {
		if !slices.Contains(metrics, c.Metric) {
			metrics = append(metrics, c.Metric)
		}
	}
	return metrics
}

// baselineSearch is the baseline's search called name that res's
// comparison kept; nil without one.
func baselineSearch(res *result.Results, name string) *result.BaselineSearch {
	if res.Comparison == nil {
		return nil
	}
	for i := range res.Comparison.Searches {
		if res.Comparison.Searches[i].Search.Name == name {
			return &res.Comparison.Searches[i]
		}
	}
	return nil
}

// Title is the section's heading: "Search max_users".
func (v searchView) Title() string { return "Search " + v.search.Name }

// Rule is the search's objective as written.
func (v searchView) Rule() string { return v.search.Objective }

// Answer is what the search found and how, in one line.
func (v searchView) Answer() string {
	if v.search.IsRate() {
		return rateAnswerText(v.search)
	}
	return searchAnswerText(v.search)
}

// Charted is what the chart plots: a rate search's goodput and
// percentile, a concurrency search's first comparison ("" when its
// objective has none).
func (v searchView) Charted() string {
	switch {
	case v.search.IsRate():
		return "goodput_rps and " + chartedPercentile(v.compare).Metric
	case len(v.compare) > 0:
		return v.compare[0].String()
	}
	return ""
}

// Others are the comparisons a concurrency search's objective also
// requires beside the one charted.
func (v searchView) Others() []string {
	if v.search.IsRate() || len(v.compare) < 2 {
		return nil
	}
	out := make([]string, 0, len(v.compare)-1)
	for _, c := range v.compare[1:] {
		out = append(out, c.String())
	}
	return out
}

// Header is the probes' table's header.
func (v searchView) Header() []string {
	h := []string{"#", "Concurrency", "Status"}
	if v.search.IsRate() {
		h[1] = "Rate (req/s)"
	}
	h = append(h, v.metrics...)
	if v.search.IsRate() {
		return append(h, "Windows", "Decision")
	}
	return append(h, "Objective")
}

// Rows are the probes' table's rows, in the order measured.
func (v searchView) Rows() [][]string {
	rows := make([][]string, 0, len(v.search.Probes))
	for n := range v.search.Probes {
		p := &v.search.Probes[n]
		if v.search.IsRate() {
			rows = append(rows, rateProbeRow(n, p, v.metrics))
		} else {
			rows = append(rows, concurrencyProbeRow(n, p, v.metrics))
		}
	}
	return rows
}

// concurrencyProbeRow is the n-th probe p of a concurrency search as its
// table shows it, with metrics.
func concurrencyProbeRow(n int, p *result.SearchProbe, metrics []string) []string {
	row := []string{strconv.Itoa(n + 1), strconv.Itoa(p.Concurrency), statusWord(p.Cell.Status)}
	for _, m := range metrics {
		row = append(row, probeMetricText(&p.Cell, m))
	}
	verdict := "met"
	if !p.Passed {
		verdict = "not met"
		if p.Reason != "" {
			verdict += ": " + p.Reason
		}
	}
	return append(row, verdict)
}

// Cost are the lines that price the search's answer
// (docs/method.md#cost): its GPU time, the cost at the answer, the
// baseline's beside it.
func (v searchView) Cost() []string { return v.cost.lines() }

// Checks are a rate search's paired-check windows in words
// (docs/method.md#paired-capacity-check): its check at the answer, its
// replay of the baseline's.
func (v searchView) Checks() []string {
	var out []string
	for _, c := range v.checks {
		out = append(out, c.line())
	}
	return out
}

// probeMetricText is a probe's metric as the tables show it.
func probeMetricText(c *result.DecodeCell, name string) string {
	if !c.Status.Measured() {
		return dash
	}
	m, ok := metric.Lookup(vocab.PhaseDecode, name)
	v, has := c.Metric(name)
	if !ok || !has {
		return dash
	}
	return numfmt.Fixed(v, m.Precision)
}

// searchAnswerText says what concurrency search s found, in one line
// (rateAnswerText says it of a rate search).
func searchAnswerText(s *result.Search) string {
	where := fmt.Sprintf("at context %s, concurrency %d to %d", vocab.FormatTokens(s.Context), s.Range[0], s.Range[1])
	var line string
	switch {
	case s.Error != "":
		line = fmt.Sprintf("No answer %s: %s.", where, s.Error)
	case !s.Found:
		line = fmt.Sprintf("No concurrency meets the objective %s: even %d fails (concurrency = 0, found = false).", where, s.Range[0])
	case s.ConfirmedBy == 0:
		line = fmt.Sprintf("Largest concurrency meeting the objective %s: %d, the top of the range (nothing above it was probed).", where, s.Concurrency)
	default:
		line = fmt.Sprintf("Largest concurrency meeting the objective %s: %d (confirmed: %d fails).", where, s.Concurrency, s.ConfirmedBy)
	}
	line += fmt.Sprintf(" %d probes.", len(s.Probes))
	if !s.Monotone {
		line += " Not monotone: a probe passed above a failing one; the answer is the largest concurrency with every probe at or below it passing."
	}
	return line
}

// writeSearches writes each search's section of report.md.
func writeSearches(b *bufio.Writer, searches []searchView) {
	for _, v := range searches {
		title, charted, others := v.Title(), v.Charted(), v.Others()
		fmt.Fprintf(b, "## %s\n\n%s\n\nObjective: %s\n\n", title, mdText(v.Answer()), mdCode(v.Rule()))
		lines := append(v.Cost(), v.Checks()...)
		for _, c := range lines {
			fmt.Fprintf(b, "- %s\n", mdText(c))
		}
		if len(lines) > 0 {
			fmt.Fprintln(b)
		}
		if v.search.IsRate() {
			f := searchChartFile(v.search)
			fmt.Fprintf(b, "![%s: %s against the offered rate](%s)\n\n%s (and report.html) charts %s against the offered rate, the baseline's beside this run's when there is one, each answer within its confidence bounds.\n\n",
				mdText(title), mdText(charted), f, mdCode(f), mdText(charted))
		} else if charted != "" {
			fmt.Fprintf(b, "The HTML report charts %s against concurrency", mdCode(charted))
			if len(others) > 0 {
				codes := make([]string, len(others))
				for i, o := range others {
					codes[i] = mdCode(o)
				}
				fmt.Fprintf(b, "; the objective also requires %s", strings.Join(codes, ", "))
			}
			fmt.Fprint(b, ".\n\n")
		}
		rows := v.Rows()
		mdTable(b, v.Header(), func(row func(...string)) {
			for _, r := range rows {
				row(r...)
			}
		})
		fmt.Fprintln(b)
	}
}

// searchChart plots the objective's first comparison's metric against
// concurrency (log₂ axis) for every measured probe, passing probes filled,
// failing ones hollow, with the threshold as a dashed line and the answer
// marked. It returns "" when the objective has no `cell.M OP number`.
func searchChart(v searchView) string {
	if len(v.compare) == 0 || v.search.IsRate() {
		return "" // a rate search is charted against offered rate, not here
	}
	c := v.compare[0]
	s := v.search
	const W, H = 640.0, 340.0
	left, right, top, bottom := 64.0, 24.0, 36.0, 48.0
	pw, ph := W-left-right, H-top-bottom
	ymax := c.Value
	type pt struct {
		x, y   float64
		passed bool
		label  string
	}
	var pts []pt
	for _, p := range s.Probes {
		y, ok := p.Cell.Metric(c.Metric)
		if !p.Cell.Status.Measured() || !ok {
			continue
		}
		ymax = math.Max(ymax, y)
		pts = append(pts, pt{math.Log2(float64(p.Concurrency)), y, p.Passed,
			fmt.Sprintf("concurrency %d: %s = %s (%s)", p.Concurrency, c.Metric, numfmt.Shortest(y), map[bool]string{true: "met", false: "not met"}[p.Passed])})
	}
	yt := niceTicks(ymax*1.1, 5)
	ytop := yt[len(yt)-1]
	xmin, xmax := math.Log2(float64(s.Range[0])), math.Log2(float64(s.Range[1]))
	px := func(x float64) float64 { return left + (x-xmin)/(xmax-xmin)*pw }
	py := func(y float64) float64 { return top + ph - y/ytop*ph }

	var b svgBuilder
	title := fmt.Sprintf("%s: %s by concurrency at %s", v.Title(), c.Metric, vocab.FormatTokens(s.Context))
	b.f(`<svg class="chart" viewBox="0 0 %.0f %.0f" style="max-width:%.0fpx" role="img" aria-label="%s">`, W, H, W*1.25, html.EscapeString(title))
	b.text(left, 20, "start", "ctitle", title)
	for _, yv := range yt {
		b.f(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" class="grid"/>`, left, py(yv), left+pw, py(yv))
		b.text(left-8, py(yv)+4, "end", "tick", tickLabel(yv))
	}
	var ticks []int
	for k := s.Range[0]; k < s.Range[1]; k *= 2 {
		ticks = append(ticks, k)
	}
	ticks = append(ticks, s.Range[1])
	lastLabel := math.Inf(-1)
	for _, k := range ticks {
		x := px(math.Log2(float64(k)))
		b.f(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" class="grid"/>`, x, top, x, top+ph)
		if x-lastLabel >= 28 {
			b.text(x, top+ph+18, "middle", "tick", strconv.Itoa(k))
			lastLabel = x
		}
	}
	b.f(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" class="axis"/>`, left, top+ph, left+pw, top+ph)
	b.f(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" class="axis"/>`, left, top, left, top+ph)
	b.text(left+pw/2, H-8, "middle", "atitle", "simultaneous requests (log₂ scale)")
	b.f(`<text transform="translate(16 %.1f) rotate(-90)" text-anchor="middle" class="atitle">%s</text>`, top+ph/2, html.EscapeString(c.Metric))
	// The threshold.
	ty := py(c.Value)
	b.f(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#D55E00" stroke-width="1.5" stroke-dasharray="6 4"/>`, left, ty, left+pw, ty)
	var marks [][2]float64 // the probes' positions, which labels must not cover
	for _, p := range pts {
		marks = append(marks, [2]float64{px(p.x), py(p.y)})
	}
	objective := "objective: " + c.String()
	ox, oy, oanchor := labelSpot(objective, ty, left, left+pw, top, top+ph, marks)
	b.text(ox, oy, oanchor, "tick", objective)
	// The answer: its label beside the line, on the side with room (at the
	// top of the range, to its left).
	if s.Found {
		ax := px(math.Log2(float64(s.Concurrency)))
		b.f(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#009E73" stroke-width="1.5" stroke-dasharray="2 3"/>`, ax, top, ax, top+ph)
		answer := fmt.Sprintf("answer %d", s.Concurrency)
		if ax+4+textWidth(answer) <= left+pw {
			b.text(ax+4, top+12, "start", "tick", answer)
		} else {
			b.text(ax-4, top+12, "end", "tick", answer)
		}
	}
	for _, p := range pts {
		fill, stroke := "#009E73", "#009E73"
		if !p.passed {
			fill, stroke = "#fff", "#D55E00"
		}
		b.f(`<circle cx="%.1f" cy="%.1f" r="4" fill="%s" stroke="%s" stroke-width="1.8"><title>%s</title></circle>`,
			px(p.x), py(p.y), fill, stroke, html.EscapeString(p.label))
	}
	b.f(`</svg>`)
	return b.String()
}

// textWidth estimates the width in px of a tick label (12 px sans-serif).
func textWidth(s string) float64 { return 6.6 * float64(len([]rune(s))) }

// labelSpot places the label of a horizontal line at height y between x0
// and x1 (inside the plot's top and bottom): above or below it, at its left
// or right end, the first spot whose box covers none of marks; the right
// end above it when every spot covers one.
func labelSpot(label string, y, x0, x1, top, bottom float64, marks [][2]float64) (x, ly float64, anchor string) {
	w := textWidth(label)
	type spot struct {
		x, y   float64
		anchor string
		box    [4]float64 // x0, y0, x1, y1
	}
	above, below := y-6, y+16
	if above-12 < top {
		above = below
	}
	if below > bottom-4 {
		below = above
	}
	var spots []spot
	for _, sy := range []float64{above, below} {
		spots = append(spots,
			spot{x0 + 6, sy, "start", [4]float64{x0 + 6, sy - 12, x0 + 6 + w, sy + 3}},
			spot{x1 - 4, sy, "end", [4]float64{x1 - 4 - w, sy - 12, x1 - 4, sy + 3}})
	}
	for _, sp := range spots {
		free := true
		for _, m := range marks {
			// A probe's mark is a circle of radius 4 (with its stroke, 6).
			if m[0]+6 >= sp.box[0] && m[0]-6 <= sp.box[2] && m[1]+6 >= sp.box[1] && m[1]-6 <= sp.box[3] {
				free = false
				break
			}
		}
		if free {
			return sp.x, sp.y, sp.anchor
		}
	}
	return x1 - 4, above, "end"
}
