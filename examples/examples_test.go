// Package examples_test checks that the files in examples/ (and the
// Dockerfile at the repository root) run as written: every YAML file
// parses, every slogate command line in them names a real subcommand and
// only flags it has (asked of the real binary), the plan and validate lines
// run, the generated CI pipelines have the shape their CI expects, the
// GitHub workflow passes actionlint, and the Kubernetes manifests carry the
// fields the API server requires.
package examples_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/rhysd/actionlint"
	"gopkg.in/yaml.v3"

	"github.com/slogate/slogate/internal/cmdlines"
)

// seedSpecs is what $SPECS stands for in every CI example.
var seedSpecs = []string{
	"specs/qwen3.5-4b-h200-dflash.hcl",
	"specs/glm-5.3-flash-nvfp4-h200x2.hcl",
	"specs/ling-3.0-flash-int4-h200x2.hcl",
}

// buildOnce builds the slogate binary the commands are checked against.
var buildOnce = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "slogate-examples-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "slogate")
	out, err := exec.Command("go", "build", "-o", bin, "../cmd/slogate").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("building slogate: %v\n%s", err, out)
	}
	return bin, nil
})

func slogateBin(t *testing.T) string {
	t.Helper()
	bin, err := buildOnce()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// exampleFiles lists every file under examples/ (hidden ones included, like
// .gitlab-ci.yml) except this test, plus the Dockerfile.
func exampleFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && !strings.HasSuffix(path, "_test.go") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return append(files, "../Dockerfile")
}

func isYAML(path string) bool {
	return strings.HasSuffix(path, ".yml") || strings.HasSuffix(path, ".yaml")
}

// yamlDocs parses every document of a YAML file.
func yamlDocs(t *testing.T, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var docs []map[string]any
	for {
		var doc map[string]any
		err := dec.Decode(&doc)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s does not parse: %v", path, err)
		}
		if doc != nil {
			docs = append(docs, doc)
		}
	}
	if len(docs) == 0 {
		t.Fatalf("%s holds no YAML document", path)
	}
	return docs
}

func TestYAMLParses(t *testing.T) {
	n := 0
	for _, path := range exampleFiles(t) {
		if isYAML(path) {
			yamlDocs(t, path)
			n++
		}
	}
	if n < 9 {
		t.Errorf("only %d YAML files found under examples/; the walk misses some", n)
	}
}

// command is one slogate command line found in an example.
type command = cmdlines.Command

// textCommands finds the slogate command lines in shell text.
func textCommands(file, text string) []command { return cmdlines.Find(file, 1, text) }

// yamlStrings collects every string scalar of a parsed YAML value (folded
// scalars arrive joined, as the CI will run them).
func yamlStrings(v any, out *[]string) {
	switch v := v.(type) {
	case string:
		*out = append(*out, v)
	case []any:
		for _, e := range v {
			yamlStrings(e, out)
		}
	case map[string]any:
		for k, e := range v {
			if k != "name" && k != "label" && k != "description" { // prose, not commands
				yamlStrings(e, out)
			}
		}
	}
}

// containerCommands finds Kubernetes containers running the slogate image:
// their args are a slogate command line (the image's entrypoint is slogate).
func containerCommands(file string, v any, out *[]command) {
	switch v := v.(type) {
	case []any:
		for _, e := range v {
			containerCommands(file, e, out)
		}
	case map[string]any:
		if image, ok := v["image"].(string); ok && strings.Contains(image, "/slogate:") {
			var args []string
			for _, a := range v["args"].([]any) {
				args = append(args, fmt.Sprint(a))
			}
			*out = append(*out, command{File: file, Args: args})
			return
		}
		for _, e := range v {
			containerCommands(file, e, out)
		}
	}
}

// allCommands finds every slogate command line in the examples.
func allCommands(t *testing.T) []command {
	t.Helper()
	var out []command
	for _, path := range exampleFiles(t) {
		if !isYAML(path) {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, textCommands(path, string(b))...)
			continue
		}
		for _, doc := range yamlDocs(t, path) {
			var strs []string
			yamlStrings(doc, &strs)
			for _, s := range strs {
				out = append(out, textCommands(path, s)...)
			}
			containerCommands(path, doc, &out)
		}
	}
	return out
}

