package compare

import (
	"math"
	"time"

	"github.com/slogate/slogate/internal/engine/registry"
	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/warning"
)

// Policy is how a comparison decides: what -tolerance, -alpha,
// -inconclusive, -allow-settings-change and diff's -metric say, read once
// and passed on whole (gate.Options, runner.Config and the finish step hold
// this one value).
type Policy struct {
	// Tolerance is a fraction: a change of at most Tolerance × |A| is
	// "within tolerance"; 0 means unset, DefaultTolerance (Resolved).
	Tolerance float64
	// Alpha is the one-sided error level of each bound of the interval
	// that decides cells with samples on both sides; 0 means DefaultAlpha.
	// When B was measured with repeat = "auto", Alpha is the design's
	// overall level and each cell is decided at the level of its looks
	// (Sequential.Level for A's repeats).
	Alpha float64
	// Inconclusive says what an inconclusive cell does to the gate
	// (InconclusiveFail by default).
	Inconclusive InconclusivePolicy
	// AllowSettingsChange compares runs measured with different settings
	// instead of refusing to (Comparison.Refused).
	AllowSettingsChange bool
	// Metrics restricts the comparison to these metric names (each applies
	// to every phase that has it); empty means the defaults. CheckMetrics
	// validates them; a name no phase has compares nothing.
	Metrics []string
	// Asserted are the metrics B's spec reads in its assert and expect
	// blocks (spec.AssertedMetrics), by phase: with the defaults they are
	// compared beside those the runs' recorded verdicts read
	// (assertedMetrics), so that `run -baseline`, whose own verdicts come
	// after its comparison, compares what a later `diff` of the same two
	// runs compares. Unused when Metrics is set.
	Asserted map[vocab.Phase][]string
}

// Resolved is p with its defaults made explicit, the one place they are
// given: an unset (zero) Tolerance is DefaultTolerance and an unset Alpha
// DefaultAlpha. The command line never leaves either zero (cli's
// -tolerance refuses 0, and -alpha below or at 0); a zero here is a
// caller's unset value, read the same by every part of a comparison.
func (p Policy) Resolved() Policy {
	if p.Tolerance == 0 {
		p.Tolerance = DefaultTolerance
	}
	if p.Alpha == 0 {
		p.Alpha = DefaultAlpha
	}
	return p
}

// Comparison is two runs compared once, under one Policy: everything
// `slogate diff` and `run -baseline` show and decide. The views render it;
// nothing else decides. A later kind of comparison (correctness, paired
// traffic, search) adds its own slice here, filled by Build, and its
// outcomes to the merge in Build: it never compares on its own.
type Comparison struct {
	// A is the reference run (the baseline), B the new one (the
	// candidate); nil A or B only in a pre-run check (BuildPlanned), whose
	// B is still to be measured.
	A, B *result.Results
	// Policy is the one decided with; its Alpha resolved.
	Policy Policy
	// Settings are the measurement settings that differ (Settings). When
	// there are some and the policy does not allow it, the comparison is
	// Refused: numbers measured differently are not compared, and nothing
	// below is filled in.
	Settings []Difference
	Refused  bool
	// Server is how B's server differs from A's (Server): shown, never
	// refused.
	Server []Difference
	// EngineChanged: A and B measured different engines; the comparison
	// informs, never gates (docs/method.md#comparing-engines): every Fail
	// or Inconclusive cell passes, an Error stays.
	EngineChanged bool
	// Tables are the decode and prefill comparisons, one per matrix and
	// metric (prefill first), cell by cell.
	Tables []Table
	// Cells are the same cells, each once with its metrics merged: one
	// per cell either run recorded, in the order of the tables and their
	// cells (prefill first, then each decode matrix row by row).
	Cells []CellResult
	// Lost are the cells A measured and B did not (lost or errored).
	Lost []Finding
	// Method is how the cells measured on both sides were decided.
	Method Method
	// Traffic are the traffic cells compared, request for request when
	// both sent one schedule, each decided (docs/method.md#comparing-traffic).
	Traffic []TrafficPair
	// Correctness are the new run's correctness blocks, each compared
	// with the baseline's of the same name (docs/method.md#correctness).
	Correctness []CorrectnessResult
	// Capacity are the rate searches of both runs compared: capacity lost
	// (docs/method.md#capacity-lost), merged into Outcome.
	Capacity []CapacityResult
	// Power is the pre-run check's (BuildPlanned): the metrics whose
	// baseline cells cannot be decided within the tolerance with power 0.9
	// against the repeats the spec measures, each a warning once worded
	// (views.Baseline.PowerWarnings). Empty after a run.
	Power []PowerShortfall
	// Machine is this run's machine against the baseline's when their
	// CPU calibrations differ beyond the bound (Machines); nil otherwise.
	// Its warning (warning.MachineDiffers) is among Warnings, and the
	// verdicts it could explain are Inconclusive (CellResult.Confounded,
	// TrafficPair.Confounded; docs/method.md#machine-against-the-baseline).
	Machine *MachineChange
	// Warnings are the comparison's own typed warnings, after a run.
	Warnings []warning.Warning
	// Outcome is the comparison as a gate, the worst of its cells'
	// (vocab's order: Pass < Skip < Inconclusive < Fail < Error) after the
	// engine rule; Error when Refused.
	Outcome vocab.Outcome
}

