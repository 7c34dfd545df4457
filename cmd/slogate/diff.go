package main

import (
	"context"
	"io"

	"github.com/slogate/slogate/internal/cli"
	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/views"
)

// cmdDiff is `slogate diff [flags] A.json B.json`: it refuses runs measured
// with different settings (unless -allow-settings-change), then prints the
// server differences, per metric the matrices of both runs with the
// relative change (and its bounds) per cell, the cells B lost and the
// inconclusive ones; it exits 3 when a cell A measured errored in B, else 1
// when a cell regressed or was lost, else 4 when a cell was inconclusive
// (unless -inconclusive pass) (docs/method.md#comparing-runs). -format md
// writes it as Markdown for a pull request or the GitHub step summary,
// -format json as one document (docs/diff.schema.json); the exit code is
// the same.
// diffFormats are diff's -format words, the default first.
var diffFormats = []string{"text", "md", "json"}

func cmdDiff(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	fls := cli.CommandFlagSet("diff")
	tolerance := fls.Tolerance("tolerance", "5%", "relative change allowed before a cell counts as changed, `PCT` (5% or 0.05)")
	alphaFlag := fls.String("alpha", "0.05", "one-sided error level `P` of each bound of the Hodges–Lehmann interval that decides cells repeated on both sides")
	inconclusive := fls.Choice("inconclusive", compare.InconclusivePolicies, "what a cell that cannot be decided does, `POLICY`: fail (exit 4 when nothing regressed) or pass (accept the risk; an estimate beyond the tolerance still fails)")
	allowSettings := fls.Bool("allow-settings-change", false, "compare runs measured with different settings (window, max_output, endpoint, repeat, workload, simulated or real, engine); the differences head the output")
	format := fls.Choice("format", diffFormats, "output `FORMAT`: text (the console's), md (Markdown for a pull-request comment or the GitHub step summary) or json (docs/diff.schema.json)")
	metrics := fls.String("metric", "", "comma-separated `METRICS` to compare (default total_tps,ttft_ms,tbt_ms for decode and tps for prefill)")
	files, err := fls.Parse(stdout, args)
	if err != nil {
		return err
	}
	if err := fls.WantArgs(files, 2, "two results files (A.json B.json)"); err != nil {
		return err
	}
	tol := tolerance.Value()
	alpha, err := compare.ParseAlpha(*alphaFlag)
	if err != nil {
		return fls.Usagef("-alpha: %v", err)
	}
	names := cli.SplitList(*metrics)
	if err := compare.CheckMetrics(names); err != nil {
		return fls.Usagef("-metric: %v", err)
	}
	policy := compare.Policy{Tolerance: tol, Alpha: alpha, Metrics: names, AllowSettingsChange: *allowSettings}
	if policy.Inconclusive, err = compare.ParseInconclusive(inconclusive.Value()); err != nil {
		return fls.Usagef("%v", err)
	}
	a, err := cli.ReadResults("diff", files[0])
	if err != nil {
		return err
	}
	b, err := cli.ReadResults("diff", files[1])
	if err != nil {
		return err
	}
	view := views.Diff{PathA: files[0], PathB: files[1], C: compare.Build(a, b, policy)}
	if err := view.Refusal(); err != nil {
		return err
	}
	render := map[string]func(io.Writer) error{"text": view.Text, "md": view.Markdown, "json": view.JSON}[format.Value()]
	if err := render(stdout); err != nil {
		return exit.Infraf("diff: writing output: %w", err)
	}
	if code := view.C.ExitCode(); code != exit.OK {
		return exit.Quiet(code)
	}
	return nil
}
