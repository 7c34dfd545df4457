package layers

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The rule of typed warnings (issue 28, internal/warning): a test matches
// a warning's or a note's code, subject and figures, never its words, so
// that rewording a warning breaks no test and a wrong figure always does.
// warningTextMatches finds, with go/ast (it sees code, not types), the
// places in a test file that match a warning's text against an
// expectation:
//
//   - a text search whose haystack is a warning's text: strings.Contains,
//     ContainsAny, HasPrefix, HasSuffix, Index, LastIndex, Count, Cut,
//     EqualFold (and bytes' and a regexp's Match, MatchString,
//     FindString), the text being the first argument;
//   - == or != between a warning's text and anything that is not one
//     (but "": a text there or not);
//   - slices.Contains whose list is of warnings' texts;
//   - cmp.Diff, cmp.Equal, reflect.DeepEqual or slices.Equal over a
//     warning's text and something that is not one.
//
// A warning's text is the Summary or Detail field, or String(), of a
// warning value, warning.Strings of any, fmt.Sprint/Sprintf/Sprintln or
// strings.Join over one, a concatenation holding one, or a variable
// assigned one. A warning value is a field Warnings or Notes (indexed or
// not), a call of the warning package (warning.New, …) or of a function
// whose name ends in Warning or Warnings, a variable of a
// warning type (warning.Warning, []warning.Warning), or a variable
// assigned or ranged from one. Matching the console or a report against
// a recorded warning's own text (strings.Contains(stdout, w.String())) is
// a rendering check and allowed: the expectation there is the warning.
//
// What it cannot see: a warning returned by a function of another name,
// or held in a struct field of another name; a variable is tracked as the
// parser resolves it (its declaration), by name where it does not.
// Package warning's own tests are exempt: they test how String() joins a
// summary and a detail.
func warningTextMatches(fset *token.FileSet, f *ast.File) []string {
	var out []string
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		c := &textChecker{warnVars: map[any]bool{}, textVars: map[any]bool{}}
		c.params(fn.Type)
		c.track(fn.Body)
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			if why := c.violation(n); why != "" {
				out = append(out, fset.Position(n.Pos()).String()+": "+why)
			}
			return true
		})
	}
	return out
}

// textChecker holds, for one function, the names bound to warning values
// and to warning texts.
type textChecker struct {
	warnVars, textVars map[any]bool
}

// key is what names id's variable: the object the parser resolved it to
// (so that two variables of one name in different scopes are two), else
// its name.
func key(id *ast.Ident) any {
	if id.Obj != nil {
		return id.Obj
	}
	return id.Name
}

// isWarningType reports whether a type expression names a warning type.
func isWarningType(e ast.Expr) bool {
	switch t := e.(type) {
	case *ast.StarExpr:
		return isWarningType(t.X)
	case *ast.ArrayType:
		return isWarningType(t.Elt)
	case *ast.SelectorExpr:
		id, ok := t.X.(*ast.Ident)
		return ok && id.Name == "warning" && t.Sel.Name == "Warning"
	}
	return false
}

// params binds the function's parameters and closures' of warning types.
func (c *textChecker) params(ft *ast.FuncType) {
	if ft.Params == nil {
		return
	}
	for _, p := range ft.Params.List {
		if isWarningType(p.Type) {
			for _, n := range p.Names {
				c.warnVars[key(n)] = true
			}
		}
	}
}

// track binds, until nothing changes, the names assigned, declared or
// ranged from warning values and texts in body.
func (c *textChecker) track(body ast.Node) {
	for changed := true; changed; {
		changed = false
		bind := func(id ast.Expr, warn, text bool) {
			name, ok := id.(*ast.Ident)
			if !ok || name.Name == "_" {
				return
			}
			if k := key(name); warn && !c.warnVars[k] {
				c.warnVars[k], changed = true, true
			}
			if k := key(name); text && !c.textVars[k] {
				c.textVars[k], changed = true, true
			}
		}
		ast.Inspect(body, func(n ast.Node) bool {
			switch s := n.(type) {
			case *ast.FuncLit:
				c.params(s.Type)
			case *ast.AssignStmt:
				if len(s.Lhs) == len(s.Rhs) {
					for i, r := range s.Rhs {
						bind(s.Lhs[i], c.warning(r), c.text(r))
					}
				} else if len(s.Rhs) == 1 {
					// w, ok := p.SentReuseWarning(…): the first result.
					bind(s.Lhs[0], c.warning(s.Rhs[0]), false)
				}
			case *ast.ValueSpec:
				for i, n := range s.Names {
					w := s.Type != nil && isWarningType(s.Type)
					t := false
					if i < len(s.Values) {
						w = w || c.warning(s.Values[i])
						t = c.text(s.Values[i])
					}
					bind(n, w, t)
				}
			case *ast.RangeStmt:
				if s.Value != nil {
					bind(s.Value, c.warning(s.X), c.text(s.X))
				}
			}
			return true
		})
	}
}

