package spec

import (
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"

	"github.com/slogate/slogate/internal/vocab"
)

// This file evaluates attribute expressions into Go values. Each helper
// returns ok=false when the attribute is absent or null (meaning "unset") or
// when it reported a diagnostic.

// value evaluates expr and converts it to ty. A null value is "unset".
func (l *loader) value(name string, expr hcl.Expression, ty cty.Type) (cty.Value, bool, hcl.Diagnostics) {
	v, diags := expr.Value(l.spec.EvalContext)
	if diags.HasErrors() {
		return cty.NilVal, false, diags
	}
	if !v.IsWhollyKnown() {
		return cty.NilVal, false, append(diags, &hcl.Diagnostic{
			Severity:    hcl.DiagError,
			Summary:     "Unknown value",
			Detail:      fmt.Sprintf("The value of %q must be known when the spec is loaded.", name),
			Subject:     expr.Range().Ptr(),
			Expression:  expr,
			EvalContext: l.spec.EvalContext,
		})
	}
	if v.IsNull() {
		return cty.NilVal, false, diags
	}
	cv, err := convert.Convert(v, ty)
	if err != nil {
		return cty.NilVal, false, append(diags, typeError(name, expr, l.spec.EvalContext, err))
	}
	return cv, true, diags
}

// attr is attribute name of attrs converted to ty (l.value), with the
// attribute for its range; ok is false when it is absent, null or does not
// convert (diags then say why, but for an absent or null one).
func (l *loader) attr(attrs hcl.Attributes, name string, ty cty.Type) (*hcl.Attribute, cty.Value, bool, hcl.Diagnostics) {
	a, ok := attrs[name]
	if !ok {
		return nil, cty.NilVal, false, nil
	}
	v, ok, diags := l.value(name, a.Expr, ty)
	return a, v, ok, diags
}

func typeError(name string, expr hcl.Expression, ctx *hcl.EvalContext, err error) *hcl.Diagnostic {
	return &hcl.Diagnostic{
		Severity:    hcl.DiagError,
		Summary:     "Incorrect attribute value type",
		Detail:      fmt.Sprintf("Inappropriate value for attribute %q: %s.", name, err),
		Subject:     expr.Range().Ptr(),
		Expression:  expr,
		EvalContext: ctx,
	}
}

func invalid(summary string, rng hcl.Range, format string, args ...any) *hcl.Diagnostic {
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  summary,
		Detail:   fmt.Sprintf(format, args...),
		Subject:  rng.Ptr(),
	}
}

func (l *loader) str(attrs hcl.Attributes, name string) (string, bool, hcl.Diagnostics) {
	_, v, ok, diags := l.attr(attrs, name, cty.String)
	if !ok {
		return "", false, diags
	}
	return v.AsString(), true, diags
}

func (l *loader) boolean(attrs hcl.Attributes, name string) (*bool, hcl.Diagnostics) {
	_, v, ok, diags := l.attr(attrs, name, cty.Bool)
	if !ok {
		return nil, diags
	}
	b := v.True()
	return &b, diags
}

// setBool reads boolean attribute name of attrs into dst; dst keeps its
// value when the attribute is absent, null or not a bool.
func (l *loader) setBool(attrs hcl.Attributes, name string, dst *bool) hcl.Diagnostics {
	b, diags := l.boolean(attrs, name)
	if b != nil {
		*dst = *b
	}
	return diags
}

func (l *loader) float(attrs hcl.Attributes, name string) (*float64, hcl.Diagnostics) {
	_, v, ok, diags := l.attr(attrs, name, cty.Number)
	if !ok {
		return nil, diags
	}
	f, _ := v.AsBigFloat().Float64()
	return &f, diags
}

// positiveInt reads a whole number ≥ 1 (≤ max when max > 0).
func (l *loader) positiveInt(attrs hcl.Attributes, name string, max int) (*int, hcl.Diagnostics) {
	a, v, ok, diags := l.attr(attrs, name, cty.Number)
	if !ok {
		return nil, diags
	}
	n, ok := wholeNumber(v.AsBigFloat())
	if !ok || n < 1 || (max > 0 && n > max) {
		want := "a positive whole number"
		if max > 0 {
			want = fmt.Sprintf("a whole number from 1 to %d", max)
		}
		return nil, append(diags, invalid("Invalid value", a.Expr.Range(),
			"%s must be %s; got %s.", name, want, v.AsBigFloat().Text('g', -1)))
	}
	return &n, diags
}

