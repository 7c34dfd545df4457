package main

import (
	"context"
	"fmt"
	"io"

	"github.com/slogate/slogate/internal/cli"
	"github.com/slogate/slogate/runner"
	"github.com/slogate/slogate/spec"
)

// cmdClean is `slogate clean [-runtime docker|podman]`: it removes every
// container labelled slogate.run, those a run could not stop because
// slogate itself was killed (docs/spec.md#container).
func cmdClean(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	fls := cli.CommandFlagSet("clean")
	runtime := fls.Choice("runtime", []string{spec.RuntimeDocker, spec.RuntimePodman}, "the container `runtime`: docker or podman")
	rest, err := fls.Parse(stdout, args)
	if err != nil {
		return err
	}
	if err := fls.WantArgs(rest, 0, "no arguments"); err != nil {
		return err
	}
	names, err := runner.LeftoverContainers(ctx, runtime.Value())
	if err != nil {
		return err
	}
	if len(names) == 0 {
		fmt.Fprintf(stdout, "no container labelled %s in %s\n", spec.LabelRun, runtime.Value())
		return nil
	}
	if err := runner.RemoveContainers(runtime.Value(), names); err != nil {
		return err
	}
	for _, n := range names {
		fmt.Fprintf(stdout, "removed %s\n", n)
	}
	return nil
}
