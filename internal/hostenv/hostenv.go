// Package hostenv reads the machine a run measures from: its load and CPU
// steal from /proc, its CPU pressure where the kernel has PSI, and a short
// fixed CPU calibration; and says when the machine moved between two
// readings beyond the bounds of docs/method.md#environment.
package hostenv

import (
	"math"
	"os"
	"strconv"
	"strings"
	"time"
)

// Snapshot is the machine at one moment.
type Snapshot struct {
	// Load1 is /proc/loadavg's one-minute load (LoadOK when read).
	Load1  float64
	LoadOK bool
	// Total and Steal are /proc/stat's cpu line: all CPU time and the
	// time stolen, in clock ticks (StatOK when read).
	Total, Steal uint64
	StatOK       bool
	// Pressure is /proc/pressure/cpu's "some avg10", in % (PressureOK
	// when the kernel has PSI).
	Pressure   float64
	PressureOK bool
	// Calibration is how long the fixed work took (Calibrate).
	Calibration time.Duration
	// ServerWait is, in a cell's reference (runner), the least share of
	// its ready time the server waited for a CPU in any run of the cell
	// (WaitShare), in %; ServerWaitOK when one was read.
	ServerWait   float64
	ServerWaitOK bool
}

// Root is where the /proc files are read (a variable for the tests).
var Root = "/proc"

// Take reads the machine now: /proc, then the calibration.
func Take() Snapshot {
	s := readProc(Root)
	s.Calibration = Calibrate()
	return s
}

func readProc(root string) Snapshot {
	var s Snapshot
	if b, err := os.ReadFile(root + "/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) > 0 {
			s.Load1, err = strconv.ParseFloat(f[0], 64)
			s.LoadOK = err == nil
		}
	}
	if b, err := os.ReadFile(root + "/stat"); err == nil {
		s.Total, s.Steal, s.StatOK = parseStat(string(b))
	}
	if b, err := os.ReadFile(root + "/pressure/cpu"); err == nil {
		s.Pressure, s.PressureOK = parsePressure(string(b))
	}
	return s
}

// parseStat reads the first line of /proc/stat, "cpu user nice system
// idle iowait irq softirq steal …": the sum of its fields and steal.
func parseStat(text string) (total, steal uint64, ok bool) {
	line, _, _ := strings.Cut(text, "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0, 0, false
	}
	for i, x := range f[1:] {
		v, err := strconv.ParseUint(x, 10, 64)
		if err != nil {
			return 0, 0, false
		}
		if i >= 8 { // guest and guest_nice are already counted in user and nice
			break
		}
		total += v
		if i == 7 {
			steal = v
		}
	}
	return total, steal, true
}

// parsePressure reads /proc/pressure/cpu's "some avg10=…" in %.
func parsePressure(text string) (float64, bool) {
	for line := range strings.SplitSeq(text, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || f[0] != "some" {
			continue
		}
		if v, ok := strings.CutPrefix(f[1], "avg10="); ok {
			x, err := strconv.ParseFloat(v, 64)
			return x, err == nil
		}
	}
	return 0, false
}

// calibrationRounds of calibrationIters steps of xorshift are the fixed
// work, about half a millisecond a round on an idle core of today's
// machines. Calibrate keeps the shortest round: a round the scheduler
// preempted is longer by the preemption, and the shortest of nine is one
// that ran whole on a busy machine too (the median of five 1 ms rounds
// moved beyond 1.5× between two readings 250 ms apart in 7 of 40 pairs at
// load average 9 on two cores; the shortest, in 1 of 40), so it times the
// CPU's speed (its clock, throttling, a hypervisor's steal), and CPU
// pressure tells contention.
const (
	calibrationRounds = 9
	calibrationIters  = 1 << 19
)

var sink uint64

// Calibrate times the fixed work: the shortest of calibrationRounds
// rounds.
func Calibrate() time.Duration {
	best := time.Duration(math.MaxInt64)
	for i := range calibrationRounds {
		t0 := time.Now()
		x := uint64(88172645463325252) + uint64(i)
		for range calibrationIters {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
		}
		sink += x
		best = min(best, time.Since(t0))
	}
	return best
}

// StealPct is the share of CPU time stolen between before and after, in
// %; false when /proc/stat was not read or no time passed.
func StealPct(before, after Snapshot) (float64, bool) {
	if !before.StatOK || !after.StatOK || after.Total <= before.Total {
		return 0, false
	}
	return 100 * float64(after.Steal-before.Steal) / float64(after.Total-before.Total), true
}

