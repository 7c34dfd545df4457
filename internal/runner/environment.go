package runner

import (
	"context"
	"time"

	"github.com/slogate/slogate/internal/hostenv"
	"github.com/slogate/slogate/internal/lifecycle"
	"github.com/slogate/slogate/internal/measure"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/warning"
)

// takeMachine reads the machine around a run (a variable so that the
// tests can make it move).
var takeMachine = hostenv.Take

// readGroup reads the server's scheduler account (a variable so that the
// tests can make the server starve).
var readGroup = hostenv.ReadGroup

// serverGroup is the process group of the server a run launched (a
// variable so that the tests can give their fake server one).
var serverGroup = (*lifecycle.Server).ProcessGroup

// watchedRun is one run of a decode cell with the machine around it
// (docs/method.md#environment): its environment record and, when the
// machine moved beyond a bound, the warning that says how.
type watchedRun struct {
	cell  result.DecodeCell
	env   result.Environment
	moved *warning.Warning
	after hostenv.Snapshot // the cell's reference machine after this run (decodeWatched)
}

// decodeWatched measures one run of a decode cell (decodeOnce) between
// two readings of the machine (watchMachine); number is the run's 1-based
// number among all the cell's runs (0 for a cell run once), first the
// cell's reference machine (nil: this is its first run). A measured run
// whose server was starved is unmeasurable. The watched run carries the
// next reference.
func (r *run) decodeWatched(ctx context.Context, ref vocab.CellRef, bodies [][]byte, number int, first *hostenv.Snapshot) (watchedRun, error) {
	var c result.DecodeCell
	var err error
	mw := r.watchMachine(number, first, func() { c, err = r.decodeOnce(ctx, ref, bodies, number) })
	if mw.starved != nil && c.Status.Measured() {
		c.Status = vocab.StatusUnmeasurable
		c.Reasons, c.Reason = r.because(*mw.starved)
	}
	return watchedRun{cell: c, env: mw.env, moved: mw.moved, after: mw.next}, err
}

// machineWatch is the machine around one run of a cell
// (docs/method.md#environment): its record, the warning that says how it
// moved beyond a bound (nil when it did not), why the server was starved
// (nil when it was not, or its wait was not read), and the cell's
// reference machine for its next run.
type machineWatch struct {
	env     result.Environment
	moved   *warning.Warning
	starved *result.CellReason
	next    hostenv.Snapshot
}

// watchMachine calls run, one run of a cell numbered number, between two
// readings of the machine and of the launched server's scheduler account,
// and judges them against first, the cell's reference machine (nil: this
// is its first run), read at runs' ends, like against like, since the
// server's own work during a run raises the CPU pressure and slows the
// calibration a reading before it does not see: the end of its first run,
// with the fastest calibration any run's end has shown, so that one
// reading taken on a busy moment does not make every later run look
// moved, and with the least share of its ready time the launched server
// waited for a CPU in any run. The first run is held to steal alone (and,
// the server's wait read, to StarvedBoundPct).
func (r *run) watchMachine(number int, first *hostenv.Snapshot, run func()) machineWatch {
	before := takeMachine()
	// The server's wait is read where slogate launched it as a process,
	// and judged where it computes on the CPU (device = "cpu", or
	// llama.cpp on a machine without GPUs): there CPU time other work
	// takes is speed the server loses. A GPU server's threads feed the
	// GPU; the bounds were measured on CPU servers.
	pgid, launched := serverGroup(r.server)
	judged := r.cfg.Server != nil && r.cpuServer()
	var schedBefore hostenv.Sched
	if launched {
		schedBefore = readGroup(pgid)
	}
	t0 := time.Now()
	run()
	wall := time.Since(t0)
	var schedAfter hostenv.Sched
	if launched {
		schedAfter = readGroup(pgid)
	}
	after := takeMachine()
	reference := after
	if first != nil {
		reference = *first
	}
	w := machineWatch{env: environmentOf(before, after, number), next: reference}
	w.next.Calibration = fastest(reference.Calibration, after.Calibration)
	mv, moved := hostenv.Moved(reference, before, after)
	if pct, cpus, ok := hostenv.WaitShare(schedBefore, schedAfter, wall.Nanoseconds()); ok {
		pct, cpus = measure.Round(pct, 1), measure.Round(cpus, 2)
		w.env.ServerWaitPct, w.env.ServerCPUs = &pct, &cpus
		if s, waited := hostenv.Waited(reference, pct, cpus); waited && first != nil && judged {
			mv, moved = s, true
		}
		if !w.next.ServerWaitOK || pct < w.next.ServerWait {
			w.next.ServerWait, w.next.ServerWaitOK = pct, true
		}
		if judged {
			w.starved = starvedReason(pct, cpus)
		}
	}
	if moved {
		x := r.movedWarning(mv)
		w.moved = &x
	}
	return w
}

