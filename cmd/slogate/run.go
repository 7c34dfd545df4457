package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/slogate/slogate/assert"
	"github.com/slogate/slogate/compare"
	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/numfmt"
	"github.com/slogate/slogate/plan"
	"github.com/slogate/slogate/report"
	"github.com/slogate/slogate/result"
	"github.com/slogate/slogate/runner"
	"github.com/slogate/slogate/spec"
)

// runFlags are the flags of `slogate run` (README.md#running).
type runFlags struct {
	verbose   bool
	json      bool
	run       string
	out       string
	junit     string
	vars      spec.Vars
	endpoint  string
	sim       bool
	duration  time.Duration
	baseline  string
	timeout   time.Duration
	tolerance string
	// streamTimeout ends a stream that sends nothing for that long.
	streamTimeout time.Duration
	// resume is the output folder of an interrupted run to continue.
	resume string
}

// resumeState is what -resume found in the folder of an interrupted run.
type resumeState struct {
	server   string
	records  []result.CellRecord
	previous *result.Results // nil when results.json is unreadable
}

// cmdRun is `slogate run [flags] SPEC...`: for every server of every spec,
// boot (or reach) it, measure the plan, evaluate the assertions, report.
func cmdRun(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	var f runFlags
	fs := newFlagSet("run", stderr,
		"Usage: slogate run [flags] SPEC...",
		"Boot each server of each spec, measure prefill and sustained decode, check the assertions, report.",
		"Exit codes: 0 pass, 1 assertion or baseline failed, 2 usage or invalid spec, 3 infrastructure error, 130/143 interrupted.")
	fs.BoolVar(&f.verbose, "v", false, "verbose: print every cell's full metric line")
	fs.BoolVar(&f.json, "json", false, "print a test2json event stream on stdout (for gotestsum), nothing else")
	fs.StringVar(&f.run, "run", "", "measure only cells and assertions whose full test name matches `REGEX` (unanchored, not split at slashes)")
	fs.StringVar(&f.out, "out", "", "results `DIR` (default slogate-out/<server-name>; with several servers, DIR/<server-name>)")
	fs.StringVar(&f.junit, "junit", "", "also write one JUnit XML `FILE` for the whole run")
	fs.Var(&f.vars, "var", "set a spec variable, `NAME=VALUE` (repeatable)")
	fs.StringVar(&f.endpoint, "endpoint", "", "measure the already running server at `URL` (no boot, no stop)")
	fs.BoolVar(&f.sim, "sim", false, "launch the built-in simulator with the spec's argv instead of the server command")
	fs.DurationVar(&f.duration, "duration", 0, "override measure.duration, the window of each decode cell (e.g. 2s)")
	fs.StringVar(&f.baseline, "baseline", "", "compare every cell against a previous `RESULTS.json`")
	fs.StringVar(&f.tolerance, "tolerance", "5%", "allowed regression against -baseline (5% or 0.05)")
	fs.DurationVar(&f.streamTimeout, "stream-timeout", runner.DefaultStreamIdleTimeout, "end a stream that sends nothing for `D` (its cell becomes an error; the run goes on)")
	fs.StringVar(&f.resume, "resume", "", "continue the interrupted run in `OUT` (its cells.jsonl): measure only the missing cells; SPEC defaults to the one it ran")
	fs.DurationVar(&f.timeout, "timeout", 0, "bound the whole run (0 = no bound); exceeding it is an infrastructure error (exit 3)")
	if err := fs.Parse(args); err != nil {
		return flagsError(err)
	}
	var rs *resumeState
	paths := fs.Args()
	if f.resume != "" {
		var err error
		if rs, err = loadResume(f.resume); err != nil {
			return err
		}
		if len(paths) == 0 && rs.previous != nil && rs.previous.Spec != "" {
			paths = []string{rs.previous.Spec}
		}
		if f.out != "" && filepath.Clean(f.out) != filepath.Clean(f.resume) {
			return exit.Usagef("-resume %s writes into that folder: drop -out %s", f.resume, f.out)
		}
	}
	if len(paths) == 0 {
		fs.Usage()
		return exit.Usagef("run: no SPEC given")
	}
	var keep *regexp.Regexp
	if f.run != "" {
		re, err := regexp.Compile(f.run)
		if err != nil {
			return exit.Usagef("-run: %v", err)
		}
		keep = re
	}
	if f.sim && f.endpoint != "" {
		return exit.Usagef("-sim and -endpoint exclude each other: -sim launches a simulator, -endpoint measures a server already running")
	}
	if f.duration < 0 {
		return exit.Usagef("-duration must be positive")
	}
	if f.streamTimeout <= 0 {
		return exit.Usagef("-stream-timeout must be positive")
	}
	tol, err := parseTolerance(f.tolerance)
	if err != nil {
		return err
	}
	var base *result.Results
	if f.baseline != "" {
		if base, err = result.Read(f.baseline); err != nil {
			return exit.Usagef("-baseline: %v", err)
		}
	}
	specs, err := loadSpecs(stderr, paths, f.vars)
	if err != nil {
		return err
	}
	if rs != nil {
		if specs, err = resumeSpecs(specs, rs, f.resume); err != nil {
			return err
		}
		if err := resumeLikeBefore(&f, specs[0], rs, stderr); err != nil {
			return err
		}
	}
	if f.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, f.timeout,
			exit.Infraf("the run took longer than -timeout %v and was stopped", f.timeout))
		defer cancel()
	}
	servers := 0
	for _, sp := range specs {
		servers += len(sp.Servers)
	}

	var all []*result.Results
	verdictCode := exit.OK // the verdicts' exit code (assert.ExitCode), worst over servers
	var firstErr error
	for _, sp := range specs {
		if f.duration > 0 {
			m := *sp.Measure
			m.Duration, m.DurationText = f.duration, f.duration.String()
			sp.Measure = &m
		}
		var stream report.TestStream
		if f.json {
			stream = report.NewJSONStream(stdout, sp.Filename)
		} else {
			stream = report.NewConsole(stdout, sp.Filename, report.ConsoleOptionsFor(stdout, nil))
		}
		specStart := time.Now()
		specWorst := result.Pass
		for _, srv := range sp.Servers {
			res, outcome, err := runServer(ctx, sp, srv, keep, f, tol, base, stream, stdout, stderr, servers, rs)
			if res != nil {
				all = append(all, res)
			}
			specWorst = result.Worst(specWorst, outcome)
			if err != nil {
				specWorst = result.Worst(specWorst, result.Error)
				if firstErr == nil {
					firstErr = err
				}
				if ctx.Err() != nil {
					break // interrupted or -timeout: no further server
				}
			}
			if res != nil {
				verdictCode = max(verdictCode, assert.ExitCode(res.Verdicts))
			}
		}
		stream.Finish(specWorst, time.Since(specStart))
		if ctx.Err() != nil {
			break
		}
	}
	if f.junit != "" {
		if err := writeJUnitFile(f.junit, all); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	if firstErr != nil {
		return firstErr
	}
	if verdictCode != exit.OK {
		// The FAIL lines have told the story: 3 for a verdict that read an
		// unmeasured cell, 2 for a condition that is not a bool, 1 for a breach.
		return exit.Quiet(verdictCode)
	}
	return nil
}