// The bounds of a machine that moved (docs/method.md#environment).
const (
	// CalibrationBound is the ratio, either way, the calibration may move
	// by from the cell's first reading.
	CalibrationBound = 1.5
	// StealBoundPct is the share of CPU time a hypervisor may steal
	// during a run.
	StealBoundPct = 10.0
	// PressureRiseBound is how far, in points of %, CPU pressure's
	// avg10 may rise from the cell's first reading.
	PressureRiseBound = 40.0
	// ServerWaitRiseBound is how far, in points of %, the share of its
	// ready time the server's threads spent waiting for a CPU during a
	// run (WaitShare) may rise above the least any run of the cell showed
	// before the run is flagged as moved. Relative, not absolute: a
	// server's own threads outnumbering the CPUs wait too (vLLM's CPU
	// build on two cores, alone: 22 to 27 %), and that is the build's.
	ServerWaitRiseBound = 20.0
	// StarvedBoundPct is the share past which the run is unmeasurable:
	// the server had less than half the CPU time it was ready to use, so
	// a server bound by its CPU ran at less than half its speed, and the
	// figures are the machine's.
	StarvedBoundPct = 50.0
	// WaitFloorCPUs is the least time, in CPUs (seconds a second), the
	// server's threads must have waited for either bound to judge a run
	// (WaitCPUs): a server that hardly runs — the simulator, 0.03 CPUs,
	// its goroutines waking for moments on a busy machine and waiting 66
	// to 76 % of those moments — loses too little to its waits for them
	// to be what it measured.
	WaitFloorCPUs = 0.25
)

// Kind names what moved.
type Kind string

// What can move.
const (
	Calibration Kind = "calibration"
	Steal       Kind = "steal"
	Pressure    Kind = "cpu_pressure"
	ServerWait  Kind = "server_wait"
)

// Movement is the machine moving beyond a bound: what moved, its figures
// at the cell's first reading and at the run's end (Steal: 0 and the
// share stolen during the run) and the bound.
type Movement struct {
	Kind          Kind
	Before, After float64
	Bound         float64
}

// Moved says whether the machine at after, a run's end, moved beyond a
// bound from first, the first reading of the run's cell (the calibration,
// CPU pressure), or during the run from before (steal); the first bound
// passed in that order.
func Moved(first, before, after Snapshot) (Movement, bool) {
	// Slower only: first's calibration is the reference the caller keeps,
	// the fastest the cell has seen, and a reading faster than it says
	// the reference was taken on a busy moment, not that this run was.
	if b, a := first.Calibration, after.Calibration; b > 0 && a > 0 {
		if r := float64(a) / float64(b); r > CalibrationBound {
			return Movement{Kind: Calibration, Before: ms(b), After: ms(a), Bound: CalibrationBound}, true
		}
	}
	if p, ok := StealPct(before, after); ok && p > StealBoundPct {
		return Movement{Kind: Steal, After: p, Bound: StealBoundPct}, true
	}
	if first.PressureOK && after.PressureOK && after.Pressure-first.Pressure > PressureRiseBound {
		return Movement{Kind: Pressure, Before: first.Pressure, After: after.Pressure, Bound: PressureRiseBound}, true
	}
	return Movement{}, false
}

// ms is d in milliseconds, to the microsecond.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// Ms is d in milliseconds, to the microsecond.
func Ms(d time.Duration) float64 { return ms(d) }

// Waited says whether the server's threads waited for a CPU during a
// run (pct, WaitShare's) more than ServerWaitRiseBound points above the
// least the cell's runs showed (least, from its reference): other work
// started taking the CPU, so the run measured the machine's contention as
// well as the build. Beyond StarvedBoundPct the run is starved (Starved).
func Waited(least Snapshot, pct, cpus float64) (Movement, bool) {
	if least.ServerWaitOK && pct-least.ServerWait > ServerWaitRiseBound && WaitCPUs(pct, cpus) >= WaitFloorCPUs {
		return Movement{Kind: ServerWait, Before: least.ServerWait, After: pct, Bound: ServerWaitRiseBound}, true
	}
	return Movement{}, false
}

// Starved says whether the server waited for a CPU beyond
// StarvedBoundPct of its ready time, and at least WaitFloorCPUs, using
// cpus (WaitShare's): the run cannot be measured.
func Starved(pct, cpus float64) bool {
	return pct > StarvedBoundPct && WaitCPUs(pct, cpus) >= WaitFloorCPUs
}

// WaitCPUs is how long, in CPUs (seconds a second), the server's threads
// waited for a CPU, weighted as WaitShare weighs them, given the share
// pct of their ready time and the CPUs they used: pct ÷ (100 − pct) of
// what they ran.
func WaitCPUs(pct, cpus float64) float64 {
	if pct >= 100 {
		return math.Inf(1)
	}
	return pct / (100 - pct) * cpus
}
