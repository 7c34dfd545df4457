package main

import (
	"context"
	"io"

	"github.com/slogate/slogate/internal/cli"
	"github.com/slogate/slogate/internal/command/merge"
)

// cmdMerge is `slogate merge -out DIR OUT...`: it combines the results
// folders of several runs (one per server, e.g. the jobs of a CI matrix)
// into one results set and exits with the worst of their exit codes.
func cmdMerge(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	fls := cli.CommandFlagSet("merge")
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
	return merge.Merge(merge.MergeOptions{OutDir: *out, Inputs: inputs, Stdout: stdout})
}
