// Package assert evaluates a spec's assert and expect blocks over
// measured Results: what each condition read, and the finding that makes
// its verdict's outcome (package judge decides it).
package assert

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/slogate/slogate/internal/judge"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/vocab"
)

// Words are the words a verdict quotes that assert does not make: the
// views make them from the values assert reads (views.AssertWords).
type Words interface {
	// ReadingLines writes an assert's readings, one line each.
	ReadingLines(rs []result.Reading) []string
	// CorrectnessRefused says why a correctness block was not compared
	// with the baseline's (its Refusal).
	CorrectnessRefused(cc *result.CorrectnessComparison) string
	// UnknownRead says why a figure a condition read has no value.
	UnknownRead(u result.UnknownRead) string
	// ExpectWhy says why an expect test is not a pass.
	ExpectWhy(e result.ExpectWhy) string
}

// Evaluate checks every assert and expect block of sp against res (the
// results of server srv) and returns one verdict per test, in spec order:
// the asserts first, then each expect cell row by row. An assert's
// details are the values its condition read, written by words from their
// figures (views.AssertWords: assert writes no line).
func Evaluate(sp *spec.Spec, srv *spec.Server, res *result.Results, words Words) []result.Verdict {
	sc := newScope(sp, srv, res, words)
	var out []result.Verdict
	for _, a := range sp.Asserts {
		out = append(out, sc.evalAssert(a))
	}
	for _, e := range sp.Expects {
		out = append(out, sc.evalExpect(e)...)
	}
	return out
}

// evalAssert evaluates one assert block.
func (sc *scope) evalAssert(a *spec.Assert) result.Verdict {
	v := result.Verdict{
		Test:    vocab.TestID{Server: sc.server, Kind: vocab.KindAssert, Block: a.Name}.Name(),
		Kind:    vocab.KindAssert,
		Message: a.ErrorMessage,
		Cells:   a.Cells,
	}
	if a.Condition == nil {
		judge.Rule(&v, result.FindingInvalidRule)
		v.Message = "assert " + a.Name + " has no condition"
		v.File, v.Line = a.DeclRange.Filename, a.DeclRange.Start.Line
		return v
	}
	rng := a.Condition.Range()
	v.File, v.Line = rng.Filename, rng.Start.Line
	v.Rule = sc.source(rng)
	if v.Cells == nil {
		v.Cells = cellsRead(a.Condition)
	}

	val, diags := a.Condition.Value(sc.ctx)

	// Reads of cells without numbers first, whether or not the condition
	// errs or short-circuits: an over-capacity cell is a measured property
	// of the server, so the test fails with the capacity arithmetic; an
	// errored or absent cell, or a server fact the run could not learn, is an
	// infrastructure Error (README.md#exit-codes).
	marks := leafMarks(sc, a.Condition)
	if !diags.HasErrors() {
		_, m := val.UnmarkDeep()
		for k := range m {
			marks[k] = struct{}{}
		}
	}
	if cells, facts, searches := sortedMarks(marks); len(cells)+len(facts)+len(searches) > 0 {
		sc.unmeasuredVerdict(&v, cells, facts, searches)
		return v
	}
	if diags.HasErrors() {
		judge.Rule(&v, result.FindingInvalidRule)
		v.Message = "condition could not be evaluated: " + firstError(diags)
		v.Details = sc.diagLines(diags)
		return v
	}
	val, _ = val.Unmark()
	switch {
	case val.IsNull():
		judge.Rule(&v, result.FindingInvalidRule)
		v.Message = "condition is null: it must be true or false"
		v.Details = sc.diagLines(conditionDiag(rng, "Null condition", "The condition evaluated to null; it must be true or false."))
		return v
	case !val.IsKnown():
		judge.Rule(&v, result.FindingInvalidRule)
		v.Message = "condition is unknown: it must be true or false"
		v.Details = sc.diagLines(conditionDiag(rng, "Unknown condition", "The condition's value is not known; it must be true or false."))
		return v
	case val.Type() != cty.Bool:
		judge.Rule(&v, result.FindingInvalidRule)
		v.Message = "condition is a " + val.Type().FriendlyName() + ", not a bool"
		v.Details = sc.diagLines(notBoolDiag(rng, val.Type()))
		return v
	}
	v.Details = sc.words.ReadingLines(sc.explain(a.Condition))
	if val.True() {
		judge.Rule(&v, result.FindingHeld)
		return v
	}
	judge.Rule(&v, result.FindingNotHeld)
	if v.Message == "" {
		v.Message = "condition is false"
	}
	if open := sc.undecidedFail(a); len(open) > 0 {
		// The condition holds at a capacity the search's confident
		// decisions leave possible: undecided, not failed.
		judge.Rule(&v, result.FindingUndecided)
		why := make([]string, len(open))
		for i, u := range open {
			why[i] = sc.words.UnknownRead(u)
		}
		v.Message = strings.Join(why, "; ")
		v.Details = append(v.Details, why...)
	}
	return v
}

