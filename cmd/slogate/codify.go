package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/slogate/slogate/internal/cli"
	"github.com/slogate/slogate/internal/command/codify"
	"github.com/slogate/slogate/internal/exit"
)

// cmdCodify is `slogate codify [-margin 10%] [-force] [-o FILE] RESULTS.json`:
// it prints HCL expect and assert blocks built from a measured run, to paste
// into a spec. It refuses (exit 2) a run that did not finish or has errored
// cells unless -force, and then says on stderr what it left out.
func cmdCodify(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	fls := cli.CommandFlagSet("codify")
	margin := fls.Fraction("margin", "10%", "room below measured throughput (above measured latency), `PCT` (10% or 0.1)")
	force := fls.Bool("force", false, "codify a run that did not finish or has errored cells, from its measured cells only")
	outFile := fls.String("o", "", "write to `FILE` instead of stdout")
	files, err := fls.Parse(stdout, args)
	if err != nil {
		return err
	}
	if err := fls.WantArgs(files, 1, "one results file"); err != nil {
		return err
	}
	res, err := cli.ReadResults("codify", files[0])
	if err != nil {
		return err
	}
	var unfit *codify.UnfitError
	if err := codify.Check(res); errors.As(err, &unfit) && *force {
		fmt.Fprintf(stderr, "codify: -force: %s: values from the measured cells only, although\n%s\n", files[0], unfit.Reasons())
	}
	if w := codify.MeasuredNoise(res, margin.Value(), 0).Warning(margin.Value()); w != "" {
		fmt.Fprintf(stderr, "codify: warning: %s\n", w)
	}
	out, err := codify.Generate(res, codify.Options{Margin: margin.Value(), Source: files[0], Force: *force})
	if err != nil {
		return exit.Usagef("codify: %s: %v", files[0], err)
	}
	return cli.WriteOutput("codify", stdout, *outFile, out)
}
