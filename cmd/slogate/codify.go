package main

import (
	"context"
	"io"

	"github.com/slogate/slogate/codify"
	"github.com/slogate/slogate/internal/cli"
	"github.com/slogate/slogate/internal/exit"
)

// cmdCodify is `slogate codify [-margin 10%] RESULTS.json`: it prints HCL
// expect and assert blocks built from a measured run, to paste into a spec.
func cmdCodify(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	fls := cli.NewFlagSet("codify", stderr,
		"Usage: slogate codify [-margin 10%] RESULTS.json",
		"Print HCL expect/assert blocks from a measured run, to paste into the spec that measured it.",
		"The expect rows have one value per concurrency level found in the results.")
	margin := fls.String("margin", "10%", "room below measured throughput (above measured latency), as `PCT` (\"10%\" or \"0.1\")")
	files, err := cli.ParseAnywhere(fls, args)
	if err != nil {
		return cli.FlagsError(err)
	}
	if err := cli.WantArgs(fls, files, 1, "one results file"); err != nil {
		return err
	}
	m, err := cli.Percent("codify: -margin", *margin)
	if err != nil {
		return err
	}
	res, err := cli.ReadResults("codify", files[0])
	if err != nil {
		return err
	}
	out, err := codify.Generate(res, codify.Options{Margin: m, Source: files[0]})
	if err != nil {
		return exit.Usagef("codify: %s: %v", files[0], err)
	}
	if _, err := stdout.Write(out); err != nil {
		return exit.Infraf("codify: writing output: %w", err)
	}
	return nil
}
