package runner

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/event"
	"github.com/slogate/slogate/internal/hostenv"
	"github.com/slogate/slogate/internal/measure"
	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/requests"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/warning"
)

// Repeats (measure.repeat > 1) combine into one cell by iterating the metric
// table metric.Table: each metric becomes its Combine over the runs, the
// cell's Spread keeps [min, max] and its Samples every run's value, for
// the interval that compares runs (docs/method.md#comparing-runs).

// combinePrefill merges repeated prefill runs; an errored run is the result.
func combinePrefill(runs []result.PrefillCell) result.PrefillCell {
	if len(runs) == 1 {
		return runs[0]
	}
	for _, x := range runs {
		if x.Status == vocab.StatusError {
			return x
		}
	}
	c := runs[len(runs)-1]
	c.Repeats = len(runs)
	c.Spread = map[string][2]float64{}
	c.Samples = map[string][]float64{}
	for _, m := range metric.OfPhase(vocab.PhasePrefill) {
		var xs []float64
		for i := range runs {
			if v, ok := runs[i].Value(m); ok {
				xs = append(xs, v)
			}
		}
		c.SetValue(m, m.Combine.Of(xs))
		c.Spread[m.Name] = [2]float64{slices.Min(xs), slices.Max(xs)}
		c.Samples[m.Name] = xs
	}
	return c
}

// combineDecode merges repeated runs of a decode cell: the status is the
// worst (an errored run is the result); an optional metric is kept only
// when every run has it (else it is dropped, with a note); the warnings and
// notes of the runs are kept once each, those only some runs carried
// marked with their repeats (warning.OfRepeats), the preemptions add up; the token
// source is the least exact; the KV cross-check is the first run's.
func combineDecode(runs []result.DecodeCell) result.DecodeCell {
	if len(runs) == 1 {
		return runs[0]
	}
	worst := runs[0]
	for _, x := range runs {
		if statusRank(x.Status) > statusRank(worst.Status) {
			worst = x
		}
	}
	if worst.Status == vocab.StatusError {
		return worst
	}
	c := mergeDecodeRuns(runs)
	c.Status, c.Reason, c.Reasons = worst.Status, worst.Reason, worst.Reasons
	return c
}

// mergeDecodeRuns combines the metrics, warnings and notes of measured runs
// of one decode cell (combineDecode), whatever their number; the status is
// runs[0]'s.
func mergeDecodeRuns(runs []result.DecodeCell) result.DecodeCell {
	c := runs[0]
	c.Stats = maps.Clone(c.Stats)
	c.Repeats = len(runs)
	c.Spread = map[string][2]float64{}
	c.Samples = map[string][]float64{}
	var notes []warning.Warning
	for _, m := range decodeRunMetrics(runs) {
		var xs []float64
		for i := range runs {
			if v, ok := runs[i].Value(m); ok {
				xs = append(xs, v)
			}
		}
		if len(xs) < len(runs) {
			// An optional metric some run lacks: a single run's value would
			// pass for the combined one, without spread.
			if len(xs) > 0 {
				c.ClearValue(m)
				notes = append(notes, warning.New(warning.MetricDropped, m.Name+" dropped", fmt.Sprintf("%d of %d repeats reported it", len(xs), len(runs)),
					map[string]float64{warning.FigReported: float64(len(xs)), warning.FigRepeats: float64(len(runs))}).About(m.Name))
			}
			continue
		}
		c.SetValue(m, m.Combine.Of(xs))
		if m.Quiet() && slices.Max(xs) == 0 {
			continue // 0 in every run (no request refused): no samples to keep
		}
		c.Spread[m.Name] = [2]float64{slices.Min(xs), slices.Max(xs)}
		c.Samples[m.Name] = xs
	}
	c.Polling = combinePolling(runs)
	c.Rejections = combineRejections(runs)
	// A warning only some repeats carried names them: its figures are
	// theirs, not the median the cell reports (warning.OfRepeats).
	warns, runNotes := make([][]warning.Warning, len(runs)), make([][]warning.Warning, len(runs))
	for i, x := range runs {
		warns[i], runNotes[i] = x.Warnings, x.Notes
		c.TokenSource = c.TokenSource.LeastExact(x.TokenSource)
		if i > 0 && c.Preemptions != nil && x.Preemptions != nil {
			n := *c.Preemptions + *x.Preemptions
			c.Preemptions = &n
		}
	}
	c.Warnings, c.Notes = warning.OfRepeats(warns), warning.AppendNew(notes, warning.OfRepeats(runNotes)...)
	return c
}

