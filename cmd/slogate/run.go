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
	var baseline, resume, server, alpha string
	var vars spec.Vars
	var timeout time.Duration
	fs := cli.CommandFlagSet("run")
	fs.BoolVar(&o.Verbose, "v", false, "verbose: print every cell's full metric line")
	fs.BoolVar(&o.JSON, "json", false, "print a test2json event stream on stdout (for gotestsum), nothing else")
	fs.StringVar(&server, "server", "", "run only the server called `NAME` (one job of a CI matrix: see `slogate plan -format matrix`); the other servers are skipped")
	keep := fs.Regexp("run", "measure only cells and assertions whose full test name matches `REGEX` (unanchored, not split at slashes)")
	fs.StringVar(&o.OutDir, "out", "", "results folder `DIR`, refused when it holds results (default: a new slogate-out/<spec>/<server>/<run-id> per run, and a link latest beside it; with several servers, DIR/<server>)")
	fs.BoolVar(&o.Overwrite, "overwrite", false, "replace the results the -out folder holds (without it, a folder holding results is refused)")
	fs.StringVar(&o.JUnit, "junit", "", "also write one JUnit XML `FILE` for the whole run")
	fs.Var(&vars, "var", "set a spec variable, `NAME=VALUE` (repeatable)")
	fs.StringVar(&o.Endpoint, "endpoint", "", "measure the already running server at `URL` (no boot, no stop)")
	fs.BoolVar(&o.Sim, "sim", false, "launch the built-in simulator with the spec's argv instead of the server command")
	fs.DurationVar(&o.Duration, "duration", 0, "override measure.duration, the window `D` of each decode cell (e.g. 2s)")
	fs.StringVar(&baseline, "baseline", "", "compare every cell against a previous run's results.json `FILE`")
	tolerance := fs.Tolerance("tolerance", "5%", "allowed regression against -baseline, `PCT` (5% or 0.05)")
	fs.StringVar(&alpha, "alpha", "0.05", "one-sided error level `P` of each bound of the interval deciding -baseline cells repeated on both sides")
	inconclusive := fs.Choice("inconclusive", compare.InconclusivePolicies, "what a -baseline comparison that cannot decide does, `POLICY`: fail (exit 4 when nothing regressed) or pass (accept the risk; an estimate beyond the tolerance still fails)")
	fs.BoolVar(&o.Policy.AllowSettingsChange, "allow-settings-change", false, "compare with a -baseline measured with different settings (window, max_output, endpoint, repeat, workload, simulated or real)")
	fs.DurationVar(&o.StreamIdleTimeout, "stream-timeout", runner.DefaultStreamIdleTimeout, "end a stream that sends nothing for `D` (its cell becomes an error; the run goes on)")
	fs.StringVar(&resume, "resume", "", "continue the interrupted run in folder `DIR` (its cells.jsonl): measure only the missing cells, with the -run, -server, -duration, -stream-timeout and -var it was given; SPEC defaults to the one it ran")
	fs.DurationVar(&timeout, "timeout", 0, "bound the whole run by `D` (0 = no bound); exceeding it is an infrastructure error (exit 3)")
	paths, err := fs.Parse(stdout, args)
	if err != nil {
		return err
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	// The flags that select what the run measures, recorded in
	// results.json (result.RunFlags): -resume takes them from there.
	flags := result.RunFlags{Run: keep.String(), Server: server, Vars: vars}
	if given["stream-timeout"] {
		flags.StreamTimeout = o.StreamIdleTimeout.String()
	}
	if resume != "" {
		if o.Resumed, err = runner.LoadResume(resume); err != nil {
			return err
		}
		if err := o.Resumed.MatchFlags(&flags, func(name string) bool { return given[name] }, func(n runner.Note) { views.WriteResumeNote(stderr, n) }); err != nil {
			return err
		}
		if err := keep.Set(flags.Run); err != nil {
			return fs.Usagef("-resume %s: its -run %q: %v", resume, flags.Run, err)
		}
		server, vars = flags.Server, flags.Vars
		if flags.StreamTimeout != "" {
			if o.StreamIdleTimeout, err = time.ParseDuration(flags.StreamTimeout); err != nil {
				return fs.Usagef("-resume %s: its -stream-timeout %q: %v", resume, flags.StreamTimeout, err)
			}
		}
		if len(paths) == 0 && o.Resumed.SpecPath() != "" {
			paths = []string{o.Resumed.SpecPath()}
		}
		if o.OutDir != "" && filepath.Clean(o.OutDir) != filepath.Clean(resume) {
			return fs.Usagef("-resume %s writes into that folder: drop -out %s", resume, o.OutDir)
		}
	}
	if len(paths) == 0 {
		return fs.Usagef("no SPEC given")
	}
	o.Keep = keep.Value()
	if o.Sim && o.Endpoint != "" {
		return fs.Usagef("-sim and -endpoint exclude each other: -sim launches a simulator, -endpoint measures a server already running")
	}
	if o.Duration < 0 {
		return fs.Usagef("-duration must be positive")
	}
	if o.StreamIdleTimeout <= 0 {
		return fs.Usagef("-stream-timeout must be positive")
	}
	o.Policy.Tolerance = tolerance.Value()
	if o.Policy.Inconclusive, err = compare.ParseInconclusive(inconclusive.Value()); err != nil {
		return fs.Usagef("%v", err)
	}
	if o.Policy.Alpha, err = compare.ParseAlpha(alpha); err != nil {
		return fs.Usagef("-alpha: %v", err)
	}
	if baseline != "" {
		if o.Baseline, err = result.Read(baseline); err != nil {
			return fs.Usagef("-baseline: %v", err)
		}
		o.BaselinePath = baseline
	}
	if o.Specs, err = specload.LoadForRun(stdout, stderr, paths, vars, o.JSON); err != nil {
		return err
	}
	var servers []*spec.Server
	for _, sp := range o.Specs {
		servers = append(servers, sp.Servers...)
	}
	flags.Vars = vars.Redacted(servers)
	if server != "" {
		if o.Specs, err = specload.SelectServer(o.Specs, server); err != nil {
			return err
		}
	}
	if err := o.Resume(stderr); err != nil {
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
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, timeout,
			exit.Infraf("the run took longer than -timeout %v and was stopped", timeout))
		defer cancel()
	}
	return run.Run(ctx, o)
}
