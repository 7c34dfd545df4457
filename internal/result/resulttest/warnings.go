// Package resulttest holds test helpers over measured cells, shared by the
// runner's tests and the e2e tests.
package resulttest

import (
	"math"
	"runtime"

	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/warning"
)

// UnexplainedWarnings is decode cell c's warnings but those that report a
// loaded machine rather than the code under test, each tolerated only when
// the cell's own record shows the load that causes it. They are matched by
// code and figures, never by text:
//
//   - the slow-scrape warning (warning.SlowScrape; docs/method.md#polling),
//     when its mean, maximum and count are the cell's recorded scrapes
//     (c.Polling) and the mean is above the 5 ms it warns at;
//
//   - the server_total_tps cross-check (warning.ServerTPSGap), when its two
//     figures are the cell's recorded server_total_tps and total_tps, and
//     their difference, as a shift of the window (|gap| × measured_s), is
//     no longer than two of the cell's slowest recorded scrapes
//     (c.Polling.MaxMs): the server's counter is read by one /metrics
//     scrape on each side of the window, and a scrape stalled that long
//     moves the server's window against the client's by up to its
//     duration.
//
//   - the server's own per-request rate above the client's
//     (warning.ServerRequestTPSGap), when its two figures are the cell's
//     recorded server_per_request_tps and per_request_tps and a run's
//     one-minute load, at its start or end, was above the machine's CPUs:
//     a client that waits for a CPU reads each token late, and its rate
//     falls below the server's (docs/method.md#unmeasurable).
//
//   - the machine that moved (warning.EnvironmentMoved;
//     docs/method.md#environment), when the cell's environment record
//     holds its figures: the first run's reading and a run's end (the
//     calibration or the CPU pressure), or a run's steal over 10 %.
//
// A test that wants no warning still fails on any other, or on these
// without the slow scrapes to show for them. The rules themselves are
// measure's tests (TestScrapeTimes and the cross-check's).
func UnexplainedWarnings(c result.DecodeCell) []warning.Warning {
	var out []warning.Warning
	for _, w := range c.Warnings {
		if !slowScrape(c, w) && !stalledCrossCheck(c, w) && !loadedClient(c, w, runtime.NumCPU()) && !machineMoved(c, w) {
			out = append(out, w)
		}
	}
	return out
}

// figureIs reports whether w holds figure name with value want.
func figureIs(w warning.Warning, name string, want float64) bool {
	v, ok := w.Figure(name)
	return ok && v == want
}

func slowScrape(c result.DecodeCell, w warning.Warning) bool {
	p := c.Polling
	return w.Code == warning.SlowScrape && p != nil && p.MeanMs > 5 &&
		figureIs(w, warning.FigMeanMs, p.MeanMs) && figureIs(w, warning.FigMaxMs, p.MaxMs) &&
		figureIs(w, warning.FigScrapes, float64(p.Scrapes))
}

func stalledCrossCheck(c result.DecodeCell, w warning.Warning) bool {
	p, s := c.Polling, c.ServerTotalTPS
	if w.Code != warning.ServerTPSGap || p == nil || s == nil || c.TotalTPS <= 0 ||
		!figureIs(w, warning.FigServerTotalTPS, *s) || !figureIs(w, warning.FigTotalTPS, c.TotalTPS) {
		return false
	}
	diff := (*s - c.TotalTPS) / c.TotalTPS
	shiftMs := math.Abs(diff) * c.MeasuredS * 1000
	return shiftMs <= 2*p.MaxMs
}

// loadedClient reports whether w is the per-request rate gap of a client
// slower than the server, on a machine whose recorded load was above its
// cpus.
func loadedClient(c result.DecodeCell, w warning.Warning, cpus int) bool {
	s := c.ServerPerRequestTPS
	if w.Code != warning.ServerRequestTPSGap || s == nil || *s <= c.PerRequestTPS ||
		!figureIs(w, warning.FigServerPerRequestTPS, *s) || !figureIs(w, warning.FigPerRequestTPS, c.PerRequestTPS) {
		return false
	}
	for _, e := range c.Environment {
		if math.Max(e.Load1, e.Load1After) > float64(cpus) {
			return true
		}
	}
	return false
}

func machineMoved(c result.DecodeCell, w warning.Warning) bool {
	if w.Code != warning.EnvironmentMoved || len(c.Environment) == 0 {
		return false
	}
	first := c.Environment[0]
	before, _ := w.Figure(warning.FigBefore)
	after, _ := w.Figure(warning.FigAfter)
	for _, e := range c.Environment {
		switch w.Subject {
		case "calibration":
			if first.CalibrationMs == before && e.CalibrationAfterMs == after {
				return true
			}
		case "cpu_pressure":
			if first.CPUPressure != nil && e.CPUPressureAfter != nil && *first.CPUPressure == before && *e.CPUPressureAfter == after {
				return true
			}
		case "steal":
			if e.StealPct != nil && *e.StealPct > 10 {
				return true
			}
		}
	}
	return false
}