// CellResult is one cell's comparison over every metric compared.
type CellResult struct {
	Ref vocab.CellRef
	// A and B are the cell's presence and status in each run (their
	// values are the first metric's; Metrics has each one's).
	A, B Side
	// Metrics are the cell's per-metric comparisons, in the tables' order.
	Metrics []MetricCell
	// Lost is the cell's finding when A measured it and B did not.
	Lost *Finding
	// Decided is the cell's outcome from the decisions alone: Skip when
	// the baseline did not measure it, Error when B errored, Fail when B
	// lost it, else the worst of its metrics'.
	Decided vocab.Outcome
	// Outcome is what it does to the gate: Decided, except that a Fail or
	// Inconclusive passes when the engines differ (InformsOnly), and
	// that a verdict the machines' difference could explain is
	// Inconclusive (Confounded), and so is one the servers' difference in
	// CPU time could (Waited).
	Outcome vocab.Outcome
	// Confounded: the machines differ (Comparison.Machine) the way that
	// could make Decided (a Fail on a slower machine, a Pass on a faster
	// one), so Outcome is Inconclusive.
	Confounded bool
	// Waited is the cell's server wait in each run when the servers'
	// difference in CPU time could make Decided (a Fail whose server got
	// less CPU time than the baseline's, a Pass whose got more), so
	// Outcome is Inconclusive; nil otherwise
	// (docs/method.md#server-wait-against-the-baseline).
	Waited *WaitShift
	// RejectedA and RejectedB are the requests each run's server refused
	// at admission inside the cell's window (docs/method.md#rejections):
	// shown beside the metrics, never decided (the status and the
	// throughput say what they cost); 0 on a server that refuses none.
	RejectedA, RejectedB int
}

// Rejected reports whether either run's server refused requests of the
// cell's window at admission.
func (c *CellResult) Rejected() bool { return c.RejectedA > 0 || c.RejectedB > 0 }

// InformsOnly reports whether the engine rule turned the cell's Fail or
// Inconclusive into a Pass.
func (c *CellResult) InformsOnly() bool {
	return c.Outcome != c.Decided && !c.Confounded && c.Waited == nil
}

// Check is the cell's verdict against the baseline: its Outcome, the
// infrastructure's when this run's cell errored where the baseline
// measured it (and neither side was unmeasurable, which says more).
func (c *CellResult) Check() Check {
	unmeasurable := c.A.Status == vocab.StatusUnmeasurable || c.B.Status == vocab.StatusUnmeasurable
	return Check{Outcome: c.Outcome, Infra: !unmeasurable && c.Decided == vocab.Error && c.B.Present && c.B.Status == vocab.StatusError}
}

// MetricCell is one metric's comparison of a cell.
type MetricCell struct {
	Metric metric.Metric
	Cell   Cell
}