// decodeRunMetrics are the metrics to combine over runs: the table's, then
// every statistic of the naming rule some run has (docs/method.md#metric-names).
func decodeRunMetrics(runs []result.DecodeCell) []metric.Metric {
	out := metric.OfPhase(vocab.PhaseDecode)
	var names []string
	for i := range runs {
		for name := range runs[i].Stats {
			if _, known := metric.Lookup(vocab.PhaseDecode, name); known && !slices.Contains(names, name) &&
				!slices.ContainsFunc(out, func(m metric.Metric) bool { return m.Name == name }) {
				names = append(names, name)
			}
		}
	}
	slices.Sort(names)
	for _, name := range names {
		out = append(out, metric.Must(vocab.PhaseDecode, name))
	}
	return out
}

// The repeat design (docs/method.md#repeats). A step's decode cells are
// repeated in rounds, cell 1 run 1, cell 2 run 1, …, cell 1 run 2, …, so
// that a cell's repeats are spaced by the other cells' and do not share
// the server's slow drift. With measure.boots > 1 the server is started
// that many times and every cell gets its share of the repeats in each
// boot (share). With repeat = "auto" a cell gets its minimum, then more
// rounds while its gated metrics are undecided (stopRule), up to
// max_repeat and within max_gpu_time.

// stopRule decides whether one gated metric of a cell has repeats enough
// (compare.Sequential): against the baseline's samples of the cell, or
// alone when baseline is nil.
type stopRule interface {
	Look(baseline, candidate []float64, higherIsBetter bool) compare.Look
}

// pendingCell is a cell of the plan while its repeats are taken, over
// rounds and boots.
type pendingCell struct {
	ref   vocab.CellRef
	runs  []result.DecodeCell
	boots []int // the boot of each run
	// prefills are a prefill cell's runs (ref.Phase prefill), excluded
	// ones too, and prefillOut why each was left out of the cell's
	// figures ("": kept; docs/method.md#unmeasurable).
	prefills   []result.PrefillCell
	prefillOut []exclusion
	busy       time.Duration // the server time of its runs
	// final is the cell as recorded when it is not repeated: unrunnable
	// (over capacity, beyond max_model_len) or failed at its first run.
	final *result.DecodeCell
	// failedAt and failedWhy: the run that could not be measured, which
	// ends the repeats (the runs before it are kept).
	failedAt  int
	failedWhy string
	// stopped says why repeat = "auto" stopped (nil while it goes on).
	stopped  *result.RepeatStop
	recorded bool
	// excluded are the runs left out of the cell's figures
	// (docs/method.md#unmeasurable), excludedBoots the boot of each, and
	// lastExcluded the last of them, the cell when every run was.
	excluded      []result.ExcludedRun
	excludedBoots []int
	lastExcluded  *result.DecodeCell
	// envs is the machine around each run (docs/method.md#environment),
	// machine the machine at the first run's start, which later runs are
	// judged against.
	envs    []result.Environment
	machine *hostenv.Snapshot
}

// taken is how many runs of the cell were taken, excluded ones too.
func (pc *pendingCell) taken() int { return len(pc.runs) + len(pc.excluded) }

// excludedIn is how many of the cell's runs in boot b were excluded.
func (pc *pendingCell) excludedIn(b int) int {
	n := 0
	for _, x := range pc.excludedBoots {
		if x == b {
			n++
		}
	}
	return n
}

// share is how many of total repeats boot b (1-based) of boots takes: as
// even as can be, the first boots taking one more.
func share(total, boots, b int) int {
	boots = max(boots, 1)
	n := total / boots
	if b <= total%boots {
		n++
	}
	return n
}

// pending returns the pendingCell of ref, creating it.
func (r *run) pendingOf(ref vocab.CellRef) *pendingCell {
	if pc, ok := r.pending[ref]; ok {
		return pc
	}
	pc := &pendingCell{ref: ref}
	r.pending[ref] = pc
	return pc
}

// repeatsThisBoot is the repeats of a fixed design (or repeat = "auto"'s
// minimum) the current boot takes.
func (r *run) repeatsThisBoot() int {
	m := r.measure()
	return share(max(m.Repeat, 1), r.boots(), r.bootNo)
}

// boots is measure.boots (1 for -endpoint, which cannot restart).
func (r *run) boots() int { return max(r.measure().Boots, 1) }

