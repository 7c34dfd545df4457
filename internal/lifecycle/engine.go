package lifecycle

import (
	"github.com/slogate/slogate/internal/engine"
	"github.com/slogate/slogate/internal/engine/registry"
	"github.com/slogate/slogate/internal/spec"
)

// engineFor is the server's engine (engine.Engine: its simulator persona,
// metric names, version, KV capacity, stated facts and tokenize forms, in
// its package under internal/engine); vLLM when it names none (spec.Load
// has refused an unknown one).
func engineFor(srv *spec.Server) engine.Engine {
	if srv == nil {
		return registry.For("")
	}
	return registry.For(srv.Engine)
}

// StatusError is a control request answered with an HTTP status other than
// 200; callers tell the statuses apart with errors.As.
type StatusError = engine.StatusError

var _ engine.Conn = (*Client)(nil)