// Build compares b with a under p, once: the settings check (a refusal
// when they differ and p does not allow it), the server differences, each
// decode and prefill cell per metric with its statistics, the lost cells,
// the method, the traffic cells (paired request for request when both
// sent one schedule; schedules that differ are among the settings
// refused) and the overall outcome.
// When b was measured with repeat = "auto" its cells are decided at the
// sequential design's level, the one its repeats stopped at.
func Build(a, b *result.Results, p Policy) *Comparison {
	p = p.Resolved()
	c := &Comparison{A: a, B: b, Policy: p, Settings: append(Settings(a, b), trafficSettings(a, b)...)}
	if len(c.Settings) > 0 && !p.AllowSettingsChange {
		c.Refused, c.Outcome = true, vocab.Error
		return c
	}
	c.Server = Server(a, b)
	c.EngineChanged = EngineChanged(a, b)
	var design *Sequential
	if b.Measure.RepeatAuto {
		s := Sequential{Min: max(b.Measure.Repeat, DefaultMinRepeat), Max: b.Measure.MaxRepeat, Alpha: p.Alpha, Tolerance: p.Tolerance}
		design = &s
	}
	c.Tables = buildTables(a, b, p, design)
	c.Lost = Findings(c.Tables)
	c.Method = methodOf(c.Tables, p.Alpha)
	c.Traffic = Traffic(a, b, p, c.EngineChanged)
	c.Cells = cellResults(c.Tables, c.Lost, c.EngineChanged)
	cellRejections(c.Cells, a, b)
	if c.Machine = Machines(a, b); c.Machine != nil {
		c.Warnings = append(c.Warnings, c.Machine.Warning())
		c.confound()
	}
	c.confoundWaits()
	for _, cr := range c.Cells {
		c.Outcome = vocab.Worst(c.Outcome, cr.Outcome)
	}
	for _, tp := range c.Traffic {
		c.Outcome = vocab.Worst(c.Outcome, tp.Outcome)
	}
	c.Correctness = buildCorrectness(a, b, p)
	for i := range c.Correctness {
		cr := &c.Correctness[i]
		if c.EngineChanged && (cr.Outcome == vocab.Fail || cr.Outcome == vocab.Inconclusive) {
			cr.Notes = append(cr.Notes, warning.New(warning.EnginesDiffer, "the engines differ", "the comparison informs, it does not gate", nil))
			cr.Outcome = vocab.Pass
		}
		if cr.Outcome != vocab.Skip {
			c.Outcome = vocab.Worst(c.Outcome, cr.Outcome)
		}
	}
	c.Capacity = Capacity(a, b, p.Tolerance, p.Alpha, c.EngineChanged)
	for _, cr := range c.Capacity {
		if cr.Outcome != vocab.Skip {
			c.Outcome = vocab.Worst(c.Outcome, cr.Outcome)
		}
	}
	return c
}

// ExitCode is the comparison's exit code: 2 when Refused (a usage error),
// else 3 for an Error (a cell A measured errored in B), 1 for a Fail, 4
// for an Inconclusive, 0 otherwise.
func (c *Comparison) ExitCode() int {
	switch {
	case c.Refused:
		return exit.Usage
	case c.Outcome == vocab.Error:
		return exit.Infra
	case c.Outcome == vocab.Fail:
		return exit.Fail
	case c.Outcome == vocab.Inconclusive:
		return exit.Inconclusive
	}
	return exit.OK
}

// Summary counts the cells of every table by Change.
func (c *Comparison) Summary() Summary { return Summarize(c.Tables) }

// Accepted counts the inconclusive cells (× metrics) that -inconclusive pass
// accepted (those estimated beyond the tolerance still fail).
func (c *Comparison) Accepted() int {
	n := 0
	for _, t := range c.Tables {
		for _, x := range t.Cells {
			if x.Change == Inconclusive && x.Outcome == vocab.Pass {
				n++
			}
		}
	}
	return n
}

// cellRejections fills each decode cell's refused requests in either run
// (CellResult.RejectedA, RejectedB).
func cellRejections(cells []CellResult, a, b *result.Results) {
	rejected := func(r *result.Results, ref vocab.CellRef) int {
		for i := range r.Decode {
			if r.Decode[i].Ref() == ref {
				return r.Decode[i].Rejected
			}
		}
		return 0
	}
	for i := range cells {
		if cr := &cells[i]; cr.Ref.Phase == vocab.PhaseDecode {
			cr.RejectedA, cr.RejectedB = rejected(a, cr.Ref), rejected(b, cr.Ref)
		}
	}
}

