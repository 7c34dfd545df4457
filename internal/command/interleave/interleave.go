// Package interleave is `slogate interleave`: two builds of one server,
// differing by one spec variable or the container image as bisect names
// builds, measured in one run by booting them alternately in blocks — each
// block one boot of A and one of B in an order drawn from a seeded random
// generator — and every decode, prefill and traffic cell decided on the paired
// differences of the same block (compare.Blocks; both boots of a block
// replay one traffic schedule), so that a machine whose load changes
// during the run moves both sides of a block alike
// (docs/method.md#interleaved). Each boot is a results folder of its own,
// measured by the runner; the decisions are compare's, the lines views'.
package interleave

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/slogate/slogate/internal/assert"
	"github.com/slogate/slogate/internal/command/run"
	"github.com/slogate/slogate/internal/command/specload"
	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/judge"
	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/plan"
	"github.com/slogate/slogate/internal/report"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/runner"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/views"
	"github.com/slogate/slogate/internal/vocab"
)

// DefaultOutDir is the interleaved run's folder without -out.
const DefaultOutDir = "slogate-out/interleave"

// Defaults of the design: the blocks of a fixed design (and the first
// look of repeat = "auto"), the most blocks of repeat = "auto", and the
// repeats a boot takes under repeat = "auto".
const (
	DefaultBlocks    = 6
	DefaultMaxBlocks = 16
	AutoRepeats      = 2
)

// RecordFile is the comparison's record in the -out folder, ReportFile
// its report.
const (
	RecordFile = "interleave.json"
	ReportFile = "report.md"
)

// Options is one `slogate interleave`, its flags already read.
type Options struct {
	SpecPath string
	Vars     spec.Vars
	// A and B are the two builds; VarName the spec variable each sets
	// ("" replaces the server's container.image).
	A, B    string
	VarName string
	OutDir  string
	// Seed draws each block's order.
	Seed uint64
	// Blocks are the blocks of a fixed repeat, the first look's under
	// repeat = "auto"; MaxBlocks the most under repeat = "auto".
	Blocks, MaxBlocks int
	Sim               bool
	Duration          time.Duration
	Policy            compare.Policy
	Tool              string
	ForceStop         <-chan struct{}
	StreamIdleTimeout time.Duration
	Stdout, Stderr    io.Writer
	// Measure measures one boot; nil is the runner's (tests give a fake).
	Measure Measure
}

// Boot is one boot of one build in a block.
type Boot struct {
	Side  string // "A" or "B"
	Build string
	Block int // 1-based
	// Spec is the build's spec with the boot's measure settings; Plan its
	// decode, prefill and traffic cells still to decide.
	Spec *spec.Spec
	Plan *plan.Plan
	// Dir is the boot's results folder.
	Dir string
}

// Measure measures one boot: its results, or an error (the build did not
// start, the run was interrupted).
type Measure func(ctx context.Context, b Boot) (*result.Results, error)

// Record is interleave.json: the design, and a row per cell and gated
// metric with each block's values and the decision.
type Record struct {
	A       string `json:"a"`
	B       string `json:"b"`
	VarName string `json:"var_name,omitempty"`
	Seed    uint64 `json:"seed"`
	// Order is each block's order, "AB" or "BA".
	Order     []string      `json:"order"`
	Repeats   int           `json:"repeats_per_boot"`
	Blocks    int           `json:"blocks"`
	Boots     int           `json:"boots"`
	ServerS   float64       `json:"server_s"`
	Tolerance float64       `json:"tolerance"`
	Level     float64       `json:"level"`
	Rows      []Row         `json:"rows"`
	Outcome   vocab.Outcome `json:"outcome"`
	// Partial is true while blocks are still to be measured (the record
	// is written after every block) and when the run stopped before its
	// design was done, Stopped saying why: the rows are then what the
	// finished blocks decide (docs/method.md#interleaved).
	Partial bool   `json:"partial,omitempty"`
	Stopped string `json:"stopped,omitempty"`
	// VerdictsA and VerdictsB are the spec's asserts and expects checked
	// on each side's boots pooled (runner.Pool; the pooled results are
	// a/results.json and b/results.json): B's gate beside the
	// comparison, A's are reported (docs/method.md#interleaved).
	VerdictsA []result.Verdict `json:"verdicts_a,omitempty"`
	VerdictsB []result.Verdict `json:"verdicts_b,omitempty"`
	// Inconclusive is -inconclusive: "fail" or "pass".
	Inconclusive string `json:"inconclusive"`
	cells        []compare.BlockCell
}

