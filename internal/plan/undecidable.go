package plan

import (
	"fmt"
	"math"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/slogate/slogate/internal/numfmt"
	"github.com/slogate/slogate/internal/ratesearch"
	"github.com/slogate/slogate/internal/spec"
)

// PercentileNeed is what a rate search's probes need to decide one
// percentile its objective reads (docs/method.md#undecidable-percentiles):
// the fewest requests a probe must pool for the percentile's
// distribution-free bounds to exist at the level each look spends on it
// (ratesearch.QuantileSamples), and so the fewest a window, a probe
// pooling at most MaxWindows of them.
type PercentileNeed struct {
	// Metric is the objective's percentile (ttft_ms_p99); Q its quantile.
	Metric string
	Q      float64
	// Alpha is the one-sided level of each of its bounds at a look.
	Alpha float64
	// Probe is the fewest samples a probe needs; Window the fewest a
	// window, Probe ÷ MaxWindows rounded up.
	Probe, Window int
	MaxWindows    int
	// MinRate is the lowest request rate whose window holds Window
	// requests (Window ÷ the window's seconds).
	MinRate float64
	// Subject is where the objective reads the metric.
	Subject hcl.Range
}

// PercentileNeeds are the needs of each percentile rate search s's
// objective reads, with traffic block t's window.
func PercentileNeeds(s *spec.Search, t *spec.Traffic) []PercentileNeed {
	if !s.IsRate() || t == nil || t.Duration <= 0 {
		return nil
	}
	settings := ratesearch.Settings{Lo: s.RateLo, Hi: s.RateHi, Precision: s.Precision, MaxWindows: MaxRateWindows(s)}
	alpha := settings.QuantileAlpha(ratesearch.BoundedMetrics(s.ObjectiveMetrics))
	var out []PercentileNeed
	for _, name := range s.ObjectiveMetrics {
		_, q, ok := ratesearch.MetricQuantile(name)
		if !ok {
			continue
		}
		n := ratesearch.QuantileSamples(q, alpha)
		w := MaxRateWindows(s)
		need := PercentileNeed{Metric: name, Q: q, Alpha: alpha, Probe: n, MaxWindows: w, Window: (n + w - 1) / w}
		need.MinRate = float64(need.Window) / t.Duration.Seconds()
		need.Subject = objectiveRead(s, name)
		out = append(out, need)
	}
	return out
}

// objectiveRead is the range of the objective's first read of
// cell.<name>, or the objective's own range.
func objectiveRead(s *spec.Search, name string) hcl.Range {
	if s.Objective == nil {
		return s.DeclRange
	}
	for _, tr := range s.Objective.Variables() {
		if len(tr) == 2 && tr.RootName() == "cell" {
			if a, ok := tr[1].(hcl.TraverseAttr); ok && a.Name == name {
				return tr.SourceRange()
			}
		}
	}
	return s.Objective.Range()
}

// CheckSearches says, before any server starts, which percentiles a rate
// search's windows hold too few requests to decide
// (docs/method.md#undecidable-percentiles): an error when even the top of
// its range leaves a window short (no probe of it can decide the
// objective, so the search could only end undecided), a warning when the
// bottom does (the probes below the lowest rate that can are taken by
// their point estimates). The detail says how many requests a window
// needs, how long a window that is at the rate, and what to change.
func CheckSearches(sp *spec.Spec) hcl.Diagnostics {
	if sp == nil {
		return nil
	}
	var diags hcl.Diagnostics
	for _, s := range sp.Searches {
		t := sp.TrafficBlock(s.Traffic)
		for _, n := range PercentileNeeds(s, t) {
			rate, sev, where := s.RateLo, hcl.DiagWarning, "the bottom of the range"
			if s.RateHi*t.Duration.Seconds() < float64(n.Window) {
				rate, sev, where = s.RateHi, hcl.DiagError, "the top of the range"
			} else if s.RateLo*t.Duration.Seconds() >= float64(n.Window) {
				continue
			}
			alt := ""
			if n.Q > 0.9 {
				alt = " or use " + strings.Replace(n.Metric, "_p99", "_p90", 1)
			}
			secs := math.Ceil(float64(n.Window)/rate*10) / 10
			detail := fmt.Sprintf("%s needs ≥ %d requests a window: at %s req/s (%s) that is ≥ %ss; lengthen the window%s. "+
				"Its distribution-free bounds at the level each look of search %q spends on it (one-sided %s) need %d requests a probe, "+
				"and a probe pools at most max_windows = %d windows of %s (docs/method.md#undecidable-percentiles).",
				n.Metric, n.Window, numfmt.Value(rate), where, numfmt.Value(secs), alt, s.Name, numfmt.Value(n.Alpha), n.Probe, n.MaxWindows, t.Duration)
			if sev == hcl.DiagWarning {
				detail += fmt.Sprintf(" Probes below %s req/s cannot decide it and go by their point estimates.", numfmt.Value(n.MinRate))
			} else {
				detail += " No probe of the search can decide it: the search could only end undecided."
			}
			subj := n.Subject
			diags = append(diags, &hcl.Diagnostic{Severity: sev, Summary: "Percentile the windows cannot decide", Detail: detail, Subject: &subj})
		}
	}
	return diags
}
