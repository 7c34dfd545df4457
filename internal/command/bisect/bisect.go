// Package bisect is `slogate bisect`: over an ordered list of builds
// between a good and a bad one, it finds for each cell that regressed
// between them the first build where it did, measuring as few builds as
// a binary search needs. Each step's decision is package decision's rule
// over compare's comparisons of the candidate with both endpoints; a build
// that does not start is skipped, an inconclusive step is measured again
// with more repeats, never guessed; every build measured is a line of
// bisect.jsonl, from which -resume continues (docs/method.md#bisect).
package bisect

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/slogate/slogate/internal/bisection"
	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// LogFile is the bisection's log in its -out folder.
const LogFile = "bisect.jsonl"

// Request is one measurement of a build.
type Request struct {
	Build string
	Index int
	// Cells are the cells to measure; nil measures the spec's every cell
	// (the endpoints, when the regressed cells are still to be found).
	Cells []vocab.CellRef
	// Attempt is 1, or 2 for the cells the first attempt left
	// inconclusive: measured again with the most repeats.
	Attempt int
	// Dir is the folder the results go into, relative to Config.OutDir.
	Dir string
	// Baseline is the good endpoint's results (nil when measuring it):
	// repeat = "auto" repeats until the comparison with it is decided.
	Baseline *result.Results
}

// Measure measures a build; an error skips it (it did not start or
// errored). It is given by the wiring (a spec run through the runner), or
// a fake in the tests.
type Measure func(ctx context.Context, r Request) (*result.Results, error)

// Config is one bisection.
type Config struct {
	// Builds are the builds in order; Good comes before Bad.
	Builds    []string
	Good, Bad string
	Policy    compare.Policy
	Measure   Measure
	// OutDir holds bisect.jsonl and each build's results folder.
	OutDir string
	// MaxGPUSeconds bounds the bisection's cost (-max-gpu-time); 0 is no
	// bound.
	MaxGPUSeconds float64
	// Previous are the records of an interrupted bisection (-resume):
	// their builds are read back, not measured again. Load reads a
	// record's results (default: Dir/results.json below OutDir).
	Previous []bisection.Record
	Load     func(dir string) (*result.Results, error)
	// Step is told each step once decided; nil tells nothing.
	Step func(bisection.Record)
	// Attempts is how many times a build's inconclusive cells are
	// measured (default 2).
	Attempts int
}

// CheckBuilds is the usage check of the builds: good and bad are in the
// list, good before bad, no build twice.
func CheckBuilds(builds []string, good, bad string) (gi, bi int, err error) {
	gi, bi = -1, -1
	seen := map[string]bool{}
	for i, b := range builds {
		if seen[b] {
			return 0, 0, exit.Usagef("the candidates list names %q twice", b)
		}
		seen[b] = true
		switch b {
		case good:
			gi = i
		case bad:
			bi = i
		}
	}
	switch {
	case gi < 0 && bi < 0:
		return 0, 0, exit.Usagef("the candidates list contains neither -good %s nor -bad %s", good, bad)
	case gi < 0:
		return 0, 0, exit.Usagef("the candidates list does not contain -good %s", good)
	case bi < 0:
		return 0, 0, exit.Usagef("the candidates list does not contain -bad %s", bad)
	case gi >= bi:
		return 0, 0, exit.Usagef("-good %s must come before -bad %s in the candidates list", good, bad)
	}
	return gi, bi, nil
}

// cellState is one regressed cell's search: lo is the last build known
// good, hi the first known bad; skip the builds it cannot use.
type cellState struct {
	rc         bisection.RegressedCell
	lo, hi     int
	skip       map[int]bool
	atLo, atHi *bisection.CellStep
}

// available are the builds strictly between lo and hi still to measure.
func (c *cellState) available() []int {
	var out []int
	for i := c.lo + 1; i < c.hi; i++ {
		if !c.skip[i] {
			out = append(out, i)
		}
	}
	return out
}

// state is one Run's state.
type state struct {
	cfg      Config
	log      *os.File
	previous map[string]bisection.Record // by build and attempt
	report   *bisection.Report
	good     *result.Results
	bad      *result.Results
}

