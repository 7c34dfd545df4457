package main

import (
	"context"
	"io"

	"github.com/slogate/slogate/internal/exit"
)

func cmdCodify(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	return exit.With(exit.Usage, errNotYet)
}
