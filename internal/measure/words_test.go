package measure

import (
	"github.com/slogate/slogate/internal/report"
	"github.com/slogate/slogate/internal/result"
)

// words is the sentence of reasons, as the run's command has the meter
// write it (Meter.ReasonText).
func words(reasons ...result.CellReason) string { return report.CellReasonText(reasons, "") }

// wordsOf is words of a list.
func wordsOf(reasons []result.CellReason) string { return words(reasons...) }