// runServer measures one server and finishes it (verdicts, reports). The
// error is the run's infrastructure error or interruption; the outcome is
// that of the verdicts.
func runServer(ctx context.Context, sp *spec.Spec, srv *spec.Server, keep *regexp.Regexp, f runFlags, tol float64,
	base *result.Results, stream report.TestStream, stdout, stderr io.Writer, servers int, rs *resumeState) (*result.Results, result.Outcome, error) {
	out := f.out
	switch {
	case rs != nil:
		out = f.resume
	case out == "":
		out = filepath.Join("slogate-out", srv.Name)
	case servers > 1:
		out = filepath.Join(out, srv.Name)
	}
	p := plan.New(sp, srv, keep)
	obs := &streamObserver{s: stream, server: srv.Name, verbose: f.verbose || f.json}
	if len(p.Steps) == 0 && len(p.Asserts) == 0 && len(p.Expects) == 0 {
		// Like go test's "no tests to run": nothing is started.
		stream.Log(fmt.Sprintf("%s: no cell or assertion matches -run %q; the server is not started", srv.Name, f.run))
		return nil, result.Pass, nil
	}
	stream.Log(fmt.Sprintf("%s: %d cells, estimated %s (server start-up not included); results in %s",
		srv.Name, len(p.Cells()), p.Estimated.Round(time.Second), out))
	cfg := runner.Config{
		Spec: sp, Server: srv, Plan: p, OutDir: out, Endpoint: f.endpoint, Sim: f.sim,
		Tool: version, Observer: obs, StreamIdleTimeout: f.streamTimeout, ForceStop: forceStop(ctx),
	}
	if rs != nil {
		cfg.Resume, cfg.Previous = rs.records, rs.previous
		if cfg.Resume == nil {
			cfg.Resume = []result.CellRecord{}
		}
	}
	res, runErr := runner.Run(ctx, cfg)
	obs.abort(runErr)
	if runErr != nil && ctx.Err() == nil && len(res.Prefill)+len(res.Decode) == 0 {
		// Nothing measured (the server never came up): no verdicts to give.
		return res, result.Error, runErr
	}
	// Only the kept assertions and expect cells are evaluated and reported.
	keepTest := func(test string) bool { return keep == nil || keep.MatchString(test) }
	outcome, ferr := finishServer(finishConfig{
		Spec: sp, Server: srv, Results: res, Baseline: base, Tolerance: tol, OutDir: out,
		Stream: stream, Keep: keepTest, Stdout: stdout, Stderr: stderr, JSON: f.json,
	})
	if runErr != nil {
		if n := len(res.Prefill) + len(res.Decode); n > 0 && !exit.IsQuiet(runErr) {
			// Say how to continue: what was measured is kept.
			runErr = exit.With(exit.Code(runErr), fmt.Errorf("%w\nthe %d cell(s) measured so far are kept in %s; `slogate run -resume %s` measures the rest", runErr, n, out, out))
		}
		return res, outcome, runErr
	}
	if ferr != nil {
		return res, outcome, ferr
	}
	// A cell that could not be measured is an infrastructure problem (exit
	// 3), whether or not an assertion reads it.
	var failed []string
	for _, c := range res.Prefill {
		if c.Status == result.StatusError {
			failed = append(failed, c.Ref().Name()+": "+c.Reason)
		}
	}
	for _, c := range res.Decode {
		if c.Status == result.StatusError {
			failed = append(failed, c.Ref().Name()+": "+c.Reason)
		}
	}
	if len(failed) > 0 {
		serverLog := filepath.Join(out, "server.log")
		if f.endpoint != "" {
			serverLog = "the server's log"
		}
		return res, outcome, exit.Infraf("%s: %d cell(s) could not be measured:\n  %s\nsee %s; `slogate run -resume %s` measures them again and keeps the others",
			srv.Name, len(failed), strings.Join(failed, "\n  "), serverLog, out)
	}
	return res, outcome, nil
}

