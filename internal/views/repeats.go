package views

import (
	"fmt"
	"strings"
	"time"

	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/numfmt"
	"github.com/slogate/slogate/internal/result"
)

// RepeatStopText words why repeat = "auto" stopped repeating a cell
// (result.RepeatDesign.Stop; docs/method.md#sequential-repeats): "max_repeat
// = 8 reached", "max_gpu_time = 10m0s reached (…)", or each gated metric's
// last look, "total_tps: unchanged at the first look (4 repeats); …". A
// design recorded before Stop held gives its StopReason; "" when the cell
// was not repeated automatically.
func RepeatStopText(d *result.RepeatDesign) string {
	if d == nil {
		return ""
	}
	s := d.Stop
	if s == nil {
		return d.StopReason
	}
	switch s.Rule {
	case result.StopMaxRepeat:
		return fmt.Sprintf("max_repeat = %d reached", s.MaxRepeat)
	case result.StopNoRunMeasurable:
		return fmt.Sprintf("max_repeat = %d reached, no run measurable", s.MaxRepeat)
	case result.StopBudget:
		budget, spent := time.Duration(s.BudgetS*float64(time.Second)), time.Duration(s.SpentS*float64(time.Second))
		if s.CPU {
			return fmt.Sprintf("max_gpu_time = %v reached (%v of server time spent: a CPU server, no GPU found, so max_gpu_time counts its server time)", budget, spent)
		}
		return fmt.Sprintf("max_gpu_time = %v reached (%v of GPU time spent)", budget, spent)
	case result.StopNoGatedMetric:
		return "no gated metric"
	case result.StopLooks:
	default: // a rule this build does not know: its code
		return s.Rule
	}
	parts := make([]string, len(s.Looks))
	for i, l := range s.Looks {
		parts[i] = l.Metric + ": " + LookText(l)
	}
	return strings.Join(parts, "; ")
}

// LookText words one look of the sequential design at a gated metric
// (compare.Look, as results.json keeps it): "3 of at least 4 repeats",
// "regressed at the first look (4 repeats)", "repeating to 9: the noise of
// the first 4 (2.1%) needs them to decide a change of 5%", ….
func LookText(l result.MetricLook) string {
	noise, tol := fmt.Sprintf("%.1f%%", l.Noise*100), numfmt.Percent(l.Tolerance)
	switch compare.LookRule(l.Rule) {
	case compare.BelowMin:
		return fmt.Sprintf("%d of at least %d repeats", l.Repeats, l.Min)
	case compare.Undecidable:
		return fmt.Sprintf("no decision is possible against a baseline of %d repeats (at most %d here); stopped at %d", l.BaselineRepeats, l.Max, l.Repeats)
	case compare.FirstLook:
		return fmt.Sprintf("%s at the first look (%d repeats)", l.Change, l.Repeats)
	case compare.SecondStage:
		return fmt.Sprintf("repeating to %d: the second stage, sized from the noise of the first %d (%s)", l.Target, l.Sized, noise)
	case compare.SecondLook:
		return fmt.Sprintf("%s at the second look (%d repeats)", l.Change, l.Repeats)
	case compare.SecondLookInconclusive:
		return fmt.Sprintf("inconclusive at the second look (%d repeats, the design's last)", l.Repeats)
	case compare.NoNoise:
		return fmt.Sprintf("no noise can be measured from these values; stopped at %d", l.Repeats)
	case compare.AloneMax:
		return fmt.Sprintf("stopped at max_repeat = %d: the noise of the first %d (%s) needs %d or more to decide a change of %s", l.Max, l.Sized, noise, l.Target, tol)
	case compare.AlonePrecise:
		return fmt.Sprintf("precise enough after %d repeats: the noise of the first %d (%s) decides a change of %s with %d", l.Repeats, l.Sized, noise, tol, l.Target)
	case compare.AloneRepeating:
		return fmt.Sprintf("repeating to %d: the noise of the first %d (%s) needs them to decide a change of %s", l.Target, l.Sized, noise, tol)
	}
	return l.Rule
}