// measureDecodeCells measures the step's decode cells refs this boot, in
// rounds (the file comment); in the last boot each is recorded once its
// repeats are taken, with the context's prompt warnings. An
// infrastructure error returns at once; the cells' runs so far stay
// pending (recordPartials keeps them).
func (r *run) measureDecodeCells(ctx context.Context, refs []vocab.CellRef, bodies func() [][]byte, warnings []warning.Warning) error {
	cells := r.pendingCells(refs)
	quota := r.repeatsThisBoot()
	for round := 0; ; round++ {
		ran := false
		for _, pc := range cells {
			if !r.wantsRun(pc, round, quota) {
				continue
			}
			ran = true
			failed, err := r.decodeRepeat(ctx, pc, bodies)
			if err != nil {
				return err
			}
			if failed {
				continue
			}
			if r.lastBoot() && !r.wantsRun(pc, round+1, quota) {
				// Recorded as soon as its repeats are all taken, so that an
				// interruption keeps it whole.
				if err := r.recordFinished(pc, warnings); err != nil {
					return err
				}
			}
		}
		if r.lastBoot() {
			if err := r.recordStopped(cells, round, quota, warnings); err != nil {
				return err
			}
		}
		if !ran {
			return nil
		}
	}
}

// pendingCells is the pending cell of each of refs, those that cannot run
// at all given their final cell saying why.
func (r *run) pendingCells(refs []vocab.CellRef) []*pendingCell {
	cells := make([]*pendingCell, 0, len(refs))
	for _, ref := range refs {
		pc := r.pendingOf(ref)
		if pc.final == nil && pc.taken() == 0 && pc.failedWhy == "" {
			if status, reasons, reason, ok := r.unrunnable(ref); ok {
				c := result.DecodeCell{Matrix: ref.MatrixLabel(), Context: ref.Context, Concurrency: ref.Concurrency, Status: status, Reason: reason, Reasons: reasons}
				pc.final = &c
			}
		}
		cells = append(cells, pc)
	}
	return cells
}

// decodeRepeat takes one run of decode cell pc: kept among its runs, or
// among its excluded ones, or, when the run is an error cell, the cell's
// failure (failed). An infrastructure error is returned, the cell's runs
// so far kept pending.
func (r *run) decodeRepeat(ctx context.Context, pc *pendingCell, bodies func() [][]byte) (failed bool, err error) {
	if len(pc.runs) == 0 && !r.repeated() {
		r.observer.CellStart(pc.ref)
	}
	t0 := time.Now()
	number := 0 // the run's number among all the cell's runs
	if r.repeated() {
		number = pc.taken() + 1
	}
	w, err := r.decodeWatched(ctx, pc.ref, bodies(), number, pc.machine)
	pc.machine = &w.after // the reference, its fastest calibration kept
	c := w.cell
	pc.busy += time.Since(t0)
	if err != nil {
		return false, r.decodeRepeatFailed(pc, err)
	}
	pc.envs = append(pc.envs, w.env)
	why, out := r.excludes(&c, w.moved)
	reason := why.reason
	if r.repeated() {
		r.note(event.RepeatMeasured{Server: r.cfg.Server.Name, Cell: c, Repeat: number, Of: r.plannedRepeats(), Max: r.maxRepeats(), Excluded: reason})
	}
	if c.Status == vocab.StatusError {
		pc.failedAt, pc.failedWhy = pc.taken()+1, c.Reason
		if pc.taken() == 0 {
			pc.final = &c
		}
		return true, nil
	}
	if out {
		pc.excluded = append(pc.excluded, result.ExcludedRun{Repeat: max(number, 1), Status: c.Status, Reason: reason, Reasons: why.reasons})
		pc.excludedBoots = append(pc.excludedBoots, r.bootNo)
		x := c
		pc.lastExcluded = &x
	} else {
		pc.runs = append(pc.runs, c)
		pc.boots = append(pc.boots, r.bootNo)
	}
	return false, nil
}

// decodeRepeatFailed notes on decode cell pc the infrastructure error err
// of its run, and returns it.
func (r *run) decodeRepeatFailed(pc *pendingCell, err error) error {
	if pc.taken() > 0 {
		pc.failedAt, pc.failedWhy = pc.taken()+1, firstLine(err.Error())
	} else if r.repeated() {
		// A repeated cell is announced when it ends; this one
		// ends here with nothing measured, and the run's end
		// reports the cells in flight (RunObserver.Abort).
		r.observer.CellStart(pc.ref)
	}
	return err
}

