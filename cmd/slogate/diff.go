package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/slogate/slogate/compare"
	"github.com/slogate/slogate/internal/cli"
	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/result"
)

// cmdDiff is `slogate diff [flags] A.json B.json`: it prints, per metric,
// the matrices of both runs with the relative change per cell and exits 1
// when any cell regressed beyond the tolerance.
func cmdDiff(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	fls := cli.NewFlagSet("diff", cli.Help{
		Usage: "slogate diff [flags] A.json B.json",
		Doc: []string{"Compare two results files cell by cell: A is the reference, B the new run.",
			"Exit 0 when no cell regressed beyond the tolerance, 1 when one did, 2 on bad usage."},
		Examples: []string{
			"slogate diff old/qwen/results.json slogate-out/qwen/results.json",
			"slogate diff A.json B.json -tolerance 10%",
			"slogate diff A.json B.json -metric ttft_ms,tbt_ms",
		},
	})
	tolerance := fls.Fraction("tolerance", "5%", "relative change allowed before a cell counts as changed, `PCT` (5% or 0.05)")
	metrics := fls.String("metric", "", "comma-separated `METRICS` to compare (default total_tps,ttft_ms,tbt_ms for decode and tps for prefill)")
	files, err := fls.Parse(stdout, args)
	if err != nil {
		return err
	}
	if err := fls.WantArgs(files, 2, "two results files (A.json B.json)"); err != nil {
		return err
	}
	tol := tolerance.Value()
	var names []string
	for _, n := range strings.Split(*metrics, ",") {
		if n = strings.TrimSpace(n); n != "" {
			names = append(names, n)
		}
	}
	if err := compare.CheckMetrics(names); err != nil {
		return fls.Usagef("-metric: %v", err)
	}
	a, err := cli.ReadResults("diff", files[0])
	if err != nil {
		return err
	}
	b, err := cli.ReadResults("diff", files[1])
	if err != nil {
		return err
	}
	tables, err := compare.Compare(a, b, compare.Options{Tolerance: tol, Metrics: names})
	if err != nil {
		return exit.Usagef("diff: %v", err)
	}
	fmt.Fprintf(stdout, "A: %s\n", describeRun(files[0], a))
	fmt.Fprintf(stdout, "B: %s\n\n", describeRun(files[1], b))
	if len(tables) == 0 {
		fmt.Fprintln(stdout, "no cells to compare: neither run has measured cells")
		return nil
	}
	if err := compare.Render(stdout, tables); err != nil {
		return exit.Infraf("diff: writing output: %w", err)
	}
	s := compare.Summarize(tables)
	fmt.Fprintf(stdout, "\n%d regressed, %d improved, %d unchanged, %d not significant, %d on one side only\n",
		s[compare.Regressed], s[compare.Improved], s[compare.Unchanged], s[compare.NotSignificant], s[compare.OnlyA]+s[compare.OnlyB])
	if compare.AnyRegressed(tables) {
		return exit.Quiet(exit.Fail)
	}
	return nil
}

// describeRun is one line naming a run: file, server, model, version, start.
func describeRun(path string, r *result.Results) string {
	return path + " (" + r.Describe("2006-01-02 15:04 UTC") + ")"
}
