// Package run is `slogate run`: it turns the measurements into the run's answer; it
// runs each server of each spec through the runner, streams every cell and
// verdict as a test, evaluates the assertions and the baseline, writes the
// reports and GitHub annotations, and decides the run's exit code (a
// breach exits 1, a cell that could not be measured exits 3).
package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/slogate/slogate/internal/assert"
	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/event"
	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/judge"
	"github.com/slogate/slogate/internal/plan"
	"github.com/slogate/slogate/internal/report"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/runner"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/views"
	"github.com/slogate/slogate/internal/vocab"
)

// Options is one `slogate run` over valid specs, its flags already checked.
type Options struct {
	Specs []*spec.Spec
	// Keep selects the cells and assertions by full test name (-run); nil keeps all.
	Keep *regexp.Regexp
	// OutDir is -out: "" gives every server a fresh folder
	// DefaultOutRoot/<spec>/<server>/<run-id>; with several servers, each
	// writes into OutDir/<server> (explicitOutDir). A resumed run writes
	// into its folder. CheckOutDirs refuses a folder holding results.
	OutDir string
	// Overwrite replaces the results an -out folder holds (-overwrite).
	Overwrite bool
	// RunID names the default folders (runID of the start when "").
	RunID string
	// Resumed continues an interrupted run (-resume); nil otherwise.
	Resumed *runner.Resumed
	// Endpoint measures a running server (-endpoint); Sim launches the
	// simulator (-sim).
	Endpoint string
	Sim      bool
	// Duration overrides measure.duration when > 0 (-duration).
	Duration time.Duration
	// Baseline is the -baseline run (nil without one); BaselinePath its
	// file, which CheckOutDirs keeps out of the folders the run writes;
	// Policy how the run is compared with it (-tolerance, -alpha,
	// -inconclusive, -allow-settings-change; docs/method.md#comparing-runs),
	// which repeat = "auto" stops on too.
	Baseline     *result.Results
	BaselinePath string
	Policy       compare.Policy
	// JUnit is the -junit file; "" writes none.
	JUnit string
	// Verbose prints every cell's full metric line (-v); JSON streams
	// test2json events on Stdout instead of the console (-json).
	Verbose, JSON bool
	// Tool is slogate's version, recorded in results.json.
	Tool string
	// Flags are the run's selecting flags as given, recorded in each
	// server's results.json for -resume (result.RunFlags); nil records none.
	Flags *result.RunFlags
	// StreamIdleTimeout and ForceStop are passed to runner.Config.
	StreamIdleTimeout time.Duration
	ForceStop         <-chan struct{}
	Stdout, Stderr    io.Writer
}