// undecidedFail says, for an assert whose condition is false as measured,
// why the rate searches it reads did not decide it
// (docs/method.md#undecided-searches): the condition is evaluated again
// with each such search at the highest capacity its confident decisions
// leave possible (just below its upper bound, or the top of its range
// when none was decided failed); when it holds there, the failure rests
// on probes the search could not decide, and the lines say so. None when
// the condition fails at that capacity too (decided), or reads no rate
// search left open.
func (sc *scope) undecidedFail(a *spec.Assert) []result.UnknownRead {
	if sc.res == nil || len(a.Searches) == 0 {
		return nil
	}
	ps := specPercentiles(sc.sp)
	var why []result.UnknownRead
	open := map[string]cty.Value{}
	for _, name := range a.Searches {
		s := sc.sp.Search(name)
		if s == nil || !s.IsRate() {
			continue
		}
		r, ok := sc.res.SearchByName(name)
		if !ok {
			continue
		}
		v, ok := optimisticSearchValue(s, r, ps)
		if !ok {
			continue
		}
		open[name] = v
		n, of := undecided(r)
		why = append(why, result.UnknownRead{Rule: result.SearchUndecidedHolds, Name: name, Lower: r.RateLower, Upper: r.RateUpper,
			Confidence: r.Confidence, Undecided: n, Probes: of})
	}
	if len(open) == 0 {
		return nil
	}
	ctx := sc.ctx.NewChild()
	ctx.Variables = map[string]cty.Value{rootSearch: searchesVar(sc.sp, func(s *spec.Search) cty.Value {
		if v, ok := open[s.Name]; ok {
			return v
		}
		r, _ := sc.res.SearchByName(s.Name)
		if r == nil {
			return unknownSearch(s, &searchRead{why: result.UnknownRead{Rule: result.SearchNotRun, Name: s.Name}, infra: true}, ps)
		}
		return searchValue(s, sc.res, ps)
	})}
	val, diags := a.Condition.Value(ctx)
	if diags.HasErrors() {
		return nil
	}
	val, _ = val.UnmarkDeep()
	if val.IsNull() || !val.IsKnown() || val.Type() != cty.Bool || !val.True() {
		return nil
	}
	return why
}

// unmeasured marks the metric values of a cell that carries no numbers (over
// capacity, errored, or absent from the results). cty propagates marks
// through every operation, so a condition that read such a value carries
// the mark in its result: that is how Evaluate tells "read a cell that has
// no numbers" from a number, whatever ||, for or try the read sits in.
type unmeasured struct {
	ref    vocab.CellRef
	status vocab.Status // "" when the results have no such cell
	reason string       // "over capacity", "error: <reason>", "not measured"
	// arithmetic is, for an over-capacity cell, the skip rule with this
	// run's numbers (overCapacityLine); "" otherwise.
	arithmetic string
	// noneCompleted marks a latency read of a measured traffic cell in
	// which no request completed: its other metrics are numbers.
	noneCompleted bool
	// tooFew is, for a percentile of a measured traffic cell whose
	// window completed fewer requests than its order statistics can
	// bound (undecidablePercentile), why: the read is inconclusive,
	// neither a pass nor a failure (docs/method.md#undecidable-percentiles).
	tooFew string
}

// overCapacity reports whether the read is of a cell skipped as over
// capacity: a measured property of the server (its KV cache is too small),
// so a test that needs the cell fails (exit 1) rather than errs.
func (u unmeasured) overCapacity() bool { return u.status == vocab.StatusOverCapacity }

// message is the one-line summary of the read: the capacity arithmetic of
// an over-capacity cell, "cell not measured: <why>" otherwise.
func (u unmeasured) message() string {
	if u.arithmetic != "" {
		return u.arithmetic
	}
	if u.noneCompleted {
		return "latency not measured: no request completed in the cell's window"
	}
	if u.tooFew != "" {
		return u.tooFew
	}
	if u.status == vocab.StatusUnmeasurable || u.status == vocab.StatusSaturated {
		return "cell " + u.reason
	}
	return "cell not measured: " + u.reason
}

