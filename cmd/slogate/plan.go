package main

import (
	"context"
	"io"

	"github.com/slogate/slogate/internal/cli"
	"github.com/slogate/slogate/internal/command/specload"
	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/views/planview"
)

// cmdPlan is `slogate plan [flags] SPEC...`: per server, the launch
// command and env, the cells to measure in order, which assertion needs
// which cells, and an estimate of the measuring time (server start-up
// excluded), as text or JSON, on stdout or into -o FILE. -format matrix
// prints only one {spec, server, job, dir, estimated_s, gpus} entry per server, for a
// CI matrix.
func cmdPlan(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	fls := cli.CommandFlagSet("plan")
	var vars spec.Vars
	fls.Var(&vars, "var", "set a spec variable, `NAME=VALUE` (repeatable)")
	format := fls.Choice("format", []string{"text", "json", "matrix"}, "output `FORMAT`: text, json, or matrix (one {spec, server, job, dir, estimated_s, gpus} per server, for a CI job matrix)")
	out := fls.String("o", "", "write to `FILE` instead of stdout")
	keep := fls.Regexp("run", "keep only the cells and assertions whose test name matches `REGEX`")
	// The run flags that change what is measured, so that plan answers
	// "how long will this run take" for the run as it will be given.
	server := fls.String("server", "", "plan only the server called `NAME`, as `slogate run -server` runs it")
	duration := fls.Duration("duration", 0, "override measure.duration, the window `D` of each decode cell, as `slogate run -duration` does")
	paths, err := fls.Parse(stdout, args)
	if err != nil {
		return err
	}
	if len(paths) == 0 {
		return fls.Usagef("no SPEC given")
	}
	specs, err := specload.Load(stderr, paths, vars)
	if err != nil {
		return err
	}
	if *duration < 0 {
		return fls.Usagef("-duration must be positive")
	}
	if *server != "" {
		if specs, err = specload.SelectServer(specs, *server); err != nil {
			return err
		}
	}
	for i, sp := range specs {
		specs[i] = sp.WithDuration(*duration)
	}
	b, err := planview.Render(format.Value(), specs, keep.Value())
	if err != nil {
		return exit.Usagef("plan: %v", err)
	}
	return cli.WriteOutput("plan", stdout, *out, b)
}
