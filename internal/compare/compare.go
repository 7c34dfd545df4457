// Package compare compares two measured runs, once: Build lines up the
// matrix of run A with run B for each metric and decides per cell whether
// the change is regressed, within the tolerance (unchanged or improved) or
// inconclusive (direction from the metric table, metric.Table: higher is
// better for throughputs, lower for latencies) from the Hodges–Lehmann
// interval of the change (shift.go) when both sides have samples, finds the
// cells A measured and B lost, compares the runs' measurement settings
// (settings.go), decides traffic cells from their requests, paired by
// schedule index when both runs sent one schedule (traffic.go, paired.go),
// and merges it all into one Comparison with its
// outcome and exit code; BuildPlanned is the same check before a run.
// Nothing here renders: internal/views writes a Comparison as `slogate
// diff`'s text, Markdown and JSON, and as -baseline's verdicts. The
// decisions are docs/method.md#comparing-runs.
package compare

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/suggest"
	"github.com/slogate/slogate/internal/vocab"
)

// defaultMetrics are the metrics of each phase compared when
// Policy.Metrics is empty: the headline throughput and latencies, to which
// Build adds every metric an assert or expect of either run read
// (assertedMetrics).
var defaultMetrics = map[vocab.Phase][]string{
	vocab.PhaseDecode:  {metric.TotalTPS, metric.TTFTMs, metric.TBTMs},
	vocab.PhasePrefill: {metric.TPS},
}

// DefaultTolerance is the relative change below which a cell is unchanged.
const DefaultTolerance = 0.05

// InconclusivePolicy is what an inconclusive comparison does to the gate
// (-inconclusive fail|pass).
type InconclusivePolicy int

// Policies.
const (
	// InconclusiveFail: an inconclusive cell fails the gate with outcome
	// inconclusive (exit 4 when nothing regressed).
	InconclusiveFail InconclusivePolicy = iota
	// InconclusivePass: the team accepts the risk; an inconclusive cell
	// passes unless its estimated change is beyond the tolerance.
	InconclusivePass
)

// InconclusivePolicies are the words of -inconclusive, the default first.
var InconclusivePolicies = []string{"fail", "pass"}

// ParseInconclusive reads a word of InconclusivePolicies.
func ParseInconclusive(s string) (InconclusivePolicy, error) {
	switch s {
	case "fail":
		return InconclusiveFail, nil
	case "pass":
		return InconclusivePass, nil
	}
	return 0, fmt.Errorf("-inconclusive is fail or pass, not %q", s)
}

// Change classifies one compared cell.
type Change int

// Changes.
const (
	// Unchanged: both measured, within the tolerance.
	Unchanged Change = iota
	// Improved: beyond the tolerance in the better direction.
	Improved
	// Regressed: beyond the tolerance in the worse direction.
	Regressed
	// Inconclusive: the interval of the change straddles the tolerance's
	// edge: the data neither show a regression nor rule one out
	// (Shift.Decide). Only a statistical comparison is inconclusive.
	Inconclusive
	// OnlyA: A has a value and B measured the cell but did not report the
	// metric.
	OnlyA
	// OnlyB: B has a value, A does not (a cell only B measured).
	OnlyB
	// Neither: the cell is recorded but neither side has a value.
	Neither
	// Lost: A measured the cell and B did not: over capacity, absent or not
	// run. A regression: the upgrade lost what A could do.
	Lost
	// Errored: A measured the cell and B could not (an error): neither
	// better nor worse, an infrastructure problem.
	Errored
	// Unmeasurable: a side's client could not measure the cell
	// (docs/method.md#unmeasurable): not compared, neither passed nor
	// regressed: Inconclusive.
	Unmeasurable
)

var changeNames = [...]string{"unchanged", "improved", "regressed", "inconclusive", "A only", "B only", "neither", "lost", "errored", "unmeasurable"}

var changeKeys = [...]string{"unchanged", "improved", "regressed", "inconclusive", "baseline_only", "now_only", "neither", "lost", "errored", "unmeasurable"}

// Key is the change as a JSON word (results.json's comparison, diff
// -format json): "regressed", "baseline_only", "now_only", …
func (c Change) Key() string {
	if c < 0 || int(c) >= len(changeKeys) {
		return fmt.Sprintf("change_%d", int(c))
	}
	return changeKeys[c]
}