// recordStopped records, at the end of round, the cells that did not run
// to its end and will not run again: unrunnable, failed.
func (r *run) recordStopped(cells []*pendingCell, round, quota int, warnings []warning.Warning) error {
	for _, pc := range cells {
		if !pc.recorded && !r.wantsRun(pc, round+1, quota) {
			if err := r.recordFinished(pc, warnings); err != nil {
				return err
			}
		}
	}
	return nil
}

// recordFinished records decode cell pc, its repeats all taken; warnings
// are the context's prompt warnings, added to a measured cell.
func (r *run) recordFinished(pc *pendingCell, warnings []warning.Warning) error {
	cell := r.finishDecode(pc)
	if cell.Status.Measured() {
		cell.Warnings = append(cell.Warnings, warnings...)
	}
	pc.recorded = true
	return r.recordDecode(cell)
}

// wantsRun says whether cell pc gets a run in round (0-based) of this
// boot, whose fixed share is quota: every round below it, and with
// repeat = "auto" more while the stop rule, max_repeat and max_gpu_time
// allow (the reason it stops is kept).
func (r *run) wantsRun(pc *pendingCell, round, quota int) bool {
	switch {
	case pc.final != nil || pc.failedWhy != "" || pc.recorded:
		return false
	case round < quota:
		return true
	case r.measure().RepeatAuto && round < quota+pc.excludedIn(r.bootNo) && pc.taken() < r.measure().MaxRepeat:
		// An excluded run is replaced (docs/method.md#unmeasurable).
		return true
	case !r.measure().RepeatAuto || pc.stopped != nil:
		return false
	case len(pc.runs) == 0:
		pc.stopped = &result.RepeatStop{Rule: result.StopNoRunMeasurable, MaxRepeat: r.measure().MaxRepeat}
		return false
	}
	more, why := r.wantsMore(pc.ref, func(m metric.Metric) ([]float64, bool) {
		var xs []float64
		for i := range pc.runs {
			v, ok := pc.runs[i].Value(m)
			if !ok {
				return nil, false
			}
			xs = append(xs, v)
		}
		return xs, true
	}, pc.taken())
	if !more {
		pc.stopped = why
	}
	return more
}

// wantsMore is repeat = "auto"'s question for a cell that has its minimum
// and n runs: does any gated metric want another repeat? samples gives a
// metric's values so far (false when a run lacks it: not gated). The
// answer is no at max_repeat and once the run's GPU time (a CPU
// server's server time) reaches max_gpu_time: on a CPU server (no GPU)
// its server time is what max_gpu_time counts (docs/method.md#gpu-time).
// why says which (or what decided the metrics).
func (r *run) wantsMore(ref vocab.CellRef, samples func(metric.Metric) ([]float64, bool), n int) (bool, *result.RepeatStop) {
	m := r.measure()
	if n >= m.MaxRepeat {
		return false, &result.RepeatStop{Rule: result.StopMaxRepeat, MaxRepeat: m.MaxRepeat}
	}
	if budget := time.Duration(m.MaxGPUTimeS * float64(time.Second)); budget > 0 {
		spent := r.cfg.Plan.GPUTime(r.serverUp())
		if r.cpuServer() {
			spent = r.serverUp()
		}
		if spent >= budget {
			return false, &result.RepeatStop{Rule: result.StopBudget, BudgetS: m.MaxGPUTimeS, SpentS: spent.Round(time.Second).Seconds(), CPU: r.cpuServer()}
		}
	}
	var looks []result.MetricLook
	for _, gated := range r.gatedMetrics(ref.Phase) {
		xs, ok := samples(gated)
		if !ok {
			continue
		}
		l := r.stop.Look(r.baselineSamples(ref, gated), xs, gated.HigherIsBetter)
		if !l.Stop {
			return true, nil
		}
		looks = append(looks, l.Record(gated.Name))
	}
	if len(looks) == 0 {
		return false, &result.RepeatStop{Rule: result.StopNoGatedMetric}
	}
	return false, &result.RepeatStop{Rule: result.StopLooks, Looks: looks}
}

// baselineSamples are the -baseline's samples of metric m in cell ref (its
// one value when it was not repeated); nil without a baseline or when it
// did not measure the cell: the cell then stops on its own precision.
func (r *run) baselineSamples(ref vocab.CellRef, m metric.Metric) []float64 {
	b := r.cfg.Baseline
	if b == nil {
		return nil
	}
	switch ref.Phase {
	case vocab.PhasePrefill:
		if c, ok := b.PrefillCell(ref.Context); ok && c.Status.Measured() {
			if xs := c.Samples[m.Name]; len(xs) > 0 {
				return xs
			}
			if v, ok := c.Value(m); ok {
				return []float64{v}
			}
		}
	case vocab.PhaseDecode:
		if c, ok := b.DecodeCell(ref.Matrix, ref.Context, ref.Concurrency); ok && c.Status.Measured() {
			if xs := c.Samples[m.Name]; len(xs) > 0 {
				return xs
			}
			if v, ok := c.Value(m); ok {
				return []float64{v}
			}
		}
	}
	return nil
}

