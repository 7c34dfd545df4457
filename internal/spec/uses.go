package spec

import (
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// VariableUse is one place a spec reads a variable (var.NAME): the
// attribute's path through its blocks ("workload.prompt",
// "server.args") and where it is written.
type VariableUse struct {
	Path  string
	Range hcl.Range
}

// VariableUses are the places the spec's files read variable name, in
// file and line order: every attribute whose expression has a var.NAME
// traversal, named by its blocks' types and its own name.
func (s *Spec) VariableUses(name string) []VariableUse {
	var out []VariableUse
	files := make([]string, 0, len(s.Files))
	for f := range s.Files {
		files = append(files, f)
	}
	slices.Sort(files)
	for _, f := range files {
		if body, ok := s.Files[f].Body.(*hclsyntax.Body); ok {
			out = append(out, variableUses(body, nil, name)...)
		}
	}
	return out
}

// variableUses are the uses of variable name in body, whose blocks'
// types down to it are path.
func variableUses(body *hclsyntax.Body, path []string, name string) []VariableUse {
	var out []VariableUse
	attrs := make([]*hclsyntax.Attribute, 0, len(body.Attributes))
	for _, a := range body.Attributes {
		attrs = append(attrs, a)
	}
	slices.SortFunc(attrs, func(a, b *hclsyntax.Attribute) int { return a.SrcRange.Start.Byte - b.SrcRange.Start.Byte })
	for _, a := range attrs {
		for _, tr := range a.Expr.Variables() {
			if tr.RootName() != "var" || len(tr) < 2 {
				continue
			}
			if at, ok := tr[1].(hcl.TraverseAttr); ok && at.Name == name {
				out = append(out, VariableUse{Path: strings.Join(append(slices.Clone(path), a.Name), "."), Range: a.SrcRange})
				break
			}
		}
	}
	for _, b := range body.Blocks {
		out = append(out, variableUses(b.Body, append(slices.Clone(path), b.Type), name)...)
	}
	slices.SortStableFunc(out, func(a, b VariableUse) int { return a.Range.Start.Byte - b.Range.Start.Byte })
	return out
}
