package run

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/numfmt"
	"github.com/slogate/slogate/internal/ratesearch"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/views"
	"github.com/slogate/slogate/internal/warning"
)

// CheckBaseline is the pre-run check of a -baseline, before any server
// starts, one pre-run comparison per spec and server (compare.BuildPlanned):
// err refuses a baseline measured with other settings than the server is
// about to be (exit 2): window (-duration included), max_output, endpoint,
// repeat, simulated or real, the engine, and each traffic block's seed,
// arrivals, warm-up, window and workload name against the baseline's
// schedules (the workload is recorded by the run itself, so it is
// compared when the run ends); warnings are the
// metrics whose baseline cells, at their measured noise and number of
// repeats, cannot be decided within the tolerance against the repeats the
// spec measures (max_repeat with repeat = "auto"), each once: inconclusive
// verdicts would follow, and the warnings (warning.PowerShortfall) say how
// many baseline repeats would do. Nothing without a baseline.
func (o *Options) CheckBaseline() (warnings []warning.Warning, err error) {
	if o.Baseline == nil {
		return nil, nil
	}
	for _, sp := range o.Specs {
		m := sp.Measure
		window := m.Duration
		if o.Duration > 0 {
			window = o.Duration
		}
		var traffic []compare.PlannedTraffic
		for _, t := range sp.Traffic {
			traffic = append(traffic, compare.PlannedTraffic{Label: t.Label, Seed: t.Seed, Arrivals: t.Arrivals, Burstiness: t.Burstiness,
				WarmUp: t.WarmUp, Window: t.Duration, Workload: t.Workload})
		}
		// Before a launch only -sim says the server is simulated: a launched
		// command or an endpoint may be a simulator too (its /version says so
		// once it answers), so a simulated baseline is held against the run's
		// own record when it ends (compare.Build), not refused here.
		simulated := o.Sim || o.Baseline.Server.Simulated
		for _, srv := range sp.Servers {
			planned := compare.Planned{Window: window, MaxOutput: m.MaxOutput, Endpoint: m.Endpoint, Repeat: m.Repeat,
				RepeatAuto: m.RepeatAuto, MaxRepeat: m.MaxRepeat, Simulated: simulated, Engine: srv.Engine, Traffic: traffic}
			v := views.Baseline{C: compare.BuildPlanned(o.Baseline, planned, o.Policy)}
			if err := v.Refusal(); err != nil {
				return nil, err
			}
			warnings = warning.AppendNew(warnings, v.C.Power...)
		}
		warnings = warning.AppendNew(warnings, coarseSearches(sp, o.Policy.Resolved().Tolerance)...)
		warnings = warning.AppendNew(warnings, shortTrafficTails(sp, o.Baseline, o.Policy.Alpha)...)
	}
	return warnings, nil
}

// shortTrafficTails warns of each open-loop traffic block of sp that base
// also measured whose window, at some of its rates, holds fewer requests
// than a comparison at alpha (0: compare.DefaultAlpha) decides a p99
// from (ratesearch.QuantileSamples): those cells' p99s will be
// inconclusive (docs/method.md#undecidable-percentiles). One warning per
// block, at its lowest rate short.
func shortTrafficTails(sp *spec.Spec, base *result.Results, alpha float64) []warning.Warning {
	if alpha == 0 {
		alpha = compare.DefaultAlpha
	}
	need := ratesearch.QuantileSamples(0.99, alpha)
	var out []warning.Warning
	for _, t := range sp.Traffic {
		if t.Duration <= 0 || !slices.ContainsFunc(base.Traffic, func(c result.TrafficCell) bool { return c.Traffic == t.Label }) {
			continue
		}
		var short []float64
		for _, r := range t.Rates {
			if r*t.Duration.Seconds() < float64(need) {
				short = append(short, r)
			}
		}
		if len(short) == 0 {
			continue
		}
		lo := slices.Min(short)
		held := math.Round(lo * t.Duration.Seconds())
		rates := make([]string, len(short))
		for i, r := range short {
			rates[i] = numfmt.Value(r)
		}
		out = append(out, warning.New(warning.TrafficTailUndecidable,
			fmt.Sprintf("traffic %s: at %s req/s its %s window holds about %s requests, and a p99 needs %d to be compared", t.Label, numfmt.Value(lo), t.Duration, numfmt.Value(held), need),
			fmt.Sprintf("the p99s of its cells at %s req/s will be inconclusive against the baseline; a window of %ss or more at %s req/s decides them", strings.Join(rates, ", "), numfmt.Value(math.Ceil(float64(need)/lo*10)/10), numfmt.Value(lo)),
			map[string]float64{warning.FigRate: lo, warning.FigWindowS: t.Duration.Seconds(), warning.FigRequests: held, warning.FigNeedRequests: float64(need)}).About(t.Label))
	}
	return out
}

// coarseSearches warns of each rate search of sp whose precision is more
// than half the tolerance: its bracket is then too
// wide for capacity lost to tell a change of the tolerance from the
// search's own precision (docs/method.md#capacity-lost).
func coarseSearches(sp *spec.Spec, tolerance float64) []warning.Warning {
	var out []warning.Warning
	for _, s := range sp.Searches {
		if !s.IsRate() || s.Precision <= tolerance/2 {
			continue
		}
		out = append(out, warning.New(warning.SearchPrecisionCoarse,
			fmt.Sprintf("search %s: precision %s is more than half the tolerance %s", s.Name, numfmt.Percent(s.Precision), numfmt.Percent(tolerance)),
			fmt.Sprintf("a capacity change of the tolerance cannot be told from the search's precision: set precision = %q or less at %s:%d", numfmt.Percent(tolerance/2), s.DeclRange.Filename, s.DeclRange.Start.Line),
			map[string]float64{warning.FigPrecision: s.Precision, warning.FigTolerance: tolerance}).About(s.Name))
	}
	return out
}
