package layers

import (
	"go/ast"
	"go/types"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

// verdictType is the record every verdict is kept in.
const verdictType = "github.com/slogate/slogate/internal/result.Verdict"

// judgedFields are the fields of a verdict that say how it came out; only
// package judge sets them.
var judgedFields = map[string]bool{"Outcome": true, "Infra": true, "Finding": true}

// isVerdict reports whether t is result.Verdict or a pointer to one.
func isVerdict(t types.Type) bool {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	return t != nil && t.String() == verdictType
}

// verdictSettings are the places in a package's files that set a
// verdict's Outcome, Infra or Finding: an assignment to the field, or a
// key of a result.Verdict literal.
func verdictSettings(p *packages.Package) []string {
	var out []string
	add := func(n ast.Node, field string) {
		out = append(out, p.Fset.Position(n.Pos()).String()+": "+field)
	}
	for _, f := range p.Syntax {
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.AssignStmt:
				for _, lhs := range x.Lhs {
					if sel, ok := lhs.(*ast.SelectorExpr); ok && judgedFields[sel.Sel.Name] && isVerdict(p.TypesInfo.TypeOf(sel.X)) {
						add(x, sel.Sel.Name)
					}
				}
			case *ast.CompositeLit:
				if !isVerdict(p.TypesInfo.TypeOf(x)) {
					return true
				}
				for _, e := range x.Elts {
					if kv, ok := e.(*ast.KeyValueExpr); ok {
						if k, ok := kv.Key.(*ast.Ident); ok && judgedFields[k.Name] {
							add(kv, k.Name)
						}
					}
				}
			}
			return true
		})
	}
	return out
}

// TestOnlyTheJudgeSetsVerdictOutcomes: a verdict's Outcome, Infra and
// Finding are set in package judge only (its table for a spec's rules,
// compare's decisions for comparisons); assert hands over findings
// (judge.Rule), the views word verdicts and never decide them, and no
// command makes one of its own (docs/architecture.md#one-judge).
func TestOnlyTheJudgeSetsVerdictOutcomes(t *testing.T) {
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo, Dir: "../.."}
	pkgs, err := packages.Load(cfg, "./...")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, p := range pkgs {
		if len(p.Errors) > 0 {
			t.Fatalf("%s: %v", p.PkgPath, p.Errors)
		}
		if strings.HasSuffix(p.PkgPath, "/internal/judge") {
			continue
		}
		checked++
		for _, s := range verdictSettings(p) {
			t.Errorf("%s: sets a verdict's outcome outside package judge: hand the judge a finding (judge.Rule) or a comparison (judge.Baseline)", s)
		}
	}
	if checked < 50 {
		t.Fatalf("checked %d packages: the module did not load", checked)
	}
}
