package docs_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The engine pages say, metric by metric, what slogate reads from a
// server's /metrics and what it does not (docs/vllm.md#metrics,
// docs/llamacpp.md#metrics). A page that calls a series "not read" while
// the engine's ParseMetrics reads it misleads whoever checks a figure;
// TestEngineMetricsClaims holds each page to its engine package.

// engineNames are the metric names (stems: metricStem) of namespace ns
// that the engine package in dir writes as Go string literals, outside its
// tests: "vllm:generation_tokens_total" → vllm:generation_tokens.
func engineNames(t *testing.T, dir, ns string) map[string]bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("%s: %v %v", dir, files, err)
	}
	names := map[string]bool{}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil && strings.HasPrefix(s, ns+":") && metricName.MatchString(s) {
					names[metricStem(s)] = true
				}
			}
			return true
		})
	}
	return names
}

var (
	metricName = regexp.MustCompile(`^[a-z]+:[a-z0-9_]+$`)
	// codeSpan is a Markdown code span's text.
	codeSpan = regexp.MustCompile("`([^`]+)`")
	// docMetric is a metric name as a page writes it: with its namespace,
	// bare (a row's later names), or "…_suffix" (the previous name's
	// start), labels allowed after it.
	docMetric = regexp.MustCompile(`^(?:[a-z]+:)?(?:…)?[a-z0-9_]+(?:\{[^}]*\})?$`)
)

// metricStem is a metric's name without labels and without a counter's
// _total, which some builds leave out (the engines accept both).
func metricStem(s string) string {
	s, _, _ = strings.Cut(s, "{")
	return strings.TrimSuffix(s, "_total")
}

// docNames are the metric names of one table row's first cell or one
// paragraph, with ns: added to a bare name and a "…_suffix" completed
// from the previous name (`vllm:spec_decode_num_drafts_total`,
// `…_num_draft_tokens_total`); one it cannot complete is left out.
func docNames(text, ns string) []string {
	var out []string
	prev := ""
	for _, m := range codeSpan.FindAllStringSubmatch(text, -1) {
		n := m[1]
		if !docMetric.MatchString(n) || (!strings.Contains(n, ":") && !strings.Contains(n, "_")) {
			continue
		}
		if rest, ok := strings.CutPrefix(n, "…"); ok {
			seg, _, _ := strings.Cut(strings.TrimPrefix(rest, "_"), "_")
			i := strings.LastIndex(prev, "_"+seg)
			if prev == "" || i < 0 {
				continue
			}
			n = prev[:i] + rest
		} else if !strings.Contains(n, ":") {
			n = ns + ":" + n
		}
		if !strings.HasPrefix(n, ns+":") {
			continue
		}
		prev = n
		out = append(out, metricStem(n))
	}
	return out
}

// TestEngineMetricsClaims: in each engine page's Metrics section, no table
// row that says "not read", and no name of the paragraph listing the
// series "slogate does not read", is a series the engine package reads;
// and every series the package reads is in a row that says what it is
// read as.
func TestEngineMetricsClaims(t *testing.T) {
	tests := []struct {
		name, doc, pkg, ns string
	}{
		{name: "vllm", doc: "docs/vllm.md", pkg: "internal/engine/vllm", ns: "vllm"},
		{name: "llamacpp", doc: "docs/llamacpp.md", pkg: "internal/engine/llamacpp", ns: "llamacpp"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			read := engineNames(t, tt.pkg, tt.ns)
			if len(read) < 5 {
				t.Fatalf("%s reads only %v: the scan missed its names", tt.pkg, read)
			}
			b, err := os.ReadFile(filepath.Join(root, tt.doc))
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(string(b), "\n")
			start := -1
			for i, l := range lines {
				if l == "## Metrics" {
					start = i
				} else if start >= 0 && strings.HasPrefix(l, "## ") {
					lines = lines[:i]
					break
				}
			}
			if start < 0 {
				t.Fatalf("%s has no ## Metrics section", tt.doc)
			}
			documented := map[string]bool{}
			rows := 0
			for i := start; i < len(lines); i++ {
				l := lines[i]
				switch {
				case strings.HasPrefix(l, "|"):
					// A cell's own "|" is written "\|".
					cells := strings.Split(strings.ReplaceAll(strings.Trim(l, "|"), `\|`, "¦"), "|")
					if len(cells) < 2 || strings.HasPrefix(strings.TrimSpace(cells[0]), "---") {
						continue
					}
					names := docNames(cells[0], tt.ns)
					notRead := strings.Contains(cells[len(cells)-1], "not read")
					rows += len(names)
					for _, n := range names {
						if notRead && read[n] {
							t.Errorf("%s:%d says %s is not read, but %s reads it", tt.doc, i+1, n, tt.pkg)
						}
						if !notRead {
							documented[n] = true
						}
					}
				case strings.Contains(l, "slogate does not read them"):
					// The paragraph that lists the series not read.
					j := i
					for j < len(lines) && strings.TrimSpace(lines[j]) != "" {
						j++
					}
					for _, n := range docNames(strings.Join(lines[i:j], " "), tt.ns) {
						if read[n] {
							t.Errorf("%s:%d lists %s among the series slogate does not read, but %s reads it", tt.doc, i+1, n, tt.pkg)
						}
					}
				}
			}
			if rows < 5 {
				t.Fatalf("%s's Metrics table names only %d series: the scan missed it", tt.doc, rows)
			}
			for n := range read {
				if !documented[n] {
					t.Errorf("%s reads %s, which no row of %s's Metrics table says it reads", tt.pkg, n, tt.doc)
				}
			}
		})
	}
}
