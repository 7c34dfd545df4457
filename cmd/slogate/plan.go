package main

import (
	"context"
	"io"

	"github.com/slogate/slogate/internal/exit"
)

func cmdPlan(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	return exit.With(exit.Usage, errNotYet)
}
