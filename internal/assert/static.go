package assert

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/vocab"
)

// Check evaluates every assert condition and expect block of sp before
// anything is measured, with the measured values unknown but of their real
// types (docs/spec.md#static-checks). cty computes with unknowns: a
// comparison of unknown numbers is an unknown bool, so a condition is
// checked for what it can be checked for without a run:
//
//   - it is a bool (decode["8K"][64].total_tps + 1 is not);
//   - its operands convert (ttft_ms <= "60sec" compares a number with a
//     string);
//   - it reads no metric the server cannot produce (spec_accept_rate and
//     spec_accept_len need a speculative block).
//
// It runs once per server (a spec's servers differ in what they produce)
// and returns each problem once, as a diagnostic at the spec's file and
// line. It takes milliseconds: validate and run call it before any server
// is started.
func Check(sp *spec.Spec) hcl.Diagnostics {
	return check(sp, nil)
}

// CheckLoaded is Check for a spec as spec.Load returned it with loadDiags,
// so that one pass reports every problem, the load's and the conditions'
// (docs/spec.md#static-checks). What the load's errors leave unsure is
// not checked, so that no error is a consequence of another: an assert
// whose condition holds an error (its reference error is its diagnostic),
// or that reads a block with an error (a matrix, traffic, prefill, search
// or correctness block, or a variable); a search block with an error; and
// a server block with an error is checked as no server in particular
// (what it can produce is unsure). Everything else is checked as Check
// would.
func CheckLoaded(sp *spec.Spec, loadDiags hcl.Diagnostics) hcl.Diagnostics {
	b := findBroken(sp, loadDiags)
	if len(b.blocks) == 0 && !b.vars && len(b.conditions) == 0 {
		return check(sp, nil)
	}
	skip := map[*spec.Assert]bool{}
	for _, a := range sp.Asserts {
		if a.Condition == nil || b.conditions[a] || b.reads(a.Condition) {
			skip[a] = true
		}
	}
	servers := make([]*spec.Server, len(sp.Servers))
	for i, srv := range sp.Servers {
		if !b.blocks[blockKey{"server", srv.Name}] {
			servers[i] = srv
		}
	}
	var searches []*spec.Search
	for _, s := range sp.Searches {
		if !b.blocks[blockKey{"search", s.Name}] && (s.Traffic == "" || !b.blocks[blockKey{"traffic", s.Traffic}]) {
			searches = append(searches, s)
		}
	}
	return checkWith(sp, servers, skip, searches)
}

// blockKey names a block by type and first label ("" for an unlabelled
// block: prefill, measure).
type blockKey struct{ typ, label string }

// broken is what a spec's load errors leave unsure.
type broken struct {
	// blocks are the blocks that hold an error.
	blocks map[blockKey]bool
	// conditions are the asserts whose condition holds an error.
	conditions map[*spec.Assert]bool
	// vars: a variable's block or a -var holds an error (or an error has
	// no place in the file): what var.NAME reads is unsure.
	vars bool
}

// findBroken places each error of loadDiags in the block of the spec's
// files that holds it.
func findBroken(sp *spec.Spec, loadDiags hcl.Diagnostics) broken {
	b := broken{blocks: map[blockKey]bool{}, conditions: map[*spec.Assert]bool{}}
	for _, d := range loadDiags {
		if d.Severity != hcl.DiagError {
			continue
		}
		if a := assertAt(sp, d.Subject); a != nil {
			b.conditions[a] = true
			continue
		}
		blk := blockAt(sp, d.Subject)
		switch {
		case blk == nil:
			b.vars = true // no block holds it: a -var, a file that cannot be read
		case blk.Type == "variable":
			b.vars = true
		default:
			label := ""
			if len(blk.Labels) > 0 {
				label = blk.Labels[0]
			}
			b.blocks[blockKey{blk.Type, label}] = true
		}
	}
	return b
}

// assertAt is the assert whose condition holds r, or nil.
func assertAt(sp *spec.Spec, r *hcl.Range) *spec.Assert {
	if r == nil {
		return nil
	}
	for _, a := range sp.Asserts {
		if a.Condition == nil {
			continue
		}
		cr := a.Condition.Range()
		if cr.Filename == r.Filename && cr.ContainsOffset(r.Start.Byte) && (cr.ContainsOffset(r.End.Byte) || cr.End.Byte == r.End.Byte) {
			return a
		}
	}
	return nil
}

// blockAt is the top-level block of sp's files whose range holds r, or
// nil.
func blockAt(sp *spec.Spec, r *hcl.Range) *hclsyntax.Block {
	if r == nil {
		return nil
	}
	f := sp.Files[r.Filename]
	if f == nil {
		return nil
	}
	body, ok := f.Body.(*hclsyntax.Body)
	if !ok {
		return nil
	}
	for _, blk := range body.Blocks {
		if br := blk.Range(); br.ContainsOffset(r.Start.Byte) || br.Start.Byte == r.Start.Byte {
			return blk
		}
	}
	return nil
}

