package plan

import (
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/vocab"
)

// Outlook is what a plan can tell of one cell's status before the run,
// from the spec alone (docs/method.md#plan-statuses): Status is
// over_capacity (the run will skip it), queued (more requests than the
// server runs at once: they will wait), or "" (nothing known); Reason
// gives the arithmetic.
type Outlook struct {
	Status vocab.Status `json:"status,omitempty"`
	Reason string       `json:"reason,omitempty"`
}

// CellOutlook applies the run's rules to decode cell ref of server srv
// with maxOutput tokens per request: over capacity by the spec's
// kv_cache_tokens split over its data_parallel_size engines (the same
// KVPool rule the runner and the conditions use), else queued when the
// busiest engine's requests exceed its max_num_seqs (the attribute or
// --max-num-seqs in args: spec.Server.LaunchMaxNumSeqs). Other cells get no
// outlook.
func CellOutlook(srv *spec.Server, maxOutput int, ref vocab.CellRef) Outlook {
	if ref.Phase != vocab.PhaseDecode || srv == nil {
		return Outlook{}
	}
	pool := SpecPool(srv)
	if pool.OverCapacity(ref.Concurrency, ref.Context, maxOutput) {
		return Outlook{Status: vocab.StatusOverCapacity, Reason: pool.Arithmetic(ref.Concurrency, ref.Context, maxOutput, nil) + " (from the spec's kv_cache_tokens)"}
	}
	seqs := 0
	if n := srv.LaunchMaxNumSeqs(); n != nil {
		seqs = *n
	}
	if queue, why := pool.WillQueue(ref.Concurrency, seqs); queue {
		return Outlook{Status: vocab.StatusQueued, Reason: why}
	}
	return Outlook{}
}
