package report

import (
	"bufio"
	"fmt"
	"html/template"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/numfmt"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// This file renders traffic cells (docs/method.md#traffic): the console's
// one-line summary and metric line, report.md's Traffic table and
// report.html's charts of goodput and TTFT p99 against the request rate.

// trafficColumns are the metrics of the Traffic table, in order.
var trafficColumns = []string{metric.Launched, metric.Completed, metric.AchievedRPS, metric.GoodputRPS, metric.GoodputShare,
	metric.E2EMs, metric.E2EMsP99, metric.TTFTMs, metric.TTFTMsP99, metric.TBTMs, metric.TBTMsP99, metric.ConcurrencyAvg}

// reasoningColumns are the Traffic table's columns of a block whose
// server streamed reasoning, after its TTFT p99.
var reasoningColumns = []string{metric.TTFOMs, metric.TTFOMsP99, metric.ReasoningTokens, metric.ContentTokens}

// TrafficSummary is the one-line summary of a measured traffic cell, the
// counts first so that a rate reads with what it rests on: "80 launched,
// 78 completed in 20s: 3.98 of 4 req/s achieved · goodput 3.90 req/s
// (98.0%) · TTFT p99 312 ms · e2e p50 2,301 ms · 9.2 in flight · valid".
//
// The numbers are the metric table's (trafficText), but for three that read
// otherwise in this line: the window in the shortest seconds ("in 20s"), the
// goodput share as a percentage and the requests in flight to one decimal
// (the table shows two).
//
// A closed loop has no rate to achieve: its line says "19.00 req/s achieved
// at concurrency 4". Requests the server refused at admission follow the
// completed ones ("80 launched, 60 completed, 12 rejected in 20s").
func TrafficSummary(c *result.TrafficCell) string {
	achieved := trafficText(c, metric.AchievedRPS) + " of " + vocab.FormatRate(c.Rate) + " req/s achieved"
	if c.Concurrency > 0 {
		achieved = fmt.Sprintf("%s req/s achieved at concurrency %d", trafficText(c, metric.AchievedRPS), c.Concurrency)
	}
	rejected := ""
	if c.Rejected > 0 {
		rejected = ", " + trafficText(c, metric.Rejected) + " rejected"
	}
	line := fmt.Sprintf("%s launched, %s completed%s in %ss: %s · goodput %s req/s (%s) · TTFT p99 %s · e2e p50 %s · %s in flight · %s",
		trafficText(c, metric.Launched), trafficText(c, metric.Completed), rejected, numfmt.Shortest(c.MeasuredS), achieved,
		trafficText(c, metric.GoodputRPS), goodputPercent(c),
		trafficText(c, metric.TTFTMsP99), trafficText(c, metric.E2EMs), numfmt.Fixed(c.ConcurrencyAvg, 1), c.Status)
	if c.Unfinished > 0 {
		line += fmt.Sprintf(" (%s unfinished)", trafficText(c, metric.Unfinished))
	}
	if c.Status == vocab.StatusQueued && c.Reason != "" {
		line += " (" + c.Reason + ")"
	}
	return line
}

// goodputPercent is the goodput share of c as a percentage ("95.0%"); a
// dash in a cell that launched no request.
func goodputPercent(c *result.TrafficCell) string {
	v, ok := c.Value(metric.Must(vocab.PhaseTraffic, metric.GoodputShare))
	if !ok {
		return dash
	}
	return numfmt.Fixed(v*100, 1) + "%"
}

// TrafficMetrics is the full metric line of a traffic cell (go test -v
// detail): every metric of the table (a quiet one where it is not 0), a
// percentile beside its median ("e2e_ms=2301/2900/3100"), then the
// schedule (arrivals, seed).
func TrafficMetrics(c *result.TrafficCell) string {
	var parts []string
	index := map[string]int{}
	for _, m := range metric.OfPhase(vocab.PhaseTraffic) {
		v, ok := c.Value(m)
		if !ok || m.Quiet() && v == 0 {
			continue
		}
		if i, ok := index[m.PercentileOf]; ok {
			parts[i] += "/" + rawValue(m, v)
			continue
		}
		index[m.Name] = len(parts)
		parts = append(parts, m.Name+"="+rawValue(m, v))
	}
	parts = append(parts, statsParts(vocab.PhaseTraffic, c.Stats)...)
	sched := "arrivals=" + c.Arrivals
	if c.Arrivals == vocab.ArrivalsGamma {
		sched += fmt.Sprintf(" burstiness=%g", c.Burstiness)
	}
	parts = append(parts, sched, fmt.Sprintf("seed=%d", c.Seed))
	if c.CapHits > 0 {
		parts = append(parts, fmt.Sprintf("cap_hits=%d (max_outstanding %d)", c.CapHits, c.MaxOutstanding))
	}
	return strings.Join(parts, " ")
}

// trafficBlock is one traffic block: its cells, rates or concurrencies
// ascending as measured. Its methods word it for its tables, its charts
// and JUnit.
type trafficBlock struct {
	Cells []*result.TrafficCell
}

// newTrafficBlocks groups res's traffic cells into blocks by block label
// and context, in order of first appearance.
func newTrafficBlocks(res *result.Results) []trafficBlock {
	type key struct {
		label   string
		context int
	}
	var out []trafficBlock
	index := map[key]int{}
	for i := range res.Traffic {
		c := &res.Traffic[i]
		k := key{c.Traffic, c.Context}
		j, ok := index[k]
		if !ok {
			j = len(out)
			index[k] = j
			out = append(out, trafficBlock{})
		}
		out[j].Cells = append(out[j].Cells, c)
	}
	return out
}

// closed reports whether the block is a closed loop: its load is a
// concurrency, not a rate.
func (b trafficBlock) closed() bool { return b.Cells[0].Concurrency > 0 }

// title names the block's tables and charts (trafficTitle).
func (b trafficBlock) title() string { return trafficTitle(b.Cells[0]) }

// load is cell i's load as its table row and chart label show it
// (trafficLoad).
func (b trafficBlock) load(i int) string { return trafficLoad(b.Cells[i]) }

// loadHeader heads the column of the block's loads.
func (b trafficBlock) loadHeader() string {
	if b.closed() {
		return "Concurrency"
	}
	return "Rate (req/s)"
}

// trafficTitle names a block's table and charts: "Traffic steady at 8K
// (poisson arrivals)".
func trafficTitle(c *result.TrafficCell) string {
	arr := c.Arrivals
	if arr == vocab.ArrivalsGamma {
		arr += fmt.Sprintf(", burstiness %g", c.Burstiness)
	}
	at := ""
	if c.Context > 0 {
		at = " at " + vocab.FormatTokens(c.Context)
	}
	if c.Concurrency > 0 {
		return fmt.Sprintf("Traffic %s%s (closed loop)", c.Traffic, at)
	}
	return fmt.Sprintf("Traffic %s%s (%s arrivals, seed %d)", c.Traffic, at, arr, c.Seed)
}

// trafficLoad is how a cell's load is given: its rate (open loop) or its
// concurrency (closed loop), as its table row and chart label show it.
func trafficLoad(c *result.TrafficCell) string {
	if c.Concurrency > 0 {
		return strconv.Itoa(c.Concurrency)
	}
	return vocab.FormatRate(c.Rate)
}

// trafficIntro is the sentence under each Traffic table's title (closed: a
// closed loop's).
func trafficIntro(closed bool) string {
	if closed {
		return "a closed loop keeping each concurrency's requests in flight; the window's requests (those launched in it) are measured to their end; goodput counts those meeting every SLO"
	}
	return "open-loop requests at each rate; the window's requests (those launched in it) are measured to their end; goodput counts those meeting every SLO"
}

// trafficTable is one of a traffic block's tables as report.md and
// report.html lay it out: its Traffic table (blockTable), then a
// conversation block's turns (turnTable) or an agentic block's sessions
// (sessionTable). Its methods word it.
type trafficTable interface {
	Title() string
	Intro() string
	Header() []string
	Rows() [][]string
}

// trafficTables are the tables of traffic blocks, each block's Traffic
// table with the columns its cells call for, then its turns' and its
// sessions' tables where it has them.
func trafficTables(blocks []trafficBlock) []trafficTable {
	var out []trafficTable
	for _, b := range blocks {
		cells := b.Cells
		columns := trafficColumns
		if slices.ContainsFunc(cells, func(c *result.TrafficCell) bool { return c.Rejected > 0 }) {
			// Refused at admission, their own column after the completed
			// (docs/method.md#rejections).
			i := slices.Index(columns, metric.Completed) + 1
			columns = slices.Concat(columns[:i], []string{metric.Rejected}, columns[i:])
		}
		if slices.ContainsFunc(cells, func(c *result.TrafficCell) bool { _, ok := c.Metric(metric.TTFOMs); return ok }) {
			// A server that streamed reasoning: its phases after the TTFT
			// (docs/method.md#reasoning).
			i := slices.Index(columns, metric.TTFTMsP99) + 1
			columns = slices.Concat(columns[:i], reasoningColumns, columns[i:])
		}
		for _, c := range cells {
			if _, ok := c.Metric(metric.PrefixCacheHitRate); ok { // a server with the counters
				columns = append(slices.Clip(columns), metric.PrefixCacheHitRate)
				break
			}
		}
		// A workload that dials its hit rate shows the dial beside the
		// server's measured rate (docs/spec.md#prefix-hit-rate).
		dialled := slices.ContainsFunc(cells, func(c *result.TrafficCell) bool { return c.PrefixHitRateDial != nil })
		out = append(out, blockTable{block: b, columns: columns, dialled: dialled})
		if turns := conversationTurns(cells); turns > 0 {
			out = append(out, turnTable{block: b, turns: turns})
		}
		if slices.ContainsFunc(cells, func(c *result.TrafficCell) bool { return len(c.Sessions) > 0 }) {
			out = append(out, sessionTable{block: b})
		}
	}
	return out
}

// blockTable is a traffic block's Traffic table: one row per rate or
// concurrency, a column per metric of columns, and the hit rate a
// workload dialled after them when dialled.
type blockTable struct {
	block   trafficBlock
	columns []string
	dialled bool
}

// Title is the block's title.
func (t blockTable) Title() string { return t.block.title() }

// Intro is the sentence under the title, with the workload whose prompts
// the block sent.
func (t blockTable) Intro() string {
	intro := trafficIntro(t.block.closed())
	if c := t.block.Cells[0]; c.Workload != "" && c.Prompts != "" {
		// Templated or raw: what the server was asked matters to
		// whoever reads the latencies (docs/method.md#named-workloads-in-traffic).
		intro += fmt.Sprintf("; workload %q, its prompts sent as %s", c.Workload, c.Prompts)
	}
	return intro
}

// Header is the load, the status, then each column's label.
func (t blockTable) Header() []string {
	h := []string{t.block.loadHeader(), "Status"}
	for _, name := range t.columns {
		h = append(h, metric.Must(vocab.PhaseTraffic, name).Label)
	}
	if t.dialled {
		h = append(h, dialLabel)
	}
	return h
}

// Rows are each cell's load, status and figures (a dash for a cell not
// measured).
func (t blockTable) Rows() [][]string {
	var rows [][]string
	for i, c := range t.block.Cells {
		r := []string{t.block.load(i), statusWord(c.Status)}
		for _, name := range t.columns {
			if !c.Status.Measured() {
				r = append(r, dash)
				continue
			}
			r = append(r, trafficText(c, name))
		}
		if t.dialled {
			r = append(r, dialText(c))
		}
		rows = append(rows, r)
	}
	return rows
}

// conversationTurns is how many turns of a conversation any of cells
// measured (ttft_ms_turn1, …); 0 for a block without conversations.
func conversationTurns(cells []*result.TrafficCell) int {
	turns := 0
	for _, c := range cells {
		for n := turns + 1; ; n++ {
			if _, ok := c.Stats[metric.TurnName(n)]; !ok {
				break
			}
			turns = n
		}
	}
	return turns
}

// turnTable is a conversation block's per-turn TTFT table, after its
// Traffic table: one row per rate or concurrency, a column per turn of
// turns.
type turnTable struct {
	block trafficBlock
	turns int
}

// Title is the block's title, then what the table holds.
func (t turnTable) Title() string { return t.block.title() + ": TTFT by conversation turn" }

// Intro is the sentence under the title.
func (t turnTable) Intro() string {
	return "the median time to first token of the window's requests at each turn of a conversation, in ms; " +
		"a later turn resends the history, which the prefix cache serves, so only its new tokens are prefilled (docs/method.md#conversations)"
}

// Header is the load, the status, then "Turn 1", "Turn 2", ….
func (t turnTable) Header() []string {
	h := []string{t.block.loadHeader(), "Status"}
	for n := 1; n <= t.turns; n++ {
		h = append(h, "Turn "+strconv.Itoa(n))
	}
	return h
}

// Rows are each cell's load, status and median TTFT at each turn (a dash
// where it has none).
func (t turnTable) Rows() [][]string {
	var rows [][]string
	for i, c := range t.block.Cells {
		r := []string{t.block.load(i), statusWord(c.Status)}
		for n := 1; n <= t.turns; n++ {
			v, ok := c.Stats[metric.TurnName(n)]
			if !ok || !c.Status.Measured() {
				r = append(r, dash)
				continue
			}
			r = append(r, numfmt.Fixed(v, 0))
		}
		rows = append(rows, r)
	}
	return rows
}

// writeTraffic writes report.md's Traffic tables: one row per rate.
func writeTraffic(b *bufio.Writer, tables []trafficTable) {
	for _, t := range tables {
		fmt.Fprintf(b, "## %s\n\n%s\n\n", mdText(t.Title()), t.Intro())
		mdTable(b, t.Header(), func(row func(...string)) {
			for _, r := range t.Rows() {
				row(r...)
			}
		})
		fmt.Fprintln(b)
	}
}

// trafficCharts are report.html's charts of each traffic block of two loads or more: goodput
// (with the achieved rate) and TTFT p99 against the configured rate. svg.go
// escapes every piece of text it writes, which makes the template.HTML
// conversion safe.
func trafficCharts(blocks []trafficBlock) []htmlChart {
	var out []htmlChart
	for _, b := range blocks {
		cells := b.Cells
		if len(cells) < 2 {
			// One load is one dot per line: no trend to draw, and the
			// block's table beside it holds its figures.
			continue
		}
		var xt []float64
		var xl []string
		// achieved and goodput coincide when every request meets the SLO:
		// achieved is drawn first, wide and dashed with square marks, and
		// goodput on top, thin and solid with round ones, so that both show;
		// the dotted diagonal is achieved = offered.
		offered := series{Name: "achieved = offered", Color: "#777", Dash: "2 4", Width: 1.5, Marker: markerNone}
		achieved := series{Name: "achieved", Color: palette[1%len(palette)], Dash: "7 4", Width: 4, Marker: markerSquare}
		good := series{Name: "goodput", Color: palette[0], Width: 2}
		ttft := series{Name: "TTFT p99", Color: palette[2%len(palette)]}
		closed := b.closed()
		axis := "configured rate, requests/s (log₂ scale)"
		if closed {
			axis = "concurrency, requests in flight (log₂ scale)"
		}
		for i, c := range cells {
			x := math.Log2(c.Rate)
			summary := TrafficSummary(c)
			label := fmt.Sprintf("rate %s: %s", vocab.FormatRate(c.Rate), summary)
			if closed {
				// A closed loop offers no rate: no achieved = offered line.
				x = math.Log2(float64(c.Concurrency))
				label = fmt.Sprintf("concurrency %d: %s", c.Concurrency, summary)
			} else {
				offered.Points = append(offered.Points, point{X: x, Y: c.Rate, Label: fmt.Sprintf("offered rate %s req/s", vocab.FormatRate(c.Rate))})
			}
			xt = append(xt, x)
			xl = append(xl, b.load(i))
			if !c.Status.Measured() {
				continue
			}
			q := c.Status == vocab.StatusQueued
			achieved.Points = append(achieved.Points, point{X: x, Y: c.AchievedRPS, Hollow: q, Label: label})
			good.Points = append(good.Points, point{X: x, Y: c.GoodputRPS, Hollow: q, Label: label})
			if v, ok := c.Value(metric.Must(vocab.PhaseTraffic, metric.TTFTMsP99)); ok { // no point where nothing completed
				ttft.Points = append(ttft.Points, point{X: x, Y: v, Hollow: q, Label: label})
			}
		}
		title := b.title()
		rates := []series{offered, achieved, good}
		if closed {
			rates = rates[1:]
		}
		out = append(out,
			htmlChart{Title: title, SVG: template.HTML(lineChart(title+": goodput", "requests/s", xt, xl,
				axis, rates, true))},
			htmlChart{Title: title, SVG: template.HTML(lineChart(title+": TTFT p99", "ms", xt, xl,
				axis, []series{ttft}, false))})
	}
	return out
}

// dialLabel heads the column of the hit rate a workload dialled.
const dialLabel = "Dialled hit rate"

// dialText is the hit rate c's workload dialled, written as the measured
// prefix_cache_hit_rate is; a dash without a dial.
func dialText(c *result.TrafficCell) string {
	if c.PrefixHitRateDial == nil {
		return dash
	}
	return metricText(metric.Must(vocab.PhaseTraffic, metric.PrefixCacheHitRate), *c.PrefixHitRateDial)
}

// trafficText is metric name of traffic cell c as reports show it; a dash
// when the cell does not have it (a latency where no request completed).
func trafficText(c *result.TrafficCell, name string) string {
	m := metric.Must(vocab.PhaseTraffic, name)
	v, ok := c.Value(m)
	if !ok {
		return dash
	}
	return metricText(m, v)
}
