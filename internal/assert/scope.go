package assert

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/tryfunc"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"

	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/numfmt"
	"github.com/slogate/slogate/internal/plan"
	"github.com/slogate/slogate/internal/ratesearch"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/vocab"
)

// unmeasuredRead describes the read of cell ref, which has status st (""
// when absent) and the runner's reason why.
func unmeasuredRead(ref vocab.CellRef, st vocab.Status, why string, res *result.Results) unmeasured {
	u := unmeasured{ref: ref, status: st, reason: st.Unmeasured(why)}
	if st == "" {
		u.reason = absentReason(res)
	}
	if st == vocab.StatusOverCapacity {
		u.arithmetic = overCapacityLine(ref, res, why)
	}
	return u
}

// overCapacityLine gives the skip rule of docs/method.md#over-capacity with
// the numbers of this run: `decode["251K"][128] is over capacity: 128 ×
// (257,024 + 4,096) = 33,423,360 tokens > KV cache 24,000,000 tokens (from
// metrics)`. When the results lack what the arithmetic needs (or disagree
// with the status), it repeats the runner's reason instead.
func overCapacityLine(ref vocab.CellRef, res *result.Results, reason string) string {
	head := ref.Expr() + " is over capacity"
	pool := plan.KVPool{Tokens: res.Server.KVCacheTokens, Engines: res.Server.KVCacheEngines, Slots: res.Server.KVCacheSlots}
	maxOut := res.Measure.MaxOutput
	conc := max(ref.Concurrency, 1)
	if maxOut <= 0 || !pool.OverCapacity(conc, ref.Context, maxOut) {
		if reason == "" {
			return head
		}
		return head + ": " + reason
	}
	line := head + ": " + pool.Arithmetic(conc, ref.Context, maxOut, numfmt.Int)
	if src := res.Server.KVCacheSource; src != "" {
		line += " (from " + src + ")"
	}
	return line
}

// scope is the data one server's conditions are evaluated against.
type scope struct {
	sp     *spec.Spec
	server string
	res    *result.Results
	ctx    *hcl.EvalContext
	// roots are the variable names that hold measured data (matrix labels,
	// "prefill", "server"); a comparison side that reads them is the subject.
	roots map[string]bool
	// words make the words a verdict quotes (Evaluate's).
	words Words
}

// contextKeys are the map keys a context is reachable by, so that
// decode["8K"], decode["8k"], decode[8192] and decode["8192"] all work (and
// "1M" for whole multiples of 1024²). HCL converts a number index to its
// string form when indexing a map, which is why numbers need no key of their
// own. The aliases mean that iterating over a matrix (for k, row in decode)
// visits each context once per spelling; index it instead.
func contextKeys(ctx int) []string {
	keys := []string{vocab.FormatTokens(ctx)}
	if s := strconv.Itoa(ctx); s != keys[0] {
		keys = append(keys, s, strings.ToLower(keys[0])) // "8k", as vocab.ParseTokens accepts it
	}
	if ctx%(1<<20) == 0 {
		m := strconv.Itoa(ctx>>20) + "M"
		keys = append(keys, m, strings.ToLower(m))
	}
	return keys
}

// specPercentiles are the percentiles sp measures (measure.percentiles):
// the statistics its cells' objects carry (docs/method.md#metric-names).
func specPercentiles(sp *spec.Spec) []float64 {
	if sp == nil || sp.Measure == nil || len(sp.Measure.Percentiles) == 0 {
		return metric.DefaultPercentiles
	}
	return sp.Measure.Percentiles
}

// absentReason says why a cell the results lack has no numbers: the run
// stopped before it (a signal, an infrastructure error), or it is simply not
// in the results (a spec or -run that differs from the run's).
func absentReason(res *result.Results) string {
	switch {
	case res == nil:
	case res.Interrupted:
		return "the run was interrupted before measuring it"
	case res.Error != "":
		return "the run stopped before measuring it (" + firstLine(res.Error) + ")"
	}
	return "the results have no such cell"
}