// TestCommandsAreReal: every slogate command line in the examples names a
// subcommand of the binary and only flags that subcommand's help lists; the
// examples hold at least the commands each of them is there to show.
func TestCommandsAreReal(t *testing.T) {
	cmds := allCommands(t)
	known := map[string]cmdlines.Flags{}
	for _, c := range cmds {
		sub := c.Args[0]
		flags, seen := known[sub]
		if !seen {
			var ok bool
			if flags, ok = cmdlines.HelpFlags(slogateBin(t), sub); !ok {
				t.Errorf("%v: %q is not a slogate subcommand (slogate %s -h fails)", c, sub, sub)
			}
			known[sub] = flags
		}
		if flags == nil {
			continue
		}
		for _, f := range flags.Unknown(c.Args[1:]) {
			t.Errorf("%v: slogate %s has no flag %s", c, sub, f)
		}
	}
	want := map[string][]string{
		"github/vllm-upgrade-gate.yml":    {"validate", "plan", "run", "merge", "diff"},
		"gitlab/.gitlab-ci.yml":           {"validate", "plan"},
		"gitlab/slogate-gate.yml":         {"run", "merge", "diff"},
		"buildkite/plan.sh":               {"validate", "plan"},
		"buildkite/gate.sh":               {"run"},
		"buildkite/merge.sh":              {"merge", "diff"},
		"kubernetes/slogate-job.yaml":     {"run"},
		"kubernetes/slogate-job-lws.yaml": {"run"},
		"../Dockerfile":                   {"run"},
	}
	for file, subs := range want {
		for _, sub := range subs {
			if !slices.ContainsFunc(cmds, func(c command) bool { return c.File == file && c.Args[0] == sub }) {
				t.Errorf("%s: no `slogate %s` found (the extraction or the example is wrong)", file, sub)
			}
		}
	}
}

// TestPlanAndValidateLinesRun runs the validate and plan lines of the CI
// examples as written, $SPECS being the seed specs, from the repository root.
func TestPlanAndValidateLinesRun(t *testing.T) {
	ran := 0
	for _, c := range allCommands(t) {
		if c.Args[0] != "validate" && c.Args[0] != "plan" {
			continue
		}
		var args []string
		for _, a := range c.Args {
			if a == "$SPECS" || a == "$$SPECS" {
				args = append(args, seedSpecs...)
				continue
			}
			args = append(args, a)
		}
		cmd := exec.Command(slogateBin(t), args...)
		cmd.Dir = ".."
		out, err := cmd.Output()
		if err != nil {
			t.Errorf("%v: %v", c, err)
			continue
		}
		ran++
		if c.Args[0] == "plan" && slices.Contains(c.Args, "matrix") {
			var entries []map[string]any
			if err := json.Unmarshal(out, &entries); err != nil || len(entries) != len(seedSpecs) {
				t.Errorf("%v: not a matrix of %d entries (%v):\n%s", c, len(seedSpecs), err, out)
			}
		}
	}
	if ran < 6 {
		t.Errorf("ran %d plan/validate lines, want at least 6 (two in each CI example)", ran)
	}
}

