// Package layers holds the test of slogate's import layering: the packages
// are declared in layers, top to bottom, and a package imports only
// packages of the layers below its own (never one of its own layer or
// above), plus the rules below that name the arrows the reshape removed.
// The imports are go list's, so the test sees what the compiler sees.
// docs/architecture.md draws the same layers (TestArchitectureDrawsLayers).
package layers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// layers are slogate's packages from the top (the binary) to the bottom
// (the vocabulary, then the leaf utilities), as paths below the module.
// A package imports only packages of later layers; packages of one layer
// are independent of each other. A new package goes into the layer that
// its imports and importers leave it.
var layers = [][]string{
	// The binary, the generator of the simulator's profiles, and those of
	// the llama.cpp and vLLM tests' models.
	// The recorder of a server's surface (scripts/record-vllm-surface.sh).
	{"cmd/slogate", "internal/sim/internal/genprofiles", "internal/gguf/genmodels", "internal/hfmodel/genmodels",
		"internal/surface/record"},
	// What each command does, and the commands' plumbing.
	// `slogate bisect`: specs loaded per build, each measured by the runner;
	// `slogate interleave`: two builds booted alternately, the same way.
	{"internal/command/bisect", "internal/command/interleave"},
	{"internal/command/run", "internal/command/merge", "internal/command/specload", "internal/command/codify", "internal/sim", "internal/cli"},
	// The commands' views: of a comparison (text, Markdown, JSON, the words of verdicts),
	// of a plan (text, JSON) and of codify's blocks (HCL).
	{"internal/views", "internal/views/planview", "internal/views/codifyview", "internal/views/helpview"},
	// Running a plan's steps; findings from the rules; rendering the reports.
	{"internal/runner", "internal/assert", "internal/report", "internal/bisection"},
	// The verdicts: the one package that sets their outcomes, from the
	// rules' findings and the comparisons' decisions.
	{"internal/judge"},
	// Measuring one cell against a client; comparing two sets of results.
	{"internal/measure", "internal/compare"},
	// A server's lifecycle: launch, readiness, stop, discovery, containers;
	// the requests a workload sends: prompts, datasets read, schedules.
	{"internal/lifecycle", "internal/requests"},
	// What a run tells as it goes, as values: the runner's, the meter's
	// and the launch's notes, and the observer that hears them.
	{"internal/event"},
	// A spec's cells in order, -run filtering, estimates; which of a
	// cell's warnings its record explains by load (for tests).
	{"internal/plan", "internal/result/resulttest"},
	// The spec language; the measured data and its file IO (results.json).
	// Neither imports the other.
	{"internal/spec", "internal/result"},
	// The one list of engines (registry.For(name)), which the layers above
	// call; the engine packages, one per engine, independent of each other
	// (a new engine is one more package here); the interface and the
	// engine-neutral types they implement and take. They sit below spec,
	// so they render from neutral inputs (engine.Launch), never spec.Server.
	{"internal/engine/registry"},
	{"internal/engine/vllm", "internal/engine/sglang", "internal/engine/llamacpp", "internal/engine/enginetest"},
	{"internal/engine"},
	// The rate search's decisions: bounds, probes, bisection, capacity
	// lost (pure: the runner and compare call it).
	{"internal/ratesearch"},
	// The metric table.
	{"internal/metric"},
	// The vocabulary: cell references, statuses, outcomes, test names;
	// the signals as values (interrupt.Signal), which the views word.
	{"internal/vocab", "internal/interrupt"},
	// Leaf utilities any layer may use; they import no other package of
	// slogate.
	{"internal/exit", "internal/numfmt", "internal/suggest", "internal/shellcmd", "internal/views/diagjson",
		"internal/cmdlines", "internal/vllmfake", "internal/promread", "internal/measure/sse", "internal/spec/spectest",
		"internal/gguf", "internal/hfmodel", "internal/workload", "internal/warning", "internal/surface",
		"internal/hostenv", "internal/stats"},
}

