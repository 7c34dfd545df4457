package compare

import (
	"math"
	"slices"

	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// WaitShift is one cell's server wait in each run, on servers that ran
// without GPUs: the median share of its ready time the launched server's
// threads spent waiting for a CPU (result.Environment.ServerWaitPct) over
// each run's kept runs of the cell
// (docs/method.md#server-wait-against-the-baseline).
type WaitShift struct {
	BaselinePct, NowPct float64
}

// Lost is the share of the CPU time the baseline's server got that this
// run's server did not: 1 − (1 − now) ÷ (1 − baseline), negative when this
// run's server got more. A server computing on the CPU goes as fast as the
// CPU time it gets, so Lost is the slowdown the machine alone explains.
func (w WaitShift) Lost() float64 {
	return 1 - (1-w.NowPct/100)/(1-w.BaselinePct/100)
}

// waitShift is the cell at ref's WaitShift when both runs' servers ran
// without GPUs and both recorded their wait in the cell's kept runs; ok
// is false otherwise.
func waitShift(a, b *result.Results, ref vocab.CellRef) (WaitShift, bool) {
	if !ranOnCPU(a) || !ranOnCPU(b) {
		return WaitShift{}, false
	}
	wa, oka := cellWait(a, ref)
	wb, okb := cellWait(b, ref)
	if !oka || !okb || wa >= 100 || wb >= 100 {
		return WaitShift{}, false
	}
	return WaitShift{BaselinePct: wa, NowPct: wb}, true
}

// ranOnCPU reports whether r's server ran without GPUs (a CPU build, or
// llama.cpp on a machine without one): there its wait for a CPU is speed
// it lost.
func ranOnCPU(r *result.Results) bool { return r.GPUTime != nil && r.GPUTime.CPU }

// cellWait is the median server wait of the runs r kept of the decode or
// prefill cell at ref (a run left out, unmeasurable or moved, is not in
// its figures, so not in its wait); ok is false when none recorded one.
func cellWait(r *result.Results, ref vocab.CellRef) (float64, bool) {
	var envs []result.Environment
	var excluded []result.ExcludedRun
	switch ref.Phase {
	case vocab.PhaseDecode:
		for i := range r.Decode {
			if r.Decode[i].Ref() == ref {
				envs, excluded = r.Decode[i].Environment, r.Decode[i].Excluded
			}
		}
	case vocab.PhasePrefill:
		for i := range r.Prefill {
			if r.Prefill[i].Ref() == ref {
				envs, excluded = r.Prefill[i].Environment, r.Prefill[i].Excluded
			}
		}
	}
	var waits []float64
	for _, e := range envs {
		left := slices.ContainsFunc(excluded, func(x result.ExcludedRun) bool { return x.Repeat == e.Repeat })
		if e.ServerWaitPct != nil && !left {
			waits = append(waits, *e.ServerWaitPct)
		}
	}
	if len(waits) == 0 {
		return 0, false
	}
	slices.Sort(waits)
	n := len(waits)
	if n%2 == 1 {
		return waits[n/2], true
	}
	return (waits[n/2-1] + waits[n/2]) / 2, true
}

// lostSpeed is the speed, against the baseline's, that a server which
// lost the share lost of the baseline's CPU time could show through the
// machine alone: (1 − lost)², not 1 − lost. Measured on llama-server
// (-t 1) beside busy loops, throughput fell faster than the CPU time its
// threads got: to 0.33 of the baseline's with 48 % lost, 0.44 with 46 %
// (two streams), 0.96 with 8 %, that is (1 − lost)^1.7, ^1.3 and ^0.5:
// each token also waits for the client's and the server's other threads.
// The square is a margin over the steepest seen; a regression beyond it
// is the build's (docs/method.md#server-wait-against-the-baseline).
func lostSpeed(lost float64) float64 { return math.Pow(1-lost, 2) }

// waitConfounded says whether the servers' difference in CPU time, w,
// could make cr's decision: a Fail when this run's server got less CPU
// time and no metric still regresses once its figures are scaled by what
// it lost, or a Pass when it got more and some metric, so scaled, no
// longer holds within the tolerance. Each metric's estimate and bounds
// are scaled (a throughput divided by lostSpeed, a time multiplied by it)
// and decided again by the comparison's own rule (Shift.Decide).
func waitConfounded(cr *CellResult, w WaitShift, tolerance float64) bool {
	lost := w.Lost()
	switch {
	case cr.Decided == vocab.Fail && lost > 0:
		for _, m := range cr.Metrics {
			if m.Cell.Outcome == vocab.Fail && scaledChange(m, lostSpeed(lost), tolerance) == Regressed {
				return false
			}
		}
		return true
	case cr.Decided == vocab.Pass && lost < 0:
		for _, m := range cr.Metrics {
			if ch := scaledChange(m, lostSpeed(lost), tolerance); ch == Regressed || ch == Inconclusive {
				return true
			}
		}
	}
	return false
}

// scaledChange decides m's change again with this run's figures as they
// would read had its server run at speed × its measured speed: the test's
// estimate and bounds when a test decided it, else the change the
// tolerance rule decided on.
func scaledChange(m MetricCell, speed, tolerance float64) Change {
	c := &m.Cell
	s := Shift{Ratio: 1 + c.Delta, Lower: 1 + c.Delta, Upper: 1 + c.Delta}
	if c.Test != nil {
		s = c.Test.Shift
	}
	f := speed // a time scales with 1 ÷ speed, so B ÷ A by speed
	if m.Metric.HigherIsBetter {
		f = 1 / speed
	}
	s.Ratio, s.Lower, s.Upper = s.Ratio*f, s.Lower*f, s.Upper*f
	return s.Decide(tolerance, m.Metric.HigherIsBetter)
}

// confoundWaits applies the server-wait rule (waitConfounded) to c's
// decode and prefill verdicts decided on both runs' measured cells, not
// already confounded by the machines, under -inconclusive fail (under
// -inconclusive pass the Pass would pass and the Fail, its estimate
// beyond the tolerance, fail again).
func (c *Comparison) confoundWaits() {
	if c.EngineChanged || c.Policy.Inconclusive != InconclusiveFail {
		return
	}
	for i := range c.Cells {
		cr := &c.Cells[i]
		if cr.Confounded || cr.Lost != nil || !cr.A.Present || !cr.B.Present || !cr.A.Status.Measured() || !cr.B.Status.Measured() {
			continue
		}
		w, ok := waitShift(c.A, c.B, cr.Ref)
		if !ok || !waitConfounded(cr, w, c.Policy.Tolerance) {
			continue
		}
		cr.Outcome, cr.Waited = vocab.Inconclusive, &w
	}
}
