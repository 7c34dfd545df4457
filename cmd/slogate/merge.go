package main

import (
	"context"
	"io"

	"github.com/slogate/slogate/gate"
	"github.com/slogate/slogate/internal/cli"
)

// cmdMerge is `slogate merge -out DIR OUT...`: it combines the results
// folders of several runs (one per server, e.g. the jobs of a CI matrix)
// into one results set and exits with the worst of their exit codes.
func cmdMerge(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	fls := cli.NewFlagSet("merge", cli.Help{
		Usage: "slogate merge -out DIR OUT...",
		Doc: []string{"Combine results folders (each the -out of a `slogate run`, one server each) into DIR: one results.json (schema slogate/merged/v1),",
			"report.md and report.html with a section per server, junit.xml, DIR/<server>/results.json, and the GitHub step summary.",
			"Verdicts are taken as recorded. Exit code: the worst of the runs' (3 > 2 > 1 > 0), as `slogate run` would have exited."},
		Examples: []string{
			"slogate merge -out merged results/qwen results/glm",
			"slogate merge results/* -out merged   # every job's folder of a CI matrix",
		},
	})
	out := fls.String("out", "", "write the merged results into folder `DIR` (required)")
	inputs, err := fls.Parse(stdout, args)
	if err != nil {
		return err
	}
	if *out == "" {
		return fls.Usagef("-out DIR is required")
	}
	if len(inputs) == 0 {
		return fls.Usagef("no results folder given: pass the -out folders of the runs to merge")
	}
	return gate.Merge(gate.MergeOptions{OutDir: *out, Inputs: inputs, Stdout: stdout})
}