// warning reports whether e is a warning value (or a list of them).
func (c *textChecker) warning(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.ParenExpr:
		return c.warning(x.X)
	case *ast.Ident:
		return c.warnVars[key(x)]
	case *ast.SelectorExpr:
		return x.Sel.Name == "Warnings" || x.Sel.Name == "Notes"
	case *ast.IndexExpr:
		return c.warning(x.X)
	case *ast.SliceExpr:
		return c.warning(x.X)
	case *ast.StarExpr:
		return c.warning(x.X)
	case *ast.UnaryExpr:
		return c.warning(x.X)
	case *ast.CompositeLit:
		return x.Type != nil && isWarningType(x.Type)
	case *ast.CallExpr:
		if name := funcName(x); strings.HasSuffix(name, "Warning") || strings.HasSuffix(name, "Warnings") {
			return true // SentReuseWarning, UnexplainedWarnings, …
		}
		if sel, ok := x.Fun.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == "warning" && sel.Sel.Name != "Strings" {
				return true // warning.New, warning.Textless, …
			}
			if sel.Sel.Name == "About" || sel.Sel.Name == "Textless" {
				return c.warning(sel.X)
			}
		}
	}
	return false
}

// funcName is the name of the function or method call x calls.
func funcName(x *ast.CallExpr) string {
	switch f := x.Fun.(type) {
	case *ast.Ident:
		return f.Name
	case *ast.SelectorExpr:
		return f.Sel.Name
	}
	return ""
}

// text reports whether e is a warning's text (or a list of texts).
func (c *textChecker) text(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.ParenExpr:
		return c.text(x.X)
	case *ast.Ident:
		return c.textVars[key(x)]
	case *ast.SelectorExpr:
		return (x.Sel.Name == "Summary" || x.Sel.Name == "Detail") && c.warning(x.X)
	case *ast.IndexExpr:
		return c.text(x.X)
	case *ast.BinaryExpr:
		return x.Op == token.ADD && (c.text(x.X) || c.text(x.Y))
	case *ast.CompositeLit:
		return slices.ContainsFunc(x.Elts, c.text)
	case *ast.CallExpr:
		sel, ok := x.Fun.(*ast.SelectorExpr)
		if !ok {
			return false
		}
		if sel.Sel.Name == "String" && len(x.Args) == 0 {
			return c.warning(sel.X)
		}
		id, ok := sel.X.(*ast.Ident)
		if !ok {
			return false
		}
		switch {
		case id.Name == "warning" && sel.Sel.Name == "Strings":
			return true
		case id.Name == "fmt" && strings.HasPrefix(sel.Sel.Name, "Sprint"),
			id.Name == "strings" && sel.Sel.Name == "Join":
			return slices.ContainsFunc(x.Args, func(a ast.Expr) bool { return c.warning(a) || c.text(a) })
		}
	}
	return false
}

// isEmpty reports whether e is the literal "": a text compared with it is
// checked for presence, not matched.
func isEmpty(e ast.Expr) bool {
	l, ok := e.(*ast.BasicLit)
	return ok && l.Kind == token.STRING && (l.Value == `""` || l.Value == "``")
}

// violation says how n matches a warning's text against an expectation,
// or "" when it does not.
func (c *textChecker) violation(n ast.Node) string {
	switch x := n.(type) {
	case *ast.BinaryExpr:
		if (x.Op == token.EQL || x.Op == token.NEQ) && c.text(x.X) != c.text(x.Y) && !isEmpty(x.X) && !isEmpty(x.Y) {
			return "a warning's text compared with " + x.Op.String()
		}
	case *ast.CallExpr:
		sel, ok := x.Fun.(*ast.SelectorExpr)
		if !ok || len(x.Args) == 0 {
			return ""
		}
		pkg := ""
		if id, ok := sel.X.(*ast.Ident); ok {
			pkg = id.Name
		}
		fn := sel.Sel.Name
		searches := []string{"Contains", "ContainsAny", "HasPrefix", "HasSuffix", "Index", "LastIndex", "Count", "Cut", "EqualFold"}
		switch {
		case (pkg == "strings" || pkg == "bytes") && slices.Contains(searches, fn) && c.text(x.Args[0]),
			pkg == "slices" && fn == "Contains" && c.text(x.Args[0]):
			return "a warning's text searched with " + pkg + "." + fn
		case slices.Contains([]string{"MatchString", "FindString", "FindStringSubmatch"}, fn) && slices.ContainsFunc(x.Args, c.text):
			return "a warning's text matched with " + fn
		case (pkg == "cmp" && (fn == "Diff" || fn == "Equal")) || (pkg == "reflect" && fn == "DeepEqual") || (pkg == "slices" && fn == "Equal"):
			if len(x.Args) >= 2 && c.text(x.Args[0]) != c.text(x.Args[1]) {
				return "a warning's text compared with " + pkg + "." + fn
			}
		}
	}
	return ""
}

