// Package resulttest holds test helpers over measured cells, shared by the
// runner's tests and the e2e tests.
package resulttest

import (
	"fmt"
	"math"
	"strings"

	"github.com/slogate/slogate/internal/result"
)

// UnexplainedWarnings is decode cell c's warnings but those that report a
// loaded machine rather than the code under test, each tolerated only when
// the cell's own record shows the load that causes it:
//
//   - the slow-scrape warning (docs/method.md#polling), when it quotes the
//     cell's recorded scrapes (c.Polling) and their mean is above the 5 ms
//     it warns at;
//   - the server_total_tps cross-check, when it quotes the cell's recorded
//     server_total_tps and total_tps, and the difference, as a shift of the
//     window (|Δ| × measured_s), is no longer than two of the cell's slowest
//     recorded scrapes (c.Polling.MaxMs): the server's counter is read by
//     one /metrics scrape on each side of the window, and a scrape stalled
//     that long moves the server's window against the client's by up to
//     its duration.
//
// A test that wants no warning still fails on any other, or on these
// without the slow scrapes to show for them. The rules themselves are
// measure's tests (TestScrapeTimes and the cross-check's).
func UnexplainedWarnings(c result.DecodeCell) []string {
	var out []string
	for _, w := range c.Warnings {
		if !slowScrape(c, w) && !stalledCrossCheck(c, w) {
			out = append(out, w)
		}
	}
	return out
}

func slowScrape(c result.DecodeCell, w string) bool {
	p := c.Polling
	return p != nil && p.MeanMs > 5 &&
		strings.HasPrefix(w, fmt.Sprintf("GET /metrics took %.1f ms on average (max %.1f ms, %d scrapes ", p.MeanMs, p.MaxMs, p.Scrapes))
}

func stalledCrossCheck(c result.DecodeCell, w string) bool {
	p, s := c.Polling, c.ServerTotalTPS
	if p == nil || s == nil || c.TotalTPS <= 0 {
		return false
	}
	diff := (*s - c.TotalTPS) / c.TotalTPS
	if w != fmt.Sprintf("server_total_tps %.1f differs from total_tps %.1f by %+.1f%%", *s, c.TotalTPS, diff*100) {
		return false
	}
	shiftMs := math.Abs(diff) * c.MeasuredS * 1000
	return shiftMs <= 2*p.MaxMs
}
