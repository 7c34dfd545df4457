package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/slogate/slogate/codify"
	"github.com/slogate/slogate/compare"
	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/result"
)

// cmdCodify is `slogate codify [-margin 10%] RESULTS.json`: it prints HCL
// expect and assert blocks built from a measured run, to paste into a spec.
func cmdCodify(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	fs := flag.NewFlagSet("codify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	margin := fs.String("margin", "10%", "room below measured throughput (above measured latency), as `PCT` (\"10%\" or \"0.1\")")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: slogate codify [-margin 10%] RESULTS.json")
		fmt.Fprintln(stderr, "Print HCL expect/assert blocks from a measured run, to paste into the spec that measured it.")
		fmt.Fprintln(stderr, "The expect rows have one value per concurrency level found in the results.")
		fs.PrintDefaults()
	}
	files, err := parseFlagsAnywhere(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return exit.Quiet(exit.Usage)
	}
	if len(files) != 1 {
		fs.Usage()
		return exit.Usagef("codify: want one results file, got %d", len(files))
	}
	m, err := compare.ParsePercent(*margin)
	if err != nil {
		return exit.Usagef("codify: -margin: %v", err)
	}
	res, err := result.Read(files[0])
	if err != nil {
		return exit.Usagef("codify: %v", err)
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