// matrixJSON is `slogate plan -format matrix` of the seed specs, as the CI
// examples produce it.
func matrixJSON(t *testing.T) []byte {
	t.Helper()
	cmd := exec.Command(slogateBin(t), append([]string{"plan", "-format", "matrix", "-var", "vllm_command=vllm"}, seedSpecs...)...)
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// jqProgram returns the single-quoted jq program in text that builds a
// pipeline (it starts with '{).
func jqProgram(t *testing.T, text string) string {
	t.Helper()
	_, after, ok := strings.Cut(text, "'{")
	if !ok {
		t.Fatal("no jq program found")
	}
	after = "{" + after
	prog, _, ok := strings.Cut(after, "'")
	if !ok {
		t.Fatal("jq program not closed")
	}
	return prog
}

// runJQ runs a jq program of an example on the real matrix, as the CI does.
func runJQ(t *testing.T, prog string) map[string]any {
	t.Helper()
	jq, err := exec.LookPath("jq")
	if err != nil {
		t.Skip("jq is not installed: the generated pipeline cannot be checked here")
	}
	cmd := exec.Command(jq, "--arg", "tag", "v0.11.0", prog)
	cmd.Stdin = bytes.NewReader(matrixJSON(t))
	cmd.Env = append(os.Environ(), "VLLM_TAG=v0.11.0")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("jq: %v", err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(out, &doc); err != nil { // GitLab and Buildkite read it as YAML
		t.Fatalf("generated pipeline is not YAML: %v\n%s", err, out)
	}
	return doc
}

// dig walks a parsed YAML value by keys and indexes.
func dig(v any, path ...any) any {
	for _, p := range path {
		switch p := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[p]
		case int:
			l, _ := v.([]any)
			if p >= len(l) {
				return nil
			}
			v = l[p]
		}
	}
	return v
}

// TestGitLabChildPipeline: the plan job's jq turns the matrix into a child
// pipeline whose gate job extends the template once per server through
// parallel:matrix, and the template it includes defines what it extends.
func TestGitLabChildPipeline(t *testing.T) {
	parent := yamlDocs(t, "gitlab/.gitlab-ci.yml")[0]
	var script []string
	yamlStrings(dig(parent, "plan", "script"), &script)
	var prog string
	for _, s := range script {
		if strings.HasPrefix(s, "jq ") {
			prog = jqProgram(t, s)
		}
	}
	child := runJQ(t, prog)
	if got := dig(child, "include", 0, "local"); got != ".gitlab/slogate-gate.yml" {
		t.Errorf("child includes %v", got)
	}
	if got := dig(child, "variables", "VLLM_TAG"); got != "v0.11.0" {
		t.Errorf("child's VLLM_TAG is %v, want vllm-tag.txt's v0.11.0", got)
	}
	template := yamlDocs(t, "gitlab/slogate-gate.yml")[0]
	extends, _ := dig(child, "gate", "extends").(string)
	if template[extends] == nil {
		t.Errorf("gate extends %q, which slogate-gate.yml does not define", extends)
	}
	matrix, _ := dig(child, "gate", "parallel", "matrix").([]any)
	if len(matrix) != len(seedSpecs) {
		t.Fatalf("parallel:matrix has %d entries, want %d", len(matrix), len(seedSpecs))
	}
	for i, spec := range seedSpecs {
		e := matrix[i].(map[string]any)
		for _, k := range []string{"SPEC", "SERVER", "DIR", "GPUS", "ESTIMATED_S"} {
			if _, ok := e[k].(string); !ok { // GitLab matrix values are strings
				t.Errorf("entry %d: %s = %#v, want a string", i, k, e[k])
			}
		}
		if e["SPEC"] != spec {
			t.Errorf("entry %d: SPEC %v, want %s", i, e["SPEC"], spec)
		}
	}
	if tags := fmt.Sprint(dig(template, ".slogate-gate", "tags")); !strings.Contains(tags, "$GPUS") {
		t.Errorf("the gate template's tags %s do not select runners by GPUS", tags)
	}
}

// TestBuildkiteSteps: plan.sh's jq turns the matrix into one gate step per
// server on an agent with its GPUs, in the vLLM image of VLLM_TAG, then a
// wait that continues on failure and the merge step.
func TestBuildkiteSteps(t *testing.T) {
	b, err := os.ReadFile("buildkite/plan.sh")
	if err != nil {
		t.Fatal(err)
	}
	doc := runJQ(t, jqProgram(t, string(b)))
	steps, _ := doc["steps"].([]any)
	if len(steps) != len(seedSpecs)+2 {
		t.Fatalf("%d steps, want %d gates, a wait and the merge", len(steps), len(seedSpecs))
	}
	var matrix []map[string]any
	if err := json.Unmarshal(matrixJSON(t), &matrix); err != nil {
		t.Fatal(err)
	}
	for i, m := range matrix {
		s := steps[i]
		if got, want := dig(s, "agents", "gpus"), fmt.Sprint(m["gpus"]); got != want {
			t.Errorf("step %d: agents.gpus %v, want %v", i, got, want)
		}
		if got := dig(s, "env", "SERVER"); got != m["server"] {
			t.Errorf("step %d: SERVER %v, want %v", i, got, m["server"])
		}
		if got := dig(s, "env", "DIR"); got != m["dir"] {
			t.Errorf("step %d: DIR %v, want %v", i, got, m["dir"])
		}
		if got := dig(s, "plugins", 0, "docker#v5.13.0", "image"); got != "vllm/vllm-openai:v0.11.0" {
			t.Errorf("step %d: image %v", i, got)
		}
		if _, err := os.Stat(strings.Replace(fmt.Sprint(dig(s, "command")), ".buildkite/", "buildkite/", 1)); err != nil {
			t.Errorf("step %d runs %v: %v", i, dig(s, "command"), err)
		}
	}
	if dig(steps[len(seedSpecs)], "continue_on_failure") != true || dig(steps[len(seedSpecs)+1], "command") != ".buildkite/merge.sh" {
		t.Errorf("the steps do not end with a wait that continues on failure and the merge: %v", steps[len(seedSpecs):])
	}
}

// TestGitHubWorkflow lints the workflow with actionlint (the runner labels
// declared in actionlint.yaml beside it) and checks the gate recipe's parts.
func TestGitHubWorkflow(t *testing.T) {
	const path = "github/vllm-upgrade-gate.yml"
	var out bytes.Buffer
	opts := &actionlint.LinterOptions{ConfigFile: "github/actionlint.yaml", Color: actionlint.ColorOptionKindNever}
	if sc, err := exec.LookPath("shellcheck"); err == nil {
		opts.Shellcheck = sc
	} else {
		t.Log("shellcheck is not installed: actionlint checks the workflow without checking its shell scripts")
	}
	linter, err := actionlint.NewLinter(&out, opts)
	if err != nil {
		t.Fatal(err)
	}
	errs, err := linter.LintFile(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range errs {
		t.Errorf("actionlint: %v", e)
	}

	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	wf := string(b)
	for _, want := range []string{
		"include: ${{ fromJSON(needs.plan.outputs.matrix) }}", // the matrix from plan -format matrix
		"runs-on: [self-hosted, linux, gpu, \"gpus-${{ matrix.gpus }}\"]",
		"image: vllm/vllm-openai:${{ needs.plan.outputs.vllm_tag }}",
		"--branch main --status success",         // the baseline: last passing run on main
		`-baseline "baseline/$DIR/results.json"`, // compared per run (docs/ci.md#run-names)
		"slogate merge -out merged results/*",    // one report
		"name: slogate-merged",                   // kept as the next baseline
		"slogate diff -format md",                // the comparison, posted
		"pull-requests: write",                   // as one comment
	} {
		if !strings.Contains(wf, want) {
			t.Errorf("%s lacks %q", path, want)
		}
	}
	for _, unwanted := range []string{
		"./cmd/slogate", // slogate's own module: not in a team's repository
		"go tool ",      // a tool of slogate's go.mod
		"go-version-file: go.mod",
		"@latest",
	} {
		if strings.Contains(wf, unwanted) {
			t.Errorf("%s holds %q, which a team's repository cannot run", path, unwanted)
		}
	}
}

// TestKubernetesManifests: every document has apiVersion, kind,
// metadata.name and spec; every slogate Job measures with -endpoint a
// Service the examples define.
func TestKubernetesManifests(t *testing.T) {
	files, err := filepath.Glob("kubernetes/*.yaml")
	if err != nil || len(files) < 4 {
		t.Fatalf("kubernetes manifests: %v %v", files, err)
	}
	services := map[string]bool{}
	var endpoints []string
	kinds := map[string]bool{}
	for _, f := range files {
		for i, doc := range yamlDocs(t, f) {
			for _, k := range []string{"apiVersion", "kind", "spec"} {
				if doc[k] == nil {
					t.Errorf("%s document %d has no %s", f, i+1, k)
				}
			}
			name, _ := dig(doc, "metadata", "name").(string)
			if name == "" {
				t.Errorf("%s document %d has no metadata.name", f, i+1)
			}
			kind, _ := doc["kind"].(string)
			kinds[kind] = true
			if kind == "Service" {
				services[name] = true
			}
			if kind == "Job" {
				var cmds []command
				containerCommands(f, doc, &cmds)
				if len(cmds) != 1 {
					t.Errorf("%s: Job %s runs %d slogate containers, want 1", f, name, len(cmds))
					continue
				}
				args := cmds[0].Args
				i := slices.Index(args, "-endpoint")
				if args[0] != "run" || i < 0 || i+1 >= len(args) {
					t.Errorf("%s: Job %s does not run `slogate run -endpoint URL`: %v", f, name, args)
					continue
				}
				endpoints = append(endpoints, args[i+1])
			}
		}
	}
	for _, want := range []string{"Deployment", "Service", "Job", "LeaderWorkerSet"} {
		if !kinds[want] {
			t.Errorf("no %s among the manifests", want)
		}
	}
	for _, e := range endpoints {
		host := strings.Split(strings.TrimPrefix(e, "http://"), ":")[0]
		if !services[host] {
			t.Errorf("-endpoint %s: no Service %q in the examples", e, host)
		}
	}
}

// TestDockerfile checks the image's structure: a Go build stage that builds
// ./cmd/slogate statically, a final stage that copies only the binary (and
// the specs) and runs as a non-root user with slogate as the entrypoint. It
// builds the image only where a Docker daemon answers.
func TestDockerfile(t *testing.T) {
	b, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	var froms, runs []string
	var user, entrypoint string
	copiesFromBuild := false
	for _, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(l)
		word, rest, _ := strings.Cut(l, " ")
		switch strings.ToUpper(word) {
		case "FROM":
			froms = append(froms, rest)
		case "RUN":
			runs = append(runs, rest)
		case "USER":
			user = rest
		case "ENTRYPOINT":
			entrypoint = rest
		case "COPY":
			copiesFromBuild = copiesFromBuild || strings.HasPrefix(rest, "--from=build ")
		}
	}
	if len(froms) != 2 || !strings.HasPrefix(froms[0], "golang:") || !strings.HasSuffix(froms[0], " AS build") {
		t.Errorf("FROM lines %q: want a golang build stage then the final image", froms)
	}
	if len(froms) == 2 && !strings.Contains(froms[1], "distroless/static") {
		t.Errorf("final stage %q: want a static distroless base (the binary is static)", froms[1])
	}
	if !slices.ContainsFunc(runs, func(r string) bool {
		return strings.Contains(r, "CGO_ENABLED=0 go build ") && strings.HasSuffix(r, " ./cmd/slogate")
	}) {
		t.Errorf("no RUN builds ./cmd/slogate statically (CGO_ENABLED=0 go build … ./cmd/slogate): %q", runs)
	}
	if u, _, _ := strings.Cut(user, ":"); u == "" || u == "root" || u == "0" {
		t.Errorf("USER %q: the image must run as a non-root user", user)
	}
	if !copiesFromBuild || !strings.Contains(entrypoint, "slogate") {
		t.Errorf("final stage: copies from build %v, ENTRYPOINT %q", copiesFromBuild, entrypoint)
	}

	if out, err := exec.Command("docker", "info").CombinedOutput(); err != nil {
		t.Skipf("not building the image: `docker info` fails here (no Docker daemon): %v: %s", err, lastLine(out))
	}
	build := exec.Command("docker", "build", "-t", "slogate-examples-test", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("docker build: %v\n%s", err, out)
	}
	out, err := exec.Command("docker", "run", "--rm", "slogate-examples-test", "validate", "/specs/qwen3.5-4b-h200-dflash.hcl").CombinedOutput()
	if err != nil {
		t.Errorf("the image cannot validate its own specs: %v\n%s", err, out)
	}
}

// lastLine is the last line of b: where docker info says what is wrong.
func lastLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	return s[strings.LastIndexByte(s, '\n')+1:]
}
