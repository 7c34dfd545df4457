package main

import (
	"context"
	"io"

	"github.com/slogate/slogate/internal/cli"
	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/report"
)

// cmdNoise is `slogate noise [-tolerance PCT] [-alpha P] [-repeats N]
// RESULTS.json`: per cell, the run-to-run noise of its gated metrics, the
// smallest change N repeats a side would catch, the repeats the tolerance
// needs, and the boot-level components (docs/method.md#noise).
func cmdNoise(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	fls := cli.CommandFlagSet("noise")
	tolerance := fls.Tolerance("tolerance", "5%", "the tolerance a comparison allows, `PCT` (5% or 0.05): the repeats it needs are given for it")
	alphaFlag := fls.String("alpha", "0.05", "one-sided level `P` of the comparison")
	repeats := fls.Int("repeats", 0, "give the smallest detectable change for `REPEATS` a side (default: each cell's own)")
	files, err := fls.Parse(stdout, args)
	if err != nil {
		return err
	}
	if err := fls.WantArgs(files, 1, "one results file"); err != nil {
		return err
	}
	alpha, err := compare.ParseAlpha(*alphaFlag)
	if err != nil {
		return fls.Usagef("-alpha: %v", err)
	}
	if *repeats < 0 || *repeats == 1 {
		return fls.Usagef("-repeats: want 2 or more repeats a side, got %d", *repeats)
	}
	res, err := cli.ReadResults("noise", files[0])
	if err != nil {
		return err
	}
	if err := report.WriteNoise(stdout, files[0], res, report.NoiseOptions{Tolerance: tolerance.Value(), Alpha: alpha, Repeats: *repeats}); err != nil {
		return exit.Infraf("noise: writing output: %v", err)
	}
	return nil
}