// finishDecode is cell pc as recorded once its repeats are taken: the
// unrunnable or failed cell, the partial cell of a repeat that failed
// after others (partialRepeats), or the combined runs, with the time the
// server was busy for them, its GPU time and the design.
func (r *run) finishDecode(pc *pendingCell) result.DecodeCell {
	ref := pc.ref
	var c result.DecodeCell
	switch {
	case pc.final != nil:
		c = *pc.final
	case pc.failedWhy != "" && len(pc.runs) == 0:
		// Only runs left out before the one that failed: an error, which
		// keeps the last of them for the record.
		c = *pc.lastExcluded
		c.Status = vocab.StatusError
		c.Reasons, c.Reason = r.because(result.CellReason{Code: result.ReasonRepeatFailedLeftOut,
			Figures: map[string]float64{result.FigRepeat: float64(pc.failedAt), result.FigOf: float64(r.plannedRepeats()), result.FigLeftOut: float64(len(pc.excluded))},
			Names:   map[string]string{result.NameCause: pc.failedWhy, result.NameLastLeftOut: pc.excluded[len(pc.excluded)-1].Reason}})
	case pc.failedWhy != "":
		c = r.partialRepeats(pc.runs, pc.failedAt, r.plannedRepeats(), pc.failedWhy)
	case len(pc.runs) == 0 && pc.lastExcluded != nil:
		c = r.allExcluded(*pc.lastExcluded, pc.excluded, r.repeated())
	default:
		c = combineDecode(pc.runs)
	}
	if r.repeated() {
		c.Excluded = pc.excluded
	}
	c.Environment = pc.envs
	c.Matrix, c.Context, c.Concurrency = ref.MatrixLabel(), ref.Context, ref.Concurrency
	if c.Status != vocab.StatusOverCapacity {
		c.ElapsedS = measure.Round(pc.busy.Seconds(), 2)
		c.GPUSeconds = r.gpuSeconds(pc.busy)
	}
	if len(pc.runs) > 1 {
		c.Design = r.design(ref.Phase, pc.boots, pc.stopped, c.Samples, pc.busy/time.Duration(len(pc.runs)))
	}
	return c
}

// plannedRepeats is the repeats a cell is planned: repeat, or
// repeat = "auto"'s minimum.
func (r *run) plannedRepeats() int { return max(r.measure().Repeat, 1) }

// maxRepeats is the most repeats a cell may get: max_repeat with
// repeat = "auto", else plannedRepeats.
func (r *run) maxRepeats() int {
	if m := r.measure(); m.RepeatAuto {
		return m.MaxRepeat
	}
	return r.plannedRepeats()
}

// repeated says whether a matrix cell is measured more than once. Its
// runs are then spaced by other cells' (rounds, boots), so its test is
// announced when its repeats are all taken, just before its result, as
// go test prints one test after another; each repeat says it ended in a
// note of its own (RepeatMeasured).
func (r *run) repeated() bool { return r.measure().Repeat > 1 || r.measure().RepeatAuto }

// design is the RepeatDesign of a cell of phase whose samples were taken
// in boots (nil with one boot), stopped as stopped says; perRepeat is a
// repeat's mean cost, for the boot-level sizing of its gated metrics
// (compare.BootLevels).
func (r *run) design(phase vocab.Phase, boots []int, stopped *result.RepeatStop, samples map[string][]float64, perRepeat time.Duration) *result.RepeatDesign {
	d := &result.RepeatDesign{Stop: stopped}
	if r.boots() > 1 {
		d.Boots = boots
		d.Levels = map[string]result.Levels{}
		for _, m := range r.gatedMetrics(phase) {
			if lv, ok := compare.BootLevels(samples[m.Name], boots, r.bootCost(), perRepeat, r.tolerance(), r.alpha()); ok {
				d.Levels[m.Name] = lv
			}
		}
	}
	if d.Stop == nil && d.Boots == nil {
		return nil
	}
	return d
}