// Run bisects. The report is returned with the error too; the error
// carries the exit code: 3 when an endpoint could not be measured, 2 for
// bad builds, the interruption's; a budget out or an undecided cell is no
// error (Report.Decided, BudgetOut), nor is good not better than bad
// (Report.NoRegression): the wiring gives their codes.
func Run(ctx context.Context, cfg Config) (*bisection.Report, error) {
	gi, bi, err := CheckBuilds(cfg.Builds, cfg.Good, cfg.Bad)
	if err != nil {
		return nil, err
	}
	if cfg.Attempts == 0 {
		cfg.Attempts = 2
	}
	if cfg.Load == nil {
		cfg.Load = func(dir string) (*result.Results, error) {
			return result.Read(filepath.Join(cfg.OutDir, dir, "results.json"))
		}
	}
	b := &state{cfg: cfg, previous: map[string]bisection.Record{},
		report: &bisection.Report{Good: cfg.Good, Bad: cfg.Bad, Builds: cfg.Builds}}
	for _, r := range cfg.Previous {
		b.previous[key(r.Build, r.Attempt)] = r
	}
	if cfg.OutDir != "" {
		if err := os.MkdirAll(cfg.OutDir, 0o755); err != nil {
			return nil, exit.Infraf("bisect: %v", err)
		}
		f, err := os.OpenFile(filepath.Join(cfg.OutDir, LogFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, exit.Infraf("bisect: %v", err)
		}
		defer f.Close()
		b.log = f
	}
	return b.report, b.run(ctx, gi, bi)
}

func key(build string, attempt int) string { return fmt.Sprintf("%d\x00%s", attempt, build) }

// dirName is a build's results folder: its index and a name safe for a
// path ("07-vllm-openai_v0.11.0").
func dirName(i int, build string, attempt int) string {
	safe := []rune{}
	for _, r := range build {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			safe = append(safe, r)
		default:
			safe = append(safe, '_')
		}
	}
	if len(safe) > 80 {
		safe = safe[len(safe)-80:]
	}
	d := fmt.Sprintf("%02d-%s", i, string(safe))
	if attempt > 1 {
		d += fmt.Sprintf(".%d", attempt)
	}
	return d
}

func (b *state) run(ctx context.Context, gi, bi int) error {
	var err error
	if b.good, err = b.endpoint(ctx, gi, bisection.RoleGood, nil); err != nil {
		return err
	}
	if b.bad, err = b.endpoint(ctx, bi, bisection.RoleBad, b.good); err != nil {
		return err
	}
	gb := compare.Build(b.good, b.bad, b.cfg.Policy)
	if gb.Refused {
		return exit.Usagef("the good and bad builds were measured with different settings:\n  %s", differences(gb))
	}
	regressed := bisection.Regressed(gb)
	if len(regressed) == 0 && gb.Outcome == vocab.Inconclusive && b.cfg.Attempts > 1 {
		// Inconclusive adds repeats, never a guess: the bad build again,
		// with the most repeats.
		if b.bad, err = b.endpointAgain(ctx, bi); err != nil {
			return err
		}
		gb = compare.Build(b.good, b.bad, b.cfg.Policy)
		regressed = bisection.Regressed(gb)
	}
	b.report.GoodVsBad = gb
	if len(regressed) == 0 {
		b.report.NoRegression = true
		return nil
	}
	cells := make([]*cellState, len(regressed))
	for i, rc := range regressed {
		cells[i] = &cellState{rc: rc, lo: gi, hi: bi, skip: map[int]bool{}}
	}
	defer func() { b.report.Cells = answers(b.cfg.Builds, cells) }()
	for {
		idx, todo := next(cells)
		if idx < 0 {
			return nil
		}
		for attempt := 1; attempt <= b.cfg.Attempts && len(todo) > 0; attempt++ {
			if b.cfg.MaxGPUSeconds > 0 && b.report.GPUSeconds >= b.cfg.MaxGPUSeconds {
				b.report.BudgetOut = true
				return nil
			}
			rec, err := b.step(ctx, idx, attempt, todo)
			if err != nil {
				return err
			}
			var again []*cellState
			for _, c := range todo {
				st := stepOf(rec, c.rc.Ref)
				switch {
				case rec.Error != "" || st == nil || st.Outcome == bisection.Skipped:
					c.skip[idx] = true
				case st.Outcome == bisection.AtOrBefore:
					c.hi, c.atHi = idx, st
				case st.Outcome == bisection.After:
					c.lo, c.atLo = idx, st
				case attempt < b.cfg.Attempts:
					again = append(again, c)
				default:
					c.skip[idx] = true // inconclusive with the most repeats: undecided, never a guess
				}
			}
			todo = again
		}
	}
}