// Row is one cell and metric of Record: B against A.
type Row struct {
	Cell   string    `json:"cell"`
	Metric string    `json:"metric,omitempty"`
	A      []float64 `json:"a,omitempty"`
	B      []float64 `json:"b,omitempty"`
	// Change, Lower and Upper are fractions (B ÷ A − 1); Confidence each
	// bound's, 0 when the blocks attain no interval.
	Change     float64       `json:"change"`
	Lower      float64       `json:"lower"`
	Upper      float64       `json:"upper"`
	Confidence float64       `json:"confidence"`
	Blocks     int           `json:"blocks"`
	Decision   string        `json:"decision"`
	Outcome    vocab.Outcome `json:"outcome"`
	Error      string        `json:"error,omitempty"`
	// Left are the blocks left out of the pairs, each with why in words
	// (report.LeftBlockText); LeftBlocks the same as rules and figures.
	Left       []string            `json:"left_out,omitempty"`
	LeftBlocks []compare.LeftBlock `json:"left_blocks,omitempty"`
}

// leftTexts are the blocks left out of a cell's pairs in words, as
// interleave.json's left_out keeps them.
func leftTexts(ls []compare.LeftBlock) []string {
	var out []string
	for _, l := range ls {
		out = append(out, report.LeftBlockText(l))
	}
	return out
}

// rows are the record's rows of cells.
func rows(cells []compare.BlockCell) []Row {
	var out []Row
	for _, c := range cells {
		if c.Error != "" {
			out = append(out, Row{Cell: c.Name(), Decision: "errored", Outcome: c.Outcome, Error: c.Error})
			continue
		}
		if c.Lost != "" {
			out = append(out, Row{Cell: c.Name(), Decision: "lost", Outcome: c.Outcome, Error: c.Lost, Left: leftTexts(c.Left), LeftBlocks: c.Left})
			continue
		}
		for _, m := range c.Metrics {
			t := m.Test
			r := Row{Cell: c.Name(), Metric: m.Metric.Name, A: m.A, B: m.B, Change: t.Ratio - 1,
				Blocks: t.Blocks, Decision: t.Change.Key(), Outcome: m.Outcome, Left: leftTexts(c.Left), LeftBlocks: c.Left}
			if t.Level > 0 {
				r.Lower, r.Upper, r.Confidence = t.Lower-1, t.Upper-1, t.Confidence()
			}
			out = append(out, r)
		}
	}
	return out
}

