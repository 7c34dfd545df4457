package layers

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// makeVar is one `NAME := value` line of the Makefile.
var makeVar = regexp.MustCompile(`(?m)^([A-Z_]+)\s*:=\s*(.*)$`)

// testDecl is a top-level test function's declaration.
var testDecl = regexp.MustCompile(`(?m)^func (Test\w*)\(t \*testing\.T\)`)

// TestSimulationsRunOnce: make test runs the tests the Makefile names in
// SIMULATIONS without -race, in SIMULATION_PKGS only, and skips them by
// name in its -race run over every package. A name that is not one test
// of those packages would be skipped everywhere and run nowhere (a test
// of another package with the same name, a renamed simulation), so each
// must be declared exactly once in the module, in one of them.
func TestSimulationsRunOnce(t *testing.T) {
	root := filepath.Join("..", "..")
	b, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{}
	for _, m := range makeVar.FindAllStringSubmatch(string(b), -1) {
		vars[m[1]] = strings.TrimSpace(m[2])
	}
	names, ok := strings.CutPrefix(vars["SIMULATIONS"], "^(")
	names, ok2 := strings.CutSuffix(names, ")$$")
	if !ok || !ok2 || names == "" {
		t.Fatalf("Makefile: SIMULATIONS = %q, want ^(TestA|TestB|…)$$", vars["SIMULATIONS"])
	}
	var pkgs []string
	for _, p := range strings.Fields(vars["SIMULATION_PKGS"]) {
		pkgs = append(pkgs, filepath.Clean(p))
	}
	if len(pkgs) == 0 {
		t.Fatal("Makefile: SIMULATION_PKGS is empty")
	}
	for _, want := range []string{"-run '$(SIMULATIONS)' $(SIMULATION_PKGS)", "-race -timeout 30m -skip '$(SIMULATIONS)' ./..."} {
		if !strings.Contains(string(b), want) {
			t.Errorf("Makefile's test target lacks %q", want)
		}
	}

	declared := map[string][]string{} // test name → the folders declaring it
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && path != root) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		for _, m := range testDecl.FindAllStringSubmatch(string(src), -1) {
			declared[m[1]] = append(declared[m[1]], rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range strings.Split(names, "|") {
		dirs := declared[name]
		switch {
		case len(dirs) != 1:
			t.Errorf("SIMULATIONS names %s, declared in %d places (%v): it must be one test, or make test skips it everywhere it is", name, len(dirs), dirs)
		case !slices.Contains(pkgs, dirs[0]):
			t.Errorf("SIMULATIONS names %s of %s, which is not in SIMULATION_PKGS %v: make test would run it nowhere", name, dirs[0], pkgs)
		}
	}
}
