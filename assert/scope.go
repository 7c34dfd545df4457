package assert

import (
	"sort"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/tryfunc"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"

	"github.com/slogate/slogate/result"
	"github.com/slogate/slogate/spec"
)

// unmeasured marks the metric values of a cell that carries no numbers (over
// capacity, errored, or absent from the results). cty propagates marks
// through every operation, so a condition that read such a value carries
// the mark in its result: that is how Evaluate turns "read an unmeasured
// cell" into an infrastructure Error instead of a number.
type unmeasured struct {
	ref    result.CellRef
	reason string // "over capacity", "error: <reason>", "not measured"
}

// message is the verdict text for one unmeasured read.
func (u unmeasured) message() string { return "cell not measured: " + u.reason }

// unknownServerFact marks a server attribute the run could not learn (for
// example kv_cache_tokens when neither /metrics nor the log told it).
type unknownServerFact struct{ name string }

// scope is the data one server's conditions are evaluated against.
type scope struct {
	sp     *spec.Spec
	server string
	res    *result.Results
	ctx    *hcl.EvalContext
	// roots are the variable names that hold measured data (matrix labels,
	// "prefill", "server"); a comparison side that reads them is the subject.
	roots map[string]bool
}

// contextKeys are the map keys a context is reachable by, so that
// decode["8K"], decode["8k"], decode[8192] and decode["8192"] all work (and
// "1M" for whole multiples of 1024²). HCL converts a number index to its
// string form when indexing a map, which is why numbers need no key of their
// own. The aliases mean that iterating over a matrix (for k, row in decode)
// visits each context once per spelling; index it instead.
func contextKeys(ctx int) []string {
	keys := []string{result.FormatTokens(ctx)}
	if s := strconv.Itoa(ctx); s != keys[0] {
		keys = append(keys, s, strings.ToLower(keys[0])) // "8k", as result.ParseTokens accepts it
	}
	if ctx%(1<<20) == 0 {
		m := strconv.Itoa(ctx>>20) + "M"
		keys = append(keys, m, strings.ToLower(m))
	}
	return keys
}

// cellObjectType is the object type of one cell of phase (decode[CTX][CONC]
// or prefill[CTX]): every metric of the phase as a number, plus status.
func cellObjectType(phase result.Phase) cty.Type {
	attrs := map[string]cty.Type{"status": cty.String}
	for _, m := range result.Metrics {
		if m.Phase == phase {
			attrs[m.Name] = cty.Number
		}
	}
	return cty.Object(attrs)
}

// reasonFor says why a cell with status st (nil cell = absent) has no numbers.
func reasonFor(st result.Status, why string) string {
	switch st {
	case result.StatusOverCapacity:
		return "over capacity"
	case result.StatusError:
		if why == "" {
			return "error"
		}
		return "error: " + why
	}
	return "not measured"
}

// cellObject builds the object of one cell. metric returns a measured
// metric (ok=false for an optional metric the server did not report, which
// becomes null); when measured is false every metric is an unknown number
// marked with why the cell has none.
func cellObject(phase result.Phase, ref result.CellRef, st result.Status, why string, measured bool, metric func(string) (float64, bool)) cty.Value {
	attrs := map[string]cty.Value{}
	status := string(st)
	if status == "" {
		status = "not_measured"
	}
	attrs["status"] = cty.StringVal(status)
	for _, m := range result.Metrics {
		if m.Phase != phase {
			continue
		}
		switch v, ok := metric(m.Name); {
		case !measured:
			attrs[m.Name] = cty.UnknownVal(cty.Number).Mark(unmeasured{ref: ref, reason: reasonFor(st, why)})
		case ok:
			attrs[m.Name] = cty.NumberFloatVal(v)
		default:
			attrs[m.Name] = cty.NullVal(cty.Number)
		}
	}
	return cty.ObjectVal(attrs)
}

func noMetric(string) (float64, bool) { return 0, false }

