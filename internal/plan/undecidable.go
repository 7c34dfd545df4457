package plan

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

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

// TrafficPercentileAlpha is the level at which a traffic cell's percentile
// an assert reads must be decidable (assert.PercentileAlpha, a
// comparison's default α): a p99 needs 299 requests.
const TrafficPercentileAlpha = 0.05

// CheckTrafficReads warns, before any server starts, of each percentile
// of an open-loop traffic cell an assert reads whose window cannot hold
// the requests its order statistics need to decide it
// (docs/method.md#undecidable-percentiles): at rate R a window of D
// seconds expects R × D requests, and fewer than
// ratesearch.QuantileSamples at TrafficPercentileAlpha leave the
// condition inconclusive whatever the server does. One warning per read
// and rate, at the read; a read of a closed loop (its rate is the
// server's), of a cell the spec does not have, or through a for
// expression (the metric is then an attribute of a local) is not checked:
// the run makes those inconclusive as well.
func CheckTrafficReads(sp *spec.Spec) hcl.Diagnostics {
	if sp == nil {
		return nil
	}
	var diags hcl.Diagnostics
	for _, a := range sp.Asserts {
		if a.Condition == nil {
			continue
		}
		for _, tr := range a.Condition.Variables() {
			t := sp.TrafficBlock(tr.RootName())
			if t == nil || len(t.Rates) == 0 || t.Duration <= 0 {
				continue
			}
			name, rates := trafficRead(t, tr)
			_, q, ok := ratesearch.MetricQuantile(name)
			if !ok {
				continue
			}
			need := ratesearch.QuantileSamples(q, TrafficPercentileAlpha)
			for _, rate := range rates {
				held := rate * t.Duration.Seconds()
				if held >= float64(need) {
					continue
				}
				alt := ""
				if q > 0.9 {
					alt = " or read " + strings.Replace(name, "_p99", "_p90", 1)
				}
				secs := math.Ceil(float64(need)/rate*10) / 10
				subj := tr.SourceRange()
				diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: "Percentile the window cannot decide",
					Detail: fmt.Sprintf("%s of traffic %q at %s req/s needs ≥ %d requests a window, and its %s window holds about %s: "+
						"the assert will be inconclusive, neither passed nor failed; lengthen the window to ≥ %ss%s. "+
						"A percentile's distribution-free bounds at one-sided %s exist only from that many requests on (docs/method.md#undecidable-percentiles).",
						name, t.Label, numfmt.Value(rate), need, t.Duration, numfmt.Value(math.Round(held)), numfmt.Value(secs), alt, numfmt.Value(TrafficPercentileAlpha)),
					Subject: &subj})
			}
		}
	}
	return diags
}

// trafficRead is what traversal tr of traffic block t reads: the metric
// (its last attribute; "" when it reads none) and the rates of the cells
// it may read — the one its rate index names, or every rate of the block
// when it names none (a whole block read by a for expression). A rate
// index the block does not have reads no cell.
func trafficRead(t *spec.Traffic, tr hcl.Traversal) (string, []float64) {
	name := ""
	if a, ok := tr[len(tr)-1].(hcl.TraverseAttr); ok {
		name = a.Name
	}
	var keys []cty.Value
	for _, step := range tr[1:] {
		if ix, ok := step.(hcl.TraverseIndex); ok {
			keys = append(keys, ix.Key)
		}
	}
	at := 0 // the rate's index among the keys
	if t.Context > 0 {
		at = 1
	}
	if len(keys) <= at {
		return name, t.Rates
	}
	k := keys[at]
	var rate float64
	switch {
	case k.Type() == cty.Number:
		rate, _ = k.AsBigFloat().Float64()
	case k.Type() == cty.String:
		v, err := strconv.ParseFloat(k.AsString(), 64)
		if err != nil {
			return name, nil
		}
		rate = v
	default:
		return name, nil
	}
	for _, r := range t.Rates {
		if r == rate {
			return name, []float64{r}
		}
	}
	return name, nil
}