// firstLine is s up to its first newline.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// measuredCell is the object of cell ref as res recorded it: measured
// metrics as numbers (null for an optional metric the server did not
// report); for a cell without numbers every metric is an unknown number
// marked with why it has none.
func measuredCell(ref vocab.CellRef, res *result.Results, ps []float64) cty.Value {
	var (
		st      vocab.Status
		why     string
		valueOf func(string) (float64, bool)
	)
	var noneCompleted bool
	completed := -1 // a traffic cell's completed requests
	if ref.Phase == vocab.PhasePrefill {
		if c, ok := res.PrefillCell(ref.Context); ok {
			st, why, valueOf = c.Status, c.Reason, c.Metric
		}
	} else if ref.Phase == vocab.PhaseTraffic {
		if c, ok := res.TrafficCell(ref); ok {
			st, why, valueOf = c.Status, c.Reason, c.Metric
			noneCompleted = c.Completed == 0
			completed = c.Completed
		}
	} else if c, ok := res.DecodeCell(ref.Matrix, ref.Context, ref.Concurrency); ok {
		st, why, valueOf = c.Status, c.Reason, c.Metric
	}
	status := cty.StringVal(string(st))
	if st == "" {
		status = cty.StringVal("not_measured")
	}
	if !st.Measured() {
		mark := unmeasuredRead(ref, st, why, res)
		if st == vocab.StatusUnmeasurable {
			// Its status too is unknown: whether the server held the
			// requests or served them, the client could not tell, so a
			// test of it is inconclusive, like a test of its figures.
			status = cty.UnknownVal(cty.String).Mark(mark)
		}
		return cellObject(ref.Phase, ps, status, func(metric.Metric) cty.Value { return cty.UnknownVal(cty.Number).Mark(mark) })
	}
	return cellObject(ref.Phase, ps, status, func(m metric.Metric) cty.Value {
		if v, ok := valueOf(m.Name); ok {
			if why := undecidablePercentile(m.Name, completed); why != "" && !noneCompleted {
				// Known, but not from enough requests to decide a
				// condition either way: inconclusive.
				return cty.UnknownVal(cty.Number).Mark(unmeasured{ref: ref, status: st, tooFew: why})
			}
			return cty.NumberFloatVal(v)
		}
		if noneCompleted {
			// A statistic of no completed request: unmeasured, so a
			// test that reads it errs (exit 3) rather than passes.
			return cty.UnknownVal(cty.Number).Mark(unmeasured{ref: ref, status: st, reason: "no request completed", noneCompleted: true})
		}
		return cty.NullVal(cty.Number)
	})
}

// layout is the shape of a scope's data: the cells of every decode matrix
// (label → context → concurrency), the prefill contexts and the cells of
// every traffic block (label → context → rate or concurrency; context 0
// when the block's workload sets the lengths).
type layout struct {
	decode  map[string]map[int]map[int]bool
	prefill map[int]bool
	traffic map[string]map[int]map[trafficKey]bool
}

// trafficKey is a traffic cell's column: an open loop's rate or a closed
// loop's concurrency (the other is 0).
type trafficKey struct {
	rate float64
	conc int
}

// String is how a condition indexes the column: a number index converts
// to its shortest string (4 → "4", 0.5 → "0.5").
func (k trafficKey) String() string {
	if k.conc > 0 {
		return strconv.Itoa(k.conc)
	}
	return vocab.FormatRate(k.rate)
}

// specLayout is the cells sp measures.
func specLayout(sp *spec.Spec) layout {
	l := layout{decode: map[string]map[int]map[int]bool{}, prefill: map[int]bool{}, traffic: map[string]map[int]map[trafficKey]bool{}}
	for _, t := range sp.Traffic {
		for _, ref := range t.Cells() {
			l.addTraffic(ref)
		}
	}
	for _, m := range sp.Matrices {
		if l.decode[m.Label] == nil {
			l.decode[m.Label] = map[int]map[int]bool{}
		}
		for _, ctx := range m.Contexts {
			for _, c := range m.Concurrency {
				l.addDecode(m.Label, ctx, c)
			}
		}
	}
	if sp.Prefill != nil {
		for _, c := range sp.Prefill.Contexts {
			l.prefill[c] = true
		}
	}
	return l
}

func (l layout) addDecode(label string, ctx, conc int) {
	if l.decode[label] == nil {
		l.decode[label] = map[int]map[int]bool{}
	}
	if l.decode[label][ctx] == nil {
		l.decode[label][ctx] = map[int]bool{}
	}
	l.decode[label][ctx][conc] = true
}

func (l layout) addTraffic(ref vocab.CellRef) {
	label, ctx := ref.Matrix, ref.Context
	if l.traffic[label] == nil {
		l.traffic[label] = map[int]map[trafficKey]bool{}
	}
	if l.traffic[label][ctx] == nil {
		l.traffic[label][ctx] = map[trafficKey]bool{}
	}
	l.traffic[label][ctx][trafficKey{ref.Rate, ref.Concurrency}] = true
}

// addResults adds every cell res holds (a resumed or older run may hold
// cells the spec no longer lists).
func (l layout) addResults(res *result.Results) {
	for _, c := range res.Decode {
		l.addDecode(c.Ref().MatrixLabel(), c.Context, c.Concurrency)
	}
	for _, c := range res.Prefill {
		l.prefill[c.Context] = true
	}
	for _, c := range res.Traffic {
		l.addTraffic(c.Ref())
	}
}