// forbidden are the arrows the layering above forbids that the reshape
// removed (issue 21), each stated on its own so that it stands even if the
// layers are redrawn: from must not depend on to, directly or through
// another package. A prefix ending in "/" stands for that package and every
// package below it.
var forbidden = []struct{ from, to, why string }{
	{"internal/spec", "internal/result", "the language must not depend on the measured data, which does file IO"},
	{"internal/cli/", "internal/assert", "the commands' plumbing, not application logic"},
	{"internal/cli/", "internal/report", "the commands' plumbing, not application logic"},
	{"internal/report", "internal/spec", "reports render results, not the language"},
	{"internal/runner", "internal/assert", "the search's objective is a function the run command builds from assert"},
	{"internal/measure", "internal/plan", "measuring one cell knows nothing of plans"},
	{"internal/measure", "internal/runner", "measuring one cell knows nothing of plans"},
	{"internal/engine/", "internal/spec", "an engine renders and diagnoses from neutral inputs (engine.Launch): spec calls the engines, never the reverse"},
	{"internal/engine/", "internal/lifecycle", "an engine reads a server through engine-neutral inputs, not lifecycle's client"},
	{"internal/spec", "internal/requests", "the language reads no dataset: specload passes requests.ReadDataset in spec.LoadOptions"},
	{"internal/result", "internal/requests", "the measured data keeps the workload's record, a value of package workload"},
	{"internal/views/", "internal/cli/", "the commands' plumbing uses the views (helpview), never the reverse"},
	{"internal/result", "internal/engine/", "results.json's model knows no engine (and so no HCL): an engine's title is passed in where words are made"},
	{"internal/report", "internal/requests", "a report reads the workload's record (workload.Record tells the built-in article by its hashes), it builds no requests"},
	{"internal/views/", "internal/runner", "the run view words events (package event), it does not reach into the runner"},
	{"internal/views/", "internal/measure", "the run view words events (package event), it does not reach into the meter"},
	{"internal/views/", "internal/lifecycle", "the run view words events (package event), it does not reach into the launch"},
}

// forbiddenImports are arrows forbidden as direct imports only: the
// dependency may pass through another package.
var forbiddenImports = []struct{ from, to, why string }{
	{"internal/assert", "internal/compare", "a spec's rules read this run alone (the interval they share is stats.Wilson); the judge, below assert, makes the verdicts of comparisons"},
}

// noFileIO are the packages that must do no file IO (the vocabulary, the
// metric table, the workload's values and the warnings): they import none
// of these standard packages directly.
var noFileIO = struct {
	packages []string
	imports  []string
}{
	packages: []string{"internal/vocab", "internal/metric", "internal/workload", "internal/warning"},
	imports:  []string{"os", "os/exec", "io", "io/fs", "io/ioutil", "bufio", "embed", "net", "net/http", "syscall"},
}

// pkg is what go list says of one package.
type pkg struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Imports    []string
}

// listed runs go list on the module once: its path and its packages with
// Go files (test-only packages such as e2e have no imports to check), by
// path below the module.
func listed(t *testing.T) (module string, pkgs map[string]pkg) {
	t.Helper()
	root := filepath.Join("..", "..")
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Path}}").Output()
	if err != nil {
		t.Fatalf("go list -m: %v", err)
	}
	module = strings.TrimSpace(string(out))
	cmd := exec.Command("go", "list", "-json", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err = cmd.Output()
	if err != nil {
		t.Fatalf("go list -json ./...: %v\n%s", err, stderr.String())
	}
	sources(t, root)
	pkgs = map[string]pkg{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decoding go list -json: %v", err)
		}
		if len(p.GoFiles) == 0 {
			continue
		}
		rel, ok := strings.CutPrefix(p.ImportPath, module+"/")
		if !ok {
			t.Fatalf("%s is not below module %s", p.ImportPath, module)
		}
		var own []string
		for _, imp := range p.Imports {
			if r, ok := strings.CutPrefix(imp, module+"/"); ok {
				own = append(own, r)
			}
		}
		p.Imports = own // the module's packages only
		pkgs[rel] = p
	}
	if len(pkgs) < 20 {
		t.Fatalf("go list found only %d packages: the listing missed the tree", len(pkgs))
	}
	return module, pkgs
}