// loadResume reads the folder of an interrupted run.
func loadResume(dir string) (*resumeState, error) {
	fh, err := os.Open(filepath.Join(dir, "cells.jsonl"))
	if err != nil {
		return nil, exit.Usagef("-resume %s: no cells.jsonl there (%v): give the -out folder of an earlier slogate run", dir, err)
	}
	defer fh.Close()
	recs, err := result.ReadCells(fh)
	if err != nil {
		return nil, exit.Usagef("-resume %s: %v", dir, err)
	}
	rs := &resumeState{records: recs}
	if prev, err := result.Read(filepath.Join(dir, "results.json")); err == nil {
		rs.previous = prev
		rs.server = prev.Server.Name
	}
	if rs.server == "" && len(recs) > 0 {
		rs.server = recs[0].Server
	}
	if rs.server == "" {
		return nil, exit.Usagef("-resume %s: neither results.json nor cells.jsonl says which server was measured", dir)
	}
	return rs, nil
}

// resumeSpecs keeps, of the specs, only the server the resumed run measured.
func resumeSpecs(specs []*spec.Spec, rs *resumeState, dir string) ([]*spec.Spec, error) {
	var names []string
	for _, sp := range specs {
		for _, srv := range sp.Servers {
			if srv.Name == rs.server {
				cp := *sp
				cp.Servers = []*spec.Server{srv}
				return []*spec.Spec{&cp}, nil
			}
			names = append(names, strconv.Quote(srv.Name))
		}
	}
	return nil, exit.Usagef("-resume %s: that run measured server %q, but the spec defines %s: give the spec it ran", dir, rs.server, strings.Join(names, ", "))
}

// resumeLikeBefore makes a resumed run measure the way the interrupted one
// did, so that its cells and the kept ones are comparable: the same window
// (-duration of the first run carries over), the same server mode (-sim or
// -endpoint, unless given again), the same launch command and measure
// settings (a change is a usage error: start a fresh run instead).
func resumeLikeBefore(f *runFlags, sp *spec.Spec, rs *resumeState, stderr io.Writer) error {
	prev := rs.previous
	if prev == nil {
		return nil // only cells.jsonl survived: nothing to compare with
	}
	m := prev.Measure
	if m.DurationS > 0 {
		was := time.Duration(m.DurationS * float64(time.Second))
		switch {
		case f.duration == 0 && sp.Measure != nil && sp.Measure.Duration != was:
			f.duration = was
			fmt.Fprintf(stderr, "slogate: -resume: measuring with the interrupted run's window of %v\n", was)
		case f.duration > 0 && f.duration != was:
			return exit.Usagef("-resume %s: that run measured %v windows, not -duration %v: its cells would not be comparable; drop -duration (or start a fresh run)", f.resume, was, f.duration)
		}
	}
	if sp.Measure != nil && m.MaxOutput > 0 && (sp.Measure.MaxOutput != m.MaxOutput || max(sp.Measure.Repeat, 1) != max(m.Repeat, 1)) {
		return exit.Usagef("-resume %s: the spec's measure block changed since that run (max_output %d → %d, repeat %d → %d): its cells would not be comparable; restore it or start a fresh run without -resume",
			f.resume, m.MaxOutput, sp.Measure.MaxOutput, max(m.Repeat, 1), max(sp.Measure.Repeat, 1))
	}
	if !f.sim && f.endpoint == "" {
		switch {
		case prev.Server.Simulated:
			f.sim = true
			fmt.Fprintln(stderr, "slogate: -resume: launching the simulator (-sim) as the interrupted run did")
		case len(prev.Server.Argv) == 0 && prev.Server.Endpoint != "":
			f.endpoint = prev.Server.Endpoint
			fmt.Fprintf(stderr, "slogate: -resume: measuring the running server at %s (-endpoint) as the interrupted run did\n", f.endpoint)
		}
	}
	if f.endpoint == "" && len(prev.Server.Argv) > 0 {
		if now := sp.Servers[0].RedactedArgv(); !slices.Equal(now, prev.Server.Argv) {
			return exit.Usagef("-resume %s: the server's launch command changed since that run:\n  was: %s\n  now: %s\nits cells would not be comparable; restore the spec or start a fresh run without -resume",
				f.resume, spec.ShellCommand(nil, prev.Server.Argv), spec.ShellCommand(nil, now))
		}
	}
	return nil
}

