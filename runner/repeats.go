package runner

import (
	"fmt"
	"slices"

	"github.com/slogate/slogate/result"
)

// Repeats (measure.repeat > 1) combine into one cell by iterating the metric
// table result.Metrics: each metric becomes its Combine over the runs, the
// cell's Spread keeps [min, max] and its Samples every run's value, for
// diff's U test (docs/method.md#repeats).

// combinePrefill merges repeated prefill runs; an errored run is the result.
func combinePrefill(runs []result.PrefillCell) result.PrefillCell {
	if len(runs) == 1 {
		return runs[0]
	}
	for _, x := range runs {
		if x.Status == result.StatusError {
			return x
		}
	}
	c := runs[len(runs)-1]
	c.Repeats = len(runs)
	c.Spread = map[string][2]float64{}
	c.Samples = map[string][]float64{}
	for _, m := range result.PhaseMetrics(result.PhasePrefill) {
		var xs []float64
		for i := range runs {
			if v, ok := m.OfPrefill(&runs[i]); ok {
				xs = append(xs, v)
			}
		}
		m.SetPrefill(&c, m.Combine.Of(xs))
		c.Spread[m.Name] = [2]float64{slices.Min(xs), slices.Max(xs)}
		c.Samples[m.Name] = xs
	}
	return c
}

// combineDecode merges repeated runs of a decode cell: the status is the
// worst (an errored run is the result); an optional metric is kept only
// when every run has it (else it is dropped, with a note); the warnings and
// notes of the runs are kept once each, the preemptions add up; the token
// source is the least exact; the KV cross-check is the first run's.
func combineDecode(runs []result.DecodeCell) result.DecodeCell {
	if len(runs) == 1 {
		return runs[0]
	}
	worst := runs[0]
	for _, x := range runs {
		if statusRank(x.Status) > statusRank(worst.Status) {
			worst = x
		}
	}
	if worst.Status == result.StatusError {
		return worst
	}
	c := mergeDecodeRuns(runs)
	c.Status, c.Reason = worst.Status, worst.Reason
	return c
}

// mergeDecodeRuns combines the metrics, warnings and notes of measured runs
// of one decode cell (combineDecode), whatever their number; the status is
// runs[0]'s.
func mergeDecodeRuns(runs []result.DecodeCell) result.DecodeCell {
	c := runs[0]
	c.Repeats = len(runs)
	c.Spread = map[string][2]float64{}
	c.Samples = map[string][]float64{}
	var notes []string
	for _, m := range result.PhaseMetrics(result.PhaseDecode) {
		var xs []float64
		for i := range runs {
			if v, ok := m.OfDecode(&runs[i]); ok {
				xs = append(xs, v)
			}
		}
		if len(xs) < len(runs) {
			// An optional metric some run lacks: a single run's value would
			// pass for the combined one, without spread.
			if len(xs) > 0 {
				m.ClearDecode(&c)
				notes = append(notes, fmt.Sprintf("%s dropped: %d of %d repeats reported it", m.Name, len(xs), len(runs)))
			}
			continue
		}
		m.SetDecode(&c, m.Combine.Of(xs))
		c.Spread[m.Name] = [2]float64{slices.Min(xs), slices.Max(xs)}
		c.Samples[m.Name] = xs
	}
	var warns []string
	for i, x := range runs {
		warns = appendNew(warns, x.Warnings...)
		notes = appendNew(notes, x.Notes...)
		c.TokenSource = c.TokenSource.LeastExact(x.TokenSource)
		if i > 0 && c.Preemptions != nil && x.Preemptions != nil {
			n := *c.Preemptions + *x.Preemptions
			c.Preemptions = &n
		}
	}
	c.Warnings, c.Notes = warns, notes
	return c
}

// appendNew appends the elements of add that list does not hold yet.
func appendNew(list []string, add ...string) []string {
	for _, s := range add {
		if !slices.Contains(list, s) {
			list = append(list, s)
		}
	}
	return list
}
