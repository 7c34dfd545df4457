package spec

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/numfmt"
	"github.com/slogate/slogate/internal/vocab"
)

// decodeExpect decodes an `expect "NAME"` block and checks its rows against
// the matrix (or the prefill block) it describes.
func (l *loader) decodeExpect(blk *hcl.Block) (*Expect, hcl.Diagnostics) {
	e := &Expect{Name: blk.Labels[0], Matrix: DefaultMatrix, Tolerance: DefaultTolerance, DeclRange: blk.DefRange}
	content, diags := blk.Body.Content(expectSchema)
	at := content.Attributes

	if s, ok, d := l.str(at, "matrix"); ok || d != nil {
		diags = append(diags, d...)
		if ok {
			e.Matrix = s
		}
	}
	if a, ok := at["tolerance"]; ok {
		t, d := l.tolerance(a)
		diags = append(diags, d...)
		if t != nil {
			e.Tolerance = *t
		}
	}

	// What the rows must match: the prefill contexts (one value per row) or
	// a matrix's contexts × concurrency.
	phase := vocab.PhaseDecode
	var contexts []int
	cols := 0
	matrixRange := blk.DefRange
	if a, ok := at["matrix"]; ok {
		matrixRange = a.Expr.Range()
	}
	known := true
	if e.Matrix == rootPrefill {
		phase = vocab.PhasePrefill
		if l.spec.Prefill == nil {
			diags = append(diags, invalid("Reference to unmeasured prefill", matrixRange,
				"expect %q describes prefill, but the spec has no prefill block.", e.Name))
			known = false
		} else {
			contexts, cols = l.spec.Prefill.Contexts, 1
		}
	} else if m := l.spec.Matrix(e.Matrix); m != nil {
		contexts, cols = m.Contexts, len(m.Concurrency)
	} else {
		var labels []string
		for _, m := range l.spec.Matrices {
			labels = append(labels, m.Label)
		}
		diags = append(diags, unknownName("Reference to an undeclared matrix", matrixRange, blk.DefRange,
			fmt.Sprintf("expect %q describes matrix %q, which no matrix block declares (declared: %s; or \"prefill\").", e.Name, e.Matrix, strings.Join(labels, ", ")),
			e.Matrix, append(labels, rootPrefill)))
		known = false
	}

	if s, ok, d := l.str(at, "metric"); ok || d != nil {
		diags = append(diags, d...)
		if ok {
			e.Metric, e.MetricRange = s, at["metric"].Expr.Range()
			if m, found := metric.Lookup(phase, s); found {
				diags = append(diags, l.percentileMeasured(m, at["metric"].Expr.Range(), blk.DefRange)...)
			} else {
				names := metric.Names(phase)
				diags = append(diags, unknownMetric(at["metric"].Expr.Range(), blk.DefRange,
					fmt.Sprintf("%s cells have no metric %q; the %s metrics are %s.", phase, s, phase, strings.Join(names, ", ")),
					s, names))
			}
		}
	}

	if a, ok := at["values"]; ok {
		rows, d := l.expectRows(a, e, phase, contexts, cols, known)
		diags = append(diags, d...)
		e.Rows = rows
	}
	return e, diags
}

// expectRows decodes values = { "8K" = [v1, v2, …], … }.
func (l *loader) expectRows(a *hcl.Attribute, e *Expect, phase vocab.Phase, contexts []int, cols int, known bool) ([]ExpectRow, hcl.Diagnostics) {
	pairs, diags := hcl.ExprMap(a.Expr)
	if diags.HasErrors() {
		return nil, hcl.Diagnostics{invalid("Invalid expect values", a.Expr.Range(),
			`values is an object with one row per context, like { "8K" = [408.2, 779.9, null] }: a number per concurrency level, null for no expectation.`)}
	}
	if len(pairs) == 0 {
		return nil, hcl.Diagnostics{invalid("Empty expect values", a.Expr.Range(), "expect %q has no rows: add one per context, like \"8K\" = [...].", e.Name)}
	}
	var rows []ExpectRow
	seen := map[int]hcl.Range{}
	for _, p := range pairs {
		rng := hcl.RangeBetween(p.Key.Range(), p.Value.Range())
		k, d := p.Key.Value(l.spec.EvalContext)
		diags = append(diags, d...)
		if d.HasErrors() {
			continue
		}
		if !k.IsWhollyKnown() {
			diags = append(diags, invalid("Invalid context size", p.Key.Range(), "The row's context must be known when the spec is loaded."))
			continue
		}
		ctx, err := tokenValue(k)
		if err != nil {
			diags = append(diags, invalid("Invalid context size", p.Key.Range(), "%s.", upperFirst(err.Error())))
			continue
		}
		if prev, dup := seen[ctx]; dup {
			diags = append(diags, invalid("Duplicate expect row", p.Key.Range(), "Context %s already has a row at %s.", vocab.FormatTokens(ctx), where(prev)))
			continue
		}
		seen[ctx] = p.Key.Range()
		values, d := l.expectValues(p.Value)
		diags = append(diags, d...)
		if d.HasErrors() {
			continue
		}
		if known {
			if !containsInt(contexts, ctx) {
				diags = append(diags, invalidCtx("Reference to an unmeasured context", p.Key.Range(), rng,
					fmt.Sprintf("%s does not measure context %s; it measures %s.", expectTarget(e), vocab.FormatTokens(ctx), numfmt.List(contexts, vocab.FormatTokens))))
				continue
			}
			if len(values) != cols {
				detail := fmt.Sprintf("Row %s has %d values but matrix %q measures %d concurrency levels (%s): give one value per level, null where there is no expectation.",
					vocab.FormatTokens(ctx), len(values), e.Matrix, cols, numfmt.List(l.spec.Matrix(e.Matrix).concurrencyOrNil(), strconv.Itoa))
				if phase == vocab.PhasePrefill {
					detail = fmt.Sprintf("A prefill row holds one value; row %s has %d.", vocab.FormatTokens(ctx), len(values))
				}
				diags = append(diags, invalidCtx("Expect row does not match matrix", p.Value.Range(), rng, detail))
				continue
			}
		}
		rows = append(rows, ExpectRow{Context: ctx, Values: values, Range: rng})
	}
	return rows, diags
}