// detail is the verdict line of the read: the arithmetic (which names the
// cell), or `decode["8K"][64]: cell not measured: <why>`.
func (u unmeasured) detail() string {
	if u.arithmetic != "" {
		return u.arithmetic
	}
	return u.ref.Expr() + ": " + u.message()
}

// unknownServerFact marks a server attribute the run could not learn (for
// example kv_cache_tokens when neither /metrics nor the log told it).
type unknownServerFact struct{ name string }

// sortedMarks returns the unmeasured, unknown-server-fact and search marks
// (cells by name, then facts, then searches in no set order: the verdict
// sorts their words).
func sortedMarks(marks cty.ValueMarks) (cells []unmeasured, facts []string, searches []searchRead) {
	seenCell := map[vocab.CellRef]bool{}
	seenFact := map[string]bool{}
	seenSearch := map[searchRead]bool{}
	for m := range marks {
		switch m := m.(type) {
		case searchRead:
			if !seenSearch[m] {
				seenSearch[m] = true
				searches = append(searches, m)
			}
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

	return cells, facts, searches
}

// unmeasuredVerdict fills v for a test that read cells without numbers or
// unknown server facts, with the finding the reads make: over capacity
// when every such read is of an over-capacity cell, saturated when they
// are of cells over capacity or stopped as saturated, one at least
// saturated (docs/method.md#saturation), unmeasured (the
// infrastructure's) when any is not; nothing to read when it read only
// searches left out of the run; undecided when what is left is a rate
// search it could not decide; unmeasurable when it read only cells the
// client could not measure alone (docs/method.md#unmeasurable). Details
// list every read.
func (sc *scope) unmeasuredVerdict(v *result.Verdict, cells []unmeasured, facts []string, searches []searchRead) {
	finding := result.FindingOverCapacity
	saturated := false // a read is of a cell stopped as saturated
	var msgs []string
	seen := map[string]bool{}
	onlyUnmeasurable := len(cells) > 0 && len(facts) == 0 && len(searches) == 0
	for _, c := range cells {
		undecided := c.status == vocab.StatusUnmeasurable || c.tooFew != ""
		if !undecided {
			onlyUnmeasurable = false
		}
		saturated = saturated || c.status == vocab.StatusSaturated
		if !c.overCapacity() && c.status != vocab.StatusSaturated && !undecided {
			finding = result.FindingUnmeasured
		}
		v.Details = append(v.Details, c.detail())
		if !seen[c.message()] {
			seen[c.message()] = true
			msgs = append(msgs, c.message())
		}
	}
	for _, f := range facts {
		finding = result.FindingUnmeasured
		msg := "server." + f + " is not known: the run could not learn it from the server"
		v.Details = append(v.Details, msg)
		msgs = append(msgs, msg)
	}
	var words []string
	for _, s := range searches {
		if s.infra {
			finding = result.FindingUnmeasured
		}
		words = append(words, sc.words.UnknownRead(s.why))
	}
	slices.Sort(words)
	v.Details = append(v.Details, words...)
	msgs = append(msgs, words...)
	if len(cells) == 0 && len(facts) == 0 && len(searches) > 0 && !slices.ContainsFunc(searches, func(s searchRead) bool { return !s.skip }) {
		finding = result.FindingNothingToRead
	}
	// Reads a rate search could not decide (docs/method.md#undecided-searches),
	// the rest skips: undecided, not failed.
	if len(cells) == 0 && len(facts) == 0 && slices.ContainsFunc(searches, func(s searchRead) bool { return s.undecided }) &&
		!slices.ContainsFunc(searches, func(s searchRead) bool { return !s.skip && !s.undecided }) {
		finding = result.FindingUndecided
	}
	if onlyUnmeasurable {
		finding = result.FindingUnmeasurable
	}
	if finding == result.FindingOverCapacity && saturated {
		// Past the server's capacity, every read: the cell fails its
		// rule as an over-capacity one does.
		finding = result.FindingSaturated
	}
	judge.Rule(v, finding)
	v.Message = strings.Join(msgs, "; ")
}

// conditionDiag is an error diagnostic pointing at a condition.
func conditionDiag(rng hcl.Range, summary, detail string) hcl.Diagnostics {
	return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: summary, Detail: detail, Subject: rng.Ptr()}}
}

