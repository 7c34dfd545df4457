// Package codify turns a measured run into HCL that a spec can paste in: an
// expect block per decode matrix (total_tps over the measured matrix), one
// for prefill tps, and a few assert blocks (the peak decode cell, prefill at
// the largest context, time to first token at concurrency 1), each allowing
// a margin below (or, for latencies, above) what was measured. Build
// decides the blocks as values (which cells, their thresholds and the
// figures measured, the noise and the repeats it needs); the view
// internal/views/codifyview makes the HCL text and its messages from them.
package codify

import (
	"errors"
	"maps"
	"math"
	"slices"
	"sort"

	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/views/codifyview"
	"github.com/slogate/slogate/internal/vocab"
)

// The metrics codified, from the metric table: their names, units and
// directions (which way the margin goes).
var (
	totalTPS   = metric.Must(vocab.PhaseDecode, metric.TotalTPS)
	ttft       = metric.Must(vocab.PhaseDecode, metric.TTFTMs)
	ttftP99    = metric.Must(vocab.PhaseDecode, metric.TTFTMsP99)
	prefillTPS = metric.Must(vocab.PhasePrefill, metric.TPS)
)

// Options controls the generated blocks.
type Options struct {
	// Margin is the fraction allowed below a measured throughput (above a
	// measured latency): the expect tolerance and the assert thresholds.
	Margin float64
	// Source names the results file in the header comment.
	Source string
	// Force codifies a run Check refuses (unfinished, or with errored
	// cells), from its measured cells only.
	Force bool
}

// ErrNothingMeasured is returned for a run without a single measured cell.
var ErrNothingMeasured = errors.New("the run has no measured cell to codify (every cell is over capacity, errored or missing): codify the results.json of a run that measured at least one cell")

// UnfitError says why a run should not become SLOs: it did not finish (the
// cells it never reached would get no expectation, silently), or some cells
// could not be measured (an error, not the server's speed).
type UnfitError struct {
	// Unfinished says how the run ended early; "" when it finished.
	Unfinished string
	// Errored lists the cells that could not be measured, with the reason:
	// "decode/ctx=8K/conc=64: HTTP 500 from /v1/completions".
	Errored []string
}

// Error says what is wrong and what to do instead.
func (e *UnfitError) Error() string {
	return "refusing to turn this run into SLOs:\n" + e.Reasons() +
		"\ncodify the results of a complete run without errors, or pass -force to codify the measured cells only"
}

// Reasons lists what makes the run unfit, one indented line each.
func (e *UnfitError) Reasons() string {
	return codifyview.UnfitReasons(e.Unfinished, e.Errored)
}

// Check returns an *UnfitError when res is not a complete run whose every
// cell was measured or skipped as over capacity, nil otherwise.
// results.json records how a run ended: `interrupted` (a signal), `error`
// (an infrastructure error that ended it early, -timeout included) and
// `finished` (zero while the run is still writing it, or when slogate was
// killed before it could).
func Check(res *result.Results) error {
	e := &UnfitError{Unfinished: unfinished(res)}
	for _, c := range leftOut(res) {
		if c.Status == vocab.StatusError {
			e.Errored = append(e.Errored, c.Cell.Name()+": "+c.Reason)
		}
	}
	if e.Unfinished == "" && len(e.Errored) == 0 {
		return nil
	}
	return e
}

// anyMeasured reports whether res has a cell with numbers.
func anyMeasured(res *result.Results) bool {
	for _, c := range res.Prefill {
		if c.Status.Measured() {
			return true
		}
	}
	for _, c := range res.Decode {
		if c.Status.Measured() {
			return true
		}
	}
	return false
}

// unfinished says how res ended early, "" when it finished.
func unfinished(res *result.Results) string {
	switch {
	case res.Interrupted && res.Error != "":
		return "it was interrupted (" + res.Error + ")"
	case res.Interrupted:
		return "it was interrupted"
	case res.Error != "":
		return "it ended early: " + res.Error
	case res.Finished.IsZero():
		return "results.json has no finish time (slogate was stopped before it could finish the run, or the run is still going)"
	}
	return ""
}