// recordPartials records every cell that has runs but was not recorded:
// the run ended (why) before their repeats were all taken
// (docs/method.md#repeats). They are errors keeping the runs measured.
func (r *run) recordPartials(why string) error {
	var errs []error
	for _, ref := range r.cfg.Plan.Cells() {
		pc, ok := r.pending[ref]
		if !ok || pc.recorded {
			continue
		}
		switch {
		case len(pc.prefills) > 0:
			if pc.failedWhy == "" {
				pc.failedAt, pc.failedWhy = len(pc.prefills)+1, why
			}
			errs = append(errs, r.recordPrefill(r.finishPrefill(pc)))
		case pc.taken() > 0:
			if pc.failedWhy == "" {
				pc.failedAt, pc.failedWhy = pc.taken()+1, why
			}
			errs = append(errs, r.recordDecode(r.finishDecode(pc)))
		default:
			continue
		}
		pc.recorded = true
	}
	return errors.Join(errs...)
}

// finishPrefill is prefill cell pc as recorded: its runs combined (the
// first that errored, if one did; partial when the run ended before its
// repeats were all taken), with its busy time, GPU time and design.
func (r *run) finishPrefill(pc *pendingCell) result.PrefillCell {
	kept, boots, excluded := pc.keptPrefills()
	var c result.PrefillCell
	switch {
	case len(kept) == 0 && len(excluded) > 0:
		// None counted (docs/method.md#unmeasurable): the last run taken,
		// unmeasurable.
		c = pc.prefills[len(pc.prefills)-1]
		c.Status = vocab.StatusUnmeasurable
		if r.repeated() {
			c.Reasons, c.Reason = r.because(noneMeasured(excluded)...)
		}
	default:
		c = combinePrefill(kept)
	}
	if pc.failedWhy != "" && c.Status != vocab.StatusError {
		c.Status = vocab.StatusError
		c.Reasons, c.Reason = r.because(repeatFailed(pc.failedAt, r.plannedRepeats(), len(kept), pc.failedWhy))
	}
	if r.repeated() {
		c.Excluded = excluded
	}
	c.Environment = pc.envs
	var busy time.Duration
	for _, x := range pc.prefills {
		busy += time.Duration(x.ElapsedS * float64(time.Second))
	}
	c.ElapsedS = measure.Round(busy.Seconds(), 2)
	c.GPUSeconds = r.gpuSeconds(busy)
	if len(kept) > 1 {
		c.Design = r.design(vocab.PhasePrefill, boots, pc.stopped, c.Samples, busy/time.Duration(len(pc.prefills)))
	}
	return c
}

// keptPrefills are prefill cell pc's runs that count, with the boot of
// each, and those left out (docs/method.md#unmeasurable), numbered among
// all its runs.
func (pc *pendingCell) keptPrefills() (kept []result.PrefillCell, boots []int, excluded []result.ExcludedRun) {
	for i, x := range pc.prefills {
		if i < len(pc.prefillOut) && pc.prefillOut[i].reason != "" {
			excluded = append(excluded, result.ExcludedRun{Repeat: i + 1, Status: x.Status, Reason: pc.prefillOut[i].reason, Reasons: pc.prefillOut[i].reasons})
			continue
		}
		kept = append(kept, x)
		boots = append(boots, pc.boots[i])
	}
	return kept, boots, excluded
}

// watchPrefill is the measure.PrefillRun of prefill cell pc: each run
// between two readings of the machine (watchMachine), numbered after the
// runs taken before and the taken calls before it in the same
// measure.Prefill call (*taken), its environment kept, and why it is left
// out of the cell appended to *out ("" kept; docs/method.md#unmeasurable):
// an unmeasurable run (the client behind the server's clock, or the
// server starved), or with repeat = "auto" a run whose machine moved. A
// moved run that is kept is said in a warning.
func (r *run) watchPrefill(pc *pendingCell, taken *int, out *[]exclusion) measure.PrefillRun {
	return func(run func() (result.PrefillCell, error)) (result.PrefillCell, error) {
		number := 0
		if r.repeated() {
			number = len(pc.prefills) + *taken + 1
		}
		var c result.PrefillCell
		var err error
		mw := r.watchMachine(number, pc.machine, func() { c, err = run() })
		pc.machine = &mw.next
		*taken++
		if err != nil {
			return c, err
		}
		pc.envs = append(pc.envs, mw.env)
		if mw.starved != nil && c.Status.Measured() {
			c.Status = vocab.StatusUnmeasurable
			c.Reasons, c.Reason = r.because(*mw.starved)
		}
		why, left := r.leftOut(c.Status, c.Reasons, c.Reason, mw.moved)
		if !left && mw.moved != nil && c.Status.Measured() {
			w := *mw.moved
			w.Summary = pc.ref.Name() + ": " + w.Summary
			r.warn(w)
		}
		*out = append(*out, why)
		return c, nil
	}
}

