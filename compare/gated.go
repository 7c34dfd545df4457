package compare

import "github.com/slogate/slogate/result"

// DefaultMetrics are the metrics of phase a comparison reads when
// Options.Metrics is empty: a baseline's, and so the ones repeat = "auto"
// decides a cell on (docs/method.md#repeat-auto).
func DefaultMetrics(phase result.Phase) []result.Metric { return metricsFor(phase, nil) }
