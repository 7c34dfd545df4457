package gate

import (
	"github.com/slogate/slogate/assert"
	"github.com/slogate/slogate/result"
)

// CheckBaselineSettings refuses, before any server starts, a -baseline
// measured with other settings than the specs are about to be (exit 2,
// assert.CheckSettings): window (-duration included), max_output, endpoint,
// repeat, simulated or real. The workload is recorded by the run itself, so
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
		planned := &result.Results{
			Measure:  result.Measure{Duration: window.String(), DurationS: window.Seconds(), MaxOutput: m.MaxOutput, Endpoint: m.Endpoint, Repeat: max(m.Repeat, 1), RepeatAuto: m.RepeatAuto},
			Server:   result.Server{Simulated: o.Sim},
			Workload: o.Baseline.Workload, // not known before the run
		}
		if _, err := assert.CheckSettings(o.Baseline, planned, false); err != nil {
			return err
		}
	}
	return nil
}