// Command runs the interleaved comparison and writes its lines on Stdout.
// The error carries the exit code: 2 for bad input (the builds differ in
// more than the build, before any boot), 3 when a boot could not be
// measured, 1 when a cell regressed, 4 when one stayed undecided.
func Command(ctx context.Context, o Options) error {
	o.Policy = o.Policy.Resolved()
	spA, err := o.load(o.A)
	if err != nil {
		return err
	}
	spB, err := o.load(o.B)
	if err != nil {
		return err
	}
	if o.A != o.B && reflect.DeepEqual(spA.Servers[0], spB.Servers[0]) {
		// Two names of one server: the variable moves only what is
		// measured (the workload, the measure settings), which the
		// comparison would read as the build.
		return exit.Usagef("%s", views.InterleaveSameServer(o.SpecPath, o.VarName, o.A, o.B, spA.VariableUses(o.VarName)))
	}
	if diffs := Differences(spA, spB, o.Sim); len(diffs) > 0 {
		return exit.Usagef("interleave: A (%s) and B (%s) differ beyond the build, so their numbers are not comparable:\n  %s\nmake the variable change the server only",
			o.A, o.B, compare.JoinDifferences(diffs, "\n  "))
	}
	m := spA.Measure
	if m.Boots > 1 {
		return exit.Usagef("%s: measure.boots = %d: an interleaved run boots each build once a block (-blocks); leave boots out", o.SpecPath, m.Boots)
	}
	repeats := max(m.Repeat, 1)
	design := compare.Blocks{Min: o.Blocks, Max: o.Blocks, Alpha: o.Policy.Alpha, Tolerance: o.Policy.Tolerance, Inconclusive: o.Policy.Inconclusive}
	if m.RepeatAuto {
		repeats, design.Max = AutoRepeats, max(o.MaxBlocks, o.Blocks)
	}
	// Each look must be able to decide: under auto the first, at Min
	// blocks, spends its share of the level too.
	if n := compare.BlocksNeeded(design.Level()); n == 0 || design.Min < n {
		return exit.Usagef("-blocks %d: at least %d blocks are needed for an interval at %.4g", design.Min, n, design.Level())
	}
	if o.OutDir == "" {
		o.OutDir = DefaultOutDir
	}
	if entries, err := os.ReadDir(o.OutDir); err == nil && len(entries) > 0 {
		return exit.Usagef("-out %s holds files already: give an empty or new folder", o.OutDir)
	}
	if o.Measure == nil {
		o.Measure = o.runBoot
	}
	srv := spA.Servers[0]
	cells := plan.New(spA, srv, nil).Cells()
	var refs []vocab.CellRef
	for _, c := range cells {
		if c.Search == "" {
			refs = append(refs, c)
		}
	}
	// Each rate search is one more cell, its capacity answer
	// (docs/method.md#interleaved).
	for _, sr := range spA.Searches {
		if sr.IsRate() {
			refs = append(refs, searchRef(sr.Name))
		}
	}
	if len(refs) == 0 {
		return exit.Usagef("%s: no decode, prefill or traffic cell or rate search to compare (concurrency searches are not interleaved; correctness alone does not depend on the machine's load: compare two runs with -baseline)", o.SpecPath)
	}
	views.WriteInterleaveStart(o.Stdout, views.InterleaveDesign{A: o.A, B: o.B, VarName: o.VarName, Seed: o.Seed,
		Min: design.Min, Max: design.Max, Repeats: repeats, Cells: len(refs), OutDir: o.OutDir})
	r := &interleaved{o: o, design: design, repeats: repeats, specs: map[string]*spec.Spec{"A": spA, "B": spB},
		rng: rand.New(rand.NewPCG(o.Seed, 0x1e7e)), a: map[vocab.CellRef]map[string]map[int]float64{}, b: map[vocab.CellRef]map[string]map[int]float64{},
		errs: map[vocab.CellRef]string{}, left: map[vocab.CellRef][]compare.LeftBlock{}, lostB: map[vocab.CellRef]map[int]string{}, server: srv.Name,
		boots: map[string][]*result.Results{}}
	rec, stop := r.run(ctx, refs)
	if rec == nil {
		return stop
	}
	views.WriteInterleaveCells(o.Stdout, srv.Name, rec.cells, design.Tolerance, design.Inconclusive)
	views.WriteInterleaveVerdicts(o.Stdout, views.InterleaveVerdicts{Server: srv.Name, A: o.A, B: o.B, VerdictsA: rec.VerdictsA, VerdictsB: rec.VerdictsB})
	views.WriteInterleaveEnd(o.Stdout, views.InterleaveSummary{Outcome: rec.Outcome, Cells: rec.cells, VerdictsB: rec.VerdictsB, Blocks: rec.Blocks,
		Boots: rec.Boots, ServerS: rec.ServerS, OutDir: o.OutDir, Stopped: rec.Stopped})
	if stop != nil {
		// Interrupted (exit 130 or 143, as `slogate run`) or a boot that
		// could not be measured (3): what the finished blocks decided is
		// in the record, marked partial.
		return exit.With(exit.Code(stop), fmt.Errorf("%w\n%s", stop, views.InterleaveKept(rec.Blocks, filepath.Join(o.OutDir, RecordFile))))
	}
	code := exit.OK
	for _, c := range rec.cells {
		switch c.Outcome {
		case vocab.Error:
			code = exit.Worst(code, exit.Infra)
		case vocab.Fail:
			code = exit.Worst(code, exit.Fail)
		case vocab.Inconclusive:
			code = exit.Worst(code, exit.Inconclusive)
		}
	}
	// B's asserts gate as this run's do beside a -baseline comparison.
	if code = exit.Worst(code, judge.ExitCode(rec.VerdictsB)); code != exit.OK {
		return exit.Quiet(code)
	}
	return nil
}

// interleaved is one Command's state: each cell's values per metric and
// block on each side, the cells a boot errored, and the blocks left out
// of a cell's pairs.
type interleaved struct {
	o       Options
	design  compare.Blocks
	repeats int
	specs   map[string]*spec.Spec
	rng     *rand.Rand
	a, b    map[vocab.CellRef]map[string]map[int]float64
	errs    map[vocab.CellRef]string
	left    map[vocab.CellRef][]compare.LeftBlock
	// lostB says, of a cell B ran over capacity (or a search B met at no
	// rate) in a block, why, by block: lost capacity when A measured the
	// cell (had an answer) in the same block.
	lostB  map[vocab.CellRef]map[int]string
	server string
	// boots are each side's results of the finished blocks, in order.
	boots map[string][]*result.Results
}

