package docs_test

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// testOnlyVariables are the SLOGATE_ variables tests read that are no
// test tier a developer sets: each with why README does not list it.
var testOnlyVariables = map[string]string{
	"SLOGATE_REPORT_PRINT_STREAM": "internal/report's test binary re-running itself as a child",
}

var (
	// getenv is a test's read of an environment variable, by its name
	// (group 1) or by a constant (group 2).
	getenv = regexp.MustCompile(`os\.(?:Getenv|LookupEnv)\((?:"(SLOGATE_\w+)"|(\w+))\)`)
	// envConst is a constant naming a SLOGATE_ variable: name = "SLOGATE_X".
	envConst = regexp.MustCompile(`(\w+)\s*=\s*"(SLOGATE_\w+)"`)
)

// TestTestVariablesListed: every SLOGATE_ environment variable a test reads
// (a simulation, a long run, a real engine's path) is named in README.md's
// Development section, so that its list of test tiers stays whole.
func TestTestVariablesListed(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, dev, ok := strings.Cut(string(b), "\n## Development\n")
	if !ok {
		t.Fatal("README.md has no Development section")
	}
	read := map[string]string{} // variable → the first test file reading it
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); name != root && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		consts := map[string]string{}
		for _, m := range envConst.FindAllStringSubmatch(string(src), -1) {
			consts[m[1]] = m[2]
		}
		rel, _ := filepath.Rel(root, p)
		for _, m := range getenv.FindAllStringSubmatch(string(src), -1) {
			name := m[1]
			if name == "" {
				name = consts[m[2]]
			}
			if _, seen := read[name]; name != "" && !seen {
				read[name] = filepath.ToSlash(rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(read) < 8 {
		t.Fatalf("found only %d variables read by tests: the walk missed the tree", len(read))
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range read {
			if !yield(n) {
				return
			}
		}
	})
	for _, n := range names {
		if _, ok := testOnlyVariables[n]; ok {
			continue
		}
		if !regexp.MustCompile(`\b` + n + `\b`).MatchString(dev) {
			t.Errorf("%s reads %s, which README.md's Development section (### Tests) does not name: add it to the list of test tiers, saying what it runs", read[n], n)
		}
	}
}

// mdLink is a Markdown link's target: ](target) or ](target#anchor).
var mdLink = regexp.MustCompile(`\]\(([^)\s#]+)(?:#[^)\s]*)?\)`)

// TestLinksExist: every relative link of README.md and docs/*.md names a
// file or folder of the repository (TestAnchors checks the anchors).
func TestLinksExist(t *testing.T) {
	docs, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	files := append(docs, filepath.Join(root, "README.md"))
	checked := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, f)
		for i, line := range strings.Split(string(b), "\n") {
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				checked++
				p := path.Join(path.Dir(filepath.ToSlash(rel)), target)
				if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(p))); err != nil {
					t.Errorf("%s:%d links %s, which does not exist", filepath.ToSlash(rel), i+1, target)
				}
			}
		}
	}
	if checked < 20 {
		t.Errorf("only %d links checked: the scan missed the documents", checked)
	}
}
