package compare

import (
	"fmt"

	"github.com/slogate/slogate/internal/hostenv"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/warning"
)

// MachineChange is this run's machine against the baseline's, when the
// fixed CPU calibration each recorded differs beyond
// hostenv.CalibrationBound either way
// (docs/method.md#machine-against-the-baseline).
type MachineChange struct {
	// BaselineMs and NowMs are the fastest calibration each run's decode
	// cells recorded, before or after any run, in ms: the CPU's speed at
	// its least disturbed, as a cell's own rule holds its runs to the
	// fastest (docs/method.md#environment).
	BaselineMs, NowMs float64
}

// Slower reports whether this run's machine is the slower one.
func (m *MachineChange) Slower() bool { return m.NowMs > m.BaselineMs }

// Ratio is the slower machine's calibration over the faster's (> 1).
func (m *MachineChange) Ratio() float64 {
	if m.Slower() {
		return m.NowMs / m.BaselineMs
	}
	return m.BaselineMs / m.NowMs
}

// Warning is the change as the comparison's typed warning
// (warning.MachineDiffers).
func (m *MachineChange) Warning() warning.Warning {
	way := "faster"
	if m.Slower() {
		way = "slower"
	}
	return warning.New(warning.MachineDiffers,
		fmt.Sprintf("this run's machine ran the CPU calibration in %.3g ms, the baseline's in %.3g ms: %.2f× %s, beyond the %.1f× bound", m.NowMs, m.BaselineMs, m.Ratio(), way, hostenv.CalibrationBound),
		"a comparison across machines confounds the build with the machine, so the verdicts the machine could explain are inconclusive; compare the two builds on one machine with slogate interleave",
		map[string]float64{warning.FigBaselineCalibrationMs: m.BaselineMs, warning.FigCalibrationMs: m.NowMs, warning.FigBound: hostenv.CalibrationBound})
}

// Machines compares the machines a and b measured on by their fastest
// CPU calibration: nil when either run recorded none (a run before the
// environment record, or one without decode cells) or the two are within
// hostenv.CalibrationBound of each other.
func Machines(a, b *result.Results) *MachineChange {
	ca, cb := fastestCalibration(a), fastestCalibration(b)
	if ca <= 0 || cb <= 0 {
		return nil
	}
	m := &MachineChange{BaselineMs: ca, NowMs: cb}
	if m.Ratio() <= hostenv.CalibrationBound {
		return nil
	}
	return m
}

// fastestCalibration is the shortest calibration r's decode cells
// recorded, before or after a run, excluded runs too; 0 when none.
func fastestCalibration(r *result.Results) float64 {
	best := 0.0
	for i := range r.Decode {
		for _, e := range r.Decode[i].Environment {
			for _, v := range []float64{e.CalibrationMs, e.CalibrationAfterMs} {
				if v > 0 && (best == 0 || v < best) {
					best = v
				}
			}
		}
	}
	return best
}

// confounded is the outcome of a verdict decided on measured cells when
// the machines differ (m): a Fail on a slower machine, or a Pass on a
// faster one, is what the machine alone could have made, so it is
// Inconclusive, and true; any other outcome, and every one under
// -inconclusive pass (which would pass the Pass and fail the Fail again,
// its estimate beyond the tolerance), is left as it is.
func confounded(decided vocab.Outcome, m *MachineChange, p Policy) (vocab.Outcome, bool) {
	if m == nil || p.Inconclusive != InconclusiveFail {
		return decided, false
	}
	if m.Slower() && decided == vocab.Fail || !m.Slower() && decided == vocab.Pass {
		return vocab.Inconclusive, true
	}
	return decided, false
}

// confound applies the machine rule (confounded) to c's decode, prefill
// and traffic verdicts decided on both runs' measured cells (not those
// lost, errored, unmeasurable or only on one side), before the engine
// rule, which passes them anyway: a comparison across engines informs
// only.
func (c *Comparison) confound() {
	if c.Machine == nil || c.EngineChanged {
		return
	}
	for i := range c.Cells {
		cr := &c.Cells[i]
		if cr.Lost != nil || !cr.A.Present || !cr.B.Present || !cr.A.Status.Measured() || !cr.B.Status.Measured() {
			continue
		}
		cr.Outcome, cr.Confounded = confounded(cr.Decided, c.Machine, c.Policy)
	}
	for i := range c.Traffic {
		tp := &c.Traffic[i]
		if !tp.Measured() {
			continue
		}
		tp.Outcome, tp.Confounded = confounded(tp.Decided, c.Machine, c.Policy)
	}
}