// leftOut lists the cells of res that have no numbers, prefill first, each
// phase in context and concurrency order.
func leftOut(res *result.Results) []codifyview.LeftOut {
	var out []codifyview.LeftOut
	add := func(ref vocab.CellRef, st vocab.Status, reason string) {
		switch st {
		case vocab.StatusOverCapacity:
			out = append(out, codifyview.LeftOut{Cell: ref, Status: st})
		case vocab.StatusError:
			if reason == "" {
				reason = "error"
			}
			out = append(out, codifyview.LeftOut{Cell: ref, Status: st, Reason: reason})
		}
	}
	for _, c := range res.Prefill {
		add(c.Ref(), c.Status, c.Reason)
	}
	decode := slices.Clone(res.Decode)
	sort.SliceStable(decode, func(i, j int) bool {
		a, b := decode[i], decode[j]
		if a.Context != b.Context {
			return a.Context < b.Context
		}
		return a.Concurrency < b.Concurrency
	})
	for _, c := range decode {
		add(c.Ref(), c.Status, c.Reason)
	}
	sort.SliceStable(out, func(i, j int) bool {
		return out[i].Cell.Phase == vocab.PhasePrefill && out[j].Cell.Phase != vocab.PhasePrefill
	})
	return out
}

// Generate returns the HCL blocks for res: Build, rendered by codifyview.
func Generate(res *result.Results, opt Options) ([]byte, error) {
	m, err := Build(res, opt)
	if err != nil {
		return nil, err
	}
	return codifyview.Render(m), nil
}

// Build decides the blocks for res: the header's figures, an expect block
// per decode matrix and one for prefill, and the asserts. It returns
// ErrNothingMeasured for a run without a measured cell, and refuses a run
// Check finds unfit (an *UnfitError) unless opt.Force; either way only
// measured cells give values, and the header lists the cells left out.
func Build(res *result.Results, opt Options) (codifyview.Model, error) {
	if !anyMeasured(res) {
		return codifyview.Model{}, ErrNothingMeasured // -force would not help
	}
	if !opt.Force {
		if err := Check(res); err != nil {
			return codifyview.Model{}, err
		}
	}
	labels := res.MatrixLabels()
	var tails []tailCell
	if len(labels) > 0 {
		tails = tailCells(res, labels[0])
	}
	m := codifyview.Model{Header: header(res, opt, tails)}
	for _, label := range labels {
		if e, ok := expectDecode(res, label, opt.Margin); ok {
			m.Expects = append(m.Expects, e)
		}
	}
	if e, ok := expectPrefill(res, opt.Margin); ok {
		m.Expects = append(m.Expects, e)
	}
	if len(m.Expects) == 0 {
		return codifyview.Model{}, ErrNothingMeasured
	}
	if len(labels) > 0 {
		if a, ok := assertPeak(res, labels[0], opt.Margin); ok {
			m.Asserts = append(m.Asserts, a)
		}
		if a, ok := assertTTFT(res, labels[0], opt.Margin); ok {
			m.Asserts = append(m.Asserts, a)
		}
		m.Asserts = append(m.Asserts, assertTTFTTail(labels[0], tails, opt.Margin)...)
	}
	if a, ok := assertPrefill(res, opt.Margin); ok {
		m.Asserts = append(m.Asserts, a)
	}
	return m, nil
}

// header is what the comment that opens the output reports.
func header(res *result.Results, opt Options, tails []tailCell) codifyview.Header {
	h := codifyview.Header{Source: opt.Source, Run: res, Margin: opt.Margin, Noise: MeasuredNoise(res, opt.Margin, 0),
		Unfinished: unfinished(res), LeftOut: leftOut(res), MinSamples: metric.MinPercentileSamples}
	for _, t := range tails {
		if t.samples < metric.MinPercentileSamples {
			h.FewSamples = append(h.FewSamples, codifyview.Tail{Cell: t.cell.Ref(), Metric: ttftP99.Name, Samples: t.samples})
		}
	}
	return h
}

