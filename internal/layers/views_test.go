package layers

import (
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The rule of views (issue 28): a user-facing line is formatted in a view.
// Outside viewHomes, a non-test Go source of the module makes none of
// these calls, which are what "formatting a line for the user" is here:
//
//   - fmt.Fprint, Fprintf, Fprintln, Print, Printf, Println: formatted
//     text written to a stream;
//   - a call of a method or function named Log or Output (the console's
//     report.TestStream, the runner's observer) with a fmt.Sprint,
//     Sprintf or Sprintln call in its arguments: a console line built
//     where the event happens;
//   - a call of a function or method named logf or Logf: the same, by a
//     format string.
//
// What the rule allows, and why: the text of an error (fmt.Errorf,
// exit.*f), of an hcl.Diagnostic (Summary, Detail) and of a typed
// warning is a value that carries its words, as Go's errors and HCL's
// diagnostics do; the views decide where and how it is shown (file,
// line, snippet, colour, JSON). fmt.Sprintf that builds a name, a key or
// a cell's reason is not a line either. The rule is checked by go/ast,
// so it sees calls, not text.
var viewHomes = []struct{ path, why string }{
	{"internal/views/", "the views: one per command, human and JSON"},
	{"internal/report/", "the run's view: console, test2json, JUnit, md, html, csv (its package doc says why it stays here)"},
	{"cmd/slogate/", "the binary's wiring: its usage errors and the exit line, written once"},
	{"internal/sim/", "the simulators are servers, not slogate's console: HTTP bodies and the imitated engines' logs"},
	{"internal/vllmfake", "an httptest stand-in for vLLM's HTTP surface, for tests"},
	{"internal/gguf/genmodels", "a generator run by hand (go run), printing what it wrote"},
	{"internal/hfmodel/genmodels", "a generator run by hand (go run), printing what it wrote"},
	{"internal/surface/record", "a recorder run by hand (go run, scripts/record-vllm-surface.sh), printing what it wrote"},
}

// lineCalls are the calls in file f that format a user-facing line, as
// "line: call" strings.
func lineCalls(t *testing.T, fset *token.FileSet, f *ast.File) []string {
	t.Helper()
	var out []string
	name := func(call *ast.CallExpr) (pkg, fn string) {
		switch fun := call.Fun.(type) {
		case *ast.Ident:
			return "", fun.Name
		case *ast.SelectorExpr:
			if id, ok := fun.X.(*ast.Ident); ok {
				return id.Name, fun.Sel.Name
			}
			return "", fun.Sel.Name
		}
		return "", ""
	}
	isSprint := func(n ast.Node) bool {
		found := false
		ast.Inspect(n, func(n ast.Node) bool {
			if c, ok := n.(*ast.CallExpr); ok {
				if p, fn := name(c); p == "fmt" && strings.HasPrefix(fn, "Sprint") {
					found = true
				}
			}
			return !found
		})
		return found
	}
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		pkg, fn := name(call)
		hit := false
		switch {
		case pkg == "fmt" && slices.Contains([]string{"Fprint", "Fprintf", "Fprintln", "Print", "Printf", "Println"}, fn):
			hit = true
		case fn == "logf" || fn == "Logf":
			hit = true
		case fn == "Log" || fn == "Output":
			hit = slices.ContainsFunc(call.Args, func(a ast.Expr) bool { return isSprint(a) })
		}
		if hit {
			out = append(out, fset.Position(call.Pos()).String()+": "+strings.TrimPrefix(pkg+"."+fn, "."))
		}
		return true
	})
	return out
}

// TestLinesAreFormattedInViews: outside viewHomes, no non-test Go source
// formats a user-facing line (the rule above). The last of the files that
// did (the ratchet linesToMove, issue 28: the run's progress lines, the
// help texts, the run command's, bisect's and the signals' lines, assert's breach
// line) moved to the views; a file that formats one now fails here.
func TestLinesAreFormattedInViews(t *testing.T) {
	_, pkgs := listed(t)
	fset := token.NewFileSet()
	counts := map[string][]string{}
	for _, rel := range sortedKeys(pkgs) {
		if slices.ContainsFunc(viewHomes, func(h struct{ path, why string }) bool {
			return matches(h.path, rel) || strings.HasPrefix(rel+"/", h.path)
		}) {
			continue
		}
		p := pkgs[rel]
		for _, name := range p.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			if calls := lineCalls(t, fset, f); len(calls) > 0 {
				counts[rel+"/"+name] = calls
			}
		}
	}
	for _, file := range slices.Sorted(maps.Keys(counts)) {
		calls := counts[file]
		t.Errorf("%s formats user-facing lines outside the views (%d calls):\n\t%s\nrender them in internal/views (a view of a value this package returns)",
			file, len(calls), strings.Join(calls, "\n\t"))
	}
}