func (m *Matrix) concurrencyOrNil() []int {
	if m == nil {
		return nil
	}
	return m.Concurrency
}

func expectTarget(e *Expect) string {
	if e.Matrix == rootPrefill {
		return "The prefill block"
	}
	return fmt.Sprintf("Matrix %q", e.Matrix)
}

// expectValues reads one row: a list of numbers and nulls, or (prefill) a
// single number.
func (l *loader) expectValues(expr hcl.Expression) ([]*float64, hcl.Diagnostics) {
	type elem struct {
		v   cty.Value
		rng hcl.Range
	}
	var elems []elem
	var diags hcl.Diagnostics
	if exprs, d := hcl.ExprList(expr); !d.HasErrors() {
		for _, x := range exprs {
			v, d := x.Value(l.spec.EvalContext)
			diags = append(diags, d...)
			if !d.HasErrors() {
				elems = append(elems, elem{v, x.Range()})
			}
		}
	} else {
		v, d := expr.Value(l.spec.EvalContext)
		diags = append(diags, d...)
		if d.HasErrors() {
			return nil, diags
		}
		switch {
		case !v.IsWhollyKnown():
			return nil, append(diags, invalid("Invalid expected value", expr.Range(), "The row must be known when the spec is loaded."))
		case v.IsNull() || v.Type() == cty.Number:
			elems = append(elems, elem{v, expr.Range()})
		case v.Type().IsListType() || v.Type().IsTupleType():
			for it := v.ElementIterator(); it.Next(); {
				_, x := it.Element()
				elems = append(elems, elem{x, expr.Range()})
			}
		default:
			return nil, append(diags, invalid("Invalid expected value", expr.Range(),
				"A row is a list of numbers (null for no expectation), not %s.", v.Type().FriendlyName()))
		}
	}
	if diags.HasErrors() {
		return nil, diags
	}
	out := make([]*float64, 0, len(elems))
	for _, x := range elems {
		if x.v.IsNull() {
			out = append(out, nil)
			continue
		}
		if !x.v.IsWhollyKnown() || x.v.Type() != cty.Number {
			diags = append(diags, invalid("Invalid expected value", x.rng, "An expected value is a number or null, not %s.", friendly(x.v)))
			continue
		}
		f, _ := x.v.AsBigFloat().Float64()
		out = append(out, &f)
	}
	return out, diags
}

func containsInt(ns []int, n int) bool {
	for _, x := range ns {
		if x == n {
			return true
		}
	}
	return false
}

// tolerance reads an expect tolerance: a fraction (0.05) or a percentage
// string ("5%"), from 0 to 100 %.
func (l *loader) tolerance(a *hcl.Attribute) (*float64, hcl.Diagnostics) {
	v, diags := a.Expr.Value(l.spec.EvalContext)
	if diags.HasErrors() || v.IsNull() {
		return nil, diags
	}
	if !v.IsWhollyKnown() {
		return nil, append(diags, invalid("Unknown value", a.Expr.Range(), "The value of \"tolerance\" must be known when the spec is loaded."))
	}
	var t float64
	var err error
	switch v.Type() {
	case cty.Number:
		t, _ = v.AsBigFloat().Float64()
		err = checkTolerance(t, v.AsBigFloat().Text('g', -1))
	case cty.String:
		t, err = ParseTolerance(v.AsString())
	default:
		err = fmt.Errorf("tolerance is a fraction such as 0.05 or a percentage such as \"5%%\", not %s", v.Type().FriendlyName())
	}
	if err != nil {
		return nil, append(diags, invalid("Invalid tolerance", a.Expr.Range(), "%s.", upperFirst(err.Error())))
	}
	return &t, diags
}

// ParseTolerance reads a tolerance as written in a spec or on the command
// line: a fraction ("0.05") or a percentage ("5%"), from 0 to 100 %. It
// returns the fraction.
func ParseTolerance(s string) (float64, error) {
	f, err := numfmt.ParsePercent(s)
	if err != nil {
		return 0, fmt.Errorf("tolerance is a fraction such as 0.05 or a percentage such as \"5%%\"; got %q", s)
	}
	return f, checkTolerance(f, strconv.Quote(s))
}

// checkTolerance rejects a tolerance below 0 or above 100 %; written is
// the value as the user wrote it.
func checkTolerance(f float64, written string) error {
	if f < 0 || f > 1 {
		return fmt.Errorf("tolerance is from 0 to 100%% (0.05 or \"5%%\" for 5%%); got %s, which is %s%%",
			written, strconv.FormatFloat(f*100, 'g', -1, 64))
	}
	return nil
}