// cellResults merges the tables' per-metric cells into one result per cell.
func cellResults(tables []Table, lost []Finding, engineChanged bool) []CellResult {
	lostAt := map[vocab.CellRef]*Finding{}
	for i := range lost {
		lostAt[lost[i].Ref] = &lost[i]
	}
	var out []CellResult
	at := map[vocab.CellRef]int{}
	for _, t := range tables {
		for _, x := range t.Cells {
			i, ok := at[x.Ref]
			if !ok {
				i = len(out)
				at[x.Ref] = i
				out = append(out, CellResult{Ref: x.Ref, A: x.A, B: x.B, Lost: lostAt[x.Ref]})
			}
			out[i].Metrics = append(out[i].Metrics, MetricCell{Metric: t.Metric, Cell: x})
		}
	}
	for i := range out {
		cr := &out[i]
		switch a, b := cr.A, cr.B; {
		case !a.Present || !aRan(a):
			cr.Decided = vocab.Skip
		case b.Present && b.Status == vocab.StatusError:
			cr.Decided = vocab.Error
		case b.Status != vocab.StatusUnmeasurable && (!b.Present || !b.Status.Measured()):
			// Lost capacity is a measured property of the new server, not
			// an infrastructure failure: a regression, whether or not the
			// baseline's client could measure the cell.
			cr.Decided = vocab.Fail
		case a.Status == vocab.StatusUnmeasurable || b.Status == vocab.StatusUnmeasurable:
			// Not compared: neither passed nor regressed
			// (docs/method.md#unmeasurable).
			cr.Decided = vocab.Inconclusive
		default:
			for _, m := range cr.Metrics {
				cr.Decided = vocab.Worst(cr.Decided, m.Cell.Outcome)
			}
		}
		cr.Outcome = cr.Decided
		if engineChanged && (cr.Decided == vocab.Fail || cr.Decided == vocab.Inconclusive) {
			cr.Outcome = vocab.Pass
		}
	}
	return out
}

// Planned is what a spec's server is about to be measured with, for the
// pre-run check of a -baseline (BuildPlanned).
type Planned struct {
	// Window is the measurement window (measure.duration, or -duration).
	Window    time.Duration
	MaxOutput int
	Endpoint  string
	// Repeat is measure.repeat; with RepeatAuto, MaxRepeat is the most a
	// cell may take.
	Repeat     int
	RepeatAuto bool
	MaxRepeat  int
	// Simulated is -sim; Engine the server's engine ("" is vLLM).
	Simulated bool
	Engine    string
	// Traffic are the spec's traffic blocks, as far as their schedules
	// are known before the run.
	Traffic []PlannedTraffic
}

// BuildPlanned is the pre-run check of a -baseline, before any server
// starts: the settings base was measured with against those planned
// (window, max_output, endpoint, repeat, simulated or real, the engine;
// the workload is recorded by the run itself, so Build compares it when
// the run ends) and the traffic schedules as far as they are known
// (PlannedTraffic), refused unless p allows it, and the power of base's cells
// against the repeats planned (max_repeat with repeat = "auto": the
// baseline caps the power only when even that many cannot decide).
func BuildPlanned(base *result.Results, planned Planned, p Policy) *Comparison {
	p = p.Resolved()
	engine := (&result.Server{Engine: planned.Engine}).EngineName()
	cand := settings{
		measure: result.Measure{Duration: planned.Window.String(), DurationS: planned.Window.Seconds(), MaxOutput: planned.MaxOutput,
			Endpoint: planned.Endpoint, Repeat: max(planned.Repeat, 1), RepeatAuto: planned.RepeatAuto},
		simulated: planned.Simulated, engine: engine,
	}
	c := &Comparison{A: base, Policy: p, Settings: append(settingsDiff(measuredSettings(base), cand), plannedTrafficSettings(base, planned.Traffic)...)}
	if len(c.Settings) > 0 && !p.AllowSettingsChange {
		c.Refused, c.Outcome = true, vocab.Error
		return c
	}
	c.EngineChanged = base.Server.EngineName() != engine
	repeats := planned.Repeat
	if planned.RepeatAuto {
		repeats = planned.MaxRepeat
	}
	c.Power = BaselineWarnings(base, max(repeats, 1), p.Tolerance, p.Alpha)
	return c
}