// reads reports whether condition reads a block with an error: its
// roots are matrix and traffic labels, prefill, var, search["NAME"] and
// correctness["NAME"].
func (b broken) reads(condition hcl.Expression) bool {
	for _, tr := range condition.Variables() {
		root := tr.RootName()
		switch root {
		case "var":
			if b.vars {
				return true
			}
		case "prefill":
			if b.blocks[blockKey{"prefill", ""}] {
				return true
			}
		case "search", "correctness":
			name := ""
			if len(tr) > 1 {
				if idx, ok := tr[1].(hcl.TraverseIndex); ok && idx.Key.IsKnown() && idx.Key.Type() == cty.String {
					name = idx.Key.AsString()
				}
			}
			for k := range b.blocks {
				if k.typ == root && (name == "" || k.label == name) {
					return true
				}
			}
		default:
			if b.blocks[blockKey{"matrix", root}] || b.blocks[blockKey{"traffic", root}] {
				return true
			}
		}
	}
	return false
}

// check is Check without the asserts in skip.
func check(sp *spec.Spec, skip map[*spec.Assert]bool) hcl.Diagnostics {
	return checkWith(sp, sp.Servers, skip, sp.Searches)
}

// checkWith is check for servers (a nil one: no server in particular)
// and the objectives of searches.
func checkWith(sp *spec.Spec, servers []*spec.Server, skip map[*spec.Assert]bool, searches []*spec.Search) hcl.Diagnostics {
	if len(servers) == 0 {
		servers = []*spec.Server{nil}
	}
	var diags hcl.Diagnostics
	seen := map[string]bool{}
	add := func(ds ...*hcl.Diagnostic) {
		for _, d := range ds {
			key := d.Summary + "\x00" + d.Detail
			if d.Subject != nil {
				key += "\x00" + d.Subject.String()
			}
			if !seen[key] {
				seen[key] = true
				diags = append(diags, d)
			}
		}
	}
	for _, srv := range servers {
		sc := newStaticScope(sp, srv)
		for _, a := range sp.Asserts {
			if a.Condition != nil && !skip[a] {
				add(sc.checkCondition(a.Condition)...)
			}
		}
		for _, e := range sp.Expects {
			add(checkExpect(e, srv)...)
		}
		for _, s := range searches {
			add(checkObjective(sp, s, srv)...)
		}
	}
	return diags
}

// unproducible marks, in the static scope, a metric the server cannot
// produce: its value is null, as in the results of a real run of that
// server, and the mark says why.
type unproducible struct {
	metric string
	why    string
}

// cannotProduce says why srv cannot produce metric m ("" when it can).
// vLLM exports its speculative-decoding counters only when speculative
// decoding is on (docs/vllm.md#metrics), so spec_accept_rate and
// spec_accept_len need a speculative block. server_total_tps needs only
// /metrics, which every vLLM serves.
func cannotProduce(m metric.Metric, srv *spec.Server) string {
	switch m.Name {
	case metric.SpecAcceptRate, metric.SpecAcceptLen:
		if srv != nil && srv.Speculative == nil {
			return fmt.Sprintf("server %q has no speculative block, so it reports no %s (vLLM exports speculative-decoding counters only when speculative decoding is on). Add a speculative block to the server, or read another metric.", srv.Name, m.Name)
		}
	}
	return ""
}

// newStaticScope is the scope of a run of srv that has not happened: the
// cells the spec measures with every metric an unknown number (null and
// marked unproducible when srv cannot produce it), every status an unknown
// string, and the server object unknown but for what the spec decides. The
// types are those of the real scope: the same cellObject and serverObject
// build them.
func newStaticScope(sp *spec.Spec, srv *spec.Server) *scope {
	name := ""
	if srv != nil {
		name = srv.Name
	}
	cell := func(ref vocab.CellRef) cty.Value {
		return cellObject(ref.Phase, specPercentiles(sp), cty.UnknownVal(cty.String), func(m metric.Metric) cty.Value {
			if why := cannotProduce(m, srv); why != "" {
				return cty.NullVal(cty.Number).Mark(unproducible{metric: m.Name, why: why})
			}
			return cty.UnknownVal(cty.Number)
		})
	}
	sc := scopeOf(sp, name, specLayout(sp), cell, staticServerObject(srv))
	sc.addSearches(func(s *spec.Search) cty.Value { return unknownSearch(s, nil, specPercentiles(sp)) })
	sc.addCorrectness(func(*spec.Correctness) cty.Value { return unknownCorrectness(nil) })
	return sc
}

