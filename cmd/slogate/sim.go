package main

import (
	"context"
	"io"

	"github.com/slogate/slogate/sim"
)

// cmdSim runs the built-in vLLM-compatible simulator (`slogate sim serve MODEL …`).
func cmdSim(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	return sim.Main(ctx, stdout, stderr, args)
}
