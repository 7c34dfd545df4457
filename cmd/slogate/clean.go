package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/slogate/slogate/internal/cli"
	"github.com/slogate/slogate/internal/lifecycle"
	"github.com/slogate/slogate/internal/spec"
)

// cmdClean is `slogate clean [-runtime docker|podman] [-name-prefix P]`:
// it removes every container labelled slogate.run, those a run could not
// stop because slogate itself was killed, or with -name-prefix only those
// named P-… (docs/spec.md#container).
func cmdClean(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	fls := cli.CommandFlagSet("clean")
	runtime := fls.Choice("runtime", []string{spec.RuntimeDocker, spec.RuntimePodman}, "the container `runtime`: docker or podman")
	prefix := fls.String("name-prefix", "", "remove only the containers named `PREFIX`-… (the container block's name_prefix), leaving other runs' alone")
	rest, err := fls.Parse(stdout, args)
	if err != nil {
		return err
	}
	if err := fls.WantArgs(rest, 0, "no arguments"); err != nil {
		return err
	}
	if *prefix != "" && !spec.ValidContainerNamePrefix(*prefix) {
		return fls.Usagef("-name-prefix %q is not a container name prefix: letters, digits, '_', '.' and '-', beginning with a letter or digit", *prefix)
	}
	names, err := lifecycle.LeftoverContainers(ctx, runtime.Value())
	if err != nil {
		return err
	}
	if *prefix != "" {
		names = slices.DeleteFunc(names, func(n string) bool { return !strings.HasPrefix(n, *prefix+"-") })
	}
	if len(names) == 0 {
		if *prefix != "" {
			fmt.Fprintf(stdout, "no container labelled %s and named %s-… in %s\n", spec.LabelRun, *prefix, runtime.Value())
			return nil
		}
		fmt.Fprintf(stdout, "no container labelled %s in %s\n", spec.LabelRun, runtime.Value())
		return nil
	}
	if err := lifecycle.RemoveContainers(runtime.Value(), names); err != nil {
		return err
	}
	for _, n := range names {
		fmt.Fprintf(stdout, "removed %s\n", n)
	}
	return nil
}
