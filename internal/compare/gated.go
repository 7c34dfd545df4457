package compare

import (
	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/vocab"
)

// DefaultMetrics are the headline metrics of phase a comparison reads
// when Policy.Metrics is empty, before the ones the runs' asserts read
// (assertedMetrics): the ones repeat = "auto" decides a cell on and the
// Noise section reports (docs/method.md#repeat-auto).
func DefaultMetrics(phase vocab.Phase) []metric.Metric { return metricsFor(phase, nil, nil) }
