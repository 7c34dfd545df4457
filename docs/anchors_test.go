// Package docs_test checks the links into the repository's own documents:
// every reference to a section (docs/method.md#steady-state-gate,
// README.md#development, vllm.md#metrics inside docs/, (#static-checks)
// inside a document), in code comments, docs, examples and the README,
// must name a heading that exists, by GitHub's anchor rules.
package docs_test

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// root is the repository, seen from docs/.
const root = ".."

// fileRef is a reference to a section of a Markdown file: an optional URL
// prefix (links to other repositories are not checked), the file and the
// anchor.
var fileRef = regexp.MustCompile(`(https?://[^\s)"'>]*)?((?:\.\./|\./)?[A-Za-z0-9_./-]*\.md)#([A-Za-z0-9_-]+)`)

// pageRef is a Markdown link to a section of the same document: ](#anchor).
var pageRef = regexp.MustCompile(`\]\(#([A-Za-z0-9_-]+)\)`)

// scanned are the kinds of file whose references are checked.
var scanned = []string{".go", ".md", ".hcl", ".yaml", ".yml", ".sh", ".tmpl", "Makefile", "Dockerfile"}

func TestAnchors(t *testing.T) {
	anchors := map[string]map[string]bool{} // file (slash path from root) → its anchors
	anchorsOf := func(file string) (map[string]bool, error) {
		if a, ok := anchors[file]; ok {
			return a, nil
		}
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(file)))
		if err != nil {
			return nil, err
		}
		anchors[file] = headingAnchors(string(b))
		return anchors[file], nil
	}
	checked := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); name != root && (strings.HasPrefix(name, ".") || name == "bin" || name == "slogate-out") {
				return filepath.SkipDir
			}
			return nil
		}
		if !isScanned(d.Name()) {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if rel == "docs/anchors_test.go" {
			return nil // its examples are not references
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			at := fmt.Sprintf("%s:%d", rel, i+1)
			for _, m := range fileRef.FindAllStringSubmatch(line, -1) {
				if m[1] != "" {
					continue // another site's page
				}
				target, ok := resolve(rel, m[2])
				if !ok {
					continue // not one of the repository's documents (e.g. a file in a vLLM checkout)
				}
				a, err := anchorsOf(target)
				if err != nil {
					t.Errorf("%s: %s#%s: the file does not exist", at, m[2], m[3])
					continue
				}
				checked++
				if !a[m[3]] {
					t.Errorf("%s: %s#%s: %s has no heading with that anchor", at, m[2], m[3], target)
				}
			}
			if strings.HasSuffix(rel, ".md") {
				for _, m := range pageRef.FindAllStringSubmatch(line, -1) {
					a, _ := anchorsOf(rel)
					checked++
					if !a[m[1]] {
						t.Errorf("%s: (#%s): %s has no heading with that anchor", at, m[1], rel)
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d references checked", checked)
	if checked < 20 {
		t.Errorf("only %d references checked: the scan missed the repository's files", checked)
	}
}

func isScanned(name string) bool {
	for _, s := range scanned {
		if name == s || strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}

// resolve finds the repository document a reference in file from names:
// relative to file's folder in a Markdown file ("vllm.md" in docs/,
// "../README.md"), else from the root ("docs/method.md", "README.md"); a
// bare name elsewhere ("method.md" in a Go comment) is docs/'s. It reports
// false for a path that is no document of the repository (another
// project's file).
func resolve(from, ref string) (string, bool) {
	isDoc := func(c string) bool { return c == "README.md" || path.Dir(c) == "docs" }
	if strings.HasSuffix(from, ".md") {
		if c := path.Join(path.Dir(from), ref); isDoc(c) {
			return c, true
		}
	}
	if c := path.Clean(ref); isDoc(c) {
		return c, true
	}
	if !strings.Contains(ref, "/") {
		return "docs/" + ref, true
	}
	return "", false
}

var (
	heading    = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	linkURL    = regexp.MustCompile(`\]\([^)]*\)`)
	htmlAnchor = regexp.MustCompile(`<a\s+(?:name|id)="([^"]+)"`)
)

// headingAnchors are the anchors GitHub gives the headings of a Markdown
// document (outside fenced code blocks), plus explicit <a name|id> ones.
func headingAnchors(doc string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		for _, m := range htmlAnchor.FindAllStringSubmatch(line, -1) {
			out[m[1]] = true
		}
		m := heading.FindStringSubmatch(line)
		if fenced || m == nil {
			continue
		}
		s := slug(m[1])
		if n := seen[s]; n > 0 {
			out[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}

// slug is GitHub's anchor for a heading's text: the text of its links,
// lower-cased, spaces turned into '-', every other character but letters,
// digits, '-' and '_' dropped.
func slug(h string) string {
	h = linkURL.ReplaceAllString(h, "]")
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case unicode.IsLetter(r), unicode.IsDigit(r), r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

func TestSlug(t *testing.T) {
	tests := []struct{ name, heading, want string }{
		{"numbered", "5. What each exit code means", "5-what-each-exit-code-means"},
		{"code and punctuation", "`workload`: prompts (and sampling)", "workload-prompts-and-sampling"},
		{"link text kept, URL dropped", "The [KV cache](https://example.com/kv) check", "the-kv-cache-check"},
		{"hyphens and underscores kept", "steady-state gate_v2", "steady-state-gate_v2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := slug(tt.heading); got != tt.want {
				t.Errorf("slug(%q) = %q, want %q", tt.heading, got, tt.want)
			}
		})
	}
}

// TestArchitectureListsEveryPackage: docs/architecture.md names every
// folder of Go code at the root and under internal/ ("e2e/",
// "internal/exit/"), so that it cannot fall behind the tree. (README.md's
// Development section draws only the top-level shape and links it.)
func TestArchitectureListsEveryPackage(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	dev := string(b)
	var dirs []string
	for _, parent := range []string{".", "internal"} {
		entries, err := os.ReadDir(filepath.Join(root, parent))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if !e.IsDir() || strings.HasPrefix(e.Name(), ".") || e.Name() == "internal" {
				continue
			}
			if gofiles, _ := filepath.Glob(filepath.Join(root, parent, e.Name(), "*.go")); len(gofiles) > 0 {
				dirs = append(dirs, path.Join(parent, e.Name())+"/")
			}
		}
	}
	if len(dirs) < 10 {
		t.Fatalf("found only %v: the walk missed the tree", dirs)
	}
	for _, d := range dirs {
		if !regexp.MustCompile(`(?m)(^|\s)` + regexp.QuoteMeta(d) + `\s`).MatchString(dev) {
			t.Errorf("docs/architecture.md does not describe %s: add it to the drawing (and to layers in internal/layers/layers_test.go)", d)
		}
	}
}