// newScope builds the evaluation context of server srv's results, whose
// verdicts quote words.
func newScope(sp *spec.Spec, srv *spec.Server, res *result.Results, words Words) *scope {
	name := res.Server.Name
	if srv != nil && srv.Name != "" {
		name = srv.Name
	}
	l := specLayout(sp)
	l.addResults(res)
	ps := specPercentiles(sp)
	sc := scopeOf(sp, name, l, func(ref vocab.CellRef) cty.Value { return measuredCell(ref, res, ps) },
		serverObject(name, srv, &res.Server))
	sc.res, sc.words = res, words
	sc.addSearches(func(s *spec.Search) cty.Value { return searchValue(s, res, ps) })
	sc.addCorrectness(func(c *spec.Correctness) cty.Value { return correctnessValue(c, res, words) })
	return sc
}

// scopeOf builds a scope over the cells of l, each cell's object made by
// cell, and the `server` object srv. The real scope (newScope) and the
// static one (newStaticScope) differ only in cell and srv.
func scopeOf(sp *spec.Spec, server string, l layout, cell func(vocab.CellRef) cty.Value, srv cty.Value) *scope {
	sc := &scope{sp: sp, server: server, roots: map[string]bool{"prefill": true, "server": true}}
	parent := sp.EvalContext
	if parent == nil {
		parent = defaultEvalContext()
	}
	sc.ctx = parent.NewChild()
	vars := map[string]cty.Value{}
	ps := specPercentiles(sp)

	for label, g := range l.decode {
		sc.roots[label] = true
		vars[label] = gridValue(cellObjectType(vocab.PhaseDecode, ps), g, strconv.Itoa, func(ctx, conc int) vocab.CellRef {
			return vocab.CellRef{Phase: vocab.PhaseDecode, Matrix: label, Context: ctx, Concurrency: conc}
		}, cell)
	}
	for label, g := range l.traffic {
		sc.roots[label] = true
		ref := func(ctx int, k trafficKey) vocab.CellRef {
			return vocab.CellRef{Phase: vocab.PhaseTraffic, Matrix: label, Context: ctx, Rate: k.rate, Concurrency: k.conc}
		}
		objType := cellObjectType(vocab.PhaseTraffic, ps)
		if t := sp.TrafficBlock(label); t != nil && t.Context == 0 {
			// No context to index: the block's cells by rate or concurrency.
			vars[label] = rowValue(objType, g[0], trafficKey.String, func(k trafficKey) vocab.CellRef { return ref(0, k) }, cell)
			continue
		}
		vars[label] = gridValue(objType, g, trafficKey.String, ref, cell)
	}

	prefill := map[string]cty.Value{}
	for ctx := range l.prefill {
		obj := cell(vocab.CellRef{Phase: vocab.PhasePrefill, Context: ctx})
		for _, k := range contextKeys(ctx) {
			prefill[k] = obj
		}
	}
	if len(prefill) == 0 {
		vars["prefill"] = cty.MapValEmpty(cellObjectType(vocab.PhasePrefill, ps))
	} else {
		vars["prefill"] = cty.MapVal(prefill)
	}

	vars["server"] = srv
	sc.ctx.Variables = vars
	return sc
}

// serverObject is the `server` variable: facts about the measured server.
// Facts the run could not learn are unknown and marked, so a condition that
// reads them is an infrastructure Error like an unmeasured cell.
func serverObject(name string, srv *spec.Server, s *result.Server) cty.Value {
	fact := func(attr string, v int64) cty.Value {
		if v == 0 {
			return cty.UnknownVal(cty.Number).Mark(unknownServerFact{attr})
		}
		return cty.NumberIntVal(v)
	}
	str := func(attr, v string) cty.Value {
		if v == "" {
			return cty.UnknownVal(cty.String).Mark(unknownServerFact{attr})
		}
		return cty.StringVal(v)
	}
	tp := int64(s.TensorParallelSize)
	if tp == 0 && srv != nil && srv.TensorParallelSize != nil {
		tp = int64(*srv.TensorParallelSize)
	}
	if tp == 0 {
		tp = 1 // vLLM's default
	}
	// A fact the server states itself is read only as it stated it: the
	// spec's value (results.json keeps it beside the server's, unstated)
	// says what was asked, not what ran (docs/method.md#server-facts).
	statedStr := func(attr, v string) cty.Value {
		if _, ok := s.Stated[attr]; !ok {
			return cty.UnknownVal(cty.String).Mark(unknownServerFact{attr})
		}
		return cty.StringVal(v)
	}
	served := s.ServedModel
	if served == "" && srv != nil {
		served = srv.ServedName()
	}
	model := s.Model
	if model == "" && srv != nil {
		model = srv.Model
	}
	labels := cty.MapValEmpty(cty.String)
	if len(s.Labels) > 0 {
		m := map[string]cty.Value{}
		for k, v := range s.Labels {
			m[k] = cty.StringVal(v)
		}
		labels = cty.MapVal(m)
	}
	gpuNames := make([]cty.Value, 0, len(s.GPUs))
	for _, g := range s.GPUs {
		gpuNames = append(gpuNames, cty.StringVal(g.Name))
	}
	gpus := cty.ListValEmpty(cty.String)
	if len(gpuNames) > 0 {
		gpus = cty.ListVal(gpuNames)
	}
	return cty.ObjectVal(map[string]cty.Value{
		"name":                 cty.StringVal(name),
		"model":                cty.StringVal(model),
		"served_model":         cty.StringVal(served),
		"version":              str("version", s.Version),
		"kv_cache_tokens":      fact("kv_cache_tokens", s.KVCacheTokens),
		"max_model_len":        fact("max_model_len", int64(s.MaxModelLen)),
		"max_num_seqs":         fact("max_num_seqs", int64(s.MaxNumSeqs)),
		"tensor_parallel_size": cty.NumberIntVal(tp),
		"kv_cache_dtype":       statedStr("kv_cache_dtype", s.KVCacheDtype),
		"speculative":          statedStr("speculative", s.Speculative),
		"simulated":            cty.BoolVal(s.Simulated),
		"endpoint":             cty.StringVal(s.Endpoint),
		"gpus":                 gpus,
		"labels":               labels,
	})
}