// wholeNumber returns f as an int when it is a whole number in int range.
func wholeNumber(f *big.Float) (int, bool) {
	if !f.IsInt() {
		return 0, false
	}
	i, acc := f.Int64()
	if acc != big.Exact || i > 1<<53 || i < -(1<<53) {
		return 0, false
	}
	return int(i), true
}

// duration reads a positive Go duration string such as "30s" or "60m".
func (l *loader) duration(attrs hcl.Attributes, name string) (time.Duration, string, bool, hcl.Diagnostics) {
	return l.durationFrom(attrs, name, false)
}

// durationOrZero reads a Go duration string that may be "0s", meaning
// none (a traffic block's warmup: no warm-up).
func (l *loader) durationOrZero(attrs hcl.Attributes, name string) (time.Duration, string, bool, hcl.Diagnostics) {
	return l.durationFrom(attrs, name, true)
}

func (l *loader) durationFrom(attrs hcl.Attributes, name string, zero bool) (time.Duration, string, bool, hcl.Diagnostics) {
	a, v, ok, diags := l.attr(attrs, name, cty.String)
	if !ok {
		return 0, "", false, diags
	}
	text := v.AsString()
	d, err := time.ParseDuration(text)
	switch {
	case zero && (err != nil || d < 0):
		return 0, "", false, append(diags, invalid("Invalid duration", a.Expr.Range(),
			"%s must be a duration such as \"0s\" (none), \"10s\" or \"2m\"; got %q.", name, text))
	case !zero && (err != nil || d <= 0):
		return 0, "", false, append(diags, invalid("Invalid duration", a.Expr.Range(),
			"%s must be a positive duration such as \"30s\", \"2m\" or \"1h30m\"; got %q.", name, text))
	}
	return d, text, true, diags
}

func (l *loader) stringList(attrs hcl.Attributes, name string) ([]string, hcl.Diagnostics) {
	a, v, ok, diags := l.attr(attrs, name, cty.List(cty.String))
	if !ok {
		return nil, diags
	}
	var out []string
	for it := v.ElementIterator(); it.Next(); {
		_, e := it.Element()
		if e.IsNull() {
			return nil, append(diags, invalid("Invalid value", a.Expr.Range(), "%s must not contain null.", name))
		}
		out = append(out, e.AsString())
	}
	return out, diags
}

func (l *loader) stringMap(attrs hcl.Attributes, name string) (map[string]string, hcl.Diagnostics) {
	a, v, ok, diags := l.attr(attrs, name, cty.Map(cty.String))
	if !ok {
		return nil, diags
	}
	out := map[string]string{}
	for it := v.ElementIterator(); it.Next(); {
		k, e := it.Element()
		if e.IsNull() {
			return nil, append(diags, invalid("Invalid value", a.Expr.Range(), "%s[%q] must not be null.", name, k.AsString()))
		}
		out[k.AsString()] = e.AsString()
	}
	return out, diags
}

// tokenValue turns one evaluated value into a token count: a positive whole
// number, or a string such as "8K" (vocab.ParseTokens).
func tokenValue(v cty.Value) (int, error) {
	switch {
	case v.IsNull():
		return 0, fmt.Errorf("null is not a token count")
	case v.Type() == cty.String:
		return vocab.ParseTokens(v.AsString())
	case v.Type() == cty.Number:
		n, ok := wholeNumber(v.AsBigFloat())
		if !ok || n < 1 {
			return 0, fmt.Errorf("%s is not a positive whole number of tokens", v.AsBigFloat().Text('g', -1))
		}
		return n, nil
	}
	return 0, fmt.Errorf("a token count is a whole number or a string like \"8K\", not %s", v.Type().FriendlyName())
}