// next is the build to measure and the cells to measure there: the
// middle of the widest open range of the cells not yet decided; -1 when
// every cell is decided or has only skipped builds left.
func next(cells []*cellState) (int, []*cellState) {
	best, width := -1, 0
	for _, c := range cells {
		av := c.available()
		if len(av) == 0 {
			continue
		}
		if w := c.hi - c.lo; w > width {
			width = w
			mid := float64(c.lo+c.hi) / 2
			best = av[0]
			for _, i := range av {
				if math.Abs(float64(i)-mid) < math.Abs(float64(best)-mid) {
					best = i
				}
			}
		}
	}
	if best < 0 {
		return -1, nil
	}
	var todo []*cellState
	for _, c := range cells {
		if c.lo < best && best < c.hi && !c.skip[best] {
			todo = append(todo, c)
		}
	}
	return best, todo
}

// endpoint measures (or reads back) the good or bad build, every cell: an
// endpoint that cannot be measured ends the bisection (exit 3).
func (b *state) endpoint(ctx context.Context, i int, role string, baseline *result.Results) (*result.Results, error) {
	build := b.cfg.Builds[i]
	req := Request{Build: build, Index: i, Attempt: 1, Dir: dirName(i, build, 1), Baseline: baseline}
	res, rec, err := b.measure(ctx, req, role)
	if err != nil {
		return nil, err
	}
	b.record(rec)
	if rec.Error != "" {
		return nil, exit.Infraf("bisect: the %s build %s could not be measured: %s", role, build, rec.Error)
	}
	if cells := res.Unmeasured(); len(cells) > 0 {
		return nil, exit.Infraf("bisect: the %s build %s could not measure %d cell(s): %v", role, build, len(cells), cells)
	}
	return res, nil
}

// endpointAgain measures the bad build a second time, with the most
// repeats, when its comparison with good was inconclusive.
func (b *state) endpointAgain(ctx context.Context, i int) (*result.Results, error) {
	build := b.cfg.Builds[i]
	req := Request{Build: build, Index: i, Attempt: 2, Dir: dirName(i, build, 2), Baseline: b.good}
	res, rec, err := b.measure(ctx, req, bisection.RoleBad)
	if err != nil {
		return nil, err
	}
	b.record(rec)
	if rec.Error != "" {
		return nil, exit.Infraf("bisect: the bad build %s could not be measured again: %s", build, rec.Error)
	}
	return res, nil
}

// step measures (or reads back) a candidate's cells and decides each.
func (b *state) step(ctx context.Context, i, attempt int, cells []*cellState) (bisection.Record, error) {
	build := b.cfg.Builds[i]
	refs := make([]vocab.CellRef, len(cells))
	for j, c := range cells {
		refs[j] = c.rc.Ref
	}
	req := Request{Build: build, Index: i, Cells: refs, Attempt: attempt, Dir: dirName(i, build, attempt), Baseline: b.good}
	res, rec, err := b.measure(ctx, req, bisection.RoleCandidate)
	if err != nil {
		return rec, err
	}
	if rec.Error == "" && len(rec.Cells) == 0 {
		vsGood := compare.Build(b.good, res, b.cfg.Policy)
		vsBad := compare.Build(b.bad, res, b.cfg.Policy)
		for _, c := range cells {
			rec.Cells = append(rec.Cells, bisection.Decide(vsGood, vsBad, c.rc.Ref, c.rc.Metrics))
		}
	}
	b.record(rec)
	return rec, nil
}