// sources walks the module's folders and stats each Go file, so that go
// test's cache, which knows only the files a test opens or stats itself
// (not go list's), reruns these tests when an import changes.
func sources(t *testing.T, root string) {
	t.Helper()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && strings.HasPrefix(d.Name(), ".") && p != root:
			return filepath.SkipDir
		case !d.IsDir() && strings.HasSuffix(p, ".go"):
			_, err = os.Stat(p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// stdImports are a package's standard-library imports as go list gives them.
func stdImports(t *testing.T, module, rel string) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, module+"/"+rel)
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s: %v", rel, err)
	}
	var std []string
	for _, imp := range strings.Fields(string(out)) {
		if !strings.Contains(strings.Split(imp, "/")[0], ".") {
			std = append(std, imp)
		}
	}
	return std
}

// layerOf maps each declared package to its layer's index (0 is the top).
func layerOf(t *testing.T) map[string]int {
	t.Helper()
	at := map[string]int{}
	for i, l := range layers {
		for _, p := range l {
			if j, dup := at[p]; dup {
				t.Fatalf("%s is declared in layers %d and %d", p, j, i)
			}
			at[p] = i
		}
	}
	return at
}

// TestLayering: every package is in a layer, and imports only packages of
// the layers below its own.
func TestLayering(t *testing.T) {
	_, pkgs := listed(t)
	at := layerOf(t)
	for _, rel := range sortedKeys(pkgs) {
		li, ok := at[rel]
		if !ok {
			t.Errorf("package %s is in no layer: add it to layers in internal/layers/layers_test.go (and to docs/architecture.md's drawing)", rel)
			continue
		}
		for _, imp := range pkgs[rel].Imports {
			lj, ok := at[imp]
			switch {
			case !ok:
				// reported for imp itself
			case lj == li:
				t.Errorf("%s imports %s of its own layer %v: packages of one layer are independent", rel, imp, layers[li])
			case lj < li:
				t.Errorf("%s (layer %d) imports %s, of layer %d above it %v", rel, li, imp, lj, layers[lj])
			}
		}
	}
	for p := range at {
		if _, ok := pkgs[p]; !ok {
			t.Errorf("layers declare %s, which go list does not list: remove it", p)
		}
	}
}

// TestForbiddenArrows: none of the arrows the reshape removed is back,
// directly or through another package.
func TestForbiddenArrows(t *testing.T) {
	_, pkgs := listed(t)
	for _, rule := range forbidden {
		for _, rel := range sortedKeys(pkgs) {
			if !matches(rule.from, rel) {
				continue
			}
			for _, dep := range deps(pkgs, rel) {
				if matches(rule.to, dep) {
					t.Errorf("%s depends on %s (%s): %s must not depend on %s: %s",
						rel, dep, strings.Join(path(pkgs, rel, dep), " → "), rule.from, rule.to, rule.why)
				}
			}
		}
	}
}

// TestForbiddenImports: none of forbiddenImports is a direct import.
func TestForbiddenImports(t *testing.T) {
	_, pkgs := listed(t)
	for _, rule := range forbiddenImports {
		for _, rel := range sortedKeys(pkgs) {
			if !matches(rule.from, rel) {
				continue
			}
			for _, imp := range pkgs[rel].Imports {
				if matches(rule.to, imp) {
					t.Errorf("%s imports %s: %s must not import %s: %s", rel, imp, rule.from, rule.to, rule.why)
				}
			}
		}
	}
}

