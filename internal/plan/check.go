package plan

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/slogate/slogate/internal/spec"
)

// Check warns, before any server starts, about decode cells whose status a
// run already knows from the spec (docs/method.md#plan-statuses): a matrix
// concurrency above a server's max_num_seqs (per data-parallel engine; the
// attribute or --max-num-seqs in args) will queue. One warning per server and matrix names every such
// concurrency and points at the first as written. A cell
// over the spec's kv_cache_tokens is not warned about here: `slogate plan`
// lists it, and a run skips it as a measured property of the server.
// It also checks each rate search's percentiles against its windows
// (CheckSearches), and each traffic percentile an assert reads against
// its cell's window (CheckTrafficReads).
func Check(sp *spec.Spec) hcl.Diagnostics {
	if sp == nil {
		return nil
	}
	diags := append(CheckSearches(sp), CheckTrafficReads(sp)...)
	for _, srv := range sp.Servers {
		seqs := srv.LaunchMaxNumSeqs()
		if seqs == nil {
			continue
		}
		pool := SpecPool(srv)
		for _, m := range sp.Matrices {
			var over []string
			first, why := -1, ""
			for i, c := range m.Concurrency {
				if queue, w := pool.WillQueue(c, *seqs); queue {
					if first < 0 {
						first, why = i, w
					}
					over = append(over, strconv.Itoa(c))
				}
			}
			if first < 0 {
				continue
			}
			// The engine's own name of the cap, where it is not
			// max_num_seqs (llama-server's --parallel).
			its := ""
			if pool.Knob != "" {
				its = " (" + pool.Knob + ")"
			}
			d := &hcl.Diagnostic{
				Severity: hcl.DiagWarning,
				Summary:  "Concurrency above max_num_seqs",
				Detail: fmt.Sprintf("Matrix %q runs %s streams, but server %q runs at most max_num_seqs%s = %d requests at once per engine (%s): "+
					"its cells at %s will be queued, not valid (docs/method.md#plan-statuses). Lower the concurrency or raise max_num_seqs%s to measure the server with every request running.",
					m.Label, strings.Join(over, ", "), srv.Name, its, *seqs, why, plural(len(over), "this concurrency", "these concurrencies"), its),
			}
			if first < len(m.ConcurrencyRanges) {
				d.Subject = m.ConcurrencyRanges[first].Ptr()
			}
			diags = append(diags, d)
		}
	}
	return diags
}

// plural is one when n is 1, else many.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
