package main

import (
	"context"
	"io"

	"github.com/slogate/slogate/internal/cli"
	"github.com/slogate/slogate/internal/command/interleave"
	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/interrupt"
	"github.com/slogate/slogate/internal/runner"
)

// cmdInterleave is `slogate interleave -a A -b B SPEC`: two builds of one
// server booted alternately in randomized blocks and compared block by
// block (internal/command/interleave does the work).
func cmdInterleave(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	o := interleave.Options{Tool: buildVersion().Version, ForceStop: interrupt.Force(ctx), Stdout: stdout, Stderr: stderr}
	var alpha string
	var seed int64
	fs := cli.CommandFlagSet("interleave")
	fs.StringVar(&o.A, "a", "", "the reference build `A`: a container image, or with -var-name the variable's value")
	fs.StringVar(&o.B, "b", "", "the build `B` compared with A")
	fs.StringVar(&o.VarName, "var-name", "", "the spec variable `NAME` each build sets (a launched server); without it each build replaces container.image")
	fs.IntVar(&o.Blocks, "blocks", interleave.DefaultBlocks, "the blocks `BLOCKS`, each one boot of A and one of B (the first look with repeat = \"auto\")")
	fs.IntVar(&o.MaxBlocks, "max-blocks", interleave.DefaultMaxBlocks, "the most blocks `BLOCKS` repeat = \"auto\" measures")
	fs.Int64Var(&seed, "seed", 1, "the seed `SEED` each block's order is drawn from")
	fs.StringVar(&o.OutDir, "out", "", "the folder `DIR` of every boot's results and interleave.json (default "+interleave.DefaultOutDir+")")
	fs.Var(&o.Vars, "var", "set a spec variable, `NAME=VALUE` (repeatable)")
	fs.BoolVar(&o.Sim, "sim", false, "launch the built-in simulator with the spec's argv instead of the server command")
	fs.DurationVar(&o.Duration, "duration", 0, "override measure.duration, the window `D` of each decode cell")
	tolerance := fs.Tolerance("tolerance", "5%", "the change called a regression, `PCT` (5% or 0.05)")
	fs.StringVar(&alpha, "alpha", "0.05", "one-sided error level `P` of each cell's bounds")
	inconclusive := fs.Choice("inconclusive", compare.InconclusivePolicies, "what a cell the blocks cannot decide does, `POLICY`: fail (exit 4 when nothing regressed) or pass (accept the risk; an estimate beyond the tolerance still fails)")
	fs.DurationVar(&o.StreamIdleTimeout, "stream-timeout", runner.DefaultStreamIdleTimeout, "end a stream that sends nothing for `D`")
	paths, err := fs.Parse(stdout, args)
	if err != nil {
		return err
	}
	switch {
	case len(paths) != 1:
		return fs.Usagef("interleave takes one SPEC, got %d", len(paths))
	case o.A == "" || o.B == "":
		return fs.Usagef("-a and -b are required: the two builds compared")
	case o.Blocks < 1 || o.MaxBlocks < 1:
		return fs.Usagef("-blocks and -max-blocks must be positive")
	case o.Duration < 0:
		return fs.Usagef("-duration must be positive")
	}
	o.SpecPath, o.Seed = paths[0], uint64(seed)
	o.Policy.Tolerance = tolerance.Value()
	if o.Policy.Inconclusive, err = compare.ParseInconclusive(inconclusive.Value()); err != nil {
		return fs.Usagef("%v", err)
	}
	if o.Policy.Alpha, err = compare.ParseAlpha(alpha); err != nil {
		return fs.Usagef("-alpha: %v", err)
	}
	return interleave.Command(ctx, o)
}