// String names the change: "regressed", "inconclusive", "A only", …
func (c Change) String() string {
	if c < 0 || int(c) >= len(changeNames) {
		return fmt.Sprintf("change(%d)", int(c))
	}
	return changeNames[c]
}

// Side is one run's view of a cell for one metric.
type Side struct {
	// Present is false when the run has no such cell at all.
	Present bool
	Status  vocab.Status // the cell's status in this run
	Reason  string       // why the cell has no numbers, when it has none
	// Value is the metric; meaningful only when HasValue, which is false
	// for a cell that was not measured or did not report the metric.
	Value    float64
	HasValue bool // Value is set
	// Spread is [min, max] over repeats; set only when Repeats > 1 and the
	// run recorded a spread for this metric.
	Spread    [2]float64
	HasSpread bool // Spread is set
	// Repeats is the number of runs combined into Value (1 when the cell
	// was not repeated).
	Repeats int
	// Samples are the values of every repeat when the run recorded them
	// (Repeats > 1); nil otherwise.
	Samples []float64
	// Excluded is how many of the cell's runs the run left out of Value
	// and Samples: runs its client could not measure, or whose machine
	// moved under repeat = "auto" (docs/method.md#unmeasurable).
	Excluded int
}

// Cell is one compared cell of one metric.
type Cell struct {
	Ref  vocab.CellRef // the cell compared
	A, B Side          // the reference run and the new run
	// Delta is the change of B from A: the Hodges–Lehmann estimate of
	// B ÷ A − 1 when a Test decided the cell, else (B − A) ÷ |A|; NaN
	// unless both sides have values and A ≠ 0.
	Delta  float64
	Change Change // the decision for this cell
	// Test is the comparison of the samples that decided the cell; nil
	// when the tolerance rule alone decided (too few samples to attain α)
	// or a side has no value.
	Test *Test
	// Outcome is what the cell does to the gate: Fail when regressed or
	// lost, Error when errored, Inconclusive when inconclusive (Pass with
	// -inconclusive pass, unless Delta is beyond the tolerance: Fail),
	// Pass otherwise.
	Outcome vocab.Outcome
}

// EstimateBeyond reports whether an inconclusive cell's estimated change is
// beyond the tolerance on the worse side: it fails even with -inconclusive
// pass.
func (c *Cell) EstimateBeyond(tolerance float64, higherIsBetter bool) bool {
	if c.Test == nil {
		return false
	}
	worse, _ := boundary(tolerance, higherIsBetter)
	if higherIsBetter {
		return c.Test.Ratio < worse
	}
	return c.Test.Ratio > worse
}

// Table is one metric's matrix: rows are contexts, columns concurrency
// levels (a single column for prefill).
type Table struct {
	Phase       vocab.Phase   // prefill or decode
	Matrix      string        // decode matrix label; "" for prefill
	Metric      metric.Metric // the metric compared (its tolerance, α and policy are the Comparison's)
	Contexts    []int         // row keys, ascending: every context either run has
	Concurrency []int         // column keys, ascending; nil for prefill
	// Cells holds every cell recorded by either run, row-major.
	Cells []Cell
}

// Lookup returns the cell at ctx × conc (conc is ignored for prefill).
func (t *Table) Lookup(ctx, conc int) (*Cell, bool) {
	for i := range t.Cells {
		c := &t.Cells[i]
		if c.Ref.Context == ctx && (t.Phase == vocab.PhasePrefill || c.Ref.Concurrency == conc) {
			return c, true
		}
	}
	return nil, false
}

// Title names the table: "decode total_tps" or "prefill tps".
func (t *Table) Title() string {
	if t.Phase == vocab.PhasePrefill {
		return "prefill " + t.Metric.Name
	}
	return t.Matrix + " " + t.Metric.Name
}

// decide classifies the change from a to b of a metric, within a relative
// tolerance of |a|. It is the one place where "within tolerance" is decided.
// The margin is relative to A, so that the decision agrees exactly with the
// Δ% printed next to it (docs/method.md#repeats) and with
// expect's rule "fail when measured < expected × (1 − tolerance)": a printed
// −4.9% is within a 5% tolerance. Infinite values are within tolerance only
// of themselves.
func decide(a, b, tolerance float64, higherIsBetter bool) Change {
	if withinTolerance(a, b, tolerance) {
		return Unchanged
	}
	if (b > a) == higherIsBetter {
		return Improved
	}
	return Regressed
}

