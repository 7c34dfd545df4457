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

// cmdDiff is `slogate diff [flags] A.json B.json`: it refuses runs measured
// with different settings (unless -allow-settings-change), then prints the
// server differences, per metric the matrices of both runs with the
// relative change (and p-value) per cell, and the cells B lost; it exits 1
// when a cell regressed or was lost, 3 when a cell A measured errored in B
// (docs/method.md#comparing-runs).
func cmdDiff(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	fls := cli.NewFlagSet("diff", cli.Help{
		Usage: "slogate diff [flags] A.json B.json",
		Doc: []string{"Compare two results files cell by cell: A is the reference, B the new run.",
			"Exit 0 when no cell regressed, 1 when one regressed beyond the tolerance or was lost (measured in A,",
			"over capacity or missing in B), 2 on bad usage or runs measured with different settings, 3 when a",
			"cell A measured could not be measured in B."},
		Examples: []string{
			"slogate diff old/qwen/results.json slogate-out/qwen/results.json",
			"slogate diff A.json B.json -tolerance 10% -alpha 0.01",
			"slogate diff A.json B.json -metric ttft_ms,tbt_ms",
		},
	})
	tolerance := fls.Fraction("tolerance", "5%", "relative change allowed before a cell counts as changed, `PCT` (5% or 0.05)")
	alphaFlag := fls.String("alpha", "0.05", "significance level `P` of the Mann–Whitney U test that decides cells repeated on both sides")
	allowSettings := fls.Bool("allow-settings-change", false, "compare runs measured with different settings (window, max_output, endpoint, repeat, workload, simulated or real); the differences head the output")
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
	settings := compare.Settings(a, b)
	if len(settings) > 0 && !*allowSettings {
		return exit.Usagef("diff: %s and %s were measured with different settings, so their numbers are not comparable:\n  %s\nmeasure B like A, or pass -allow-settings-change to compare anyway",
			files[0], files[1], joinDifferences(settings, "\n  "))
	}
	tables, err := compare.Compare(a, b, compare.Options{Tolerance: tol, Alpha: alpha, Metrics: names})
	if err != nil {
		return exit.Usagef("diff: %v", err)
	}
	if len(settings) > 0 {
		fmt.Fprintf(stdout, "Settings differ (-allow-settings-change): %s\n", joinDifferences(settings, "; "))
	}
	fmt.Fprintf(stdout, "A: %s\n", describeRun(files[0], a))
	fmt.Fprintf(stdout, "B: %s\n", describeRun(files[1], b))
	if h := compare.ServerHeader(compare.Server(a, b)); h != "" {
		fmt.Fprintf(stdout, "Server: %s\n", h)
	}
	fmt.Fprintln(stdout)
	if len(tables) == 0 {
		fmt.Fprintln(stdout, "no cells to compare: neither run has measured cells")
		return nil
	}
	if err := compare.Render(stdout, tables); err != nil {
		return exit.Infraf("diff: writing output: %w", err)
	}
	s := compare.Summarize(tables)
	fmt.Fprintf(stdout, "\n%d regressed, %d improved, %d unchanged, %d not significant, %d on one side only",
		s[compare.Regressed], s[compare.Improved], s[compare.Unchanged], s[compare.NotSignificant], s[compare.OnlyA]+s[compare.OnlyB])
	lost, errored := 0, 0
	for _, f := range compare.Findings(tables) {
		if f.Change == compare.Lost {
			lost++
		} else {
			errored++
		}
	}
	fmt.Fprintf(stdout, "; %d cell(s) lost, %d errored\n", lost, errored)
	switch compare.Outcome(tables) {
	case result.Error:
		return exit.Quiet(exit.Infra)
	case result.Fail:
		return exit.Quiet(exit.Fail)
	}
	return nil
}

// joinDifferences joins the differences' "setting: a → b" with sep.
func joinDifferences(ds []compare.Difference, sep string) string {
	var parts []string
	for _, d := range ds {
		parts = append(parts, d.String())
	}
	return strings.Join(parts, sep)
}

// describeRun is one line naming a run: file, server, model, version, start.
func describeRun(path string, r *result.Results) string {
	return path + " (" + r.Describe("2006-01-02 15:04 UTC") + ")"
}
