package result

import (
	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/vocab"
)

// PercentilesOf is the measure's percentiles, metric.DefaultPercentiles
// when unset.
func (m Measure) PercentilesOf() []float64 {
	if len(m.Percentiles) == 0 {
		return metric.DefaultPercentiles
	}
	return m.Percentiles
}

// statsField stores a derived metric in the cell's Stats under its name;
// it is optional (absent from cells measured before the rule or without
// that percentile).
func statsField(phase vocab.Phase, name string) cellField {
	f := cellField{optional: true}
	switch phase {
	case vocab.PhaseDecode:
		f.decode = func(c *DecodeCell) slot { return slot{stats: &c.Stats, key: name} }
	case vocab.PhaseTraffic:
		f.traffic = func(c *TrafficCell) slot { return slot{stats: &c.Stats, key: name} }
	}
	return f
}