// parseTolerance reads "5%" or "0.05".
func parseTolerance(s string) (float64, error) {
	v, err := compare.ParsePercent(s)
	if err != nil {
		return 0, exit.Usagef("-tolerance: %v", err)
	}
	return v, nil
}

// streamObserver adapts the runner's events to a report.TestStream: each
// cell is a test, PASS when measured, SKIP when over capacity, FAIL when it
// could not be measured.
type streamObserver struct {
	s       report.TestStream
	server  string
	verbose bool
	open    string // the test announced and not yet ended
	started time.Time
}

func (o *streamObserver) Log(line string) { o.s.Log(line) }

func (o *streamObserver) CellStart(ref result.CellRef) {
	o.open = ref.TestName(o.server)
	o.started = time.Now()
	o.s.Run(o.open)
}

func (o *streamObserver) Progress(p runner.Progress) {
	o.s.Progress(report.Progress{Test: p.Cell.TestName(o.server), Elapsed: p.Elapsed, Window: p.Window,
		Phase: p.Phase, TPS: p.TPS, CellsDone: p.CellsDone, Cells: p.Cells, ETA: p.ETA})
}

func (o *streamObserver) PrefillDone(c result.PrefillCell, elapsed time.Duration) {
	test := c.Ref().TestName(o.server)
	if c.Status == result.StatusError {
		o.s.Output(test, "error: "+c.Reason)
		o.end(test, result.Error, elapsed)
		return
	}
	o.s.Output(test, fmt.Sprintf("%s tok/s prefill · TTFT %s ms (cold)", numfmt.Fixed(c.TPS, 1), numfmt.Fixed(c.TTFTMs, 0)))
	if o.verbose {
		o.s.Output(test, report.PrefillMetrics(&c))
	}
	o.end(test, result.Pass, elapsed)
}

func (o *streamObserver) DecodeDone(c result.DecodeCell, elapsed time.Duration) {
	test := c.Ref().TestName(o.server)
	if o.open != test { // over-capacity cells are announced here
		o.s.Run(test)
	}
	switch c.Status {
	case result.StatusOverCapacity:
		o.s.Output(test, "over capacity, not run: "+c.Reason)
		o.end(test, result.Skip, 0)
		return
	case result.StatusError:
		o.s.Output(test, "error: "+c.Reason)
		o.end(test, result.Error, elapsed)
		return
	}
	line := fmt.Sprintf("%s tok/s total · %s tok/s/request · TTFT %s ms · TBT %s ms · %s",
		numfmt.Fixed(c.TotalTPS, 1), numfmt.Fixed(c.PerRequestTPS, 1), numfmt.Fixed(c.TTFTMs, 0), numfmt.Fixed(c.TBTMs, 2), c.Status)
	if c.Status == result.StatusQueued && c.Reason != "" {
		line += " (" + c.Reason + ")"
	}
	o.s.Output(test, line)
	if o.verbose {
		o.s.Output(test, report.DecodeMetrics(&c))
	}
	for _, w := range c.Warnings {
		o.s.Output(test, "warning: "+w)
	}
	o.end(test, result.Pass, elapsed)
}

func (o *streamObserver) end(test string, out result.Outcome, elapsed time.Duration) {
	o.s.End(test, out, elapsed)
	o.open = ""
}

// abort closes the test that was running when the run stopped.
func (o *streamObserver) abort(err error) {
	if o.open == "" || err == nil {
		return
	}
	msg := err.Error()
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	o.s.Output(o.open, "not measured: "+msg)
	o.end(o.open, result.Error, time.Since(o.started))
}
