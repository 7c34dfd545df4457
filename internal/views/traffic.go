package views

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/judge"
	"github.com/slogate/slogate/internal/numfmt"
	"github.com/slogate/slogate/internal/ratesearch"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// TrafficNote is the line heading the traffic lines of diff.
const TrafficNote = "traffic cells (request for request when both sent one schedule; docs/method.md#comparing-traffic):"

// TrafficLines is the traffic comparison, each key's headline (how its
// requests were compared, and the outcome) and below it, indented two
// spaces, a line per metric: for a decided one the rule, then the value
// (k6's way: "ttft_ms_p99 within 5%: +2.6% [-0.5%, +6.7%] (295.5 → 303.3
// ms): inconclusive"); a cell one side lacks or could not measure is its
// headline alone.
func TrafficLines(pairs []compare.TrafficPair, tolerance float64) []string {
	var out []string
	for i := range pairs {
		out = append(out, TrafficBlock(&pairs[i], tolerance)...)
	}
	return out
}

// TrafficBlock is one pair's lines of TrafficLines: its headline, then its
// metric lines indented two spaces.
func TrafficBlock(p *compare.TrafficPair, tolerance float64) []string {
	out := []string{p.Ref.Name() + ": " + trafficHeadline(p)}
	for _, l := range trafficMetricLines(p, tolerance) {
		out = append(out, "  "+l)
	}
	return out
}

// trafficHeadline is a pair's first line: how it was compared and its
// outcome, or which side has what.
func trafficHeadline(p *compare.TrafficPair) string {
	a, b := p.A, p.B
	switch {
	case a == nil:
		return "only B (no baseline cell): " + statusText(b)
	case b == nil:
		return "only A (not measured by B): " + statusText(a) + ": lost"
	case !p.Measured():
		return statusText(a) + " → " + statusText(b)
	}
	line := outcomeWord(p) + "; "
	switch p.Mode {
	case compare.TrafficPaired:
		line += fmt.Sprintf("paired, %d requests", p.Requests)
		if p.Missing > 0 {
			line += fmt.Sprintf(" (%d more of the baseline's window not in this run's)", p.Missing)
		}
	case compare.TrafficUnpaired:
		line += fmt.Sprintf("unpaired, two samples of %d and %d requests: %s", p.Requests, p.RequestsB, p.Note)
	default:
		line += "unpaired, on the cells' values alone (not statistical): " + p.Note
	}
	if !p.Latencies {
		line += fmt.Sprintf(" (completed %d → %d: no latencies to compare)", a.Completed, b.Completed)
	}
	if p.SentDiffers {
		line += fmt.Sprintf(" (sent differently: %s → %s)", sentText(a), sentText(b))
	}
	if len(p.SLO) > 0 {
		line += " (the SLOs differ, each side's goodput judged by its own: " + strings.Join(p.SLO, ", ") + ")"
	}
	return line
}

// outcomeWord is a pair's outcome as its headline ends: "within
// tolerance", "regressed (ttft_ms, e2e_ms_p99)", "inconclusive
// (ttft_ms_p99)", with the engine rule's "informs only".
func outcomeWord(p *compare.TrafficPair) string {
	var regressed, inconclusive []string
	for _, v := range p.Values {
		switch {
		case !v.Decided:
		case v.Change == compare.Regressed:
			regressed = append(regressed, v.Metric.Name)
		case v.Change == compare.Inconclusive:
			inconclusive = append(inconclusive, v.Metric.Name)
		}
	}
	var w string
	switch {
	case len(regressed) > 0:
		w = "regressed (" + strings.Join(regressed, ", ") + ")"
	case len(inconclusive) > 0:
		w = "inconclusive (" + strings.Join(inconclusive, ", ") + ")"
	default:
		w = "within tolerance"
	}
	if p.InformsOnly() {
		w += ", informs only (another engine)"
	}
	if p.Confounded {
		w += ", not decided (another machine)"
	}
	return w
}

// trafficMetricLines are a measured pair's metric lines.
func trafficMetricLines(p *compare.TrafficPair, tolerance float64) []string {
	var out []string
	for i := range p.Values {
		v := &p.Values[i]
		values := numfmt.Value(v.A) + " → " + numfmt.Value(v.B)
		if v.Metric.Unit != "" {
			values += " " + v.Metric.Unit
		}
		if !v.Decided {
			out = append(out, fmt.Sprintf("%s: %s (%s)", v.Metric.Name, values, deltaOrNA(v.Delta)))
			continue
		}
		value := deltaOrNA(v.Delta)
		if v.Bounded {
			value += " [" + numfmt.Delta(v.Lower-1) + ", " + numfmt.Delta(v.Upper-1) + "]"
		} else {
			values += ", values only"
		}
		line := fmt.Sprintf("%s within %s: %s (%s): %s", v.Metric.Name, numfmt.Percent(tolerance), value, values, v.Change)
		switch {
		case v.Undecidable():
			line += " (" + UndecidablePercentile(v.Metric.Name, v.From, v.Need) + ")"
		case v.Change == compare.Inconclusive && v.Bounded:
			line += " (" + trafficNeeded(p, v.Needed) + ")"
		}
		out = append(out, line)
	}
	return out
}