// measure runs req, or reads back the record of an earlier bisection's
// same step. A build that errored is a record with Error, no error: only
// an interruption is.
func (b *state) measure(ctx context.Context, req Request, role string) (*result.Results, bisection.Record, error) {
	rec := bisection.Record{Build: req.Build, Index: req.Index, Role: role, Attempt: req.Attempt, Dir: req.Dir}
	if prev, ok := b.previous[key(req.Build, req.Attempt)]; ok && prev.Role == role {
		if prev.Error != "" {
			return nil, prev, nil
		}
		if res, err := b.cfg.Load(prev.Dir); err == nil {
			return res, prev, nil
		}
		// Unreadable: measure it again.
	}
	if err := ctx.Err(); err != nil {
		return nil, rec, interrupted(ctx)
	}
	res, err := b.cfg.Measure(ctx, req)
	if ctx.Err() != nil {
		return nil, rec, interrupted(ctx)
	}
	if res != nil && res.GPUTime != nil {
		rec.GPUSeconds = res.GPUTime.GPUSeconds
		if res.GPUTime.CPU {
			rec.GPUSeconds = res.GPUTime.ServerS
		}
	}
	if err != nil {
		rec.Error = err.Error()
		return nil, rec, nil
	}
	if res == nil {
		rec.Error = "no results"
	}
	return res, rec, nil
}

// interrupted is the context's cause with its exit code (130/143 for a
// signal), else exit 3.
func interrupted(ctx context.Context) error {
	err := context.Cause(ctx)
	if exit.Code(err) == exit.OK || exit.Code(err) == exit.Fail {
		return exit.With(exit.Infra, err)
	}
	return err
}

// record keeps rec in the report, tells it and appends it to
// bisect.jsonl.
func (b *state) record(rec bisection.Record) {
	b.report.Steps = append(b.report.Steps, rec)
	b.report.GPUSeconds += rec.GPUSeconds
	if b.cfg.Step != nil {
		b.cfg.Step(rec)
	}
	if _, done := b.previous[key(rec.Build, rec.Attempt)]; done || b.log == nil {
		return
	}
	line, _ := json.Marshal(rec)
	b.log.Write(append(line, '\n'))
}

// stepOf is rec's decision for ref.
func stepOf(rec bisection.Record, ref vocab.CellRef) *bisection.CellStep {
	for i := range rec.Cells {
		if rec.Cells[i].Cell == ref.Name() {
			s := rec.Cells[i]
			return &s
		}
	}
	return nil
}

// answers are the cells' answers from their searches.
func answers(builds []string, cells []*cellState) []bisection.CellAnswer {
	var out []bisection.CellAnswer
	for _, c := range cells {
		a := bisection.CellAnswer{Cell: c.rc.Ref.Name(), Metrics: c.rc.Metrics, Change: c.rc.Changes,
			LastGood: builds[c.lo], AtFirstBad: c.atHi, AtLastGood: c.atLo}
		if len(c.available()) == 0 && c.hi == c.lo+1 {
			a.Found, a.FirstBad = true, builds[c.hi]
		} else {
			for i := c.lo + 1; i <= c.hi; i++ {
				a.Candidates = append(a.Candidates, builds[i])
			}
		}
		out = append(out, a)
	}
	return out
}

// differences are the comparison's settings that differ, one a line.
func differences(c *compare.Comparison) string {
	s := ""
	for i, d := range c.Settings {
		if i > 0 {
			s += "\n  "
		}
		s += fmt.Sprint(d)
	}
	return s
}

// ReadLog reads the records of bisect.jsonl in dir; a missing file is
// none. A last line cut short by an interruption is dropped.
func ReadLog(dir string) ([]bisection.Record, error) {
	f, err := os.Open(filepath.Join(dir, LogFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, exit.Usagef("-resume %s: no %s there", dir, LogFile)
	}
	if err != nil {
		return nil, exit.Usagef("-resume: %v", err)
	}
	defer f.Close()
	var out []bisection.Record
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		var r bisection.Record
		if json.Unmarshal(sc.Bytes(), &r) == nil && r.Build != "" {
			out = append(out, r)
		}
	}
	return out, sc.Err()
}

// Elapsed is a GPU time in seconds as a duration.
func Elapsed(s float64) time.Duration {
	return time.Duration(s * float64(time.Second)).Round(100 * time.Millisecond)
}