// defaultEvalContext is used when the spec carries none (specs built in
// code): the cty stdlib functions a condition is likely to use.
func defaultEvalContext() *hcl.EvalContext {
	return &hcl.EvalContext{Functions: map[string]function.Function{
		"abs":    stdlib.AbsoluteFunc,
		"can":    tryfunc.CanFunc,
		"ceil":   stdlib.CeilFunc,
		"floor":  stdlib.FloorFunc,
		"format": stdlib.FormatFunc,
		"keys":   stdlib.KeysFunc,
		"length": stdlib.LengthFunc,
		"max":    stdlib.MaxFunc,
		"min":    stdlib.MinFunc,
		"values": stdlib.ValuesFunc,
		"try":    tryfunc.TryFunc,
	}}
}

// gridValue is one decode matrix or traffic block as conditions index it:
// context (under every spelling of contextKeys) → column key → cell object.
// Decode columns are concurrencies, traffic columns rates; key spells a
// column as the map key, ref names its cell.
func gridValue[K comparable](objType cty.Type, grid map[int]map[K]bool, key func(K) string, ref func(ctx int, col K) vocab.CellRef, cell func(vocab.CellRef) cty.Value) cty.Value {
	rows := map[string]cty.Value{}
	for ctx, cols := range grid {
		row := rowValue(objType, cols, key, func(col K) vocab.CellRef { return ref(ctx, col) }, cell)
		for _, k := range contextKeys(ctx) {
			rows[k] = row
		}
	}
	if len(rows) == 0 {
		return cty.MapValEmpty(cty.Map(objType))
	}
	return cty.MapVal(rows)
}

// rowValue is one row of a grid (or a traffic block without context): the
// cells of cols by their key.
func rowValue[K comparable](objType cty.Type, cols map[K]bool, key func(K) string, ref func(col K) vocab.CellRef, cell func(vocab.CellRef) cty.Value) cty.Value {
	vals := map[string]cty.Value{}
	for col := range cols {
		vals[key(col)] = cell(ref(col))
	}
	if len(vals) == 0 {
		return cty.MapValEmpty(objType)
	}
	return cty.MapVal(vals)
}

// PercentileAlpha is the level at which a traffic cell's percentile read
// by a condition must be decidable: a comparison's default α, each side.
const PercentileAlpha = 0.05

// undecidablePercentile says why traffic metric name, a quantile of n
// completed requests' latencies, cannot be decided by a condition —
// "ttft_ms_p99 from 42 requests: a p99 needs ≥ 299": its order
// statistics bound it at PercentileAlpha only from
// ratesearch.QuantileSamples requests on — or "" when it can (or name
// is no such quantile, or n is negative: not a traffic cell).
func undecidablePercentile(name string, n int) string {
	_, q, ok := ratesearch.MetricQuantile(name)
	if !ok || n < 0 {
		return ""
	}
	need := ratesearch.QuantileSamples(q, PercentileAlpha)
	if n >= need {
		return ""
	}
	word := "a p" + strconv.FormatFloat(q*100, 'f', -1, 64)
	if q == 0.5 {
		word = "a median"
	}
	return fmt.Sprintf("%s from %d requests: %s needs ≥ %d", name, n, word, need)
}