// TestVocabularyDoesNoFileIO: the vocabulary, the metric table and the
// workload's values import no package of slogate but the vocabulary, and
// no standard package that does file IO.
func TestVocabularyDoesNoFileIO(t *testing.T) {
	module, pkgs := listed(t)
	for _, rel := range noFileIO.packages {
		for _, imp := range pkgs[rel].Imports {
			if imp != "internal/vocab" {
				t.Errorf("%s imports %s: the vocabulary, the metric table and the workload's values depend on nothing but the vocabulary", rel, imp)
			}
		}
		for _, imp := range stdImports(t, module, rel) {
			if slices.Contains(noFileIO.imports, imp) {
				t.Errorf("%s imports %s: the vocabulary, the metric table and the workload's values do no file IO", rel, imp)
			}
		}
	}
}

// specIOExceptions are the packages spec depends on that may do IO, each
// with why: the engine packages (spec renders and checks launches through
// them) also read a running server's log and /metrics for lifecycle, and
// promread parses /metrics text from an io.Reader.
var specIOExceptions = []struct{ pkg, why string }{
	{"internal/engine/", "an engine's package also reads its server (log lines, /metrics) for lifecycle"},
	{"internal/promread", "parses Prometheus text from an io.Reader"},
}

// TestSpecReadsOnlySpecFiles: no package of slogate that the spec language
// depends on, directly or not, imports a standard package that does file
// IO, but specIOExceptions: spec reads its own files (and file()'s), and a
// dataset only through the reader spec.LoadOptions hands it.
func TestSpecReadsOnlySpecFiles(t *testing.T) {
	module, pkgs := listed(t)
	const from = "internal/spec"
	d := deps(pkgs, from)
	if len(d) == 0 {
		t.Fatalf("%s depends on no package of slogate: the listing missed its imports", from)
	}
	for _, dep := range d {
		if slices.ContainsFunc(specIOExceptions, func(e struct{ pkg, why string }) bool { return matches(e.pkg, dep) }) {
			continue
		}
		for _, imp := range stdImports(t, module, dep) {
			if slices.Contains(noFileIO.imports, imp) {
				t.Errorf("%s depends on %s (%s), which imports %s: spec's imports read no file but the spec's own",
					from, dep, strings.Join(path(pkgs, from, dep), " → "), imp)
			}
		}
	}
}

// engineHome is the folder of the engine packages: internal/engine/NAME
// is engine NAME's package, but for engineSupport.
const engineHome = "internal/engine/"

// engineSupport are the packages under engineHome that are no engine.
var engineSupport = []string{"internal/engine/registry", "internal/engine/enginetest"}

// engineNameExceptions may name an engine's metrics outside its package,
// each with why; a prefix ending in "/" stands for the package and those
// below it, a path ending in ".go" for one file.
var engineNameExceptions = []struct{ path, why string }{
	{"internal/sim/", "the simulators imitate the engines, metric names included: they are not knowledge slogate measures with"},
	{"internal/vllmfake", "an httptest stand-in for vLLM's HTTP surface, for tests"},
	{"internal/surface/", "records vLLM's surface as it is, metric names included, to hold the simulator against it: not knowledge slogate measures with"},
	{"internal/metric/metric.go", "the metric table's docs define server_total_tps and prefix_cache_hit_rate by vLLM's counters, as docs/method.md does (user-facing text)"},
}

// TestEngineNamesStayInTheirPackages: no non-test Go source outside an
// engine's package (internal/engine/NAME) names that engine's metrics (the
// prefix "NAME:"), comments included, but engineNameExceptions: what an
// engine exposes is read in its package into engine-neutral figures
// (README's "How to add an engine").
func TestEngineNamesStayInTheirPackages(t *testing.T) {
	_, pkgs := listed(t)
	var engines []string
	for _, rel := range sortedKeys(pkgs) {
		if name, ok := strings.CutPrefix(rel, engineHome); ok && !strings.Contains(name, "/") && !slices.Contains(engineSupport, rel) {
			engines = append(engines, name)
		}
	}
	if len(engines) < 2 {
		t.Fatalf("engines %q: the listing missed internal/engine's packages", engines)
	}
	metric := regexp.MustCompile(`\b(` + strings.Join(engines, "|") + `):[a-z_]`)
	for _, rel := range sortedKeys(pkgs) {
		p := pkgs[rel]
		for _, f := range p.GoFiles {
			file := rel + "/" + f
			if slices.ContainsFunc(engineNameExceptions, func(e struct{ path, why string }) bool {
				return file == e.path || matches(e.path, rel)
			}) {
				continue
			}
			b, err := os.ReadFile(filepath.Join(p.Dir, f))
			if err != nil {
				t.Fatal(err)
			}
			for i, line := range strings.Split(string(b), "\n") {
				for _, m := range metric.FindAllStringSubmatch(line, -1) {
					if rel != engineHome+m[1] {
						t.Errorf("%s:%d names %s's metric %q: read it in internal/engine/%s into engine-neutral figures (promread.Snapshot, engine.Status), or say why in engineNameExceptions",
							file, i+1, m[1], strings.TrimSpace(line), m[1])
					}
				}
			}
		}
	}
}