// run measures blocks until the design is done: Min blocks, then with
// repeat = "auto" the cells undecided there up to Max, looked at only
// there: more looks would err more often than the level says. The record
// is written after every block (partial until the last), so that a run
// stopped half-way keeps what its finished blocks decided. A boot that
// cannot be measured, or an interruption, ends the run: the record is
// then written with the blocks finished before it, Stopped saying why,
// and returned with the error; a block stopped half-way is left out
// whole. A nil record is an error the record could not be written for.
func (r *interleaved) run(ctx context.Context, refs []vocab.CellRef) (*Record, error) {
	rec := &Record{A: r.o.A, B: r.o.B, VarName: r.o.VarName, Seed: r.o.Seed, Repeats: r.repeats,
		Tolerance: r.design.Tolerance, Level: r.design.Level(), Inconclusive: compare.InconclusivePolicies[r.design.Inconclusive]}
	stop := func(err error) (*Record, error) {
		rec.Stopped = err.Error()
		if werr := r.write(rec, refs, true); werr != nil {
			return nil, errors.Join(err, werr)
		}
		return rec, err
	}
	open := refs
	for block := 1; block <= r.design.Max && len(open) > 0; block++ {
		if ctx.Err() != nil {
			return stop(exit.With(max(exit.Code(context.Cause(ctx)), exit.Infra), fmt.Errorf("interleave: before block %d: %w", block, context.Cause(ctx))))
		}
		order := []string{"A", "B"}
		if r.rng.IntN(2) == 1 {
			order = []string{"B", "A"}
		}
		// Both boots are kept only once both are measured: a block is
		// the unit, and half of one pairs with nothing.
		got := make([]*result.Results, len(order))
		for i, side := range order {
			res, err := r.boot(ctx, side, block, open)
			if err != nil {
				return stop(err)
			}
			got[i] = res
		}
		for i, side := range order {
			rec.Boots++
			if g := got[i].GPUTime; g != nil {
				rec.ServerS += g.ServerS
			}
			r.collect(side, got[i], open, block)
			r.boots[side] = append(r.boots[side], got[i])
		}
		rec.Order = append(rec.Order, strings.Join(order, ""))
		rec.Blocks = block
		if block == r.design.Min || block == r.design.Max {
			// Two looks, at Min and at Max (compare.Blocks.Level).
			var still []vocab.CellRef
			for _, ref := range open {
				if c := r.decide(ref); !c.Decided() && block < r.design.Max {
					still = append(still, ref)
				}
			}
			if len(still) > 0 {
				views.WriteInterleaveMore(r.o.Stdout, len(still), r.design.Max)
			}
			open = still
		}
		if err := r.write(rec, refs, len(open) > 0 && block < r.design.Max); err != nil {
			return nil, err
		}
	}
	return rec, nil
}

// write decides every cell on the blocks finished so far into rec and
// writes it as the -out folder's interleave.json, atomically (a temporary
// file renamed), partial or not. The blocks are decided at the design's
// level whenever the run stops: fewer blocks than a look's, at a level
// meant for a later look too, only err less.
func (r *interleaved) write(rec *Record, refs []vocab.CellRef, partial bool) error {
	rec.cells, rec.Outcome, rec.Partial = nil, vocab.Pass, partial
	for _, ref := range refs {
		c := r.decide(ref)
		rec.cells = append(rec.cells, c)
		rec.Outcome = vocab.Worst(rec.Outcome, c.Outcome)
	}
	rec.Rows = rows(rec.cells)
	pooledA, err := r.check("A")
	if err != nil {
		return err
	}
	pooledB, err := r.check("B")
	if err != nil {
		return err
	}
	rec.VerdictsA, rec.VerdictsB = verdictsOf(pooledA), verdictsOf(pooledB)
	rec.VerdictsB = append(rec.VerdictsB, r.correctness(pooledA, pooledB)...)
	for _, v := range rec.VerdictsB {
		if v.Outcome == vocab.Skip {
			// A skipped assert (one that reads a search) or a correctness
			// block with nothing compared gates nothing: the exit code
			// takes it as a pass (judge.ExitCode), and so does the record.
			continue
		}
		rec.Outcome = vocab.Worst(rec.Outcome, v.Outcome)
	}
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return exit.Infraf("interleave: %v", err)
	}
	if err := os.MkdirAll(r.o.OutDir, 0o755); err != nil {
		return exit.Infraf("interleave: %v", err)
	}
	if err := result.WriteFileAtomic(filepath.Join(r.o.OutDir, RecordFile), append(data, '\n')); err != nil {
		return exit.Infraf("interleave: writing %s: %v", RecordFile, err)
	}
	var md bytes.Buffer
	if err := report.WriteInterleaveMarkdown(&md, report.Interleave{A: rec.A, B: rec.B, VarName: rec.VarName, Seed: rec.Seed, Order: rec.Order,
		Blocks: rec.Blocks, Boots: rec.Boots, ServerS: rec.ServerS, Tolerance: rec.Tolerance, Level: rec.Level, Inconclusive: rec.Inconclusive,
		Outcome: rec.Outcome, Partial: rec.Partial, Stopped: rec.Stopped, Cells: rec.cells, VerdictsA: rec.VerdictsA, VerdictsB: rec.VerdictsB,
		ResultsA: pooledA, ResultsB: pooledB}); err != nil {
		return exit.Infraf("interleave: rendering %s: %v", ReportFile, err)
	}
	if err := result.WriteFileAtomic(filepath.Join(r.o.OutDir, ReportFile), md.Bytes()); err != nil {
		return exit.Infraf("interleave: writing %s: %v", ReportFile, err)
	}
	return nil
}