// concurrencyValue turns one value into a concurrency level (whole, ≥ 1).
func concurrencyValue(v cty.Value) (int, error) {
	if !v.IsNull() && v.Type() == cty.String {
		if n, err := convert.Convert(v, cty.Number); err == nil {
			v = n
		}
	}
	if v.IsNull() || v.Type() != cty.Number {
		return 0, fmt.Errorf("a concurrency is a positive whole number, not %s", friendly(v))
	}
	n, ok := wholeNumber(v.AsBigFloat())
	if !ok || n < 1 {
		return 0, fmt.Errorf("%s is not a positive whole number", v.AsBigFloat().Text('g', -1))
	}
	return n, nil
}

func friendly(v cty.Value) string {
	if v.IsNull() {
		return "null"
	}
	if v.Type() == cty.String {
		return fmt.Sprintf("%q", v.AsString())
	}
	return v.Type().FriendlyName()
}

// tokens reads one token count attribute: a positive whole number or a
// size with a K or M suffix, either case (max_model_len = "256K",
// max_output = "1k"), as contexts are read (tokenValue).
func (l *loader) tokens(attrs hcl.Attributes, name string) (*int, hcl.Diagnostics) {
	a, ok := attrs[name]
	if !ok {
		return nil, nil
	}
	v, diags := a.Expr.Value(l.spec.EvalContext)
	if diags.HasErrors() || v.IsNull() {
		return nil, diags
	}
	if !v.IsWhollyKnown() {
		return nil, append(diags, invalid("Unknown value", a.Expr.Range(), "The value of %q must be known when the spec is loaded.", name))
	}
	n, err := tokenValue(v)
	if err != nil {
		summary := "Invalid token count"
		if name == "context" || name == "max_model_len" {
			summary = "Invalid context size"
		}
		return nil, append(diags, invalid(summary, a.Expr.Range(), "%s: %s.", name, err))
	}
	return &n, diags
}

// intList reads a list of token counts (kind "context") or concurrency
// levels (kind "concurrency"), pointing each diagnostic at its element. It
// also returns each kept value's source range.
func (l *loader) intList(attr *hcl.Attribute, kind string) ([]int, []hcl.Range, hcl.Diagnostics) {
	type elem struct {
		v   cty.Value
		rng hcl.Range
	}
	var elems []elem
	var diags hcl.Diagnostics
	if exprs, d := hcl.ExprList(attr.Expr); !d.HasErrors() {
		for _, e := range exprs {
			v, d := e.Value(l.spec.EvalContext)
			diags = append(diags, d...)
			if d.HasErrors() {
				continue
			}
			elems = append(elems, elem{v, e.Range()})
		}
	} else {
		v, d := attr.Expr.Value(l.spec.EvalContext)
		diags = append(diags, d...)
		if d.HasErrors() {
			return nil, nil, diags
		}
		if v.IsNull() || !v.IsWhollyKnown() || !(v.Type().IsListType() || v.Type().IsTupleType() || v.Type().IsSetType()) {
			return nil, nil, append(diags, typeError(attr.Name, attr.Expr, l.spec.EvalContext, fmt.Errorf("a list is required")))
		}
		for it := v.ElementIterator(); it.Next(); {
			_, e := it.Element()
			elems = append(elems, elem{e, attr.Expr.Range()})
		}
	}
	var out []int
	var ranges []hcl.Range
	seen := map[int]bool{}
	for _, e := range elems {
		var n int
		var err error
		summary := "Invalid context size"
		if kind == "concurrency" {
			n, err = concurrencyValue(e.v)
			summary = "Invalid concurrency"
		} else {
			if !e.v.IsWhollyKnown() {
				err = fmt.Errorf("the value is unknown")
			} else {
				n, err = tokenValue(e.v)
			}
		}
		if err != nil {
			diags = append(diags, invalid(summary, e.rng, "%s.", upperFirst(err.Error())))
			continue
		}
		if seen[n] {
			diags = append(diags, invalid("Duplicate "+kind, e.rng, "%s %s appears twice in %s.", kind, describe(kind, n), attr.Name))
			continue
		}
		seen[n] = true
		out = append(out, n)
		ranges = append(ranges, e.rng)
	}
	if len(out) == 0 && !diags.HasErrors() {
		diags = append(diags, invalid("Empty list", attr.Expr.Range(), "%s needs at least one value.", attr.Name))
	}
	return out, ranges, diags
}

func describe(kind string, n int) string {
	if kind == "concurrency" {
		return fmt.Sprint(n)
	}
	return vocab.FormatTokens(n)
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
