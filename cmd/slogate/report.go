package main

import (
	"context"
	"io"
	"path/filepath"

	"github.com/slogate/slogate/internal/cli"
	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/report"
)

// cmdReport is `slogate report [-format md|html|json|csv] [-o FILE] RESULTS.json`:
// it re-renders a saved run to stdout or FILE. Markdown written to FILE
// gets its rate searches' charts beside it (search-NAME.svg, which it
// links to), as `slogate run` writes them beside report.md.
func cmdReport(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	fls := cli.CommandFlagSet("report")
	format := fls.Choice("format", report.Formats, "output `FORMAT`: md (report.md), html (self-contained report.html), json (results.json) or csv (one row per cell and metric)")
	out := fls.String("o", "", "write to `FILE` instead of stdout")
	files, err := fls.Parse(stdout, args)
	if err != nil {
		return err
	}
	if err := fls.WantArgs(files, 1, "one results file"); err != nil {
		return err
	}
	res, err := cli.ReadResults("report", files[0])
	if err != nil {
		return err
	}
	b, err := report.Render(format.Value(), res)
	if err != nil {
		return exit.Infraf("report: rendering %s: %v", files[0], err)
	}
	if err := cli.WriteOutput("report", stdout, *out, b); err != nil {
		return err
	}
	if format.Value() != "md" || *out == "" {
		return nil
	}
	for _, c := range report.SearchCharts(res) {
		if err := cli.WriteOutput("report", stdout, filepath.Join(filepath.Dir(*out), c.File), c.SVG); err != nil {
			return err
		}
	}
	return nil
}