// withinTolerance reports whether |b − a| ≤ tolerance × |a| (or a = b).
func withinTolerance(a, b, tolerance float64) bool {
	if a == b {
		return true
	}
	if math.IsInf(a, 0) || math.IsInf(b, 0) {
		return false
	}
	return math.Abs(b-a) <= tolerance*math.Abs(a)
}

// metricsFor returns the metrics of phase to compare: those of names that
// the phase has, or when names is empty the phase's defaults followed by
// those of asserted (assertedMetrics) the defaults lack, in the metric
// table's order.
func metricsFor(phase vocab.Phase, names []string, asserted map[vocab.Phase][]string) []metric.Metric {
	if len(names) == 0 {
		names = defaultMetrics[phase]
		for _, n := range asserted[phase] {
			if !slices.Contains(names, n) {
				names = append(slices.Clip(names), n)
			}
		}
	}
	var out []metric.Metric
	for _, n := range names {
		if m, ok := metric.Lookup(phase, n); ok {
			out = append(out, m)
		}
	}
	return out
}

// ruleWord is a word of a verdict's rule that may name a metric:
// "per_request_tps" in `decode["8K"][1].per_request_tps >= 304`.
var ruleWord = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)

// assertedMetrics are the prefill and decode metrics the assert and expect
// verdicts of runs read, by phase, each once in the order first read: a
// word of a verdict's rule that names a metric of the phase of a cell the
// verdict read. A comparison compares them by default, so that a metric an
// SLO is written on (per_request_tps, ttft_ms_p99) is never left out of the
// gate (docs/method.md#comparing-runs).
func assertedMetrics(runs ...*result.Results) map[vocab.Phase][]string {
	out := map[vocab.Phase][]string{}
	for _, r := range runs {
		if r == nil {
			continue
		}
		for _, v := range r.Verdicts {
			if v.Kind != vocab.KindAssert && v.Kind != vocab.KindExpect {
				continue
			}
			for _, word := range ruleWord.FindAllString(v.Rule, -1) {
				for _, c := range v.Cells {
					if c.Phase != vocab.PhaseDecode && c.Phase != vocab.PhasePrefill {
						continue
					}
					if _, ok := metric.Lookup(c.Phase, word); ok && !slices.Contains(out[c.Phase], word) {
						out[c.Phase] = append(out[c.Phase], word)
					}
				}
			}
		}
	}
	return out
}

// CheckMetrics returns an error naming the first metric that exists in no
// phase, with the names that do.
func CheckMetrics(names []string) error {
	for _, n := range names {
		_, p := metric.Lookup(vocab.PhasePrefill, n)
		_, d := metric.Lookup(vocab.PhaseDecode, n)
		if !p && !d {
			all := map[string]bool{}
			for _, phase := range []vocab.Phase{vocab.PhasePrefill, vocab.PhaseDecode} {
				for _, name := range metric.Names(phase) {
					all[name] = true
				}
			}
			var list []string
			for k := range all {
				list = append(list, k)
			}
			sort.Strings(list)
			msg := fmt.Sprintf("unknown metric %q", n)
			if s := suggest.Name(n, list); s != "" {
				msg += fmt.Sprintf(" (did you mean %s?)", s)
			}
			return fmt.Errorf("%s; the metrics are %s", msg, strings.Join(list, ", "))
		}
	}
	return nil
}

