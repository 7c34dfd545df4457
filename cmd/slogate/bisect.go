package main

import (
	"context"
	"io"

	"github.com/slogate/slogate/internal/cli"
	"github.com/slogate/slogate/internal/command/bisect"
	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/interrupt"
	"github.com/slogate/slogate/internal/runner"
)

// cmdBisect is `slogate bisect -good G -bad B -candidates FILE SPEC`: the
// first build where each cell that regressed between G and B did
// (internal/command/bisect does the work).
func cmdBisect(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	o := bisect.Options{Tool: buildVersion().Version, ForceStop: interrupt.Force(ctx), Stdout: stdout, Stderr: stderr}
	var candidates, alpha string
	fs := cli.CommandFlagSet("bisect")
	fs.StringVar(&o.Good, "good", "", "the good build `G` (a line of -candidates)")
	fs.StringVar(&o.Bad, "bad", "", "the bad build `B` (a line of -candidates, after G)")
	fs.StringVar(&candidates, "candidates", "", "the builds in order, one a line, `FILE`: container images (tags or digests), or with -var-name the variable's values")
	fs.StringVar(&o.VarName, "var-name", "", "the spec variable `NAME` each build sets (a launched server); without it each build replaces container.image")
	fs.StringVar(&o.OutDir, "out", "", "the bisection's folder `DIR`: bisect.jsonl and each build's results (default "+bisect.DefaultOutDir+")")
	fs.BoolVar(&o.Resume, "resume", false, "continue the interrupted bisection in -out from its bisect.jsonl: no build measured there is measured again")
	fs.DurationVar(&o.MaxGPUTime, "max-gpu-time", 0, "stop undecided (exit 4) once the bisection has spent `D` of GPU time (0 = no bound)")
	fs.Var(&o.Vars, "var", "set a spec variable, `NAME=VALUE` (repeatable)")
	fs.BoolVar(&o.Sim, "sim", false, "launch the built-in simulator with the spec's argv instead of the server command")
	fs.DurationVar(&o.Duration, "duration", 0, "override measure.duration, the window `D` of each decode cell")
	tolerance := fs.Tolerance("tolerance", "5%", "the change a step calls a regression, `PCT` (5% or 0.05)")
	fs.StringVar(&alpha, "alpha", "0.05", "one-sided error level `P` of each comparison's bounds")
	metrics := fs.String("metric", "", "comma-separated `METRICS` the steps decide on (default total_tps,ttft_ms,tbt_ms for decode and tps for prefill); server_itl_ms_mean decides on the server's own clock")
	fs.DurationVar(&o.StreamIdleTimeout, "stream-timeout", runner.DefaultStreamIdleTimeout, "end a stream that sends nothing for `D`")
	paths, err := fs.Parse(stdout, args)
	if err != nil {
		return err
	}
	switch {
	case len(paths) != 1:
		return fs.Usagef("bisect takes one SPEC, got %d", len(paths))
	case o.Good == "" || o.Bad == "":
		return fs.Usagef("-good and -bad are required")
	case candidates == "":
		return fs.Usagef("-candidates FILE is required: the builds between -good and -bad, in order")
	case o.MaxGPUTime < 0 || o.Duration < 0:
		return fs.Usagef("-max-gpu-time and -duration must be positive")
	}
	o.SpecPath = paths[0]
	o.Policy.Tolerance = tolerance.Value()
	if o.Policy.Alpha, err = compare.ParseAlpha(alpha); err != nil {
		return fs.Usagef("-alpha: %v", err)
	}
	o.Policy.Metrics = cli.SplitList(*metrics)
	if err := compare.CheckMetrics(o.Policy.Metrics); err != nil {
		return fs.Usagef("-metric: %v", err)
	}
	if o.Builds, err = bisect.ReadCandidates(candidates); err != nil {
		return err
	}
	return bisect.Command(ctx, o)
}
