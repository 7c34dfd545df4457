package main

import (
	"context"
	"fmt"
	"io"

	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/report"
	"github.com/slogate/slogate/spec"
)

// cmdValidate is `slogate validate [-var NAME=VALUE]... SPEC...`: it loads
// every spec, prints "ok  SPEC" for each valid one and all diagnostics on
// stderr, and exits 2 when any spec has an error.
func cmdValidate(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	fls := newFlagSet("validate", stderr,
		"Usage: slogate validate [-var NAME=VALUE]... SPEC...",
		"Parse and check specs; print diagnostics. Exit 0 when all are valid, 2 otherwise.")
	var vars spec.Vars
	fls.Var(&vars, "var", "set a spec variable, `NAME=VALUE` (repeatable)")
	if err := fls.Parse(args); err != nil {
		return flagsError(err)
	}
	if fls.NArg() == 0 {
		fls.Usage()
		return exit.Usagef("validate: no SPEC given")
	}
	specs, err := loadSpecs(stderr, fls.Args(), vars)
	for _, s := range specs {
		fmt.Fprintf(stdout, "ok  %s\n", s.Filename)
	}
	return err
}

// loadSpecs loads each path, printing every diagnostic (warnings too) on
// stderr. It returns the valid specs, and exit.Quiet(exit.Usage) when any
// spec had an error.
func loadSpecs(stderr io.Writer, paths []string, vars spec.Vars) ([]*spec.Spec, error) {
	// Diagnostics use colour on the same terms as the console (a terminal,
	// NO_COLOR unset, TERM not dumb).
	color := report.ConsoleOptionsFor(stderr, nil).Color
	var ok []*spec.Spec
	failed := false
	for _, path := range paths {
		s, diags := spec.Load(path, spec.LoadOptions{Vars: vars})
		if len(diags) > 0 {
			if err := spec.WriteDiagnostics(stderr, s.Files, diags, color); err != nil {
				return nil, exit.Infraf("writing diagnostics: %w", err)
			}
		}
		if diags.HasErrors() {
			failed = true
			continue
		}
		ok = append(ok, s)
	}
	if failed {
		return ok, exit.Quiet(exit.Usage)
	}
	return ok, nil
}