// verdictsOf are a side's pooled results' verdicts; none without a boot.
func verdictsOf(res *result.Results) []result.Verdict {
	if res == nil {
		return nil
	}
	return res.Verdicts
}

// correctness is B's correctness blocks decided against A's as a
// -baseline decides them (compare.Build, judge.Correctness), on
// the outputs each side's first boot recorded (docs/method.md#interleaved):
// greedy outputs and scored answers do not depend on the machine's load,
// so they are measured once a build, in block 1, not once a block, and
// pooling boots would count a prompt twice. None before both sides'
// first boots, or without correctness blocks.
func (r *interleaved) correctness(a, b *result.Results) []result.Verdict {
	if a == nil || b == nil || len(b.Correctness) == 0 {
		return nil
	}
	return judge.Correctness(b, compare.Build(a, b, r.o.Policy), views.JudgeWords{})
}

// check is one side's results over its finished blocks' boots pooled
// (runner.Pool), written as the side's results.json beside its blocks'
// folders, and the spec's asserts and expects checked on them
// (assert.Evaluate, as `slogate run` checks them). An assert that reads
// a search is skipped, saying so: an interleaved run measures none. No
// results when the side has no boot yet.
func (r *interleaved) check(side string) (*result.Results, error) {
	boots := r.boots[side]
	if len(boots) == 0 {
		return nil, nil
	}
	pooled := runner.Pool(boots)
	sp := *r.specs[side]
	srv := sp.Servers[0]
	var skipped []result.Verdict
	sp.Asserts = nil
	for _, a := range r.specs[side].Asserts {
		if len(a.Searches) > 0 {
			v := result.Verdict{Test: srv.Name + "/assert/" + a.Name, Kind: vocab.KindAssert,
				File: a.DeclRange.Filename, Line: a.DeclRange.Start.Line, Message: views.InterleaveSearchSkipped(a.Searches)}
			judge.Rule(&v, result.FindingNothingToRead) // an interleaved run measures no search
			skipped = append(skipped, v)
			continue
		}
		sp.Asserts = append(sp.Asserts, a)
	}
	pooled.Verdicts = append(assert.Evaluate(&sp, srv, pooled, views.AssertWords{}), skipped...)
	dir := filepath.Join(r.o.OutDir, strings.ToLower(side))
	if err := pooled.Write(filepath.Join(dir, "results.json")); err != nil {
		return nil, exit.Infraf("interleave: writing %s's pooled results: %v", side, err)
	}
	if err := pooled.WriteCorrectness(dir); err != nil {
		return nil, exit.Infraf("interleave: writing %s's correctness outputs: %v", side, err)
	}
	return pooled, nil
}

// loseB records that B could not hold cell ref in block (why).
func (r *interleaved) loseB(ref vocab.CellRef, block int, why string) {
	if r.lostB[ref] == nil {
		r.lostB[ref] = map[int]string{}
	}
	r.lostB[ref][block] = fmt.Sprintf("block %d: B %s", block, why)
}

// lost is the first block, in block order, where B could not hold cell
// ref and A measured it (had an answer) in the same block, as that
// block's reason; "" when there is none. Paired like every other
// decision: a block whose load made both sides fail is no regression.
func (r *interleaved) lost(ref vocab.CellRef) string {
	blocks := slices.Sorted(maps.Keys(r.lostB[ref]))
	for _, k := range blocks {
		for _, byBlock := range r.a[ref] {
			if _, ok := byBlock[k]; ok {
				return r.lostB[ref][k]
			}
		}
	}
	return ""
}

