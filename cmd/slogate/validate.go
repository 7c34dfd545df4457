package main

import (
	"context"
	"fmt"
	"io"

	"github.com/slogate/slogate/internal/cli"
	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/spec"
)

// cmdValidate is `slogate validate [-var NAME=VALUE]... SPEC...`: it loads
// every spec, prints "ok  SPEC" for each valid one and all diagnostics on
// stderr, and exits 2 when any spec has an error.
func cmdValidate(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	fls := cli.NewFlagSet("validate", stderr,
		"Usage: slogate validate [-var NAME=VALUE]... SPEC...",
		"Parse and check specs; print diagnostics. Exit 0 when all are valid, 2 otherwise.")
	var vars spec.Vars
	fls.Var(&vars, "var", "set a spec variable, `NAME=VALUE` (repeatable)")
	if err := fls.Parse(args); err != nil {
		return cli.FlagsError(err)
	}
	if fls.NArg() == 0 {
		fls.Usage()
		return exit.Usagef("validate: no SPEC given")
	}
	specs, err := cli.LoadSpecs(stderr, fls.Args(), vars)
	for _, s := range specs {
		fmt.Fprintf(stdout, "ok  %s\n", s.Filename)
	}
	return err
}
