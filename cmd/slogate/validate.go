package main

import (
	"context"
	"io"

	"github.com/slogate/slogate/internal/cli"
	"github.com/slogate/slogate/internal/command/specload"
	"github.com/slogate/slogate/internal/spec"
)

// cmdValidate is `slogate validate [flags] SPEC|DIR...`: it loads every spec
// (every *.hcl below a folder) and exits 2 when any has an error. As text it
// prints "ok  SPEC" for each valid one and the diagnostics on stderr; as
// JSON (-json, -format json) one document in the shape of `terraform
// validate -json` on stdout.
func cmdValidate(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	fls := cli.CommandFlagSet("validate")
	var vars spec.Vars
	fls.Var(&vars, "var", "set a spec variable, `NAME=VALUE` (repeatable)")
	format := fls.Choice("format", []string{"text", "json"}, "output `FORMAT`: text, or json (the shape of terraform validate -json)")
	jsonOut := fls.Bool("json", false, "same as -format json (terraform's spelling)")
	args, err := fls.Parse(stdout, args)
	if err != nil {
		return err
	}
	if *jsonOut {
		_ = format.Set("json") // one of its choices
	}
	if len(args) == 0 {
		return fls.Usagef("no SPEC given")
	}
	paths, err := cli.ExpandSpecPaths("validate", args)
	if err != nil {
		return err
	}
	files := specload.LoadFiles(paths, vars)
	if format.Value() == "json" {
		return specload.WriteValidateJSON(stdout, files)
	}
	return specload.WriteValidateText(stdout, stderr, files)
}
