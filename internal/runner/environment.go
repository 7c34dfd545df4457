package runner

import (
	"context"
	"fmt"

	"github.com/slogate/slogate/internal/hostenv"
	"github.com/slogate/slogate/internal/measure"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/warning"
)

// takeMachine reads the machine around a run (a variable so that the
// tests can make it move).
var takeMachine = hostenv.Take

// watchedRun is one run of a decode cell with the machine around it
// (docs/method.md#environment): its environment record and, when the
// machine moved beyond a bound, the warning that says how.
type watchedRun struct {
	cell   result.DecodeCell
	env    result.Environment
	moved *warning.Warning
	after hostenv.Snapshot // the machine at the run's end
}

// decodeWatched measures one run of a decode cell (decodeOnce) between
// two readings of the machine; number is the run's 1-based number among
// all the cell's runs (0 for a cell run once).
// first is the machine at the end of the cell's first run (nil: this is
// it): a run's end is held against that, like against like, since the
// server's own work during a window raises the CPU pressure a reading
// before it did not see; the first run is held to steal alone.
func (r *run) decodeWatched(ctx context.Context, ref vocab.CellRef, bodies [][]byte, number int, first *hostenv.Snapshot) (watchedRun, error) {
	before := takeMachine()
	c, err := r.decodeOnce(ctx, ref, bodies, number)
	after := takeMachine()
	if first == nil {
		first = &after
	}
	w := watchedRun{cell: c, env: environmentOf(before, after, number), after: after}
	if mv, ok := hostenv.Moved(*first, before, after); ok {
		x := movedWarning(mv)
		w.moved = &x
	}
	return w, err
}

// environmentOf is the record of the machine around run number.
func environmentOf(before, after hostenv.Snapshot, number int) result.Environment {
	e := result.Environment{Repeat: number, Load1: before.Load1, Load1After: after.Load1,
		CalibrationMs: hostenv.Ms(before.Calibration), CalibrationAfterMs: hostenv.Ms(after.Calibration)}
	if p, ok := hostenv.StealPct(before, after); ok {
		p = measure.Round(p, 2)
		e.StealPct = &p
	}
	if before.PressureOK && after.PressureOK {
		b, a := before.Pressure, after.Pressure
		e.CPUPressure, e.CPUPressureAfter = &b, &a
	}
	return e
}

// movedWarning is the typed warning of a machine that moved during a run.
func movedWarning(mv hostenv.Movement) warning.Warning {
	var summary string
	switch mv.Kind {
	case hostenv.Calibration:
		summary = fmt.Sprintf("the machine moved: a fixed CPU calibration took %.3g ms at the cell's first run and %.3g ms after this one (beyond %.1f× either way)", mv.Before, mv.After, mv.Bound)
	case hostenv.Steal:
		summary = fmt.Sprintf("the machine moved: %.1f %% of its CPU time was stolen during the run (over %.0f %%)", mv.After, mv.Bound)
	default:
		summary = fmt.Sprintf("the machine moved: CPU pressure (some avg10) rose from %.1f %% at the cell's first run to %.1f %% after this one (more than %.0f points)", mv.Before, mv.After, mv.Bound)
	}
	return warning.New(warning.EnvironmentMoved, summary, "other work on this machine changed what the run could use; with repeat = \"auto\" the run is replaced",
		map[string]float64{warning.FigBefore: mv.Before, warning.FigAfter: mv.After, warning.FigBound: mv.Bound}).About(string(mv.Kind))
}
