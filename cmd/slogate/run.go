package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/slogate/slogate/internal/cli"
	"github.com/slogate/slogate/internal/command/run"
	"github.com/slogate/slogate/internal/command/specload"
	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/event"
	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/interrupt"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/runner"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/views"
)

// cmdRun is `slogate run [flags] SPEC...`: for every server of every spec,
// boot (or reach) it, measure the plan, evaluate the assertions, report.
func cmdRun(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	o := run.Options{Tool: buildVersion().Version, ForceStop: interrupt.Force(ctx), Stdout: stdout, Stderr: stderr}
	fs, rf := runFlagSet(&o)
	paths, err := fs.Parse(stdout, args)
	if err != nil {
		return err
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	// The flags that select what the run measures, recorded in
	// results.json (result.RunFlags): -resume takes them from there.
	flags := result.RunFlags{Run: rf.keep.String(), Server: rf.server, Vars: rf.vars}
	if given["stream-timeout"] {
		flags.StreamTimeout = o.StreamIdleTimeout.String()
	}
	if rf.resume != "" {
		if paths, err = resumeFlags(fs, &o, rf, &flags, given, paths, stderr); err != nil {
			return err
		}
	}
	if len(paths) == 0 {
		return fs.Usagef("no SPEC given")
	}
	o.Keep = rf.keep.Value()
	if err := runOptions(fs, &o, rf); err != nil {
		return err
	}
	if err := loadRunSpecs(stdout, stderr, &o, rf, &flags, paths); err != nil {
		return err
	}
	if o.Duration > 0 {
		flags.Duration = o.Duration.String()
	}
	o.Flags = &flags
	if err := o.CheckOutDirs(); err != nil {
		return err
	}
	warnings, err := o.CheckBaseline()
	if err != nil {
		return err
	}
	for _, w := range warnings {
		fmt.Fprintln(stderr, "slogate: warning: "+views.BaselineWarningLine(w))
	}
	if rf.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, rf.timeout,
			exit.Infraf("the run took longer than -timeout %v and was stopped", rf.timeout))
		defer cancel()
	}
	return run.Run(ctx, o)
}

// runFlags are the values of run's flags that are not run.Options
// fields.
type runFlags struct {
	baseline, resume, server, alpha string
	vars                            spec.Vars
	timeout                         time.Duration
	keep                            *cli.Regexp
	tolerance                       *cli.Fraction
	inconclusive                    *cli.Choice
}

// runFlagSet defines run's flags, into o and the runFlags it returns.
func runFlagSet(o *run.Options) (*cli.FlagSet, *runFlags) {
	rf := &runFlags{}
	fs := cli.CommandFlagSet("run")
	fs.BoolVar(&o.Verbose, "v", false, "verbose: print every cell's full metric line")
	fs.BoolVar(&o.JSON, "json", false, "print a test2json event stream on stdout (for gotestsum), nothing else")
	fs.StringVar(&rf.server, "server", "", "run only the server called `NAME` (one job of a CI matrix: see `slogate plan -format matrix`); the other servers are skipped")
	rf.keep = fs.Regexp("run", "measure only cells and assertions whose full test name matches `REGEX` (unanchored, not split at slashes)")
	fs.StringVar(&o.OutDir, "out", "", "results folder `DIR`, refused when it holds results (default: a new slogate-out/<spec>/<server>/<run-id> per run, and a link latest beside it; with several servers, DIR/<server>)")
	fs.BoolVar(&o.Overwrite, "overwrite", false, "replace the results the -out folder holds (without it, a folder holding results is refused)")
	fs.StringVar(&o.JUnit, "junit", "", "also write one JUnit XML `FILE` for the whole run")
	fs.Var(&rf.vars, "var", "set a spec variable, `NAME=VALUE` (repeatable)")
	fs.StringVar(&o.Endpoint, "endpoint", "", "measure the already running server at `URL` (no boot, no stop)")
	fs.BoolVar(&o.Sim, "sim", false, "launch the built-in simulator with the spec's argv instead of the server command")
	fs.DurationVar(&o.Duration, "duration", 0, "override measure.duration, the window `D` of each decode cell (e.g. 2s)")
	fs.StringVar(&rf.baseline, "baseline", "", "compare every cell against a previous run's results.json `FILE`")
	rf.tolerance = fs.Tolerance("tolerance", "5%", "allowed regression against -baseline, `PCT` (5% or 0.05)")
	fs.StringVar(&rf.alpha, "alpha", "0.05", "one-sided error level `P` of each bound of the interval deciding -baseline cells repeated on both sides")
	rf.inconclusive = fs.Choice("inconclusive", compare.InconclusivePolicies, "what a -baseline comparison that cannot decide does, `POLICY`: fail (exit 4 when nothing regressed) or pass (accept the risk; an estimate beyond the tolerance still fails)")
	fs.BoolVar(&o.Policy.AllowSettingsChange, "allow-settings-change", false, "compare with a -baseline measured with different settings (window, max_output, endpoint, repeat, workload, simulated or real)")
	fs.DurationVar(&o.StreamIdleTimeout, "stream-timeout", runner.DefaultStreamIdleTimeout, "end a stream that sends nothing for `D` (its cell becomes an error; the run goes on)")
	fs.StringVar(&rf.resume, "resume", "", "continue the interrupted run in folder `DIR` (its cells.jsonl): measure only the missing cells, with the -run, -server, -duration, -stream-timeout and -var it was given; SPEC defaults to the one it ran")
	fs.DurationVar(&rf.timeout, "timeout", 0, "bound the whole run by `D` (0 = no bound); exceeding it is an infrastructure error (exit 3)")
	return fs, rf
}

