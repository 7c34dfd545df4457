package gate

import (
	"github.com/slogate/slogate/internal/assert"
	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/result"
)

// CheckBaselineSettings refuses, before any server starts, a -baseline
// measured with other settings than the specs are about to be (exit 2,
// assert.CheckSettings): window (-duration included), max_output, endpoint,
// repeat, simulated or real, the engine. The workload is recorded by the run itself, so
// it is compared when the run ends (assert.WithBaseline). Nothing is checked
// without a baseline or with AllowSettingsChange.
func (o *Options) CheckBaselineSettings() error {
	if o.Baseline == nil || o.AllowSettingsChange {
		return nil
	}
	for _, sp := range o.Specs {
		m := sp.Measure
		window := m.Duration
		if o.Duration > 0 {
			window = o.Duration
		}
		for _, srv := range sp.Servers {
			planned := &result.Results{
				Measure:  result.Measure{Duration: window.String(), DurationS: window.Seconds(), MaxOutput: m.MaxOutput, Endpoint: m.Endpoint, Repeat: max(m.Repeat, 1), RepeatAuto: m.RepeatAuto},
				Server:   result.Server{Simulated: o.Sim, Engine: srv.Engine},
				Workload: o.Baseline.Workload, // not known before the run
			}
			if _, err := assert.CheckSettings(o.Baseline, planned, false); err != nil {
				return err
			}
		}
	}
	return nil
}

// BaselinePowerWarnings is the pre-run check of a -baseline's power
// (compare.BaselineWarnings), before any server starts: for each spec, the
// metrics whose baseline cells, at their measured noise and number of
// repeats, cannot be decided within the tolerance against the repeats the
// spec measures (max_repeat with repeat = "auto"). Inconclusive verdicts
// would follow; the lines say how many baseline repeats would do. Nothing
// without a baseline.
func (o *Options) BaselinePowerWarnings() []string {
	if o.Baseline == nil {
		return nil
	}
	alpha := o.Alpha
	if alpha == 0 {
		alpha = compare.DefaultAlpha
	}
	var out []string
	seen := map[string]bool{}
	for _, sp := range o.Specs {
		// repeat = "auto" may take up to max_repeat a side: the baseline
		// caps the power only when even that many cannot decide.
		repeats := sp.Measure.Repeat
		if sp.Measure.RepeatAuto {
			repeats = sp.Measure.MaxRepeat
		}
		for _, w := range compare.BaselineWarnings(o.Baseline, max(repeats, 1), o.Tolerance, alpha) {
			if !seen[w] {
				seen[w] = true
				out = append(out, "-baseline: "+w)
			}
		}
	}
	return out
}
