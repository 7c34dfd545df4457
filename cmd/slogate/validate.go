package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/mattn/go-isatty"

	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/spec"
)

// cmdValidate is `slogate validate [-var NAME=VALUE]... SPEC...`: it loads
// every spec, prints "ok  SPEC" for each valid one and all diagnostics on
// stderr, and exits 2 when any spec has an error.
func cmdValidate(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var vars spec.Vars
	fs.Var(&vars, "var", "set a spec variable, `NAME=VALUE` (repeatable)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: slogate validate [-var NAME=VALUE]... SPEC...")
		fmt.Fprintln(stderr, "Parse and check specs; print diagnostics. Exit 0 when all are valid, 2 otherwise.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return exit.Quiet(exit.Usage)
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return exit.Usagef("validate: no SPEC given")
	}
	specs, err := loadSpecs(stderr, fs.Args(), vars)
	for _, s := range specs {
		fmt.Fprintf(stdout, "ok  %s\n", s.Filename)
	}
	return err
}

// loadSpecs loads each path, printing every diagnostic (warnings too) on
// stderr. It returns the valid specs, and exit.Quiet(exit.Usage) when any
// spec had an error.
func loadSpecs(stderr io.Writer, paths []string, vars spec.Vars) ([]*spec.Spec, error) {
	color := diagnosticsInColor(stderr)
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

// diagnosticsInColor reports whether diagnostics written to w may use ANSI
// colour: w is a terminal and NO_COLOR is not set.
func diagnosticsInColor(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("NO_COLOR") != "" {
		return false
	}
	return isatty.IsTerminal(f.Fd())
}