// Run measures every server of every spec and finishes each (verdicts,
// reports). It stops at the first interruption. The error carries the exit
// code: the first infrastructure error or interruption, else the worst
// verdict's code (judge.ExitCode) as a quiet error, the FAIL lines having
// told the story.
func Run(ctx context.Context, o Options) error {
	if err := o.preflight(ctx); err != nil {
		return err
	}
	if o.RunID == "" {
		o.RunID = runID(time.Now())
	}
	var all []*result.Results
	verdictCode := exit.OK // worst over servers
	var firstErr error
	paths := make([]string, len(o.Specs))
	for i, sp := range o.Specs {
		paths[i] = sp.Filename
	}
	specNames := vocab.SpecNames(paths) // the default folders' <spec>
	for i, sp := range o.Specs {
		sp = sp.WithDuration(o.Duration)
		var stream report.TestStream
		if o.JSON {
			stream = report.NewJSONStream(o.Stdout, sp.Filename)
		} else {
			stream = report.NewConsole(o.Stdout, sp.Filename, report.ConsoleOptionsFor(o.Stdout, nil))
		}
		specStart := time.Now()
		specWorst := vocab.Pass
		for _, srv := range sp.Servers {
			sr := serverRun{Options: &o, spec: sp, specName: specNames[i], server: srv, stream: stream, outDir: o.explicitOutDir(sp, srv)}
			res, outcome, err := sr.run(ctx)
			if res != nil {
				all = append(all, res)
			}
			specWorst = vocab.Worst(specWorst, outcome)
			if err != nil {
				specWorst = vocab.Worst(specWorst, vocab.Error)
				if firstErr == nil {
					firstErr = err
				}
				if ctx.Err() != nil {
					break // interrupted or -timeout: no further server
				}
			}
			if res != nil {
				verdictCode = exit.Worst(verdictCode, judge.ExitCode(res.Verdicts))
				if len(res.Saturated()) > 0 { // docs/method.md#saturation: never a silent pass
					verdictCode = exit.Worst(verdictCode, exit.Fail)
					specWorst = vocab.Worst(specWorst, vocab.Fail)
				}
				if len(res.Unmeasurable()) > 0 { // docs/method.md#unmeasurable
					verdictCode = exit.Worst(verdictCode, exit.Inconclusive)
					specWorst = vocab.Worst(specWorst, vocab.Inconclusive)
				}
			}
		}
		stream.Finish(specWorst, time.Since(specStart))
		if ctx.Err() != nil {
			break
		}
	}
	if o.JUnit != "" {
		if err := writeJUnitFile(o.JUnit, all); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	if firstErr != nil {
		return firstErr
	}
	if verdictCode != exit.OK {
		// 3 for a verdict that read an unmeasured cell, 2 for a condition
		// that is not a bool, 1 for a breach.
		return exit.Quiet(verdictCode)
	}
	return nil
}

// preflight checks every server the run measures (runner.Preflight: a
// -sim the engine refuses, a command not installed, a port taken, an
// endpoint that does not answer) before anything is printed or created, so
// that a run that cannot measure leaves no folder and no results.json
// behind. It reports every server's problem at once, with the worst exit
// code (a usage error 2, a server that cannot start 3); an endpoint, one
// for every server, is waited for only until it fails. Under -json each
// spec refused is a failed test2json package, as an invalid spec is.
func (o *Options) preflight(ctx context.Context) error {
	var errs []error
	code := exit.OK
	servers := 0
	for _, sp := range o.Specs {
		servers += len(sp.Servers)
	}
	for _, sp := range o.Specs {
		var refused []error
		for _, srv := range sp.Servers {
			if nothingToRun(plan.New(sp, srv, o.Keep)) {
				continue
			}
			err := runner.Preflight(ctx, sp, srv, o.Endpoint, o.Sim)
			if err == nil {
				continue
			}
			if servers > 1 && !strings.HasPrefix(err.Error(), fmt.Sprintf("server %q", srv.Name)) {
				err = exit.With(exit.Code(err), fmt.Errorf("server %q: %w", srv.Name, err))
			}
			refused = append(refused, err)
			code = exit.Worst(code, exit.Code(err))
			if o.Endpoint != "" {
				break
			}
		}
		if len(refused) > 0 && o.JSON {
			stream := report.NewJSONStream(o.Stdout, sp.Filename)
			for _, err := range refused {
				for _, l := range strings.Split(err.Error(), "\n") {
					stream.Log(l)
				}
			}
			stream.Finish(vocab.Error, 0)
		}
		errs = append(errs, refused...)
		if len(refused) > 0 && o.Endpoint != "" {
			break
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return exit.With(code, errors.Join(errs...))
}

// nothingToRun reports whether p measures and checks nothing (-run kept
// none of it): the server is not started, like go test's "no tests to
// run".
func nothingToRun(p *plan.Plan) bool {
	return len(p.Steps) == 0 && len(p.Asserts) == 0 && len(p.Expects) == 0 && len(p.Correctness) == 0
}

// Resume narrows Specs to the server of the interrupted run in Resumed and
// makes the run measure the way it did (runner.Resumed.MatchPrevious); the
// settings it carries over it says on notes. Without Resumed it does nothing.
func (o *Options) Resume(notes io.Writer) error {
	if o.Resumed == nil {
		return nil
	}
	specs, err := o.Resumed.SelectServer(o.Specs)
	if err != nil {
		return err
	}
	o.Specs = specs
	set := runner.ResumeSettings{Duration: o.Duration, Sim: o.Sim, Endpoint: o.Endpoint}
	if err := o.Resumed.MatchPrevious(o.Specs[0], &set, func(n event.Note) { views.WriteResumeNote(notes, n) }); err != nil {
		return err
	}
	o.Duration, o.Sim, o.Endpoint = set.Duration, set.Sim, set.Endpoint
	return nil
}

// serverRun is the run of one server of one spec.
type serverRun struct {
	*Options
	spec *spec.Spec
	// specName names the spec's default folders (vocab.SpecNames).
	specName string
	server   *spec.Server
	stream   report.TestStream
	// outDir is the folder -out or -resume gives; "" for a fresh default one.
	outDir string
}

// run measures one server and finishes it (verdicts, reports). The error
// is the run's infrastructure error or interruption; the outcome is that
// of the verdicts.
func (sr serverRun) run(ctx context.Context) (*result.Results, vocab.Outcome, error) {
	srv := sr.server
	p := plan.New(sr.spec, srv, sr.Keep)
	obs := views.NewRunObserver(sr.stream, srv.Name, sr.Verbose || sr.JSON)
	if nothingToRun(p) {
		// Like go test's "no tests to run": nothing is started.
		pattern := ""
		if sr.Keep != nil {
			pattern = sr.Keep.String()
		}
		sr.stream.Log(views.NoMatchLine(srv.Name, pattern))
		return nil, vocab.Pass, nil
	}
	out, latest := sr.outDir, false // latest: out's LatestLink moves to it when the run completes
	switch {
	case out == "":
		var err error
		if out, err = newRunDir(sr.specName, srv.Name, sr.RunID); err != nil {
			return nil, vocab.Error, err
		}
		latest = true
	case sr.Resumed != nil:
		latest = hasLatestLink(out)
	case sr.Overwrite:
		if err := clearResults(out); err != nil {
			return nil, vocab.Error, err
		}
	default:
		if ok, was := reusableOutDir(out); ok {
			// An earlier run into out measured nothing (CheckOutDirs let it
			// through): replace its files, so that none is read as this run's.
			if err := clearResults(out); err != nil {
				return nil, vocab.Error, err
			}
			was, _, _ = strings.Cut(was, "\n")
			sr.stream.Log(views.ReplacingLine(srv.Name, out, was))
		}
	}
	existed := isDir(out) // false for a default folder: newRunDir made it
	if latest {
		existed = false
	}
	sr.stream.Log(sr.header(p, out))
	cfg := runner.Config{
		Spec: sr.spec, Server: srv, Plan: p, OutDir: out, Endpoint: sr.Endpoint, Sim: sr.Sim,
		Tool: sr.Tool, Flags: sr.Flags, Observer: obs, StreamIdleTimeout: sr.StreamIdleTimeout, ForceStop: sr.ForceStop,
		Baseline: sr.Baseline, Policy: sr.Policy, ReasonText: report.CellReasonText, WarningText: report.WarningText,
	}
	SetObjectives(&cfg, sr.spec)
	if sr.Resumed != nil {
		sr.Resumed.Apply(&cfg)
	}
	res, runErr := runner.Run(ctx, cfg)
	obs.Abort(runErr)
	if g := res.GPUTime; g != nil {
		sr.stream.Log(views.GPUTimeLine(srv.Name, g))
		if l := views.SaturationSavedLine(srv.Name, res); l != "" {
			sr.stream.Log(l)
		}
	}
	for _, l := range views.SearchCostLines(srv.Name, res) {
		sr.stream.Log(l)
	}
	if runErr != nil && ctx.Err() == nil && res.Measured() == 0 {
		// Nothing measured (the server never came up): no verdicts to give.
		switch {
		case sr.Resumed != nil:
		case !isFile(filepath.Join(out, "server.log")):
			// No server was started (what preflight checks changed since):
			// nothing of the run is worth keeping.
			removeRun(out, existed)
		case sr.outDir != "" && !exit.IsQuiet(runErr):
			// The server's log says why it did not come up; say that the
			// folder is not taken: a retry into it works.
			runErr = exit.With(exit.Code(runErr), fmt.Errorf("%w\nnothing was measured: %s keeps the server's log of this attempt (server.log), and a run with -out %s again replaces it", runErr, out, out))
		}
		return res, vocab.Error, runErr
	}
	// Only the kept assertions and expect cells are evaluated and reported.
	keepTest := func(test string) bool { return sr.Keep == nil || sr.Keep.MatchString(test) }
	refusal := judgeRun(judgeConfig{
		Spec: sr.spec, Server: srv, Results: res, Baseline: sr.Baseline, Policy: sr.Policy, OutDir: out,
		Stream: sr.stream, Keep: keepTest,
	})
	ferr := publish(publishConfig{Results: res, OutDir: out, Stream: sr.stream, Stdout: sr.Stdout, Stderr: sr.Stderr, JSON: sr.JSON})
	if ferr == nil {
		ferr = refusal // an unwritten file (exit 3) comes before a refused comparison
	}
	outcome := res.Outcome()
	if runErr != nil {
		if n := res.Measured(); n > 0 && !exit.IsQuiet(runErr) {
			// Say how to continue: what was measured is kept.
			runErr = exit.With(exit.Code(runErr), fmt.Errorf("%w\nmeasured so far: %d (cells, searches and correctness blocks), kept in %s; `slogate run -resume %s` measures the rest", runErr, n, out, out))
		}
		return res, outcome, runErr
	}
	if ferr != nil {
		return res, outcome, ferr
	}
	if latest {
		if err := moveLatest(out); err != nil {
			views.WriteLatestNotMoved(sr.Stderr, filepath.Join(filepath.Dir(out), LatestLink), out, err)
		}
	}
	return res, outcome, unmeasuredCells(srv.Name, res, out, sr.Endpoint != "")
}

// header is the line that opens a server's run: what it measures, how
// long that should take and where the results go. A resumed run counts
// only the cells left to measure.
func (sr serverRun) header(p *plan.Plan, out string) string {
	h := views.RunHeader{Server: sr.server.Name, Sim: sr.Sim, Cells: len(p.Cells()), Estimated: p.Estimated, OutDir: out}
	if sr.Resumed != nil {
		h.Cells, h.Estimated = p.Remaining(sr.spec, sr.Resumed.Measured())
		h.Resumed, h.Of = true, len(p.Cells())
	}
	return views.RunHeaderLine(h)
}

// unmeasuredCells makes what the run could not measure
// (result.Results.Unmeasured, the rule RunExitCode reads too) an
// infrastructure problem (exit 3), whether or not an assertion reads it. It
// returns nil when everything was measured.
func unmeasuredCells(server string, res *result.Results, outDir string, endpoint bool) error {
	failed := res.Unmeasured()
	if len(failed) == 0 {
		return nil
	}
	serverLog := filepath.Join(outDir, "server.log")
	if endpoint {
		serverLog = "the server's log"
	}
	return exit.Infraf("%s: %d cell(s) could not be measured:\n  %s\nsee %s; `slogate run -resume %s` measures them again and keeps the others",
		server, len(failed), strings.Join(failed, "\n  "), serverLog, outDir)
}

// SetObjectives gives cfg the judges of sp's search objectives (assert's,
// their readings in views' words), as every command that runs searches
// measures them.
func SetObjectives(cfg *runner.Config, sp *spec.Spec) {
	cfg.Objective = func(s *spec.Search, c *result.DecodeCell) (bool, []string, error) {
		met, read, err := assert.Objective(sp, s, c)
		return met, views.ReadingLines(read), err
	}
	cfg.ObjectiveText = func(s *spec.Search) string { return assert.ObjectiveText(sp, s) }
	cfg.TrafficObjective = func(s *spec.Search, c *result.TrafficCell) (bool, []string, error) {
		met, read, err := assert.TrafficObjective(sp, s, c)
		return met, views.ReadingLines(read), err
	}
}
