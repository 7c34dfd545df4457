package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/slogate/slogate/internal/numfmt"
	"github.com/slogate/slogate/internal/result"
)

// ProbeReason words how a rate probe was judged (its Judgement;
// docs/method.md#rate-search): "met even at the pessimistic bounds:
// goodput_share 0.96 (0.93 to 0.98)", "failed even at the optimistic
// bounds: …", or "undecided after 4 windows, taken as met by the point
// estimates: …" with, at its last window, about how many windows would
// decide it. A probe not judged, or recorded before Judgement held, gives
// its Reason.
func ProbeReason(p *result.SearchProbe) string {
	j := p.Judgement
	if j == nil {
		return p.Reason
	}
	bounds := probeIntervals(j.Intervals)
	switch j.Rule {
	case result.ProbeMet:
		return "met even at the pessimistic bounds: " + bounds
	case result.ProbeFailed:
		return "failed even at the optimistic bounds: " + bounds
	case result.ProbeSaturated:
		return "saturated: " + p.Reason
	}
	w := "window"
	if p.Windows > 1 {
		w = "windows"
	}
	line := fmt.Sprintf("undecided after %d %s, taken as %s by the point estimates: %s", p.Windows, w, j.Point, bounds)
	toDecide := numfmt.Int(int64(j.ToDecide))
	switch j.Rule {
	case result.ProbeUndecidedEdge:
		line += fmt.Sprintf("; at the spread seen, %s windows or more would decide it (its values sit at or near the objective's edge)", toDecide)
	case result.ProbeUndecidedBeyond:
		line += fmt.Sprintf("; at the spread seen, about %s windows would decide it, more than max_windows allows (%s): longer windows would",
			toDecide, numfmt.Int(int64(j.MaxWindowsAllowed)))
	case result.ProbeUndecidedWindows:
		line += fmt.Sprintf("; at the spread seen, about %s windows would decide it (max_windows)", toDecide)
	}
	return line
}

// probeIntervals are a probe's metrics with their bounds: "goodput_share
// 0.9 (0.5 to 1, design effect 12.5), ttft_ms_p99 310" (a metric known
// exactly has no bounds).
func probeIntervals(ivs []result.ProbeInterval) string {
	parts := make([]string, len(ivs))
	for i, iv := range ivs {
		point := iv.Metric + " " + numfmt.Value(float64(iv.Point))
		if iv.Lower == iv.Upper {
			parts[i] = point
			continue
		}
		spread := ""
		switch deff := float64(iv.DesignEffect); {
		case math.IsInf(deff, 1):
			spread = ", windows alike or too few to tell their spread"
		case deff > 1:
			spread = ", design effect " + numfmt.Value(deff)
		}
		parts[i] = fmt.Sprintf("%s (%s to %s%s)", point, numfmt.Value(float64(iv.Lower)), numfmt.Value(float64(iv.Upper)), spread)
	}
	return strings.Join(parts, ", ")
}

// CheckStopText words why a paired check stopped before its last window
// (docs/method.md#paired-capacity-check): "the window of seed 3 could not
// be measured: HTTP 500".
func CheckStopText(s *result.CheckStop) string {
	return fmt.Sprintf("the window of seed %d could not be measured: %s", s.Seed, s.CellReason)
}