// serverObjectType is the type of the `server` object, taken from the
// function that builds it for a real run.
var serverObjectType = serverObject("", nil, &result.Server{}).Type()

// staticServerObject is the `server` object before a run: every attribute
// unknown except name and speculative, which the spec decides, so that a
// condition guarded by server.speculative == "" is checked as the run of
// this server will evaluate it.
func staticServerObject(srv *spec.Server) cty.Value {
	attrs := map[string]cty.Value{}
	for name, ty := range serverObjectType.AttributeTypes() {
		attrs[name] = cty.UnknownVal(ty)
	}
	if srv != nil {
		attrs["name"] = cty.StringVal(srv.Name)
		attrs["speculative"] = cty.StringVal("")
		if srv.Speculative != nil {
			attrs["speculative"] = cty.StringVal(srv.Speculative.Method)
		}
	}
	return cty.ObjectVal(attrs)
}

// checkCondition evaluates one assert condition in the static scope.
func (sc *scope) checkCondition(expr hcl.Expression) hcl.Diagnostics {
	val, diags := expr.Value(sc.ctx)
	if diags.HasErrors() {
		return sc.explainUnproducible(diags)
	}
	if reads := sc.unproducibleReads(expr, sc.ctx); len(reads) > 0 && val.IsNull() {
		return reads
	}
	val, _ = val.UnmarkDeep()
	switch {
	case val.IsNull():
		return conditionDiag(expr.Range(), "Null condition", "The condition is null; it must be true or false.")
	case val.Type() == cty.Bool, val.Type() == cty.DynamicPseudoType:
		return nil
	}
	return conditionDiag(expr.Range(), "Condition is not a bool",
		fmt.Sprintf("The condition is a %s; it must be true or false: write a comparison such as decode[\"8K\"][64].total_tps >= 6000.", val.Type().FriendlyName()))
}

// explainUnproducible replaces each error that came from reading a metric
// the server cannot produce (null, so "argument must not be null") with a
// diagnostic that says so at the read; other diagnostics pass unchanged.
func (sc *scope) explainUnproducible(diags hcl.Diagnostics) hcl.Diagnostics {
	var out hcl.Diagnostics
	for _, d := range diags {
		if d.Severity == hcl.DiagError && d.Expression != nil {
			ctx := d.EvalContext
			if ctx == nil {
				ctx = sc.ctx
			}
			if reads := sc.unproducibleReads(d.Expression, ctx); len(reads) > 0 {
				out = append(out, reads...)
				continue
			}
		}
		out = append(out, d)
	}
	return out
}

// unproducibleReads finds the reads in expr, evaluated in ctx, of a metric
// the server cannot produce, as diagnostics at each read.
func (sc *scope) unproducibleReads(expr hcl.Expression, ctx *hcl.EvalContext) hcl.Diagnostics {
	node, ok := expr.(hclsyntax.Node)
	if !ok {
		return nil
	}
	var diags hcl.Diagnostics
	hclsyntax.VisitAll(node, func(n hclsyntax.Node) hcl.Diagnostics {
		var e hclsyntax.Expression
		switch n := n.(type) {
		case *hclsyntax.ScopeTraversalExpr:
			e = n
		case *hclsyntax.RelativeTraversalExpr:
			e = n
		case *hclsyntax.IndexExpr:
			e = n
		default:
			return nil
		}
		val, d := e.Value(ctx)
		if d.HasErrors() || !val.Type().IsPrimitiveType() {
			return nil
		}
		for m := range val.Marks() {
			if u, ok := m.(unproducible); ok {
				diags = append(diags, &hcl.Diagnostic{
					Severity: hcl.DiagError,
					Summary:  "Metric the server cannot produce",
					Detail:   upperFirst(u.why),
					Subject:  e.Range().Ptr(),
					Context:  expr.Range().Ptr(),
				})
			}
		}
		return nil
	})
	return diags
}

// checkExpect reports an expect block over a metric srv cannot produce, at
// its metric attribute.
func checkExpect(e *spec.Expect, srv *spec.Server) hcl.Diagnostics {
	phase := vocab.PhaseDecode
	if e.Matrix == prefillMatrix {
		phase = vocab.PhasePrefill
	}
	m, ok := metric.Lookup(phase, e.Metric)
	if !ok {
		return nil // the spec loader has reported it
	}
	why := cannotProduce(m, srv)
	if why == "" {
		return nil
	}
	rng := e.MetricRange
	if rng.Filename == "" {
		rng = e.DeclRange
	}
	return hcl.Diagnostics{{
		Severity: hcl.DiagError,
		Summary:  "Metric the server cannot produce",
		Detail:   fmt.Sprintf("expect %q reads %s, but %s", e.Name, m.Name, why),
		Subject:  rng.Ptr(),
	}}
}

// upperFirst capitalises the first letter of s (a detail starts a sentence).
func upperFirst(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}