// decide is a cell's comparison over the blocks measured so far: each
// metric on the blocks where both sides have a value, in block order.
func (r *interleaved) decide(ref vocab.CellRef) compare.BlockCell {
	if e := r.errs[ref]; e != "" {
		return compare.BlockCell{Ref: ref, Search: searchOf(ref), Error: e, Outcome: vocab.Error}
	}
	if l := r.lost(ref); l != "" {
		// B's server cannot hold a cell A's measured, or meets a rate
		// search's objective at no rate where A had a capacity: lost
		// capacity, a regression, as -baseline calls it
		// (docs/method.md#interleaved).
		return compare.BlockCell{Ref: ref, Search: searchOf(ref), Lost: l, Left: r.left[ref], Outcome: vocab.Fail}
	}
	metrics := gated(ref)
	a, b := map[string][]float64{}, map[string][]float64{}
	for _, m := range metrics {
		va, vb := r.a[ref][m.Name], r.b[ref][m.Name]
		var blocks []int
		for k := range va {
			if _, ok := vb[k]; ok {
				blocks = append(blocks, k)
			}
		}
		slices.Sort(blocks)
		for _, k := range blocks {
			a[m.Name], b[m.Name] = append(a[m.Name], va[k]), append(b[m.Name], vb[k])
		}
	}
	c := r.design.DecideCell(ref, metrics, a, b)
	c.Left, c.Search = r.left[ref], searchOf(ref)
	return c
}

// collect keeps each open cell's gated metrics of one boot. A cell the
// boot errored is an error from then on (a server that fails is never a
// slow one); one it measured without numbers (over capacity, unmeasurable
// by the client) leaves its block out of the cell's pairs, said in its
// lines, and repeat = "auto" measures further blocks for it.
func (r *interleaved) collect(side string, res *result.Results, open []vocab.CellRef, block int) {
	into := r.a
	if side == "B" {
		into = r.b
	}
	for _, ref := range open {
		if name := searchOf(ref); name != "" {
			r.collectSearch(side, res, ref, name, block)
			continue
		}
		vals, status, reason := cellValues(res, ref)
		switch {
		case status == vocab.StatusError:
			if r.errs[ref] == "" {
				r.errs[ref] = fmt.Sprintf("block %d, %s: %s", block, side, status.Unmeasured(reason))
			}
			continue
		case status == vocab.StatusOverCapacity && side == "B":
			r.loseB(ref, block, status.Unmeasured(reason))
			fallthrough
		case !status.Measured():
			r.left[ref] = append(r.left[ref], compare.LeftBlock{Block: block, Side: side, Rule: compare.LeftNotMeasured, Status: status, Reason: reason})
			continue
		}
		if into[ref] == nil {
			into[ref] = map[string]map[int]float64{}
		}
		for _, m := range gated(ref) {
			v, ok := vals(m)
			if !ok {
				if r.errs[ref] == "" {
					r.errs[ref] = fmt.Sprintf("block %d, %s: %s not reported", block, side, m.Name)
				}
				continue
			}
			if into[ref][m.Name] == nil {
				into[ref][m.Name] = map[int]float64{}
			}
			into[ref][m.Name][block] = v
		}
	}
}

// trafficMetrics are the traffic metrics an interleaved run decides: the
// window's median and p99 latencies, each block's boots replaying one
// schedule (docs/method.md#interleaved).
var trafficMetrics = []string{metric.TTFTMs, metric.TTFTMs + "_p99", metric.E2EMs, metric.E2EMs + "_p99"}

// gated are the metrics decided of a cell: compare's defaults of decode
// and prefill cells, trafficMetrics of a traffic cell, searchRate of a
// rate search's answer.
func gated(ref vocab.CellRef) []metric.Metric {
	phase := ref.Phase
	if searchOf(ref) != "" {
		return []metric.Metric{searchRate}
	}
	if phase != vocab.PhaseTraffic {
		return compare.DefaultMetrics(phase)
	}
	var out []metric.Metric
	for _, n := range trafficMetrics {
		if m, ok := metric.Lookup(phase, n); ok {
			out = append(out, m)
		}
	}
	return out
}

