package assert

import (
	"math"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"

	"github.com/slogate/slogate/internal/numfmt"
	"github.com/slogate/slogate/internal/result"
)

// relational maps HCL's comparison operations to how they are written.
var relational = map[*hclsyntax.Operation]string{
	hclsyntax.OpGreaterThan:        ">",
	hclsyntax.OpGreaterThanOrEqual: ">=",
	hclsyntax.OpLessThan:           "<",
	hclsyntax.OpLessThanOrEqual:    "<=",
	hclsyntax.OpEqual:              "==",
	hclsyntax.OpNotEqual:           "!=",
}

// flipped is the operator that keeps a comparison's meaning when its sides
// are swapped (6000 <= x is x >= 6000).
var flipped = map[string]string{">": "<", ">=": "<=", "<": ">", "<=": ">=", "==": "==", "!=": "!="}

// explain lists the values a condition read: one result.Reading per comparison,
// failed ones first, then one for every other value read. Comparisons that
// depend on local names (inside a for expression) cannot be evaluated on
// their own and are skipped.
func (sc *scope) explain(expr hcl.Expression) []result.Reading {
	node, ok := expr.(hclsyntax.Node)
	if !ok {
		return nil
	}
	var failed, passed []result.Reading
	covered := map[hcl.Range]bool{}
	var traversals []*hclsyntax.ScopeTraversalExpr
	hclsyntax.VisitAll(node, func(n hclsyntax.Node) hcl.Diagnostics {
		switch n := n.(type) {
		case *hclsyntax.BinaryOpExpr:
			op, ok := relational[n.Op]
			if !ok {
				return nil
			}
			r, subject, evaluated := sc.comparison(n, op)
			if !evaluated {
				return nil
			}
			if r.Held {
				passed = append(passed, r)
			} else {
				failed = append(failed, r)
			}
			// The subject's value is on the comparison's line; values read
			// on the other side are listed after the comparisons.
			for _, t := range traversalsIn(subject) {
				covered[t.SrcRange] = true
			}
		case *hclsyntax.ScopeTraversalExpr:
			traversals = append(traversals, n)
		}
		return nil
	})
	out := append(failed, passed...)
	seen := map[result.Reading]bool{}
	for _, t := range traversals {
		if covered[t.SrcRange] || !sc.roots[t.Traversal.RootName()] {
			continue
		}
		val, diags := t.Value(sc.ctx)
		if diags.HasErrors() {
			continue
		}
		r := result.Reading{Subject: sc.text(t), Value: formatCty(val)}
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	return out
}

// comparison reads one comparison: its Reading, subject the side that
// reads measured data, and evaluated false when the comparison could not
// be evaluated on its own.
func (sc *scope) comparison(n *hclsyntax.BinaryOpExpr, op string) (r result.Reading, subject hclsyntax.Expression, evaluated bool) {
	res, diags := n.Value(sc.ctx)
	if diags.HasErrors() || !res.IsWhollyKnown() || res.IsNull() {
		return result.Reading{}, nil, false
	}
	res, _ = res.Unmark()
	subject = n.LHS
	other := n.RHS
	if !sc.readsData(n.LHS) && sc.readsData(n.RHS) {
		subject, other = n.RHS, n.LHS
		op = flipped[op]
	}
	sv, d1 := subject.Value(sc.ctx)
	ov, d2 := other.Value(sc.ctx)
	if d1.HasErrors() || d2.HasErrors() {
		return result.Reading{}, nil, false
	}
	sv, _ = sv.UnmarkDeep()
	ov, _ = ov.UnmarkDeep()
	r = result.Reading{Subject: sc.text(subject), Value: formatCty(sv), Op: op, Threshold: formatCty(ov)}
	if !isLiteral(other) {
		r.Against = sc.text(other)
	}
	r.Held = res.Type() == cty.Bool && res.True()
	if s, o, ok := numbers(sv, ov); !r.Held && ok && o != 0 {
		// The distance from the threshold, not from an expected value
		// (an expect's line says "from expected").
		r.Gap, r.HasGap = (s-o)/math.Abs(o), true
	}
	return r, subject, true
}

// numbers returns both values as float64 when both are known numbers.
func numbers(a, b cty.Value) (float64, float64, bool) {
	if a.IsNull() || b.IsNull() || !a.IsKnown() || !b.IsKnown() || a.Type() != cty.Number || b.Type() != cty.Number {
		return 0, 0, false
	}
	x, _ := a.AsBigFloat().Float64()
	y, _ := b.AsBigFloat().Float64()
	return x, y, true
}

// isLiteral reports whether e is a constant written in place (6000, "x").
func isLiteral(e hclsyntax.Expression) bool {
	switch e := e.(type) {
	case *hclsyntax.LiteralValueExpr:
		return true
	case *hclsyntax.TemplateExpr:
		return e.IsStringLiteral()
	case *hclsyntax.UnaryOpExpr:
		return isLiteral(e.Val)
	}
	return false
}

// readsData reports whether e reads measured data or server facts.
func (sc *scope) readsData(e hclsyntax.Expression) bool {
	for _, t := range e.Variables() {
		if sc.roots[t.RootName()] {
			return true
		}
	}
	return false
}

// traversalsIn lists the scope traversals inside n.
func traversalsIn(n hclsyntax.Node) []*hclsyntax.ScopeTraversalExpr {
	var out []*hclsyntax.ScopeTraversalExpr
	hclsyntax.VisitAll(n, func(n hclsyntax.Node) hcl.Diagnostics {
		if t, ok := n.(*hclsyntax.ScopeTraversalExpr); ok {
			out = append(out, t)
		}
		return nil
	})
	return out
}

// text is an expression as written in the spec; without the source at hand
// a traversal is rendered from its steps.
func (sc *scope) text(e hclsyntax.Expression) string {
	if s := sc.source(e.Range()); s != "" {
		return s
	}
	if t, ok := e.(*hclsyntax.ScopeTraversalExpr); ok {
		return traversalText(t.Traversal)
	}
	if l, ok := e.(*hclsyntax.LiteralValueExpr); ok {
		return formatCty(l.Val)
	}
	return "(expression at " + e.Range().String() + ")"
}

// traversalText renders decode["8K"][64].total_tps from its steps.
func traversalText(t hcl.Traversal) string {
	var b strings.Builder
	for _, step := range t {
		switch s := step.(type) {
		case hcl.TraverseRoot:
			b.WriteString(s.Name)
		case hcl.TraverseAttr:
			b.WriteString("." + s.Name)
		case hcl.TraverseIndex:
			b.WriteString("[" + formatCty(s.Key) + "]")
		case hcl.TraverseSplat:
			b.WriteString("[*]")
		}
	}
	return b.String()
}

// formatCty renders a value for a detail line.
func formatCty(v cty.Value) string {
	v, _ = v.UnmarkDeep()
	switch {
	case v.IsNull():
		return "null"
	case !v.IsKnown():
		return "(unknown)"
	case v.Type() == cty.Number:
		f, _ := v.AsBigFloat().Float64()
		return numfmt.Value(f)
	case v.Type() == cty.String:
		return strconv.Quote(v.AsString())
	case v.Type() == cty.Bool:
		return strconv.FormatBool(v.True())
	}
	if !v.IsWhollyKnown() {
		return "(partly unknown " + v.Type().FriendlyName() + ")"
	}
	b, err := ctyjson.Marshal(v, v.Type())
	if err != nil {
		return v.GoString()
	}
	return string(b)
}
