package result

import "github.com/slogate/slogate/internal/vocab"

// Unmeasured lists what the run could not measure, one "name: reason" line
// each: prefill, decode and traffic cells with status error, and searches
// stopped by a probe they could not measure or judge, but for a probe the
// client could not measure (StoppedUnmeasurable: Unmeasurable lists it)
// (docs/method.md#statuses).
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
		if s.Error != "" && !s.StoppedUnmeasurable() {
			out = append(out, vocab.KindSearch+"/"+s.Name+": "+s.Error)
		}
	}
	return out
}

// StoppedUnmeasurable reports whether concurrency search s stopped at a
// probe whose decode cell the client could not measure (its last probe's
// status unmeasurable): undecided, like the cell, not an error.
func (s *Search) StoppedUnmeasurable() bool {
	n := len(s.Probes)
	return s.Error != "" && n > 0 && s.Probes[n-1].Cell.Status == vocab.StatusUnmeasurable
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
// unmeasurable, and concurrency searches stopped at such a probe
// (docs/method.md#unmeasurable). Never gated, they make the
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
	for _, s := range r.Search {
		if s.StoppedUnmeasurable() {
			out = append(out, vocab.KindSearch+"/"+s.Name+": "+s.Error)
		}
	}
	return out
}

// Saturated names the traffic cells (rate-search probes aside: a
// saturated probe is a failed probe) that stopped early as saturated,
// each with its reason: past the server's capacity, a run's failure
// whether or not a rule reads the cell (docs/method.md#saturation).
func (r *Results) Saturated() []string {
	var out []string
	for _, c := range r.Traffic {
		if c.Status == vocab.StatusSaturated && c.Search == "" {
			out = append(out, c.Ref().Name()+": "+c.Reason)
		}
	}
	return out
}