// resumeFlags loads the interrupted run of -resume into o and takes from
// it the flags that select what it measures (those not given): into
// flags, rf and o. It returns the spec paths, the run's own when none is
// given.
func resumeFlags(fs *cli.FlagSet, o *run.Options, rf *runFlags, flags *result.RunFlags, given map[string]bool, paths []string, stderr io.Writer) ([]string, error) {
	var err error
	if o.Resumed, err = runner.LoadResume(rf.resume); err != nil {
		return nil, err
	}
	if err := o.Resumed.MatchFlags(flags, func(name string) bool { return given[name] }, func(n event.Note) { views.WriteResumeNote(stderr, n) }); err != nil {
		return nil, err
	}
	if err := rf.keep.Set(flags.Run); err != nil {
		return nil, fs.Usagef("-resume %s: its -run %q: %v", rf.resume, flags.Run, err)
	}
	rf.server, rf.vars = flags.Server, flags.Vars
	if flags.StreamTimeout != "" {
		if o.StreamIdleTimeout, err = time.ParseDuration(flags.StreamTimeout); err != nil {
			return nil, fs.Usagef("-resume %s: its -stream-timeout %q: %v", rf.resume, flags.StreamTimeout, err)
		}
	}
	if len(paths) == 0 && o.Resumed.SpecPath() != "" {
		paths = []string{o.Resumed.SpecPath()}
	}
	if o.OutDir != "" && filepath.Clean(o.OutDir) != filepath.Clean(rf.resume) {
		return nil, fs.Usagef("-resume %s writes into that folder: drop -out %s", rf.resume, o.OutDir)
	}
	return paths, nil
}

// runOptions checks the flags that set how the run measures and compares
// and sets o's policy and baseline from them.
func runOptions(fs *cli.FlagSet, o *run.Options, rf *runFlags) error {
	if o.Sim && o.Endpoint != "" {
		return fs.Usagef("-sim and -endpoint exclude each other: -sim launches a simulator, -endpoint measures a server already running")
	}
	if o.Duration < 0 {
		return fs.Usagef("-duration must be positive")
	}
	if o.StreamIdleTimeout <= 0 {
		return fs.Usagef("-stream-timeout must be positive")
	}
	o.Policy.Tolerance = rf.tolerance.Value()
	var err error
	if o.Policy.Inconclusive, err = compare.ParseInconclusive(rf.inconclusive.Value()); err != nil {
		return fs.Usagef("%v", err)
	}
	if o.Policy.Alpha, err = compare.ParseAlpha(rf.alpha); err != nil {
		return fs.Usagef("-alpha: %v", err)
	}
	if rf.baseline != "" {
		if o.Baseline, err = result.Read(rf.baseline); err != nil {
			return fs.Usagef("-baseline: %v", err)
		}
		o.BaselinePath = rf.baseline
	}
	return nil
}

// loadRunSpecs loads the specs at paths into o, narrowed to -server and
// to the resumed run's server, and records the variables, redacted, in
// flags.
func loadRunSpecs(stdout, stderr io.Writer, o *run.Options, rf *runFlags, flags *result.RunFlags, paths []string) error {
	var err error
	if o.Specs, err = specload.LoadForRun(stdout, stderr, paths, rf.vars, o.JSON); err != nil {
		return err
	}
	var servers []*spec.Server
	for _, sp := range o.Specs {
		servers = append(servers, sp.Servers...)
	}
	flags.Vars = rf.vars.Redacted(servers)
	if rf.server != "" {
		if o.Specs, err = specload.SelectServer(o.Specs, rf.server); err != nil {
			return err
		}
	}
	return o.Resume(stderr)
}
