package runner

import (
	"context"

	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/lifecycle"
	"github.com/slogate/slogate/internal/spec"
)

// Preflight checks what would stop the run of srv of sp before it
// measures anything, so that the run refuses it before it prints its plan
// or creates a folder (docs/commands.md#running): a launch that cannot
// start (lifecycle.Check: -sim on an engine the simulator does not
// imitate, a command that is not installed, a port taken), and under
// -endpoint measure.boots above 1 (a usage error) and a server that does
// not answer within the wait boot gives it (exit 3). The errors are the
// ones Run would end with, created where Run creates them.
func Preflight(ctx context.Context, sp *spec.Spec, srv *spec.Server, endpoint string, sim bool) error {
	if endpoint == "" {
		return lifecycle.Check(srv, sim)
	}
	if b := sp.Measure.Boots; b > 1 {
		return endpointBoots(b)
	}
	client := lifecycle.NewClient(endpoint, srv.APIKey, srv.ServedName()).ForServer(srv)
	defer client.Close()
	_, err := lifecycle.Endpoint(client).WaitEndpoint(ctx, endpointReadyTimeout)
	return err
}

// endpointBoots is the usage error of measure.boots restarts under
// -endpoint.
func endpointBoots(boots int) error {
	return exit.Usagef("measure.boots = %d restarts the server between groups of repeats, which -endpoint cannot (slogate did not start it): drop -endpoint, or set boots = 1", boots)
}
