package main

import (
	"context"
	"fmt"
	"io"

	"github.com/slogate/slogate/internal/cli"
	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/vocab"
)

// cmdDiff is `slogate diff [flags] A.json B.json`: it refuses runs measured
// with different settings (unless -allow-settings-change), then prints the
// server differences, per metric the matrices of both runs with the
// relative change (and its bounds) per cell, the cells B lost and the
// inconclusive ones; it exits 3 when a cell A measured errored in B, else 1
// when a cell regressed or was lost, else 4 when a cell was inconclusive
// (unless -inconclusive pass) (docs/method.md#comparing-runs).
func cmdDiff(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	fls := cli.CommandFlagSet("diff")
	tolerance := fls.Fraction("tolerance", "5%", "relative change allowed before a cell counts as changed, `PCT` (5% or 0.05)")
	alphaFlag := fls.String("alpha", "0.05", "one-sided error level `P` of each bound of the Hodges–Lehmann interval that decides cells repeated on both sides")
	inconclusive := fls.Choice("inconclusive", compare.InconclusivePolicies, "what a cell that cannot be decided does, `POLICY`: fail (exit 4 when nothing regressed) or pass (accept the risk; an estimate beyond the tolerance still fails)")
	allowSettings := fls.Bool("allow-settings-change", false, "compare runs measured with different settings (window, max_output, endpoint, repeat, workload, simulated or real, engine); the differences head the output")
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
			files[0], files[1], compare.JoinDifferences(settings, "\n  "))
	}
	policy, err := compare.ParseInconclusive(inconclusive.Value())
	if err != nil {
		return fls.Usagef("%v", err)
	}
	tables, err := compare.Compare(a, b, compare.Options{Tolerance: tol, Alpha: alpha, Metrics: names, Inconclusive: policy})
	if err != nil {
		return exit.Usagef("diff: %v", err)
	}
	compare.WriteHeader(stdout, files[0], a, files[1], b, settings)
	traffic := compare.Traffic(a, b)
	if len(tables) == 0 && len(traffic) == 0 {
		fmt.Fprintln(stdout, "no cells to compare: neither run has measured cells")
		return nil
	}
	if len(tables) > 0 {
		if err := compare.Render(stdout, tables); err != nil {
			return exit.Infraf("diff: writing output: %w", err)
		}
		compare.WriteSummary(stdout, tables)
	}
	if len(traffic) > 0 {
		fmt.Fprintln(stdout, "\n"+compare.TrafficNote)
		for _, l := range traffic {
			fmt.Fprintln(stdout, "  "+l)
		}
	}
	outcome := compare.Outcome(tables)
	if compare.EngineChanged(a, b) {
		fmt.Fprintln(stdout, compare.EngineNote(a, b))
		if outcome != vocab.Error {
			return nil
		}
	}
	switch outcome {
	case vocab.Error:
		return exit.Quiet(exit.Infra)
	case vocab.Fail:
		return exit.Quiet(exit.Fail)
	case vocab.Inconclusive:
		return exit.Quiet(exit.Inconclusive)
	}
	return nil
}