// TestNoTestMatchesWarningText: no test file of the module matches a
// warning's or a note's text (warningTextMatches), but package warning's
// own, which test how the text is made.
func TestNoTestMatchesWarningText(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if name := d.Name(); rel != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") || filepath.ToSlash(filepath.Dir(rel)) == "internal/warning" {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		files++
		for _, v := range warningTextMatches(fset, f) {
			t.Errorf("%s\n\tmatch the warning's code, subject and figures instead (warning.Textless, Warning.Figure)", v)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("checked %d test files: the walk missed the module's tests", files)
	}
}

// TestWarningTextMatches: the rule finds a warning's text matched against
// an expectation however it is reached, and lets the matching of codes
// and figures, of other values' text and of output against a warning's own
// text pass.
func TestWarningTextMatches(t *testing.T) {
	tests := []struct {
		name string
		body string
		want int // violations
	}{
		{name: "Contains over a cell's warning's summary", body: `if strings.Contains(c.Warnings[0].Summary, "restart gaps") {}`, want: 1},
		{name: "a note's String() through a range variable", body: `for _, n := range c.Notes { if strings.HasPrefix(n.String(), "55.2") {} }`, want: 1},
		{name: "a variable assigned a warning's text", body: `w := c.Warnings[i]; said := w.String(); if strings.Contains(said, want) {}`, want: 1},
		{name: "warning.Strings compared with cmp.Diff", body: `if d := cmp.Diff(tc.want, warning.Strings(got)); d != "" {}`, want: 1},
		{name: "a joined list of notes", body: `if note := strings.Join(warning.Strings(notes), "\n"); !strings.Contains(note, tc.wantNote) {}`, want: 1},
		{name: "fmt.Sprint over the warnings", body: `if strings.Contains(fmt.Sprint(r.Warnings), "kv") {}`, want: 1},
		{name: "== with a literal", body: `if res.Warnings[0].Detail == "server_total_tps not measured" {}`, want: 1},
		{name: "a parameter of a warning type", body: `f := func(w warning.Warning) bool { return strings.Contains(w.Summary, "x") }; _ = f`, want: 1},
		{name: "a declared warning", body: `var w warning.Warning; if strings.HasSuffix(w.Detail, ")") {}`, want: 1},
		{name: "a regexp over a warning's text", body: `w := res.Warnings[0]; if re.MatchString(w.String()) {}`, want: 1},
		{name: "a warning a function returns", body: `w, ok := p.SentReuseWarning(11, 3); if ok && w.String() != tt.want {}`, want: 1},
		{name: "code and figures", body: `w := c.Warnings[0]; if w.Code != warning.SlowScrape || w.Figures[warning.FigMeanMs] != 10.1 {}`},
		{name: "textless warnings compared", body: `if d := cmp.Diff(warning.Textless(want), warning.Textless(c.Notes)); d != "" {}`},
		{name: "the console against a recorded warning's text", body: `said := res.Warnings[i].String(); if !strings.Contains(r.Stdout, said) {}`},
		{name: "a list of warnings' texts against any other list (write it as Contains(output, w.String()))", body: `if !slices.Equal(lines, warning.Strings(ws)) {}`, want: 1},
		{name: "a list of warnings' texts searched", body: `if slices.Contains(warning.Strings(c.Warnings), "kv low") {}`, want: 1},
		{name: "a view's lines searched for a warning's text", body: `n := c.Notes[0]; if slices.Contains(lines, "  "+n.String()) {}`},
		{name: "two warnings' texts compared with each other", body: `if a.Warnings[0].String() == b.Warnings[0].String() {}`},
		{name: "one name in two scopes", body: `w := c.Warnings[0]; for _, want := range []string{"a"} { if c.Prompts != want {} }; for _, want := range []string{w.String()} { _ = want }`},
		{name: "a text there or not", body: `w := c.Warnings[0]; said := w.String(); if said != "" {}`},
		{name: "an old file's texts against themselves", body: `want := []warning.Warning{}; if got := warning.Strings(r.Warnings); !cmp.Equal(got, []string{want[0].Summary}) {}`},
		{name: "an HCL diagnostic's detail", body: `if !strings.Contains(diags[0].Detail, "Matrix") {}`},
		{name: "a verdict's message", body: `if !strings.Contains(v.Message, "regressed") {}`},
		{name: "a method named Notes", body: `if !strings.Contains(strings.Join(v.Notes(), "\n"), "baseline:") {}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "package p\n\nfunc f() {\n" + tt.body + "\n}\n"
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, "x_test.go", src, 0)
			if err != nil {
				t.Fatal(err)
			}
			if got := warningTextMatches(fset, f); len(got) != tt.want {
				t.Errorf("violations %q, want %d", got, tt.want)
			}
		})
	}
}