// buildTables lines up a and b and returns one table per matrix and
// metric: prefill metrics first (when either run has prefill cells), then
// each decode matrix in order of first appearance. p.Alpha is resolved;
// design is B's sequential design when B was measured with repeat =
// "auto" (its cells are decided at the design's level, so that the
// verdict is the one the design reached), else nil.
func buildTables(a, b *result.Results, p Policy, design *Sequential) []Table {
	var tables []Table
	asserted := assertedMetrics(a, b)
	for phase, names := range p.Asserted {
		for _, n := range names {
			if !slices.Contains(asserted[phase], n) {
				asserted[phase] = append(asserted[phase], n)
			}
		}
	}
	if len(a.Prefill)+len(b.Prefill) > 0 {
		ctxs := unionInts(prefillContexts(a), prefillContexts(b))
		for _, m := range metricsFor(vocab.PhasePrefill, p.Metrics, asserted) {
			t := Table{Phase: vocab.PhasePrefill, Metric: m, Contexts: ctxs}
			for _, ctx := range ctxs {
				ref := vocab.CellRef{Phase: vocab.PhasePrefill, Context: ctx}
				ca, _ := a.PrefillCell(ctx)
				cb, _ := b.PrefillCell(ctx)
				t.Cells = append(t.Cells, decideCell(ref, prefillSide(ca, m), prefillSide(cb, m), m, p, design))
			}
			tables = append(tables, t)
		}
	}
	for _, label := range matrixLabels(a, b) {
		ctxs := unionInts(decodeAxis(a, label, true), decodeAxis(b, label, true))
		concs := unionInts(decodeAxis(a, label, false), decodeAxis(b, label, false))
		for _, m := range metricsFor(vocab.PhaseDecode, p.Metrics, asserted) {
			t := Table{Phase: vocab.PhaseDecode, Matrix: label, Metric: m, Contexts: ctxs, Concurrency: concs}
			for _, ctx := range ctxs {
				for _, conc := range concs {
					ca, okA := a.DecodeCell(label, ctx, conc)
					cb, okB := b.DecodeCell(label, ctx, conc)
					if !okA && !okB {
						continue
					}
					ref := vocab.CellRef{Phase: vocab.PhaseDecode, Matrix: label, Context: ctx, Concurrency: conc}
					t.Cells = append(t.Cells, decideCell(ref, decodeSide(ca, m), decodeSide(cb, m), m, p, design))
				}
			}
			tables = append(tables, t)
		}
	}
	return tables
}

// decideCell fills Delta, Change, Test and Outcome for one cell
// (docs/method.md#comparing-runs):
//
//   - both sides measured, with samples enough to attain α (4 + 4 at 0.05,
//     at the extreme 3 + 3): the Hodges–Lehmann interval of the change
//     decides regressed, within the tolerance (unchanged or improved) or
//     inconclusive;
//   - both measured, fewer samples: the tolerance rule decides on the
//     values alone, not statistically; nothing is inconclusive;
//   - A measured, B errored: Errored; A measured, B over capacity, absent or
//     not run: Lost;
//   - a side unmeasurable (docs/method.md#unmeasurable): Unmeasurable, not
//     compared;
//   - a value on one side only otherwise: OnlyA or OnlyB, not a failure.
func decideCell(ref vocab.CellRef, a, b Side, m metric.Metric, p Policy, design *Sequential) Cell {
	c := Cell{Ref: ref, A: a, B: b, Delta: math.NaN()}
	switch {
	case a.HasValue && b.HasValue:
		if a.Value != 0 {
			c.Delta = (b.Value - a.Value) / math.Abs(a.Value)
		}
		alpha := p.Resolved().Alpha
		if design != nil {
			alpha = design.Level(len(a.Samples))
		}
		if t, change, ok := testCell(a.Samples, b.Samples, m.HigherIsBetter, p.Tolerance, alpha); ok {
			c.Test, c.Change, c.Delta = &t, change, t.Change()
		} else {
			c.Change = decide(a.Value, b.Value, p.Tolerance, m.HigherIsBetter)
		}
	// A's cell ran, even when its client could not measure it: B's error
	// or lost capacity is said as such, never hidden as "not compared".
	case aRan(a) && b.Present && b.Status == vocab.StatusError:
		c.Change = Errored
	case aRan(a) && b.Status != vocab.StatusUnmeasurable && !(b.Present && b.Status.Measured()):
		c.Change = Lost
	case a.Status == vocab.StatusUnmeasurable || b.Status == vocab.StatusUnmeasurable:
		c.Change = Unmeasurable
	case a.HasValue:
		c.Change = OnlyA
	case b.HasValue:
		c.Change = OnlyB
	default:
		c.Change = Neither
	}
	c.Outcome = cellOutcome(&c, m, p)
	return c
}

// aRan reports whether side a's cell ran on its server: measured, or
// measured by a client that could not keep up (unmeasurable).
func aRan(a Side) bool { return a.HasValue || a.Status == vocab.StatusUnmeasurable }