// TrafficPair words one traffic pair's verdict of -baseline (named
// "<server>/baseline/traffic/replay/rate=4"): its headline and metric
// lines, and a message naming what regressed or could not be decided.
func (JudgeWords) TrafficPair(f result.Finding, tp *compare.TrafficPair, p compare.Policy, m *compare.MachineChange) judge.Worded {
	ref := tp.Ref
	v := judge.Worded{Rule: "within " + numfmt.Percent(p.Tolerance) + " of the baseline"}
	switch f {
	case result.FindingNotInBaseline:
		v.Message = "not in the baseline"
		return v
	case result.FindingBaselineUnmeasured:
		v.Message = "baseline cell not measured: " + tp.A.Status.Unmeasured(tp.A.Reason)
		return v
	case result.FindingNotMeasured:
		v.Message = "cell not measured: " + tp.B.Status.Unmeasured(tp.B.Reason)
		v.Details = []string{ref.Expr() + ": " + v.Message + " (the baseline measured it)"}
		return v
	case result.FindingLost:
		v.Message = "lost: the baseline measured this traffic cell, this run did not"
		v.Details = []string{ref.Expr() + ": " + v.Message}
		return v
	}
	lines := TrafficBlock(tp, p.Tolerance)
	v.Details = append([]string{strings.TrimPrefix(lines[0], ref.Name()+": ")}, trimIndent(lines[1:])...)
	var regressed, inconclusive []string
	for _, x := range tp.Values {
		switch {
		case !x.Decided:
		case x.Change == compare.Regressed:
			regressed = append(regressed, x.Metric.Name)
		case x.Change == compare.Inconclusive:
			inconclusive = append(inconclusive, x.Metric.Name)
		}
	}
	switch {
	case len(regressed) > 0:
		v.Message = fmt.Sprintf("%s regressed beyond %s against the baseline", joinAnd(regressed), numfmt.Percent(p.Tolerance))
	case len(inconclusive) > 0:
		v.Message = fmt.Sprintf("%s inconclusive against the baseline: neither regressed nor shown within %s; lengthen the window (or -inconclusive pass)", joinAnd(inconclusive), numfmt.Percent(p.Tolerance))
	}
	if tp.InformsOnly() {
		v.Details = append(v.Details, "(informs only: "+tp.Decided.String()+" against a baseline of another engine, which never gates)")
	}
	if tp.Confounded {
		v.Details = append(v.Details, ConfoundedLine(tp.Decided, m))
	}
	return v
}

// trimIndent drops the two spaces TrafficBlock indents its metric lines
// with.
func trimIndent(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = strings.TrimPrefix(l, "  ")
	}
	return out
}

// trafficValueChange is v's change for JSON: nil when NaN.
func trafficValueChange(v *compare.TrafficValue) *float64 {
	if math.IsNaN(v.Delta) {
		return nil
	}
	d := v.Delta
	return &d
}

func ptrTo(v float64) *float64 { return &v }

// trafficSummary counts the traffic cells by outcome for the verdict
// line: "traffic: 1 regressed, 2 within tolerance"; "" without traffic.
func trafficSummary(pairs []compare.TrafficPair) string {
	if len(pairs) == 0 {
		return ""
	}
	var regressed, inconclusive, within, other int
	for i := range pairs {
		switch pairs[i].Decided {
		case vocab.Fail:
			regressed++
		case vocab.Inconclusive:
			inconclusive++
		case vocab.Pass:
			within++
		default:
			other++
		}
	}
	parts := []string{fmt.Sprintf("%d regressed", regressed)}
	if inconclusive > 0 {
		parts = append(parts, fmt.Sprintf("%d inconclusive", inconclusive))
	}
	parts = append(parts, fmt.Sprintf("%d within tolerance", within))
	if other > 0 {
		parts = append(parts, fmt.Sprintf("%d not compared", other))
	}
	return "traffic cells: " + strings.Join(parts, ", ")
}

// RequestsUnreadLine warns that this run's requests.jsonl could not be
// read for the baseline comparison: its traffic cells are compared on
// their values.
func RequestsUnreadLine(err error) string {
	return "slogate: warning: -baseline: this run's per-request records could not be read, so its traffic cells are compared on their values alone: " + err.Error()
}

// trafficNeeded says what would decide an inconclusive traffic metric:
// "about 2400 requests a side would decide it: a 400 s window at 6
// req/s", or that it takes far more than were compared.
func trafficNeeded(p *compare.TrafficPair, needed int) string {
	if needed == 0 {
		return fmt.Sprintf("more than %d× the requests compared would be needed to decide it", compare.MaxRequestsEstimate)
	}
	s := fmt.Sprintf("about %d requests a side would decide it", needed)
	if rps := p.A.AchievedRPS; rps > 0 {
		s += fmt.Sprintf(": a %s s window at %s req/s", numfmt.Value(float64(needed)/rps), numfmt.Value(rps))
	}
	return s
}

// UndecidablePercentile says why a percentile of n requests is not
// decided: "ttft_ms_p99 from 42 requests: a p99 needs ≥ 299"
// (docs/method.md#undecidable-percentiles).
func UndecidablePercentile(name string, n, need int) string {
	return fmt.Sprintf("%s from %d requests: %s needs ≥ %d", name, n, quantileWord(name), need)
}

// quantileWord names the quantile metric name reads: "a median", "a p99".
func quantileWord(name string) string {
	_, q, ok := ratesearch.MetricQuantile(name)
	switch {
	case !ok:
		return "it"
	case q == 0.5:
		return "a median"
	}
	return "a p" + strconv.FormatFloat(q*100, 'f', -1, 64)
}
