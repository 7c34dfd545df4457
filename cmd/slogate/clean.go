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
	fls := cli.NewFlagSet("clean", cli.Help{
		Usage: "slogate clean [-runtime docker|podman]",
		Doc: []string{"Remove the containers slogate started that are still there (labelled " + spec.LabelRun + "),",
			"as after slogate and the runtime's client were killed; then check that they are gone.",
			"Do not run it while another slogate run uses the same runtime: its container would go too."},
		Examples: []string{"slogate clean", "slogate clean -runtime podman"},
	})
	runtime := fls.String("runtime", spec.RuntimeDocker, "the container `runtime`: docker or podman")
	rest, err := fls.Parse(stdout, args)
	if err != nil {
		return err
	}
	if *runtime != spec.RuntimeDocker && *runtime != spec.RuntimePodman {
		return fls.Usagef("-runtime is docker or podman, not %q", *runtime)
	}
	if err := fls.WantArgs(rest, 0, "no arguments"); err != nil {
		return err
	}
	names, err := runner.LeftoverContainers(ctx, *runtime)
	if err != nil {
		return err
	}
	if len(names) == 0 {
		fmt.Fprintf(stdout, "no container labelled %s in %s\n", spec.LabelRun, *runtime)
		return nil
	}
	if err := runner.RemoveContainers(*runtime, names); err != nil {
		return err
	}
	for _, n := range names {
		fmt.Fprintf(stdout, "removed %s\n", n)
	}
	return nil
}