// tailCell is a decode cell whose TTFT p99 codify considers, with the
// number of requests behind it (-1 when the results do not say).
type tailCell struct {
	cell    *result.DecodeCell
	samples int
}

// tailCells are the cells of matrix label whose TTFT p99 codify considers:
// at the smallest context, the lowest and the highest measured concurrency.
func tailCells(res *result.Results, label string) []tailCell {
	ctxs, concs := axes(res, label)
	var measured []*result.DecodeCell
	for _, ctx := range ctxs {
		for _, conc := range concs {
			if c, ok := res.DecodeCell(label, ctx, conc); ok && c.Status.Measured() && c.TTFTMsP99 > 0 {
				measured = append(measured, c)
			}
		}
		if len(measured) > 0 {
			break
		}
	}
	var out []tailCell
	for i, c := range measured {
		if i != 0 && i != len(measured)-1 {
			continue
		}
		n := -1
		if v, ok := c.Metric(metric.CountName(ttft.Name)); ok {
			n = int(v)
		}
		out = append(out, tailCell{c, n})
	}
	return out
}

// assertTTFTTail asserts the TTFT p99 of the tail cells that rest on
// enough samples (metric.MinPercentileSamples); header lists the others.
func assertTTFTTail(label string, tails []tailCell, margin float64) []codifyview.Assert {
	var out []codifyview.Assert
	for _, t := range tails {
		if t.samples < metric.MinPercentileSamples {
			continue
		}
		a := guard(codifyview.AssertTTFTTail, label, t.cell.Context, t.cell.Concurrency, ttftP99, t.cell.TTFTMsP99, margin)
		a.Samples = t.samples
		out = append(out, a)
	}
	return out
}

// expectDecode is `expect "<label>_total_tps"` over the measured matrix;
// false when the matrix has no measured cell.
func expectDecode(res *result.Results, label string, margin float64) (codifyview.Expect, bool) {
	ctxs, concs := axes(res, label)
	e := codifyview.Expect{Matrix: label, Metric: totalTPS, Tolerance: margin, Concurrency: concs}
	anyMeasured := false
	for _, ctx := range ctxs {
		row := codifyview.Row{Context: ctx}
		for _, conc := range concs {
			c, ok := res.DecodeCell(label, ctx, conc)
			if !ok || !c.Status.Measured() {
				row.Values = append(row.Values, math.NaN())
				continue
			}
			anyMeasured = true
			row.Values = append(row.Values, roundToward(c.TotalTPS, 1, totalTPS.HigherIsBetter))
		}
		e.Rows = append(e.Rows, row)
	}
	return e, anyMeasured
}

// expectPrefill is `expect "prefill_tps"`, one value per measured context;
// false when no prefill cell was measured.
func expectPrefill(res *result.Results, margin float64) (codifyview.Expect, bool) {
	e := codifyview.Expect{Matrix: string(vocab.PhasePrefill), Metric: prefillTPS, Tolerance: margin}
	for _, c := range sortedPrefill(res) {
		e.Rows = append(e.Rows, codifyview.Row{Context: c.Context, Values: []float64{roundToward(c.TPS, 1, prefillTPS.HigherIsBetter)}})
	}
	return e, len(e.Rows) > 0
}

// assertPeak asserts the cell with the highest total_tps keeps (1 − margin)
// of it; false when matrix label has no measured cell.
func assertPeak(res *result.Results, label string, margin float64) (codifyview.Assert, bool) {
	var best *result.DecodeCell
	for i := range res.Decode {
		c := &res.Decode[i]
		if c.Ref().MatrixLabel() != label || !c.Status.Measured() {
			continue
		}
		// Prefer steady-state cells over queued ones, then the highest throughput.
		if best == nil || better(c, best) {
			best = c
		}
	}
	if best == nil {
		return codifyview.Assert{}, false
	}
	return guard(codifyview.AssertPeak, label, best.Context, best.Concurrency, totalTPS, best.TotalTPS, margin), true
}

