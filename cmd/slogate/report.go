package main

import (
	"bytes"
	"context"
	"io"

	"github.com/slogate/slogate/internal/cli"
	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/report"
	"github.com/slogate/slogate/result"
)

// reportFormats maps -format values to renderers.
var reportFormats = map[string]func(io.Writer, *result.Results) error{
	"md":   report.WriteMarkdown,
	"html": report.WriteHTML,
	"json": func(w io.Writer, res *result.Results) error {
		b, err := res.Marshal()
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	},
}

// cmdReport is `slogate report [-format md|html|json] [-o FILE] RESULTS.json`:
// it re-renders a saved run to stdout or FILE.
func cmdReport(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	fls := cli.NewFlagSet("report", stderr,
		"Usage: slogate report [-format md|html|json] [-o FILE] RESULTS.json",
		"Re-render a saved run (the results.json in a `slogate run` -out folder).")
	format := fls.String("format", "md", "output `FORMAT`: md (report.md), html (self-contained report.html) or json (results.json)")
	out := fls.String("o", "", "write to `FILE` instead of stdout")
	files, err := cli.ParseAnywhere(fls, args)
	if err != nil {
		return cli.FlagsError(err)
	}
	render, ok := reportFormats[*format]
	if !ok {
		fls.Usage()
		return exit.Usagef("report: -format %q is not one of md, html, json", *format)
	}
	if err := cli.WantArgs(fls, files, 1, "one results file"); err != nil {
		return err
	}
	res, err := cli.ReadResults("report", files[0])
	if err != nil {
		return err
	}
	var b bytes.Buffer
	if err := render(&b, res); err != nil {
		return exit.Infraf("report: rendering %s: %v", files[0], err)
	}
	if *out == "" {
		if _, err := stdout.Write(b.Bytes()); err != nil {
			return exit.Infraf("report: writing output: %w", err)
		}
		return nil
	}
	if err := result.WriteFileAtomic(*out, b.Bytes()); err != nil {
		return exit.Usagef("report: -o %s: %v (does its folder exist and can you write to it?)", *out, err)
	}
	return nil
}