// notBoolDiag is the diagnostic of a condition at rng that evaluated to a
// value of type typ, not a bool.
func notBoolDiag(rng hcl.Range, typ cty.Type) hcl.Diagnostics {
	return conditionDiag(rng, "Condition is not a bool",
		fmt.Sprintf("The condition evaluated to a %s; write a comparison such as decode[\"8K\"][64].total_tps >= 6000.", typ.FriendlyName()))
}

// firstError is the summary and detail of the first error in diags.
func firstError(diags hcl.Diagnostics) string {
	for _, d := range diags {
		if d.Severity == hcl.DiagError {
			if d.Detail != "" {
				return d.Summary + ": " + d.Detail
			}
			return d.Summary
		}
	}
	return diags.Error()
}

// diagLines renders diagnostics with HCL's text writer (file, line,
// snippet) as detail lines.
func (sc *scope) diagLines(diags hcl.Diagnostics) []string {
	var buf bytes.Buffer
	wr := hcl.NewDiagnosticTextWriter(&buf, sc.sp.Files, 0, false)
	if err := wr.WriteDiagnostics(diags); err != nil {
		return []string{diags.Error()}
	}
	return strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
}

// source returns the bytes of rng as written in the spec, or "" when the
// spec's source is not at hand.
func (sc *scope) source(rng hcl.Range) string {
	if sc.sp.Files == nil {
		return ""
	}
	f := sc.sp.Files[rng.Filename]
	if f == nil || rng.Start.Byte < 0 || rng.End.Byte > len(f.Bytes) || rng.Start.Byte > rng.End.Byte {
		return ""
	}
	return string(f.Bytes[rng.Start.Byte:rng.End.Byte])
}

// leafMarks collects the unmeasured/unknown-fact marks of every traversal in
// expr that reads a single value (a metric, not a whole cell or matrix), so
// that a read is caught even when the condition errors or short-circuits.
func leafMarks(sc *scope, expr hcl.Expression) cty.ValueMarks {
	marks := cty.ValueMarks{}
	node, ok := expr.(hclsyntax.Node)
	if !ok {
		return marks
	}
	hclsyntax.VisitAll(node, func(n hclsyntax.Node) hcl.Diagnostics {
		t, ok := n.(*hclsyntax.ScopeTraversalExpr)
		if !ok {
			return nil
		}
		val, diags := t.Value(sc.ctx)
		if diags.HasErrors() {
			return nil
		}
		if val.Type().IsPrimitiveType() || val.Type() == cty.DynamicPseudoType {
			for m := range val.Marks() {
				marks[m] = struct{}{}
			}
		}
		return nil
	})
	return marks
}

// cellsRead finds the cells a condition reads statically, in order of first
// appearance (the spec loader fills Assert.Cells the same way; this is the
// fallback for specs built in code).
func cellsRead(expr hcl.Expression) []vocab.CellRef {
	var out []vocab.CellRef
	seen := map[vocab.CellRef]bool{}
	for _, t := range expr.Variables() {
		ref, ok := cellOf(t)
		if ok && !seen[ref] {
			seen[ref] = true
			out = append(out, ref)
		}
	}
	return out
}

// cellOf turns prefill[CTX]… or LABEL[CTX][CONC]… into a cell reference.
func cellOf(t hcl.Traversal) (vocab.CellRef, bool) {
	key := func(i int) (int, bool) {
		if i >= len(t) {
			return 0, false
		}
		ix, ok := t[i].(hcl.TraverseIndex)
		if !ok || ix.Key.IsNull() || !ix.Key.IsKnown() {
			return 0, false
		}
		switch ix.Key.Type() {
		case cty.String:
			n, err := vocab.ParseTokens(ix.Key.AsString())
			return n, err == nil
		case cty.Number:
			f, _ := ix.Key.AsBigFloat().Int64()
			return int(f), f > 0
		}
		return 0, false
	}
	root := t.RootName()
	switch root {
	case "server", "var":
		return vocab.CellRef{}, false
	case "prefill":
		ctx, ok := key(1)
		return vocab.CellRef{Phase: vocab.PhasePrefill, Context: ctx}, ok
	}
	ctx, ok1 := key(1)
	conc, ok2 := key(2)
	if !ok1 || !ok2 {
		return vocab.CellRef{}, false
	}
	return vocab.CellRef{Phase: vocab.PhaseDecode, Matrix: root, Context: ctx, Concurrency: conc}, true
}