func better(c, best *result.DecodeCell) bool {
	if (c.Status == vocab.StatusValid) != (best.Status == vocab.StatusValid) {
		return c.Status == vocab.StatusValid
	}
	return c.TotalTPS > best.TotalTPS
}

// assertTTFT asserts the time to first token at the lowest concurrency of
// the smallest context stays within (1 + margin) of what was measured;
// false when no cell of matrix label measured it.
func assertTTFT(res *result.Results, label string, margin float64) (codifyview.Assert, bool) {
	ctxs, concs := axes(res, label)
	for _, ctx := range ctxs {
		for _, conc := range concs {
			c, ok := res.DecodeCell(label, ctx, conc)
			if !ok || !c.Status.Measured() || c.TTFTMs <= 0 {
				continue
			}
			return guard(codifyview.AssertTTFT, label, ctx, conc, ttft, c.TTFTMs, margin), true
		}
	}
	return codifyview.Assert{}, false
}

// assertPrefill asserts prefill throughput at the largest measured
// context; false when no prefill cell was measured.
func assertPrefill(res *result.Results, margin float64) (codifyview.Assert, bool) {
	cells := sortedPrefill(res)
	if len(cells) == 0 {
		return codifyview.Assert{}, false
	}
	c := cells[len(cells)-1]
	return guard(codifyview.AssertPrefill, string(vocab.PhasePrefill), c.Context, 0, prefillTPS, c.TPS, margin), true
}

// guard is the assert of kind on metric m of cell (matrix, ctx, conc)
// measured at v: at least v × (1 − margin) when higher is better, at most
// v × (1 + margin) otherwise, rounded to three significant digits on the
// passing side.
func guard(kind codifyview.AssertKind, matrix string, ctx, conc int, m metric.Metric, v, margin float64) codifyview.Assert {
	a := codifyview.Assert{Kind: kind, Matrix: matrix, Context: ctx, Concurrency: conc, Metric: m, AtLeast: m.HigherIsBetter, Measured: v}
	if m.HigherIsBetter {
		a.Limit = niceThreshold(v*(1-margin), true)
	} else {
		a.Limit = niceThreshold(v*(1+margin), false)
	}
	return a
}

// roundToward rounds v to decimals places toward the passing side of a
// threshold: down when higher is better, up otherwise, so that the measured
// run itself passes even with a zero margin.
func roundToward(v float64, decimals int, down bool) float64 {
	p := math.Pow10(decimals)
	if down {
		return math.Floor(v*p+1e-9) / p
	}
	return math.Ceil(v*p-1e-9) / p
}

// niceThreshold rounds a threshold to three significant digits toward the
// passing side (5786.3 → 5780 for a minimum, 135.7 → 136 for a maximum).
func niceThreshold(v float64, down bool) float64 {
	if v <= 0 {
		return 0
	}
	decimals := 2 - int(math.Floor(math.Log10(v)))
	if decimals >= 0 {
		return roundToward(v, decimals, down)
	}
	p := math.Pow10(-decimals)
	if down {
		return math.Floor(v/p) * p
	}
	return math.Ceil(v/p) * p
}

// axes returns the sorted contexts and concurrency levels recorded for label.
func axes(res *result.Results, label string) (ctxs, concs []int) {
	cs, cc := map[int]bool{}, map[int]bool{}
	for _, c := range res.Decode {
		if c.Ref().MatrixLabel() == label {
			cs[c.Context], cc[c.Concurrency] = true, true
		}
	}
	return sortedKeys(cs), sortedKeys(cc)
}

func sortedKeys(m map[int]bool) []int { return slices.Sorted(maps.Keys(m)) }

// sortedPrefill lists the measured prefill cells by context.
func sortedPrefill(res *result.Results) []result.PrefillCell {
	var out []result.PrefillCell
	for _, c := range res.Prefill {
		if c.Status.Measured() {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Context < out[j].Context })
	return out
}
