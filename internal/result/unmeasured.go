package result

import "github.com/slogate/slogate/internal/vocab"

// Unmeasured lists what the run could not measure, one "name: reason" line
// each: prefill, decode and traffic cells with status error, and searches
// stopped by a probe they could not measure or judge (docs/method.md#statuses).
// It is the one rule behind exit 3 for a run that measured only part of its
// plan, used by `slogate run` and by `slogate merge` alike.
func (r *Results) Unmeasured() []string {
	var out []string
	for _, c := range r.Prefill {
		if c.Status == vocab.StatusError {
			out = append(out, c.Ref().Name()+": "+c.Reason)
		}
	}
	for _, c := range r.Decode {
		if c.Status == vocab.StatusError {
			out = append(out, c.Ref().Name()+": "+c.Reason)
		}
	}
	for _, c := range r.Traffic {
		if c.Status == vocab.StatusError {
			out = append(out, c.Ref().Name()+": "+c.Reason)
		}
	}
	for _, s := range r.Search {
		if s.Error != "" {
			out = append(out, vocab.KindSearch+"/"+s.Name+": "+s.Error)
		}
	}
	return out
}

// Measured counts what the run measured: its prefill, decode and traffic
// cells, its searches and its correctness blocks, errored ones included
// (each holds what was measured before it failed). A run with none holds
// nothing worth keeping; one with any keeps its folder whatever went wrong
// after. `slogate run` and the output-folder check share this count.
func (r *Results) Measured() int {
	return len(r.Prefill) + len(r.Decode) + len(r.Traffic) + len(r.Search) + len(r.Correctness)
}

// Unmeasurable lists the cells the client could not measure, one "name:
// reason" line each: prefill, decode and traffic cells with status
// unmeasurable (docs/method.md#unmeasurable). Never gated, they make the
// run inconclusive (exit 4) when nothing worse happened, in `slogate run`
// and `slogate merge` alike.
func (r *Results) Unmeasurable() []string {
	var out []string
	for _, c := range r.Prefill {
		if c.Status == vocab.StatusUnmeasurable {
			out = append(out, c.Ref().Name()+": "+c.Reason)
		}
	}
	for _, c := range r.Decode {
		if c.Status == vocab.StatusUnmeasurable {
			out = append(out, c.Ref().Name()+": "+c.Reason)
		}
	}
	for _, c := range r.Traffic {
		if c.Status == vocab.StatusUnmeasurable {
			out = append(out, c.Ref().Name()+": "+c.Reason)
		}
	}
	return out
}
