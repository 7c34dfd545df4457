package main

import (
	"context"
	"io"

	"github.com/slogate/slogate/internal/interrupt"
	"github.com/slogate/slogate/internal/sim"
)

// cmdSim runs the built-in simulator (`slogate sim serve MODEL …`, vLLM; `slogate sim
// --engine sglang serve MODEL …`, SGLang).
// Its flags are vllm serve's (sim parses them); its help goes to stdout for
// -h, --help and `slogate help sim`, like every command's.
func cmdSim(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		args = []string{"serve", "--help"} // sim prints its usage on stdout for this
	}
	// The simulator is the server: its stderr is a run's server.log, where
	// run's "stopping the server and writing what was measured" misled.
	interrupt.SetServer(ctx)
	return sim.Main(ctx, stdout, stderr, args)
}