// newScope builds the evaluation context of server srv's results.
func newScope(sp *spec.Spec, srv *spec.Server, res *result.Results) *scope {
	sc := &scope{sp: sp, res: res, roots: map[string]bool{"prefill": true, "server": true}}
	sc.server = res.Server.Name
	if srv != nil && srv.Name != "" {
		sc.server = srv.Name
	}
	parent := sp.EvalContext
	if parent == nil {
		parent = defaultEvalContext()
	}
	sc.ctx = parent.NewChild()
	vars := map[string]cty.Value{}

	// Decode matrices: the spec's grid plus every cell the results hold.
	type grid map[int]map[int]bool
	grids := map[string]grid{}
	add := func(label string, ctx, conc int) {
		if grids[label] == nil {
			grids[label] = grid{}
		}
		if grids[label][ctx] == nil {
			grids[label][ctx] = map[int]bool{}
		}
		grids[label][ctx][conc] = true
	}
	for _, m := range sp.Matrices {
		for _, ctx := range m.Contexts {
			for _, c := range m.Concurrency {
				add(m.Label, ctx, c)
			}
		}
		if grids[m.Label] == nil {
			grids[m.Label] = grid{}
		}
	}
	for _, c := range res.Decode {
		add(c.Ref().MatrixLabel(), c.Context, c.Concurrency)
	}
	objType := cellObjectType(result.PhaseDecode)
	for label, g := range grids {
		sc.roots[label] = true
		rows := map[string]cty.Value{}
		for ctx, concs := range g {
			cols := map[string]cty.Value{}
			for conc := range concs {
				ref := result.CellRef{Phase: result.PhaseDecode, Matrix: label, Context: ctx, Concurrency: conc}
				var obj cty.Value
				if cell, ok := res.DecodeCell(label, ctx, conc); ok {
					obj = cellObject(result.PhaseDecode, ref, cell.Status, cell.Reason, cell.Status.Measured(), cell.Metric)
				} else {
					obj = cellObject(result.PhaseDecode, ref, "", "", false, noMetric)
				}
				cols[strconv.Itoa(conc)] = obj
			}
			row := cty.MapValEmpty(objType)
			if len(cols) > 0 {
				row = cty.MapVal(cols)
			}
			for _, k := range contextKeys(ctx) {
				rows[k] = row
			}
		}
		if len(rows) == 0 {
			vars[label] = cty.MapValEmpty(cty.Map(objType))
		} else {
			vars[label] = cty.MapVal(rows)
		}
	}

	// Prefill: the spec's contexts plus every prefill cell in the results.
	pctx := map[int]bool{}
	if sp.Prefill != nil {
		for _, c := range sp.Prefill.Contexts {
			pctx[c] = true
		}
	}
	for _, c := range res.Prefill {
		pctx[c.Context] = true
	}
	prefill := map[string]cty.Value{}
	for ctx := range pctx {
		ref := result.CellRef{Phase: result.PhasePrefill, Context: ctx}
		var obj cty.Value
		if cell, ok := res.PrefillCell(ctx); ok {
			obj = cellObject(result.PhasePrefill, ref, cell.Status, cell.Reason, cell.Status.Measured(), cell.Metric)
		} else {
			obj = cellObject(result.PhasePrefill, ref, "", "", false, noMetric)
		}
		for _, k := range contextKeys(ctx) {
			prefill[k] = obj
		}
	}
	if len(prefill) == 0 {
		vars["prefill"] = cty.MapValEmpty(cellObjectType(result.PhasePrefill))
	} else {
		vars["prefill"] = cty.MapVal(prefill)
	}

	vars["server"] = serverObject(sc.server, srv, &res.Server)
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
	kvDtype := s.KVCacheDtype
	if kvDtype == "" {
		kvDtype = "auto"
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
		"kv_cache_dtype":       cty.StringVal(kvDtype),
		"speculative":          cty.StringVal(s.Speculative),
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

// sortedMarks returns the unmeasured and unknown-server-fact marks in a
// stable order (cells by name, then facts).
func sortedMarks(marks cty.ValueMarks) (cells []unmeasured, facts []string) {
	seenCell := map[result.CellRef]bool{}
	seenFact := map[string]bool{}
	for m := range marks {
		switch m := m.(type) {
		case unmeasured:
			if !seenCell[m.ref] {
				seenCell[m.ref] = true
				cells = append(cells, m)
			}
		case unknownServerFact:
			if !seenFact[m.name] {
				seenFact[m.name] = true
				facts = append(facts, m.name)
			}
		}
	}
	sort.Slice(cells, func(i, j int) bool { return cells[i].ref.Name() < cells[j].ref.Name() })
	sort.Strings(facts)
	return cells, facts
}
