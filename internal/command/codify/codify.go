// Package codify turns a measured run into HCL that a spec can paste in: an
// expect block per decode matrix (total_tps over the measured matrix), one
// for prefill tps, and a few assert blocks (the peak decode cell, prefill at
// the largest context, time to first token at concurrency 1), each allowing
// a margin below (or, for latencies, above) what was measured.
package codify

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"

	"github.com/slogate/slogate/internal/engine/registry"
	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/numfmt"
	"github.com/slogate/slogate/internal/result"
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
	var lines []string
	if e.Unfinished != "" {
		lines = append(lines, "  the run did not finish: "+e.Unfinished)
	}
	if n := len(e.Errored); n > 0 {
		lines = append(lines, fmt.Sprintf("  %d %s could not be measured:", n, plural(n, "cell", "cells")))
		for _, c := range e.Errored {
			lines = append(lines, "    "+c)
		}
	}
	return strings.Join(lines, "\n")
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
		if c.status == vocab.StatusError {
			e.Errored = append(e.Errored, c.ref.Name()+": "+c.why)
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

// omission is a cell of res without numbers, which codify leaves out.
type omission struct {
	ref    vocab.CellRef
	status vocab.Status
	why    string // "over capacity", or the runner's reason for an error
}

// leftOut lists the cells of res that have no numbers, prefill first, each
// phase in context and concurrency order.
func leftOut(res *result.Results) []omission {
	var out []omission
	add := func(ref vocab.CellRef, st vocab.Status, reason string) {
		switch st {
		case vocab.StatusOverCapacity:
			out = append(out, omission{ref, st, "over capacity"})
		case vocab.StatusError:
			if reason == "" {
				reason = "error"
			}
			out = append(out, omission{ref, st, reason})
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
		return out[i].ref.Phase == vocab.PhasePrefill && out[j].ref.Phase != vocab.PhasePrefill
	})
	return out
}

// Generate returns the HCL blocks for res. It returns ErrNothingMeasured for
// a run without a measured cell, and refuses a run Check finds unfit (an
// *UnfitError) unless opt.Force; either way only measured cells give
// values, and a comment lists the cells left out.
func Generate(res *result.Results, opt Options) ([]byte, error) {
	if !anyMeasured(res) {
		return nil, ErrNothingMeasured // -force would not help
	}
	if !opt.Force {
		if err := Check(res); err != nil {
			return nil, err
		}
	}
	f := hclwrite.NewEmptyFile()
	body := f.Body()
	var tails []tailCell
	if labels := res.MatrixLabels(); len(labels) > 0 {
		tails = tailCells(res, labels[0])
	}
	comment(body, header(res, opt, tails))

	labels := res.MatrixLabels()
	wrote := false
	for _, label := range labels {
		if expectDecode(body, res, label, opt.Margin) {
			wrote = true
		}
	}
	if expectPrefill(body, res, opt.Margin) {
		wrote = true
	}
	if !wrote {
		return nil, ErrNothingMeasured
	}
	if len(labels) > 0 {
		assertPeak(body, res, labels[0], opt.Margin)
		assertTTFT(body, res, labels[0], opt.Margin)
		assertTTFTTail(body, labels[0], tails, opt.Margin)
	}
	assertPrefill(body, res, opt.Margin)
	return hclwrite.Format(f.Bytes()), nil
}

// header is the comment that opens the output.
func header(res *result.Results, opt Options, tails []tailCell) string {
	src := opt.Source
	if src == "" {
		src = "a slogate run"
	}
	h := fmt.Sprintf("# Generated by slogate codify from %s (%s).\n# Expected values are the measured ones; tolerance and thresholds allow a %s margin.\n",
		src, res.Describe("2006-01-02", registry.Title), numfmt.Percent(opt.Margin))
	h += MeasuredNoise(res, opt.Margin, 0).Comment(opt.Margin)
	if why := unfinished(res); why != "" {
		h += "# Codified with -force although the run did not finish: " + why + ".\n# Cells it never reached have no expectation.\n"
	}
	if cells := leftOut(res); len(cells) > 0 {
		h += "# Left out, no numbers to take:\n"
		for _, c := range cells {
			h += "#   " + c.ref.Name() + ": " + c.why + "\n"
		}
	}
	var few []string
	for _, t := range tails {
		if t.samples < metric.MinPercentileSamples {
			n := "sample count not recorded"
			if t.samples >= 0 {
				n = fmt.Sprintf("%d %s", t.samples, plural(t.samples, "sample", "samples"))
			}
			few = append(few, fmt.Sprintf("#   %s %s: %s", t.cell.Ref().Name(), ttftP99.Name, n))
		}
	}
	if len(few) > 0 {
		h += fmt.Sprintf("# Left out, percentiles of fewer than %d samples (docs/method.md#metric-names):\n", metric.MinPercentileSamples)
		h += strings.Join(few, "\n") + "\n"
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
func assertTTFTTail(body *hclwrite.Body, label string, tails []tailCell, margin float64) {
	for _, t := range tails {
		if t.samples < metric.MinPercentileSamples {
			continue
		}
		c := t.cell
		op, limit := guard(ttftP99, c.TTFTMsP99, margin)
		name := fmt.Sprintf("%s_ttft_p99_%s_c%d", label, strings.ToLower(vocab.FormatTokens(c.Context)), c.Concurrency)
		writeAssert(body, name, cellTraversal(label, c.Context, c.Concurrency, ttftP99.Name), op, limit,
			fmt.Sprintf("time to first token p99 at %s x %d rose above %s %s (measured %s over %d requests)", vocab.FormatTokens(c.Context), c.Concurrency,
				numfmt.Value(limit), ttftP99.Unit, numfmt.Value(c.TTFTMsP99), t.samples))
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func comment(body *hclwrite.Body, text string) {
	body.AppendUnstructuredTokens(hclwrite.Tokens{{Type: hclsyntax.TokenComment, Bytes: []byte(text)}})
}

// expectDecode writes `expect "<label>_total_tps"` over the measured matrix;
// it reports whether the matrix had a measured cell.
func expectDecode(body *hclwrite.Body, res *result.Results, label string, margin float64) bool {
	ctxs, concs := axes(res, label)
	var rows []hclwrite.ObjectAttrTokens
	anyMeasured := false
	for _, ctx := range ctxs {
		var vals []cty.Value
		for _, conc := range concs {
			c, ok := res.DecodeCell(label, ctx, conc)
			if !ok || !c.Status.Measured() {
				vals = append(vals, cty.NullVal(cty.Number))
				continue
			}
			anyMeasured = true
			vals = append(vals, cty.NumberFloatVal(roundToward(c.TotalTPS, 1, totalTPS.HigherIsBetter)))
		}
		rows = append(rows, hclwrite.ObjectAttrTokens{
			Name:  hclwrite.TokensForValue(cty.StringVal(vocab.FormatTokens(ctx))),
			Value: hclwrite.TokensForValue(cty.TupleVal(vals)),
		})
	}
	if !anyMeasured {
		return false
	}
	body.AppendNewline()
	comment(body, fmt.Sprintf("# Rows: contexts; columns: concurrency %s; null = not measured.\n", numfmt.List(concs, strconv.Itoa)))
	b := body.AppendNewBlock("expect", []string{label + "_total_tps"}).Body()
	if label != "decode" {
		b.SetAttributeValue("matrix", cty.StringVal(label))
	}
	b.SetAttributeValue("metric", cty.StringVal(totalTPS.Name))
	b.SetAttributeValue("tolerance", cty.NumberFloatVal(margin))
	b.SetAttributeRaw("values", hclwrite.TokensForObject(rows))
	return true
}

// expectPrefill writes `expect "prefill_tps"`, one value per measured
// context; it reports whether any prefill cell was measured.
func expectPrefill(body *hclwrite.Body, res *result.Results, margin float64) bool {
	var rows []hclwrite.ObjectAttrTokens
	for _, c := range sortedPrefill(res) {
		rows = append(rows, hclwrite.ObjectAttrTokens{
			Name:  hclwrite.TokensForValue(cty.StringVal(vocab.FormatTokens(c.Context))),
			Value: hclwrite.TokensForValue(cty.NumberFloatVal(roundToward(c.TPS, 1, prefillTPS.HigherIsBetter))),
		})
	}
	if len(rows) == 0 {
		return false
	}
	body.AppendNewline()
	b := body.AppendNewBlock("expect", []string{"prefill_tps"}).Body()
	b.SetAttributeValue("matrix", cty.StringVal("prefill"))
	b.SetAttributeValue("metric", cty.StringVal(prefillTPS.Name))
	b.SetAttributeValue("tolerance", cty.NumberFloatVal(margin))
	b.SetAttributeRaw("values", hclwrite.TokensForObject(rows))
	return true
}

// assertPeak asserts the cell with the highest total_tps keeps (1 − margin)
// of it.
func assertPeak(body *hclwrite.Body, res *result.Results, label string, margin float64) {
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
		return
	}
	op, limit := guard(totalTPS, best.TotalTPS, margin)
	ctx := vocab.FormatTokens(best.Context)
	writeAssert(body, fmt.Sprintf("%s_peak_%s", label, totalTPS.Name),
		cellTraversal(label, best.Context, best.Concurrency, totalTPS.Name), op, limit,
		fmt.Sprintf("%s throughput at %s x %d fell below %s %s (was %s when codified)", label, ctx, best.Concurrency, numfmt.Value(limit), totalTPS.Unit, numfmt.Value(best.TotalTPS)))
}

func better(c, best *result.DecodeCell) bool {
	if (c.Status == vocab.StatusValid) != (best.Status == vocab.StatusValid) {
		return c.Status == vocab.StatusValid
	}
	return c.TotalTPS > best.TotalTPS
}

// assertTTFT asserts the time to first token at the lowest concurrency of
// the smallest context stays within (1 + margin) of what was measured.
func assertTTFT(body *hclwrite.Body, res *result.Results, label string, margin float64) {
	ctxs, concs := axes(res, label)
	for _, ctx := range ctxs {
		for _, conc := range concs {
			c, ok := res.DecodeCell(label, ctx, conc)
			if !ok || !c.Status.Measured() || c.TTFTMs <= 0 {
				continue
			}
			op, limit := guard(ttft, c.TTFTMs, margin)
			name := fmt.Sprintf("%s_ttft_%s_c%d", label, strings.ToLower(vocab.FormatTokens(ctx)), conc)
			writeAssert(body, name, cellTraversal(label, ctx, conc, ttft.Name), op, limit,
				fmt.Sprintf("time to first token at %s x %d rose above %s %s (was %s when codified)", vocab.FormatTokens(ctx), conc, numfmt.Value(limit), ttft.Unit, numfmt.Value(c.TTFTMs)))
			return
		}
	}
}

// assertPrefill asserts prefill throughput at the largest measured context.
func assertPrefill(body *hclwrite.Body, res *result.Results, margin float64) {
	cells := sortedPrefill(res)
	if len(cells) == 0 {
		return
	}
	c := cells[len(cells)-1]
	op, limit := guard(prefillTPS, c.TPS, margin)
	ctx := vocab.FormatTokens(c.Context)
	trav := hcl.Traversal{hcl.TraverseRoot{Name: "prefill"}, hcl.TraverseIndex{Key: cty.StringVal(ctx)}, hcl.TraverseAttr{Name: prefillTPS.Name}}
	writeAssert(body, "prefill_tps_"+strings.ToLower(ctx), trav, op, limit,
		fmt.Sprintf("prefill throughput at %s fell below %s %s (was %s when codified)", ctx, numfmt.Value(limit), prefillTPS.Unit, numfmt.Value(c.TPS)))
}

// guard is the condition a codified assert puts on metric m measured at
// v: at least v × (1 − margin) when higher is better, at most
// v × (1 + margin) otherwise, rounded to three significant digits on the
// passing side.
func guard(m metric.Metric, v, margin float64) (op hclsyntax.TokenType, limit float64) {
	if m.HigherIsBetter {
		return hclsyntax.TokenGreaterThanEq, niceThreshold(v*(1-margin), true)
	}
	return hclsyntax.TokenLessThanEq, niceThreshold(v*(1+margin), false)
}

// writeAssert appends `assert NAME { condition = TRAVERSAL OP LIMIT … }`.
func writeAssert(body *hclwrite.Body, name string, trav hcl.Traversal, op hclsyntax.TokenType, limit float64, msg string) {
	opBytes := map[hclsyntax.TokenType]string{hclsyntax.TokenGreaterThanEq: ">=", hclsyntax.TokenLessThanEq: "<="}[op]
	cond := hclwrite.TokensForTraversal(trav)
	cond = append(cond, &hclwrite.Token{Type: op, Bytes: []byte(opBytes)})
	cond = append(cond, hclwrite.TokensForValue(cty.NumberFloatVal(limit))...)
	body.AppendNewline()
	b := body.AppendNewBlock("assert", []string{name}).Body()
	b.SetAttributeRaw("condition", cond)
	b.SetAttributeValue("error_message", cty.StringVal(msg))
}

// cellTraversal is decode["8K"][64].metric.
func cellTraversal(label string, ctx, conc int, metric string) hcl.Traversal {
	return hcl.Traversal{
		hcl.TraverseRoot{Name: label},
		hcl.TraverseIndex{Key: cty.StringVal(vocab.FormatTokens(ctx))},
		hcl.TraverseIndex{Key: cty.NumberIntVal(int64(conc))},
		hcl.TraverseAttr{Name: metric},
	}
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