// searchRate is the metric of a rate search's answer: the highest rate
// judged to meet its objective, higher is better.
var searchRate = metric.Metric{Name: "rate", Phase: vocab.PhaseTraffic, Label: "capacity", Unit: "req/s", HigherIsBetter: true, Combine: metric.Median}

// searchRef is the reference that stands for rate search name's answer
// among an interleaved run's cells: a search name and nothing else,
// which no probe's reference is (a probe has its rate).
func searchRef(name string) vocab.CellRef { return vocab.CellRef{Search: name} }

// searchOf is the search a reference stands for (searchRef); "" for a
// cell.
func searchOf(ref vocab.CellRef) string {
	if ref.Phase == "" && ref.Search != "" {
		return ref.Search
	}
	return ""
}

// collectSearch keeps one boot's answer of a rate search
// (docs/method.md#interleaved): the search's rate when its answer is
// decided, one probe at least met with confidence (rate_lower above 0).
// A search that stopped on an error makes the cell an error; one that met
// its objective at no rate, its lowest rate decided failed, is lost
// capacity on B where A had an answer, and leaves the block out on A; an
// answer left undecided (no probe decided met, or the lowest one
// undecided) or that the client could not measure (a probe it could not
// drive at or below the answer's upper bound) leaves the block out.
func (r *interleaved) collectSearch(side string, res *result.Results, ref vocab.CellRef, name string, block int) {
	into := r.a
	if side == "B" {
		into = r.b
	}
	leave := func(l compare.LeftBlock) {
		l.Block, l.Side = block, side
		r.left[ref] = append(r.left[ref], l)
	}
	s, ok := res.SearchByName(name)
	switch {
	case !ok:
		if r.errs[ref] == "" {
			r.errs[ref] = fmt.Sprintf("block %d, %s: search %q not in the boot's results", block, side, name)
		}
	case s.Error != "":
		if r.errs[ref] == "" {
			r.errs[ref] = fmt.Sprintf("block %d, %s: %s", block, side, s.Error)
		}
	case s.ClientLimit > 0 && (s.RateUpper == 0 || s.RateUpper >= s.ClientLimit):
		leave(compare.LeftBlock{Rule: compare.LeftClientLimit, Rate: s.ClientLimit})
	case !s.Found && s.RateUpper > 0:
		l := compare.LeftBlock{Block: block, Side: side, Rule: compare.LeftNoRate, Rate: s.RateUpper}
		if side == "B" {
			r.loseB(ref, block, report.LeftWhy(l))
		}
		leave(l)
	case !s.Found || s.RateLower <= 0:
		leave(compare.LeftBlock{Rule: compare.LeftUndecided})
	default:
		if into[ref] == nil {
			into[ref] = map[string]map[int]float64{searchRate.Name: {}}
		}
		into[ref][searchRate.Name][block] = s.Rate
	}
}

// cellValues finds a cell in a boot's results: its metric reader, status
// and reason (StatusError "not in the results" when absent).
func cellValues(res *result.Results, ref vocab.CellRef) (func(metric.Metric) (float64, bool), vocab.Status, string) {
	for i := range res.Decode {
		if c := &res.Decode[i]; c.Ref() == ref {
			return c.Value, c.Status, c.Reason
		}
	}
	for i := range res.Prefill {
		if c := &res.Prefill[i]; c.Ref() == ref {
			return c.Value, c.Status, c.Reason
		}
	}
	if c, ok := res.TrafficCell(ref); ok {
		return c.Value, c.Status, c.Reason
	}
	return nil, vocab.StatusError, "not in the boot's results"
}

