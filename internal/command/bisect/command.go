package bisect

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/slogate/slogate/internal/bisection"
	"github.com/slogate/slogate/internal/command/specload"
	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/plan"
	"github.com/slogate/slogate/internal/report"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/runner"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/views"
)

// DefaultOutDir is the bisection's folder without -out.
const DefaultOutDir = "slogate-out/bisect"

// Options is one `slogate bisect`, its flags already read.
type Options struct {
	SpecPath string
	Vars     spec.Vars
	// Good and Bad name the endpoints; Builds the ordered list
	// (-candidates), which holds both.
	Good, Bad string
	Builds    []string
	// VarName is the spec variable that names the build (-var-name);
	// "" replaces the server's container.image.
	VarName string
	OutDir  string
	// Resume continues the bisection in OutDir from its bisect.jsonl.
	Resume bool
	// MaxGPUTime bounds the bisection's GPU time; 0 is no bound.
	MaxGPUTime time.Duration
	// Sim launches the simulator with the spec's argv (-sim); Duration
	// overrides measure.duration when > 0.
	Sim      bool
	Duration time.Duration
	Policy   compare.Policy
	Tool     string
	// ForceStop and StreamIdleTimeout are passed to runner.Config.
	ForceStop         <-chan struct{}
	StreamIdleTimeout time.Duration
	Stdout, Stderr    io.Writer
}

// ReadCandidates reads a candidates file: one build a line, in order;
// blank lines and lines starting with # are left out.
func ReadCandidates(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, exit.Usagef("-candidates: %v", err)
	}
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		out = append(out, l)
	}
	return out, nil
}

// Command runs the bisection and writes its steps and answer on Stdout.
// The error carries the exit code: nil when every cell's first bad was
// found, 4 (quiet) when the budget ran out or a cell is undecided, 1
// (quiet, the comparison printed) when good is not better than bad on
// any cell, 2 for bad input, 3 when an endpoint could not be measured.
func Command(ctx context.Context, o Options) error {
	if _, _, err := CheckBuilds(o.Builds, o.Good, o.Bad); err != nil {
		return err
	}
	// One load up front: the spec's diagnostics, and the server checked.
	if _, err := o.load(o.Good); err != nil {
		return err
	}
	if o.OutDir == "" {
		o.OutDir = DefaultOutDir
	}
	var prev []bisection.Record
	if o.Resume {
		var err error
		if prev, err = ReadLog(o.OutDir); err != nil {
			return err
		}
		views.WriteBisectResuming(o.Stdout, o.OutDir, len(prev))
	} else if _, err := os.Stat(filepath.Join(o.OutDir, LogFile)); err == nil {
		return exit.Usagef("%s already holds a bisection (%s): continue it with -resume, or give another -out", o.OutDir, LogFile)
	}
	n := 0
	cfg := Config{Builds: o.Builds, Good: o.Good, Bad: o.Bad, Policy: o.Policy, OutDir: o.OutDir, Previous: prev,
		MaxGPUSeconds: o.MaxGPUTime.Seconds(), Measure: o.measure,
		Step: func(r bisection.Record) {
			if r.Role == bisection.RoleCandidate && r.Attempt == 1 {
				n++
			}
			views.WriteBisectStep(o.Stdout, r, n)
		}}
	views.WriteBisectStart(o.Stdout, len(o.Builds), o.Good, o.Bad, o.OutDir)
	rep, err := Run(ctx, cfg)
	if err != nil {
		return err
	}
	if rep.NoRegression {
		views.WriteBisectNoRegression(o.Stdout, o.Good, o.Bad)
		views.Diff{PathA: o.Good, PathB: o.Bad, C: rep.GoodVsBad}.Text(o.Stdout)
		return exit.Quiet(exit.Fail)
	}
	views.BisectAnswer(o.Stdout, rep)
	if !rep.Decided() {
		return exit.Quiet(exit.Inconclusive)
	}
	return nil
}

// load is the spec with the build applied (specload.Build).
func (o Options) load(build string) (*spec.Spec, error) {
	return specload.Build{Command: "bisect", SpecPath: o.SpecPath, Vars: o.Vars, VarName: o.VarName, Duration: o.Duration}.Load(o.Stderr, build)
}

// measure runs one build through the runner: only the cells asked, with
// the spec's measure settings and repeat = "auto" unless the spec fixes a
// repeat above 1; a second attempt takes more repeats.
func (o Options) measure(ctx context.Context, r Request) (*result.Results, error) {
	sp, err := o.load(r.Build)
	if err != nil {
		return nil, err
	}
	m := *sp.Measure
	if !m.RepeatAuto && m.Repeat <= 1 {
		m.Repeat, m.RepeatAuto, m.MaxRepeat = spec.MinAutoRepeat, true, spec.DefaultMaxRepeat
	}
	if r.Attempt > 1 {
		// More repeats, in a form whose comparison with the endpoints is
		// not refused as a change of settings (compare.Settings compares
		// no repeat count when a side is "auto"): the most repeats of
		// repeat = "auto" fixed, or a fixed repeat's count made the
		// minimum of an "auto" one with four times as many at most.
		if m.RepeatAuto {
			m.Repeat, m.RepeatAuto, m.MaxRepeat = m.MaxRepeat, false, 0
		} else {
			m.RepeatAuto, m.MaxRepeat = true, 4*m.Repeat
		}
	}
	sp.Measure = &m
	var keep *regexp.Regexp
	srv := sp.Servers[0]
	if r.Cells != nil {
		names := make([]string, len(r.Cells))
		for i, c := range r.Cells {
			names[i] = regexp.QuoteMeta(c.TestName(srv.Name))
		}
		keep = regexp.MustCompile("^(?:" + strings.Join(names, "|") + ")$")
	}
	dir := filepath.Join(o.OutDir, r.Dir)
	if err := os.RemoveAll(dir); err != nil { // an interrupted attempt's partial results
		return nil, exit.Infraf("bisect: %v", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, exit.Infraf("bisect: %v", err)
	}
	p := plan.New(sp, srv, keep)
	// The searches are not bisected: the comparisons are cell by cell.
	p.Searches = nil
	for i := range p.Steps {
		p.Steps[i].Searches = nil
	}
	cfg := runner.Config{Spec: sp, Server: srv, Plan: p, OutDir: dir, Sim: o.Sim, Tool: o.Tool,
		Baseline: r.Baseline, Policy: o.Policy, ForceStop: o.ForceStop, StreamIdleTimeout: o.StreamIdleTimeout, ReasonText: report.CellReasonText, WarningText: report.WarningText}
	res, err := runner.Run(ctx, cfg)
	if err == nil {
		if failed := res.Unmeasured(); len(failed) > 0 {
			err = fmt.Errorf("%d cell(s) could not be measured: %s (see %s)", len(failed), strings.Join(failed, ", "), filepath.Join(dir, "server.log"))
		}
	}
	return res, err
}