// gatedMetrics are the metrics repeat = "auto" decides a cell on: those
// the comparison reads, the Policy's Metrics of phase when it names some
// (bisect -metric), else compare.DefaultMetrics.
func (r *run) gatedMetrics(phase vocab.Phase) []metric.Metric {
	var out []metric.Metric
	for _, name := range r.cfg.Policy.Metrics {
		if m, ok := metric.Lookup(phase, name); ok {
			out = append(out, m)
		}
	}
	if len(r.cfg.Policy.Metrics) > 0 {
		return out
	}
	return compare.DefaultMetrics(phase)
}

// prefillStep sends the step's cold prefill requests: one warm-up when
// the cell is not recorded (or is done: recorded, or failed in an
// earlier boot), else this boot's repeats of the cell, recorded at the
// run's last boot.
func (r *run) prefillStep(ctx context.Context, ctxLen int, prompt requests.Prompt, salt string, record bool) error {
	ref := vocab.CellRef{Phase: vocab.PhasePrefill, Context: ctxLen}
	pc := r.pendingOf(ref)
	if !record || pc.recorded || pc.failedWhy != "" {
		_, err := r.meter().Prefill(ctx, ctxLen, prompt, salt, false, 1, 1, 0, nil, nil)
		return err
	}
	if len(pc.prefills) == 0 && !r.repeated() {
		r.observer.CellStart(ref)
	}
	n := r.repeatsThisBoot()
	limit := n
	var more func([]result.PrefillCell) bool
	var taken int
	var out []exclusion // why each run of this call is left out (none: kept)
	if m := r.measure(); m.RepeatAuto {
		limit = max(n, m.MaxRepeat)
		more = func(runs []result.PrefillCell) bool {
			var all []result.PrefillCell
			for i, x := range pc.prefills {
				if pc.prefillOut[i].reason == "" {
					all = append(all, x)
				}
			}
			keptNow := 0
			for i, x := range runs {
				if i < len(out) && out[i].reason == "" {
					all = append(all, x)
					keptNow++
				}
			}
			if keptNow < n && len(pc.prefills)+len(runs) < m.MaxRepeat {
				return true // an excluded run is replaced (docs/method.md#unmeasurable)
			}
			ok, why := r.wantsMore(ref, func(gated metric.Metric) ([]float64, bool) {
				var xs []float64
				for i := range all {
					v, ok := all[i].Value(gated)
					if !ok {
						return nil, false
					}
					xs = append(xs, v)
				}
				return xs, true
			}, len(pc.prefills)+len(runs))
			if !ok {
				pc.stopped = why
			}
			return ok
		}
	}
	first := len(pc.prefills) + 1
	if r.measure().Repeat <= 1 && !r.measure().RepeatAuto {
		first = 0 // one run: not a repeat
	}
	runs, err := r.meter().Prefill(ctx, ctxLen, prompt, salt, true, n, limit, first, more, r.watchPrefill(pc, &taken, &out))
	for i, c := range runs {
		if c.Status == vocab.StatusError && pc.failedWhy == "" {
			pc.failedAt, pc.failedWhy = len(pc.prefills)+1, c.Reason
		}
		var why exclusion
		if i < len(out) {
			why = out[i]
		}
		pc.prefills = append(pc.prefills, c)
		pc.prefillOut = append(pc.prefillOut, why)
		pc.boots = append(pc.boots, r.bootNo)
	}
	if err != nil && len(pc.prefills) == 0 && r.repeated() {
		r.observer.CellStart(ref) // announced as it ends, as a decode cell is above
	}
	if err != nil || !r.lastBoot() {
		return err
	}
	pc.recorded = true
	return r.recordPrefill(r.finishPrefill(pc))
}

// combineRejections is the repeats' refused requests together
// (docs/method.md#rejections): the client's and the server's counts
// summed, the server's only when every run has it; nil when no run has
// any.
func combineRejections(runs []result.DecodeCell) *result.Rejections {
	var out result.Rejections
	var server int64
	seen, serverAll := false, true
	for _, x := range runs {
		r := x.Rejections
		if r == nil {
			// A run without refusals on either side adds 0 to each (its
			// server's counter, the same server's, moved by 0 or is
			// absent in every run).
			continue
		}
		seen = true
		out.Client += r.Client
		out.Unanswered += r.Unanswered
		if r.Server == nil {
			serverAll = false
			continue
		}
		server += *r.Server
		for reason, n := range r.ByReason {
			if out.ByReason == nil {
				out.ByReason = map[string]int64{}
			}
			out.ByReason[reason] += n
		}
	}
	if !seen {
		return nil
	}
	if serverAll {
		out.Server = &server
	}
	return &out
}