// TestArchitectureDrawsLayers: the first code block of docs/architecture.md
// draws the layers, top to bottom: each layer's packages, one line each
// ("internal/command/run/   what it does"), layers separated by a line of "─" or
// "↓". (README.md's Development section draws only their top-level shape.)
func TestArchitectureDrawsLayers(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(b), "```\n")
	if !ok {
		t.Fatal("docs/architecture.md has no code block")
	}
	block, _, _ = strings.Cut(block, "```")
	got := drawnLayers(block)
	var want [][]string
	for _, l := range layers {
		want = append(want, slices.Sorted(slices.Values(l)))
	}
	if !slices.EqualFunc(got, want, slices.Equal[[]string]) {
		t.Errorf("docs/architecture.md draws the layers\n%s\nwant (layers_test.go)\n%s", format(got), format(want))
	}
}

// separator is a line between two layers of the drawing.
var separator = regexp.MustCompile(`^\s*[─↓]`)

// drawnLayers reads the layers of a drawing: the packages named at the start
// of a line ("command/run/"), grouped between separator lines, each group sorted.
func drawnLayers(block string) [][]string {
	var out [][]string
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			out = append(out, slices.Sorted(slices.Values(cur)))
		}
		cur = nil
	}
	for _, line := range strings.Split(block, "\n") {
		if separator.MatchString(line) {
			flush()
			continue
		}
		if line == "" || line[0] == ' ' {
			continue // a description's continuation
		}
		word, _, _ := strings.Cut(line, " ")
		if p, ok := strings.CutSuffix(word, "/"); ok {
			cur = append(cur, p)
		}
	}
	flush()
	return out
}

func format(ls [][]string) string {
	var b strings.Builder
	for i, l := range ls {
		fmt.Fprintf(&b, "  %d: %s\n", i, strings.Join(l, " "))
	}
	return b.String()
}

// matches reports whether package rel is pattern, or below it when the
// pattern ends in "/".
func matches(pattern, rel string) bool {
	if strings.HasSuffix(pattern, "/") {
		return strings.HasPrefix(rel, pattern) || rel == strings.TrimSuffix(pattern, "/")
	}
	return rel == pattern
}

// deps are every package of the module rel depends on, directly or not.
func deps(pkgs map[string]pkg, rel string) []string {
	seen := map[string]bool{}
	var walk func(string)
	walk = func(p string) {
		for _, imp := range pkgs[p].Imports {
			if !seen[imp] {
				seen[imp] = true
				walk(imp)
			}
		}
	}
	walk(rel)
	return slices.Sorted(maps.Keys(seen))
}

// path is a shortest chain of imports from one package to another.
func path(pkgs map[string]pkg, from, to string) []string {
	prev := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if p == to {
			var chain []string
			for ; p != ""; p = prev[p] {
				chain = append([]string{p}, chain...)
			}
			return chain
		}
		for _, imp := range pkgs[p].Imports {
			if _, ok := prev[imp]; !ok {
				prev[imp] = p
				queue = append(queue, imp)
			}
		}
	}
	return []string{from, "?", to}
}

func sortedKeys(m map[string]pkg) []string { return slices.Sorted(maps.Keys(m)) }
