package runner

import (
	"maps"
	"slices"

	"github.com/slogate/slogate/internal/measure"
	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// Pool is one build's results measured in several boots, each a results
// set of its own (an interleaved run's boots of one side), pooled into
// one as measure.boots pools a run's boots (docs/method.md#boots): every
// repeat of a decode or prefill cell, whatever its boot, is a run of the
// pooled cell, combined as the repeats of one run are (its status the
// worst, an errored run the result); a traffic cell's windows, one a
// boot, combine each metric by its rule over the windows. A cell is
// pooled over the boots that measured it. The rest of the results (the
// server, the measure settings) is the first boot's, but for the cost,
// the boots' summed. nil for no boot.
func Pool(boots []*result.Results) *result.Results {
	if len(boots) == 0 {
		return nil
	}
	out := *boots[0]
	out.Decode, out.Prefill, out.Traffic, out.Verdicts, out.Comparison = nil, nil, nil, nil, nil
	out.GPUTime = poolGPUTime(boots)
	decode, prefill, traffic := map[vocab.CellRef][]result.DecodeCell{}, map[vocab.CellRef][]result.PrefillCell{}, map[vocab.CellRef][]result.TrafficCell{}
	var decodeOrder, prefillOrder, trafficOrder []vocab.CellRef
	for _, b := range boots {
		for _, c := range b.Decode {
			if decode[c.Ref()] == nil {
				decodeOrder = append(decodeOrder, c.Ref())
			}
			decode[c.Ref()] = append(decode[c.Ref()], repeatRuns(c)...)
		}
		for _, c := range b.Prefill {
			if prefill[c.Ref()] == nil {
				prefillOrder = append(prefillOrder, c.Ref())
			}
			prefill[c.Ref()] = append(prefill[c.Ref()], prefillRuns(c)...)
		}
		for _, c := range b.Traffic {
			if traffic[c.Ref()] == nil {
				trafficOrder = append(trafficOrder, c.Ref())
			}
			traffic[c.Ref()] = append(traffic[c.Ref()], c)
		}
	}
	for _, ref := range decodeOrder {
		out.Decode = append(out.Decode, combineDecode(measurable(decode[ref], func(c result.DecodeCell) vocab.Status { return c.Status })))
	}
	for _, ref := range prefillOrder {
		out.Prefill = append(out.Prefill, combinePrefill(measurable(prefill[ref], func(c result.PrefillCell) vocab.Status { return c.Status })))
	}
	for _, ref := range trafficOrder {
		out.Traffic = append(out.Traffic, poolTraffic(measurable(traffic[ref], func(c result.TrafficCell) vocab.Status { return c.Status })))
	}
	return &out
}

// measurable are the runs of a pooled cell without those the client
// could not measure, as a run leaves them out of a repeated cell
// (docs/method.md#unmeasurable), unless every run is one of them.
func measurable[C any](runs []C, status func(C) vocab.Status) []C {
	var out []C
	for _, r := range runs {
		if status(r) != vocab.StatusUnmeasurable {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return runs
	}
	return out
}

// repeatRuns are the runs a combined decode cell was made of, as far as
// its samples keep them: one cell a repeat, each metric with samples set
// to that repeat's value (the others keep the cell's). An errored or
// unrepeated cell is its own one run.
func repeatRuns(c result.DecodeCell) []result.DecodeCell {
	n := c.Repeats
	if n < 2 || len(c.Samples) == 0 || c.Status == vocab.StatusError {
		return []result.DecodeCell{c}
	}
	runs := make([]result.DecodeCell, n)
	for i := range runs {
		r := c
		r.Stats = maps.Clone(c.Stats)
		r.Repeats, r.Spread, r.Samples, r.Design = 0, nil, nil, nil
		for name, xs := range c.Samples {
			if m, ok := metric.Lookup(vocab.PhaseDecode, name); ok && i < len(xs) {
				r.SetValue(m, xs[i])
			}
		}
		runs[i] = r
	}
	return runs
}

// prefillRuns are repeatRuns of a prefill cell.
func prefillRuns(c result.PrefillCell) []result.PrefillCell {
	n := c.Repeats
	if n < 2 || len(c.Samples) == 0 || c.Status == vocab.StatusError {
		return []result.PrefillCell{c}
	}
	runs := make([]result.PrefillCell, n)
	for i := range runs {
		r := c
		r.Repeats, r.Spread, r.Samples = 0, nil, nil
		for name, xs := range c.Samples {
			if m, ok := metric.Lookup(vocab.PhasePrefill, name); ok && i < len(xs) {
				r.SetValue(m, xs[i])
			}
		}
		runs[i] = r
	}
	return runs
}

// poolTraffic combines the windows of one traffic cell, one a boot: the
// worst status's window when any is not measured (an error first), else
// the last window with each metric every window has combined over them by
// its rule (metric.Combine), as the combined value of repeats is.
func poolTraffic(windows []result.TrafficCell) result.TrafficCell {
	worst := windows[0]
	for _, w := range windows {
		if statusRank(w.Status) > statusRank(worst.Status) || w.Status == vocab.StatusError {
			worst = w
		}
	}
	if len(windows) == 1 || !worst.Status.Measured() {
		return worst
	}
	c := windows[len(windows)-1]
	c.Status, c.Reason, c.Reasons = worst.Status, worst.Reason, worst.Reasons
	for _, m := range metric.OfPhase(vocab.PhaseTraffic) {
		var xs []float64
		for i := range windows {
			if v, ok := windows[i].Value(m); ok {
				xs = append(xs, v)
			}
		}
		if len(xs) == len(windows) {
			c.SetValue(m, m.Combine.Of(xs))
		}
	}
	// Each window's percentile is read from its own requests, and the
	// pooled one combines them: it is as decidable as the window with the
	// fewest (docs/method.md#undecidable-percentiles), so that is the
	// count the pooled cell keeps, not the windows' median.
	for _, w := range windows {
		c.Completed = min(c.Completed, w.Completed)
	}
	return c
}

// poolGPUTime is the boots' cost summed, as a run of several boots counts
// its own (gpuTime); nil when no boot has one.
func poolGPUTime(boots []*result.Results) *result.GPUTime {
	var g *result.GPUTime
	for _, b := range boots {
		p := b.GPUTime
		if p == nil {
			continue
		}
		if g == nil {
			c := *p
			c.StartupS = slices.Clone(p.StartupS)
			g = &c
			continue
		}
		g.ServerS = measure.Round(g.ServerS+p.ServerS, 2)
		g.GPUSeconds = measure.Round(g.GPUSeconds+p.GPUSeconds, 2)
		g.CellsS = measure.Round(g.CellsS+p.CellsS, 2)
		g.Boots += p.Boots
		g.StartupS = append(g.StartupS, p.StartupS...)
	}
	return g
}
