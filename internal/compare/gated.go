package compare

import (
	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/vocab"
)

// DefaultMetrics are the metrics of phase a comparison reads when
// Policy.Metrics is empty: a baseline's, and so the ones repeat = "auto"
// decides a cell on (docs/method.md#repeat-auto).
func DefaultMetrics(phase vocab.Phase) []metric.Metric { return metricsFor(phase, nil) }
