package run

import (
	"math"
	"slices"

	"github.com/slogate/slogate/internal/compare"
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
			warnings = warning.AppendNew(warnings, v.PowerWarnings()...)
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
		tail := views.TrafficTail{Label: t.Label, Window: t.Duration, Rates: short, Lowest: slices.Min(short), Need: need}
		tail.Held = math.Round(tail.Lowest * t.Duration.Seconds())
		summary, detail := tail.Words()
		out = append(out, warning.New(warning.TrafficTailUndecidable, summary, detail,
			map[string]float64{warning.FigRate: tail.Lowest, warning.FigWindowS: t.Duration.Seconds(), warning.FigRequests: tail.Held, warning.FigNeedRequests: float64(need)}).About(t.Label))
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
		summary, detail := views.CoarseSearch{Name: s.Name, Precision: s.Precision, Tolerance: tolerance, File: s.DeclRange.Filename, Line: s.DeclRange.Start.Line}.Words()
		out = append(out, warning.New(warning.SearchPrecisionCoarse, summary, detail,
			map[string]float64{warning.FigPrecision: s.Precision, warning.FigTolerance: tolerance}).About(s.Name))
	}
	return out
}