// fastest is the shorter of two calibrations, a zero (not read) left out.
func fastest(a, b time.Duration) time.Duration {
	switch {
	case a <= 0:
		return b
	case b <= 0:
		return a
	}
	return min(a, b)
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

// movedWarning is the typed warning of a machine that moved during a run,
// with its words (Config.WarningText).
func (r *run) movedWarning(mv hostenv.Movement) warning.Warning {
	return r.worded(warning.New(warning.EnvironmentMoved, "", "",
		map[string]float64{warning.FigBefore: mv.Before, warning.FigAfter: mv.After, warning.FigBound: mv.Bound}).About(string(mv.Kind)))
}

// worded is w, created wordless, with the words of its code and figures
// (Config.WarningText; its code as its summary without it).
func (r *run) worded(w warning.Warning) warning.Warning {
	if r.cfg.WarningText != nil {
		return r.cfg.WarningText(w)
	}
	w.Summary = string(w.Code)
	return w
}

// starvedReason is why a run whose launched server waited pct % of its
// ready time for a CPU, using cpus CPUs, is unmeasurable; nil when it was
// not starved (hostenv.Starved).
func starvedReason(pct, cpus float64) *result.CellReason {
	if !hostenv.Starved(pct, cpus) {
		return nil
	}
	return &result.CellReason{Code: result.ReasonStarved,
		Figures: map[string]float64{result.FigWaitPct: pct, result.FigBoundPct: hostenv.StarvedBoundPct, result.FigCPUs: cpus}}
}

// starvedDuring runs run, one traffic cell's window, and reports why its
// server was starved during it, as watchMachine judges a decode cell's
// run; nil when it was not, or when its wait is not read or not judged (a
// server slogate did not launch, or not computing on the CPU).
func (r *run) starvedDuring(run func()) *result.CellReason {
	pgid, launched := serverGroup(r.server)
	if !launched || r.cfg.Server == nil || !r.cpuServer() {
		run()
		return nil
	}
	before := readGroup(pgid)
	t0 := time.Now()
	run()
	wall := time.Since(t0)
	pct, cpus, ok := hostenv.WaitShare(before, readGroup(pgid), wall.Nanoseconds())
	if !ok {
		return nil
	}
	return starvedReason(measure.Round(pct, 1), measure.Round(cpus, 2))
}

// unlessStarved makes a saturated traffic cell whose server was starved
// during it (starved, from starvedDuring) unmeasurable: its queue grew
// because the machine took the server's CPU, so it says nothing of the
// server's capacity, and a saturated cell fails the run
// (docs/method.md#saturation). A rate search's probe is not judged: a
// saturated probe is a failed probe, a bound, as a starved probe that
// missed its objective was before the saturation rule.
func (r *run) unlessStarved(c *result.TrafficCell, starved *result.CellReason) {
	if starved != nil && c.Status == vocab.StatusSaturated {
		c.Status = vocab.StatusUnmeasurable
		c.Reasons, c.Reason = r.because(*starved)
	}
}
