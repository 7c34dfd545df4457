package spec

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

var variableSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "default"},
		{Name: "type"},
		{Name: "description"},
	},
}

// decodeVariable decodes a `variable "NAME"` block and resolves its value
// from -var or its default.
func (l *loader) decodeVariable(blk *hcl.Block) (*Variable, hcl.Diagnostics) {
	name := blk.Labels[0]
	v := &Variable{Name: name, TypeConstraint: cty.DynamicPseudoType, DeclRange: blk.DefRange}
	content, diags := blk.Body.Content(variableSchema)
	if !hclsyntax.ValidIdentifier(name) {
		diags = append(diags, invalid("Invalid variable name", blk.LabelRanges[0],
			"%q cannot be read as var.%s: a name starts with a letter and holds letters, digits, _ and -.", name, name))
		return nil, diags
	}
	// Defaults may call functions (env, try…) but not read other variables.
	ctx := l.evalContext(cty.NilVal)
	if a, ok := content.Attributes["description"]; ok {
		d, dd := a.Expr.Value(ctx)
		diags = append(diags, dd...)
		if !dd.HasErrors() {
			if s, err := convert.Convert(d, cty.String); err != nil || s.IsNull() {
				diags = append(diags, typeError("description", a.Expr, ctx, fmt.Errorf("a string is required")))
			} else {
				v.Description = s.AsString()
			}
		}
	}
	if a, ok := content.Attributes["type"]; ok {
		ty, dd := typeexpr.TypeConstraint(a.Expr)
		diags = append(diags, dd...)
		if !dd.HasErrors() {
			v.TypeConstraint = ty
			if ty != cty.DynamicPseudoType {
				v.Type = typeexpr.TypeString(ty)
			}
		}
	}
	if a, ok := content.Attributes["default"]; ok {
		d, dd := a.Expr.Value(ctx)
		diags = append(diags, dd...)
		if !dd.HasErrors() {
			cv, err := convert.Convert(d, v.TypeConstraint)
			if err != nil {
				diags = append(diags, &hcl.Diagnostic{
					Severity: hcl.DiagError,
					Summary:  "Invalid default value for variable",
					Detail:   fmt.Sprintf("This default value is not compatible with the variable's type constraint: %s.", err),
					Subject:  a.Expr.Range().Ptr(),
				})
			} else {
				v.Default = cv
			}
		}
	}
	v.Value = v.Default
	if raw, ok := l.opts.Vars[name]; ok {
		subject := blk.LabelRanges[0]
		if a, ok := content.Attributes["type"]; ok {
			subject = a.Expr.Range()
		}
		val, dd := parseVarFlag(name, raw, v.TypeConstraint, subject)
		diags = append(diags, dd...)
		if !dd.HasErrors() {
			v.Value = val
		}
	} else if v.Default == cty.NilVal && !diags.HasErrors() {
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "No value for required variable",
			Detail:   fmt.Sprintf("The variable %q has no default: set it with -var %s=VALUE.", name, name),
			Subject:  blk.LabelRanges[0].Ptr(),
		})
	}
	if v.Value == cty.NilVal {
		v.Value = cty.NullVal(cty.DynamicPseudoType)
	}
	return v, diags
}

// parseVarFlag converts a -var string to ty: strings (and untyped
// variables) take the text as is; numbers and bools convert from the text
// ("8", "true"); other types parse it as an HCL expression, so
// -var l='[1,2]' gives a list. Any failure is one diagnostic naming the
// variable, its type and the value, pointing at the declaration (subject).
func parseVarFlag(name, raw string, ty cty.Type, subject hcl.Range) (cty.Value, hcl.Diagnostics) {
	if ty == cty.String || ty == cty.DynamicPseudoType {
		return cty.StringVal(raw), nil
	}
	fail := func(why string) (cty.Value, hcl.Diagnostics) {
		return cty.NilVal, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Invalid value for variable",
			Detail: fmt.Sprintf("-var %s=%s: variable %q is of type %s, and %q is not %s: %s.",
				name, raw, name, typeexpr.TypeString(ty), raw, typeArticle(ty), why),
			Subject: subject.Ptr(),
		}}
	}
	if ty.IsPrimitiveType() {
		v, err := convert.Convert(cty.StringVal(strings.TrimSpace(raw)), ty)
		if err != nil {
			return fail(err.Error())
		}
		return v, nil
	}
	filename := fmt.Sprintf("<value for var.%s>", name)
	expr, diags := hclsyntax.ParseExpression([]byte(raw), filename, hcl.InitialPos)
	if diags.HasErrors() {
		return fail(strings.ToLower(diags[0].Summary))
	}
	val, diags := expr.Value(nil)
	if diags.HasErrors() {
		return fail(strings.ToLower(diags[0].Summary))
	}
	cv, err := convert.Convert(val, ty)
	if err != nil {
		return fail(err.Error())
	}
	return cv, nil
}

// typeArticle names a type with its article: "a number", "a list of number".
func typeArticle(ty cty.Type) string {
	s := typeexpr.TypeString(ty)
	if strings.ContainsAny(s[:1], "aeiou") {
		return "an " + s
	}
	return "a " + s
}

// checkVarFlags reports -var settings for variables the spec does not declare.
func (l *loader) checkVarFlags() hcl.Diagnostics {
	var diags hcl.Diagnostics
	names := make([]string, 0, len(l.opts.Vars))
	for n := range l.opts.Vars {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if l.spec.Variable(n) != nil {
			continue
		}
		var declared []string
		for _, v := range l.spec.Variables {
			declared = append(declared, v.Name)
		}
		detail := fmt.Sprintf("-var %s=… sets a variable that %s does not declare. Add a variable %q { default = … } block, or drop the -var.", n, l.spec.Filename, n)
		if s := nearest(n, declared); s != "" {
			detail += fmt.Sprintf(" Did you mean %q?", s)
		}
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Value for undeclared variable",
			Detail:   detail,
		})
	}
	return diags
}

// varObject is the value of `var` in expressions.
func (l *loader) varObject() cty.Value {
	m := map[string]cty.Value{}
	for _, v := range l.spec.Variables {
		m[v.Name] = v.Value
	}
	return cty.ObjectVal(m)
}
