package main

import (
	"context"
	"io"
	"path/filepath"
	"regexp"
	"time"

	"github.com/slogate/slogate/compare"
	"github.com/slogate/slogate/gate"
	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/result"
	"github.com/slogate/slogate/runner"
	"github.com/slogate/slogate/spec"
)

// runFlags are the flags of `slogate run` (README, "slogate run").
type runFlags struct {
	verbose, json, sim                   bool
	run, out, junit, endpoint, baseline  string
	tolerance, resume                    string
	vars                                 spec.Vars
	duration, timeout, streamIdleTimeout time.Duration
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
	fs.DurationVar(&f.streamIdleTimeout, "stream-timeout", runner.DefaultStreamIdleTimeout, "end a stream that sends nothing for `D` (its cell becomes an error; the run goes on)")
	fs.StringVar(&f.resume, "resume", "", "continue the interrupted run in `OUT` (its cells.jsonl): measure only the missing cells; SPEC defaults to the one it ran")
	fs.DurationVar(&f.timeout, "timeout", 0, "bound the whole run (0 = no bound); exceeding it is an infrastructure error (exit 3)")
	if err := fs.Parse(args); err != nil {
		return flagsError(err)
	}
	o := gate.Options{OutDir: f.out, Endpoint: f.endpoint, Sim: f.sim, Duration: f.duration, JUnit: f.junit,
		Verbose: f.verbose, JSON: f.json, Tool: version, StreamIdleTimeout: f.streamIdleTimeout,
		ForceStop: forceStop(ctx), Stdout: stdout, Stderr: stderr}
	paths := fs.Args()
	if f.resume != "" {
		var err error
		if o.Resumed, err = runner.LoadResume(f.resume); err != nil {
			return err
		}
		if len(paths) == 0 && o.Resumed.SpecPath() != "" {
			paths = []string{o.Resumed.SpecPath()}
		}
		if f.out != "" && filepath.Clean(f.out) != filepath.Clean(f.resume) {
			return exit.Usagef("-resume %s writes into that folder: drop -out %s", f.resume, f.out)
		}
	}
	if len(paths) == 0 {
		fs.Usage()
		return exit.Usagef("run: no SPEC given")
	}
	if f.run != "" {
		re, err := regexp.Compile(f.run)
		if err != nil {
			return exit.Usagef("-run: %v", err)
		}
		o.Keep = re
	}
	if f.sim && f.endpoint != "" {
		return exit.Usagef("-sim and -endpoint exclude each other: -sim launches a simulator, -endpoint measures a server already running")
	}
	if f.duration < 0 {
		return exit.Usagef("-duration must be positive")
	}
	if f.streamIdleTimeout <= 0 {
		return exit.Usagef("-stream-timeout must be positive")
	}
	var err error
	if o.Tolerance, err = parseTolerance(f.tolerance); err != nil {
		return err
	}
	if f.baseline != "" {
		if o.Baseline, err = result.Read(f.baseline); err != nil {
			return exit.Usagef("-baseline: %v", err)
		}
	}
	if o.Specs, err = loadSpecs(stderr, paths, f.vars); err != nil {
		return err
	}
	if o.Resumed != nil {
		if o.Specs, err = o.Resumed.SelectServer(o.Specs); err != nil {
			return err
		}
		set := runner.ResumeSettings{Duration: o.Duration, Sim: o.Sim, Endpoint: o.Endpoint}
		if err := o.Resumed.MatchPrevious(o.Specs[0], &set, stderr); err != nil {
			return err
		}
		o.Duration, o.Sim, o.Endpoint = set.Duration, set.Sim, set.Endpoint
	}
	if f.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, f.timeout,
			exit.Infraf("the run took longer than -timeout %v and was stopped", f.timeout))
		defer cancel()
	}
	return gate.Run(ctx, o)
}

// parseTolerance reads "5%" or "0.05".
func parseTolerance(s string) (float64, error) {
	v, err := compare.ParsePercent(s)
	if err != nil {
		return 0, exit.Usagef("-tolerance: %v", err)
	}
	return v, nil
}