// cellOutcome is what a decided cell does to the gate (Cell.Outcome).
func cellOutcome(c *Cell, m metric.Metric, opt Policy) vocab.Outcome {
	switch c.Change {
	case Errored:
		return vocab.Error
	case Unmeasurable:
		return vocab.Inconclusive
	case Regressed, Lost:
		return vocab.Fail
	case Inconclusive:
		switch {
		case opt.Inconclusive == InconclusiveFail:
			return vocab.Inconclusive
		case c.EstimateBeyond(opt.Tolerance, m.HigherIsBetter):
			return vocab.Fail
		}
	}
	return vocab.Pass
}

// prefillSide is one run's view of its prefill cell c (nil = absent) for metric m.
func prefillSide(c *result.PrefillCell, m metric.Metric) Side {
	if c == nil {
		return Side{}
	}
	v, ok := c.Value(m)
	s := presentSide(c.Status, c.Reason, c.Repeats, c.Spread, c.Samples, m.Name, v, ok)
	s.Excluded = len(c.Excluded)
	return s
}

// decodeSide is one run's view of its decode cell c (nil = absent) for metric m.
func decodeSide(c *result.DecodeCell, m metric.Metric) Side {
	if c == nil {
		return Side{}
	}
	v, ok := c.Value(m)
	s := presentSide(c.Status, c.Reason, c.Repeats, c.Spread, c.Samples, m.Name, v, ok)
	s.Excluded = len(c.Excluded)
	return s
}

// presentSide is the view of a recorded cell: its value when measured and
// the cell has the metric (hasValue), and its [min, max] spread and samples
// when it was repeated and the run recorded them for the metric.
func presentSide(st vocab.Status, reason string, repeats int, spreads map[string][2]float64, samples map[string][]float64, metric string, value float64, hasValue bool) Side {
	s := Side{Present: true, Status: st, Reason: reason, Repeats: max(repeats, 1)}
	if st.Measured() {
		s.Value, s.HasValue = value, hasValue
	}
	if repeats > 1 && s.HasValue {
		s.Spread, s.HasSpread = spreads[metric]
		if xs := samples[metric]; len(xs) == repeats {
			s.Samples = xs
		}
	}
	return s
}

// AnyRegressed reports whether any cell of any table regressed or was lost.
func AnyRegressed(tables []Table) bool {
	for _, t := range tables {
		for _, c := range t.Cells {
			if c.Change == Regressed || c.Change == Lost {
				return true
			}
		}
	}
	return false
}

// Outcome is the tables' result as a gate, the worst of their cells'
// (Cell.Outcome): Error when a cell A measured errored in B (an
// infrastructure problem, exit 3), else Fail when a cell regressed or was
// lost (exit 1), else Inconclusive when a cell could not be decided (exit
// 4; with -inconclusive pass only one whose estimate is beyond the
// tolerance fails, as Fail), else Pass. Improvements and cells only B
// measured never fail. Comparison.Outcome is the whole comparison's.
func Outcome(tables []Table) vocab.Outcome {
	o := vocab.Pass
	for _, t := range tables {
		for _, c := range t.Cells {
			o = vocab.Worst(o, c.Outcome)
		}
	}
	return o
}

// Summary counts the cells of every table by Change.
type Summary map[Change]int

// Summarize counts cells by change over all tables.
func Summarize(tables []Table) Summary {
	s := Summary{}
	for _, t := range tables {
		for _, c := range t.Cells {
			s[c.Change]++
		}
	}
	return s
}

func prefillContexts(r *result.Results) []int {
	var out []int
	for _, c := range r.Prefill {
		out = append(out, c.Context)
	}
	return out
}

// decodeAxis lists the contexts (ctx=true) or concurrency levels of matrix label.
func decodeAxis(r *result.Results, label string, ctx bool) []int {
	var out []int
	for _, c := range r.Decode {
		if c.Ref().MatrixLabel() != label {
			continue
		}
		if ctx {
			out = append(out, c.Context)
		} else {
			out = append(out, c.Concurrency)
		}
	}
	return out
}

// matrixLabels lists the decode matrix labels of a then b, first seen first.
func matrixLabels(a, b *result.Results) []string {
	out := a.MatrixLabels()
	for _, l := range b.MatrixLabels() {
		if !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return out
}

// unionInts merges two lists into one sorted list without duplicates.
func unionInts(a, b []int) []int {
	seen := map[int]bool{}
	var out []int
	for _, l := range [][]int{a, b} {
		for _, v := range l {
			if !seen[v] {
				seen[v] = true
				out = append(out, v)
			}
		}
	}
	sort.Ints(out)
	return out
}
