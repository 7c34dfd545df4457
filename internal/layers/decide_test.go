package layers

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// decidingHomes are the packages that must not decide an outcome: they word
// decisions made elsewhere (compare.Check, the judge's verdicts), never
// set an Outcome or Infra from a constant or a condition of their own.
// The last views that did (correctness's per-check outcomes, the
// baseline, traffic and capacity verdicts' Infra) moved to compare, and
// the verdicts they built to the judge (TestOnlyTheJudgeSetsVerdictOutcomes).
var decidingHomes = []string{"internal/views/", "internal/report/"}

// decidedHere reports whether e decides a value instead of copying one:
// a vocab constant (vocab.Fail), a boolean literal, or a comparison.
func decidedHere(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.SelectorExpr:
		id, ok := x.X.(*ast.Ident)
		return ok && id.Name == "vocab"
	case *ast.Ident:
		return x.Name == "true" || x.Name == "false"
	case *ast.BinaryExpr:
		return true
	case *ast.ParenExpr:
		return decidedHere(x.X)
	}
	return false
}

// outcomeSettings are the places in f that set a field named Outcome or
// Infra from a value decidedHere, as "line: field".
func outcomeSettings(fset *token.FileSet, f *ast.File) []string {
	var out []string
	add := func(n ast.Node, field string) {
		out = append(out, fset.Position(n.Pos()).String()+": "+field)
	}
	isField := func(name string) bool { return name == "Outcome" || name == "Infra" }
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.AssignStmt:
			for i, lhs := range x.Lhs {
				if sel, ok := lhs.(*ast.SelectorExpr); ok && isField(sel.Sel.Name) && i < len(x.Rhs) && decidedHere(x.Rhs[i]) {
					add(x, sel.Sel.Name)
				}
			}
		case *ast.KeyValueExpr:
			if k, ok := x.Key.(*ast.Ident); ok && isField(k.Name) && decidedHere(x.Value) {
				add(x, k.Name)
			}
		}
		return true
	})
	return out
}

// TestViewsDoNotDecide: no non-test file of the views or the report sets
// an Outcome or Infra field from a constant or a condition: outcomes are
// decided in compare and assert, as values the views word (terraform's
// views never decide). A report's own summary rows (the run's outcome
// word) read outcomes, they do not set them.
func TestViewsDoNotDecide(t *testing.T) {
	_, pkgs := listed(t)
	fset := token.NewFileSet()
	for _, rel := range sortedKeys(pkgs) {
		home := false
		for _, h := range decidingHomes {
			home = home || strings.HasPrefix(rel+"/", h)
		}
		if !home {
			continue
		}
		p := pkgs[rel]
		for _, name := range p.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range outcomeSettings(fset, f) {
				t.Errorf("%s: a view decides an outcome: decide it in compare (a compare.Check) or the judge (a finding), and word it here", s)
			}
		}
	}
}