// boot measures the open cells on one side in one block.
func (r *interleaved) boot(ctx context.Context, side string, block int, open []vocab.CellRef) (*result.Results, error) {
	sp := *r.specs[side]
	m := *sp.Measure
	m.Repeat, m.RepeatAuto, m.MaxRepeat, m.Boots, m.MaxGPUTime = r.repeats, false, 0, 1, 0
	sp.Measure = &m
	srv := sp.Servers[0]
	names := make([]string, len(open))
	searches := map[string]bool{}
	for i, c := range open {
		names[i] = regexp.QuoteMeta(c.TestName(srv.Name))
		if name := searchOf(c); name != "" {
			names[i] = regexp.QuoteMeta(vocab.TestID{Server: srv.Name, Kind: vocab.KindSearch, Block: name}.Name())
			searches[name] = true
		}
	}
	if block == 1 {
		// Each build's correctness blocks, once (Command's correctness).
		for _, c := range sp.Correctness {
			names = append(names, regexp.QuoteMeta(vocab.TestID{Server: srv.Name, Kind: vocab.KindCorrectness, Block: c.Name}.Name()))
		}
	}
	p := plan.New(&sp, srv, regexp.MustCompile("^(?:"+strings.Join(names, "|")+")$"))
	p.Asserts, p.Expects = nil, nil
	if block != 1 {
		p.Correctness = nil
	}
	// Only the open rate searches: an assert keeps the searches it reads
	// in a plan, and this boot checks none.
	keep := func(s *spec.Search) bool { return !searches[s.Name] }
	p.Searches = slices.DeleteFunc(p.Searches, keep)
	for i := range p.Steps {
		p.Steps[i].Searches = slices.DeleteFunc(p.Steps[i].Searches, keep)
	}
	build := r.o.A
	if side == "B" {
		build = r.o.B
	}
	b := Boot{Side: side, Build: build, Block: block, Spec: &sp, Plan: p,
		Dir: filepath.Join(r.o.OutDir, strings.ToLower(side), fmt.Sprintf("block-%02d", block))}
	if err := os.MkdirAll(b.Dir, 0o755); err != nil {
		return nil, exit.Infraf("interleave: %v", err)
	}
	t0 := time.Now()
	res, err := r.o.Measure(ctx, b)
	if err != nil {
		return nil, exit.With(max(exit.Code(err), exit.Infra), fmt.Errorf("interleave: block %d, %s (%s): %w", block, side, build, err))
	}
	views.WriteInterleaveBoot(r.o.Stdout, views.InterleaveBoot{Block: block, Side: side, Build: build, Cells: len(open),
		Elapsed: time.Since(t0), Dir: b.Dir})
	return res, nil
}

// runBoot is Measure by the runner: the boot's plan against its spec.
func (o Options) runBoot(ctx context.Context, b Boot) (*result.Results, error) {
	cfg := runner.Config{Spec: b.Spec, Server: b.Spec.Servers[0], Plan: b.Plan, OutDir: b.Dir, Sim: o.Sim, Tool: o.Tool,
		Policy: o.Policy, ForceStop: o.ForceStop, StreamIdleTimeout: o.StreamIdleTimeout, ReasonText: report.CellReasonText, WarningText: report.WarningText}
	run.SetObjectives(&cfg, b.Spec)
	return runner.Run(ctx, cfg)
}

// load is the spec with the build applied (specload.Build).
func (o Options) load(build string) (*spec.Spec, error) {
	return specload.Build{Command: "interleave", SpecPath: o.SpecPath, Vars: o.Vars, VarName: o.VarName, Duration: o.Duration}.Load(o.Stderr, build)
}

// Differences are the ways the two builds' specs differ beyond the
// server they launch: the measurement settings (compare.PlannedSettings,
// the check a -baseline makes before its run) and the cells measured.
func Differences(a, b *spec.Spec, sim bool) []compare.Difference {
	planned := func(sp *spec.Spec) compare.Planned {
		m := sp.Measure
		return compare.Planned{Window: m.Duration, MaxOutput: m.MaxOutput, Endpoint: m.Endpoint, Repeat: m.Repeat,
			RepeatAuto: m.RepeatAuto, MaxRepeat: m.MaxRepeat, Simulated: sim, Engine: sp.Servers[0].Engine}
	}
	out := compare.PlannedSettings(planned(a), planned(b))
	out = append(out, compare.Changed("boots", fmt.Sprint(max(a.Measure.Boots, 1)), fmt.Sprint(max(b.Measure.Boots, 1)))...)
	names := func(sp *spec.Spec) string {
		var s []string
		for _, c := range plan.New(sp, sp.Servers[0], nil).Cells() {
			s = append(s, c.Name())
		}
		return strings.Join(s, " ")
	}
	out = append(out, compare.Changed("cells", names(a), names(b))...)
	// What the requests are: a variable that changes a workload, a traffic
	// block or a correctness block changes what is measured, however it
	// also changes the server (the correctness comparison would refuse
	// the two sides, and the speed comparison read the prompts as the
	// build).
	for _, d := range []struct {
		setting string
		a, b    any
	}{
		{"workload", a.Workload, b.Workload}, {"named workloads", a.Workloads, b.Workloads},
		{"traffic blocks", a.Traffic, b.Traffic}, {"correctness blocks", a.Correctness, b.Correctness},
	} {
		if !reflect.DeepEqual(d.a, d.b) {
			out = append(out, compare.Difference{Setting: d.setting, A: "as A's spec reads it", B: "changed by the build", HasA: true, HasB: true})
		}
	}
	return out
}