// Record is the comparison as results.json keeps it (result.Comparison):
// a row per cell and metric with both values, the change, its bounds, the
// decision and the outcome (Skip for a cell the baseline did not measure;
// a Fail or Inconclusive passes when the engines differ). Nil when the
// comparison was refused or is a pre-run check.
func (c *Comparison) Record() *result.Comparison {
	if c.Refused || c.B == nil {
		return nil
	}
	r := &result.Comparison{Baseline: c.A.Describe("2006-01-02 15:04 UTC", registry.Title), Tolerance: c.Policy.Tolerance, Alpha: c.Policy.Alpha,
		InformsOnly: c.EngineChanged, Outcome: c.Outcome, Warnings: c.Warnings, Rows: []result.ComparisonRow{}}
	for _, cr := range c.Cells {
		for _, mc := range cr.Metrics {
			r.Rows = append(r.Rows, recordRow(&cr, mc))
		}
	}
	for i := range c.Correctness {
		r.Correctness = append(r.Correctness, correctnessRecord(&c.Correctness[i], c.Policy.Alpha))
	}
	for i := range c.Traffic {
		r.Traffic = append(r.Traffic, trafficRows(&c.Traffic[i], c.Policy.Alpha)...)
	}
	for i := range c.Capacity {
		r.Capacity = append(r.Capacity, capacityRecord(&c.Capacity[i], c.Policy.Tolerance))
	}
	r.Searches = baselineSearches(c.A, c.B)
	return r
}

// baselineSearches are base's searches of the names run also ran, with
// base's GPUs and price, for the reports' charts and cost lines.
func baselineSearches(base, run *result.Results) []result.BaselineSearch {
	var out []result.BaselineSearch
	for _, s := range base.Search {
		if _, ok := run.SearchByName(s.Name); !ok {
			continue
		}
		bs := result.BaselineSearch{Search: s, PricePerGPUHour: base.Server.PricePerGPUHour}
		if g := base.GPUTime; g != nil {
			bs.GPUs, bs.CPU = g.GPUs, g.CPU
		}
		out = append(out, bs)
	}
	return out
}

// recordRow is one cell and metric of Record.
func recordRow(cr *CellResult, mc MetricCell) result.ComparisonRow {
	m, x := mc.Metric, mc.Cell
	ref := x.Ref
	r := result.ComparisonRow{Cell: ref.Name(), Phase: ref.Phase, Matrix: ref.Matrix, Context: ref.Context, Concurrency: ref.Concurrency,
		Metric: m.Name, Unit: m.Unit, HigherIsBetter: m.HigherIsBetter, BaselineStatus: x.A.Status, NowStatus: x.B.Status,
		Decision: x.Change.Key(), Outcome: x.Outcome}
	if x.A.Present {
		r.BaselineRepeats = x.A.Repeats
	}
	if x.B.Present {
		r.NowRepeats = x.B.Repeats
	}
	if x.A.HasValue {
		r.Baseline = ptr(x.A.Value)
	}
	if x.B.HasValue {
		r.Now = ptr(x.B.Value)
	}
	if !math.IsNaN(x.Delta) && x.A.HasValue && x.B.HasValue {
		r.Change = ptr(x.Delta)
	}
	if t := x.Test; t != nil {
		r.Lower, r.Upper, r.Confidence = ptr(t.Lower-1), ptr(t.Upper-1), ptr(t.Confidence())
	}
	switch {
	case cr.Decided == vocab.Skip:
		r.Outcome = vocab.Skip
	case cr.InformsOnly() && (r.Outcome == vocab.Fail || r.Outcome == vocab.Inconclusive):
		r.Outcome = vocab.Pass
	case (cr.Confounded || cr.Waited != nil) && r.Outcome == cr.Decided:
		r.Outcome = vocab.Inconclusive
	}
	return r
}

func ptr(v float64) *float64 { return &v }
