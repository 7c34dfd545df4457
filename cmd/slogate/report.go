package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"

	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/report"
	"github.com/slogate/slogate/result"
)

// reportFormats maps -format values to renderers.
var reportFormats = map[string]func(io.Writer, *result.Results) error{
	"md":   report.WriteMarkdown,
	"html": report.WriteHTML,
	"json": func(w io.Writer, res *result.Results) error {
		b, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			return err
		}
		_, err = w.Write(append(b, '\n'))
		return err
	},
}

// cmdReport is `slogate report [-format md|html|json] [-o FILE] RESULTS.json`:
// it re-renders a saved run to stdout or FILE.
func cmdReport(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	fls := flag.NewFlagSet("report", flag.ContinueOnError)
	fls.SetOutput(stderr)
	format := fls.String("format", "md", "output `FORMAT`: md (report.md), html (self-contained report.html) or json (results.json)")
	out := fls.String("o", "", "write to `FILE` instead of stdout")
	fls.Usage = func() {
		fmt.Fprintln(stderr, "Usage: slogate report [-format md|html|json] [-o FILE] RESULTS.json")
		fmt.Fprintln(stderr, "Re-render a saved run (the results.json in a `slogate run` -out folder).")
		fls.PrintDefaults()
	}
	files, err := parseFlagsAnywhere(fls, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return exit.Quiet(exit.Usage)
	}
	render, ok := reportFormats[*format]
	if !ok {
		fls.Usage()
		return exit.Usagef("report: -format %q is not one of md, html, json", *format)
	}
	if len(files) != 1 {
		fls.Usage()
		return exit.Usagef("report: want exactly one results file, got %d", len(files))
	}
	res, err := result.Read(files[0])
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return exit.Usagef("report: %s does not exist: pass the results.json that `slogate run` wrote into its -out folder (default slogate-out/<server>/results.json)", files[0])
		}
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return exit.Usagef("report: cannot read %s: %v", files[0], pe.Err)
		}
		return exit.Usagef("report: %v", err)
	}
	var b bytes.Buffer
	if err := render(&b, res); err != nil {
		return exit.Infraf("report: rendering %s: %v", files[0], err)
	}
	if *out == "" {
		_, err := stdout.Write(b.Bytes())
		return err
	}
	if err := result.WriteFileAtomic(*out, b.Bytes()); err != nil {
		return exit.Usagef("report: -o %s: %v", *out, err)
	}
	return nil
}