// combinePolling is the repeats' scrapes together: the mean over every
// scrape, the longest; nil when no repeat scraped.
func combinePolling(runs []result.DecodeCell) *result.Polling {
	var out result.Polling
	var sum float64
	for _, x := range runs {
		if p := x.Polling; p != nil {
			out.Scrapes += p.Scrapes
			sum += p.MeanMs * float64(p.Scrapes)
			out.MaxMs = max(out.MaxMs, p.MaxMs)
		}
	}
	if out.Scrapes == 0 {
		return nil
	}
	out.MeanMs = math.Round(sum/float64(out.Scrapes)*1000) / 1000
	return &out
}

// statusRank orders the statuses of repeated runs of one cell from best to
// worst: valid, queued, over_capacity, error.
func statusRank(s vocab.Status) int {
	switch s {
	case vocab.StatusValid:
		return 0
	case vocab.StatusQueued:
		return 1
	case vocab.StatusOverCapacity:
		return 2
	}
	return 3
}

// excludes says whether run c of a decode cell is left out of the cell's
// figures, and why (docs/method.md#unmeasurable): an unmeasurable run
// always; a run whose machine moved (moved, else nil) with
// repeat = "auto", which replaces it. Otherwise a measured run keeps the
// moved warning among its own.
func (r *run) excludes(c *result.DecodeCell, moved *warning.Warning) (exclusion, bool) {
	why, out := r.leftOut(c.Status, c.Reasons, c.Reason, moved)
	if !out && moved != nil && c.Status.Measured() {
		c.Warnings = append(c.Warnings, *moved)
	}
	return why, out
}

// exclusion is why a run is left out of its cell's figures: the
// sentence and, where they are known, the reasons as values (an
// ExcludedRun's Reason and Reasons); none when the run is kept.
type exclusion struct {
	reason  string
	reasons []result.CellReason
}

// leftOut says whether a run of status st (reasons and reason its own) is
// left out of its cell's figures, and why: an unmeasurable run always; a
// measured run whose machine moved (moved, else nil) with
// repeat = "auto", which replaces it.
func (r *run) leftOut(st vocab.Status, reasons []result.CellReason, reason string, moved *warning.Warning) (exclusion, bool) {
	if st == vocab.StatusUnmeasurable {
		return exclusion{reason: reason, reasons: reasons}, true
	}
	if moved == nil || !st.Measured() || !r.measure().RepeatAuto {
		return exclusion{}, false
	}
	return exclusion{reason: moved.Summary, reasons: []result.CellReason{{Code: result.ReasonMachineMoved,
		Figures: map[string]float64{result.FigBefore: moved.Figures[warning.FigBefore], result.FigAfter: moved.Figures[warning.FigAfter], result.FigBound: moved.Figures[warning.FigBound]},
		Names:   map[string]string{result.NameKind: moved.Subject}}}}, true
}

// allExcluded is a decode cell none of whose runs counted: the last run
// taken, unmeasurable, with the reasons of every excluded run when it was
// repeated.
func (r *run) allExcluded(last result.DecodeCell, excluded []result.ExcludedRun, repeated bool) result.DecodeCell {
	c := last
	c.Status = vocab.StatusUnmeasurable
	if !repeated || len(excluded) == 0 {
		return c
	}
	c.Reasons, c.Reason = r.because(noneMeasured(excluded)...)
	return c
}

// noneMeasured are the reasons of a cell none of whose runs counted (at
// least one): every excluded run's, the first with their count.
func noneMeasured(excluded []result.ExcludedRun) []result.CellReason {
	reasons := make([]result.CellReason, len(excluded))
	for i, x := range excluded {
		reasons[i] = result.CellReason{Code: result.ReasonRunLeftOut,
			Figures: map[string]float64{result.FigRepeat: float64(x.Repeat)}, Names: map[string]string{result.NameCause: x.Reason}}
	}
	reasons[0].Code, reasons[0].Figures[result.FigRuns] = result.ReasonNoneMeasured, float64(len(excluded))
	return reasons
}
