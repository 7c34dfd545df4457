package examples_test

// The CI examples copied into a team's repository, unchanged, and run as
// their pipelines would run them: each job in a fresh checkout of a
// scratch repository that has its own specs/ and vllm-tag.txt and nothing
// of slogate's (no go.mod), artifacts passed between jobs only as each
// example declares them, the vLLM image stood in for by a `vllm` on PATH
// that is the simulator. What only the CI platform does is played by the
// test: GitHub's actions (checkout, setup-go, artifacts) and `gh`, GitLab's
// API (artifacts, notes) and Buildkite's agent and API. Slogate's download
// is the one thing replaced: `go install github.com/slogate/slogate/cmd/
// slogate@VERSION` installs the binary under test, and only when VERSION
// is pinned; every other go command is the real go's, which fails in a
// repository without slogate's go.mod as it would in a team's.

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// The stubs are this test binary under another name (TestMain dispatches
// on it); stubEnv names the folder of their shared state.
const (
	stubState   = "EXAMPLES_STUB_STATE"
	stubSlogate = "EXAMPLES_STUB_SLOGATE"
	stubRealGo  = "EXAMPLES_STUB_REAL_GO"
)

func TestMain(m *testing.M) {
	switch filepath.Base(os.Args[0]) {
	case "go":
		os.Exit(goStub(os.Args[1:]))
	case "gh":
		os.Exit(ghStub(os.Args[1:]))
	case "buildkite-agent":
		os.Exit(buildkiteStub(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// slogatePackage is what a team installs.
const slogatePackage = "github.com/slogate/slogate/cmd/slogate"

// examplesPin is the slogate every example installs (SLOGATE_VERSION):
// a commit that has what the examples use (diff -format md's comment, the
// run's pre-launch checks). The go stub installs the slogate under test
// only at this version, so an example that pins another fails here;
// TestExamplesPin holds the examples to it and it to this repository's
// history. Bump it in the examples and here together.
const examplesPin = "c16117f5dd542fc104415672fcb74cc9512785ab"

// pinned is a version a CI job may install: a release tag (semver) or a
// commit hash. latest, a branch name or no version at all is not: the gate
// would change under the team between two runs it compares.
var pinned = regexp.MustCompile(`^(v\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?|[0-9a-f]{12,40})$`)

// installTarget is the slogate version a go command installs: ok is false
// when it does not install slogate's module by its path; err when it does
// so unpinned.
func installTarget(args []string) (version string, ok bool, err error) {
	if len(args) == 0 || args[0] != "install" {
		return "", false, nil
	}
	for _, a := range args[1:] {
		pkg, v, hasVersion := strings.Cut(a, "@")
		if pkg != slogatePackage {
			continue
		}
		if !hasVersion || !pinned.MatchString(v) {
			return "", true, fmt.Errorf("go install %s: unpinned (%q): pin a release tag or a commit (docs/ci.md#installing-slogate)", a, v)
		}
		return v, true, nil
	}
	return "", false, nil
}

// goStub installs the slogate under test for a pinned `go install` of its
// module and hands every other go command to the real go.
func goStub(args []string) int {
	v, ok, err := installTarget(args)
	if err == nil && ok && v != examplesPin {
		err = fmt.Errorf("go install %s@%s: the examples pin %s (examplesPin): the slogate they were tested with", slogatePackage, v, examplesPin)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "go (test stub):", err)
		return 1
	}
	if !ok {
		real := os.Getenv(stubRealGo)
		cmd := exec.Command(real, args...)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			if e, ok := err.(*exec.ExitError); ok {
				return e.ExitCode()
			}
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	}
	dir := os.Getenv("GOBIN")
	if dir == "" {
		dir = filepath.Join(os.Getenv("HOME"), "go", "bin")
	}
	if err := copyFile(os.Getenv(stubSlogate), filepath.Join(dir, "slogate")); err != nil {
		fmt.Fprintln(os.Stderr, "go (test stub):", err)
		return 1
	}
	appendLine(filepath.Join(os.Getenv(stubState), "go-installs"), v)
	return 0
}

// TestExamplesPin: every example pins examplesPin, and examplesPin is a
// commit of this repository's history (checked where the checkout has
// its history: a shallow clone cannot say).
func TestExamplesPin(t *testing.T) {
	pin := regexp.MustCompile(`(?m)^\s*SLOGATE_VERSION:\s*(\S+)\s*$`)
	for _, f := range []string{"github/vllm-upgrade-gate.yml", "gitlab/.gitlab-ci.yml", "buildkite/pipeline.yml"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		m := pin.FindAllSubmatch(b, -1)
		if len(m) != 1 || string(m[0][1]) != examplesPin {
			var got []string
			for _, x := range m {
				got = append(got, string(x[1]))
			}
			t.Errorf("%s pins %q; want SLOGATE_VERSION: %s once (examplesPin)", f, got, examplesPin)
		}
	}
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git: examplesPin's place in the history is not checked")
	}
	out, err := exec.Command(git, "rev-parse", "--is-shallow-repository").Output()
	if err != nil || strings.TrimSpace(string(out)) != "false" {
		t.Skipf("not a full clone (%q, %v): examplesPin's place in the history is not checked", strings.TrimSpace(string(out)), err)
	}
	if err := exec.Command(git, "merge-base", "--is-ancestor", examplesPin, "HEAD").Run(); err != nil {
		t.Errorf("examplesPin %s is not a commit of this branch's history (%v): pin one the examples were tested with", examplesPin, err)
	}
}

// TestPinnedInstall: the go stub installs slogate only at a pinned version.
func TestPinnedInstall(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		version string
		ok      bool
		err     string
	}{
		{name: "a release tag", args: []string{"install", slogatePackage + "@v1.2.3"}, version: "v1.2.3", ok: true},
		{name: "a commit", args: []string{"install", slogatePackage + "@" + examplesPin}, version: examplesPin, ok: true},
		{name: "latest", args: []string{"install", slogatePackage + "@latest"}, ok: true, err: `unpinned ("latest")`},
		{name: "a branch", args: []string{"install", slogatePackage + "@main"}, ok: true, err: `unpinned ("main")`},
		{name: "no version", args: []string{"install", slogatePackage}, ok: true, err: `unpinned ("")`},
		{name: "an empty variable", args: []string{"install", slogatePackage + "@"}, ok: true, err: `unpinned ("")`},
		{name: "slogate's own module", args: []string{"build", "-o", "bin/slogate", "./cmd/slogate"}},
		{name: "another tool", args: []string{"install", "gotest.tools/gotestsum@v1.13.0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, ok, err := installTarget(tc.args)
			if v != tc.version || ok != tc.ok || (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
				t.Errorf("installTarget(%q) = %q, %v, %v; want %q, %v, error with %q", tc.args, v, ok, err, tc.version, tc.ok, tc.err)
			}
		})
	}
}

// The comment every example posts starts with this line, which finds it
// again on the next push.
const commentMarker = "<!-- slogate-vllm-upgrade-gate -->"

// The team's spec: prefill only, so that a run takes about a second on the
// simulator; its port comes from the test (CHAT_PORT).
const teamSpec = `variable "vllm_command" {
  description = "The vllm executable; CI passes -var vllm_command=vllm."
  default     = "/opt/vllm/bin/vllm"
}

server "chat" {
  command           = var.vllm_command
  model             = "Qwen/Qwen3.5-4B"
  served_model_name = "chat"
  max_model_len     = "8K"
  port              = tonumber(try(env("CHAT_PORT"), "8000"))
  ready_timeout     = "30s"
}

measure {
  max_output = 64
  repeat     = 5
}

prefill { contexts = ["2K"] }

assert "prefill_floor" {
  condition     = prefill["2K"].tps >= 1000
  error_message = "prefill at 2K fell below 1,000 tok/s"
}
`

// The images the gate runs in, by tag: v0.11.0 the simulator as fitted,
// v0.12.0 three times slower per step (the upgrade the gate must catch).
var images = map[string]string{"v0.11.0": "", "v0.12.0": " --sim-slowdown 3"}

// team is a scratch team repository and what its pipelines' jobs share:
// the stubs on PATH, the images, the state of the platform stand-ins.
type team struct {
	t      *testing.T
	root   string // the scratch folder: repo/, stubs/, images/, state/, jobs/
	repo   string // the repository a job checks out
	state  string
	stubs  string
	port   int
	jobs   int
	files  map[string]string // example file → path in the repository
	apiURL string            // the platform's API stand-in
}

// newTeam writes the repository: specs/chat.hcl, vllm-tag.txt at tag, a
// README, and each example file at the path its comment says to copy it to.
func newTeam(t *testing.T, tag string, files map[string]string) *team {
	t.Helper()
	root := t.TempDir()
	tm := &team{t: t, root: root, repo: filepath.Join(root, "repo"), state: filepath.Join(root, "state"),
		stubs: filepath.Join(root, "stubs"), port: freePort(t), files: files}
	write(t, filepath.Join(tm.repo, "specs", "chat.hcl"), teamSpec)
	write(t, filepath.Join(tm.repo, "README.md"), "# the team's service\n")
	tm.setTag(tag)
	for src, dst := range files {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(tm.repo, dst), string(b))
		if info, _ := os.Stat(src); info.Mode()&0o111 != 0 {
			os.Chmod(filepath.Join(tm.repo, dst), 0o755)
		}
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"go", "gh", "buildkite-agent"} {
		mkdirAll(t, tm.stubs)
		if err := os.Symlink(self, filepath.Join(tm.stubs, name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"apt-get", "apk"} { // the images' package installs: already there
		write(t, filepath.Join(tm.stubs, name), "#!/bin/sh\nexit 0\n")
		os.Chmod(filepath.Join(tm.stubs, name), 0o755)
	}
	for tag, extra := range images {
		p := filepath.Join(root, "images", tag, "vllm")
		write(t, p, fmt.Sprintf("#!/bin/sh\n# vllm/vllm-openai:%s stands in as the simulator\nexec %s sim \"$@\"%s\n", tag, slogateBin(t), extra))
		os.Chmod(p, 0o755)
	}
	mkdirAll(t, tm.state)
	return tm
}

func (tm *team) setTag(tag string) { write(tm.t, filepath.Join(tm.repo, "vllm-tag.txt"), tag+"\n") }

// workspace is a fresh checkout of the repository for a job, with the
// given artifacts unpacked into it (path in the job → source).
func (tm *team) workspace(artifacts map[string]string) string {
	tm.t.Helper()
	tm.jobs++
	dir := filepath.Join(tm.root, "jobs", strconv.Itoa(tm.jobs))
	copyTree(tm.t, tm.repo, dir)
	for dst, src := range artifacts {
		copyTree(tm.t, src, filepath.Join(dir, dst))
	}
	return dir
}

// sh runs script with shell (its argv before the script) in dir, image the
// vLLM tag of the job's container ("" for none), and returns the exit code
// and the output.
func (tm *team) sh(dir string, shell []string, script string, env map[string]string, image string) (code int, out string) {
	t := tm.t
	t.Helper()
	path := tm.stubs + ":" + os.Getenv("PATH")
	if image != "" {
		if _, ok := images[image]; !ok {
			t.Fatalf("no image vllm/vllm-openai:%s", image)
		}
		path = filepath.Join(tm.root, "images", image) + ":" + path
	}
	realGo, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(tm.root, "home")
	mkdirAll(t, home)
	cmd := exec.Command(shell[0], append(shell[1:], script)...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + path, "HOME=" + home, "TMPDIR=" + os.TempDir(), "GOWORK=off", "GOFLAGS=",
		"GOCACHE=" + goEnv(t, "GOCACHE"), "GOMODCACHE=" + goEnv(t, "GOMODCACHE"),
		"CHAT_PORT=" + strconv.Itoa(tm.port), stubState + "=" + tm.state, stubSlogate + "=" + slogateBin(t), stubRealGo + "=" + realGo}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		t.Fatalf("the job did not end within 2 minutes:\n%s", buf.String())
	}
	if e, ok := err.(*exec.ExitError); ok {
		code = e.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, buf.String()
}

// bash is how GitHub runs a run step and Buildkite a script.
var bash = []string{"bash", "--noprofile", "--norc", "-eo", "pipefail", "-c"}

// result is what a pipeline left: the exit code of each gate job and of the
// merge, and the comment body it posted (or would have).
type result struct {
	gates []int
	merge int
	log   strings.Builder
}

func (r *result) logf(format string, args ...any) { fmt.Fprintf(&r.log, format+"\n", args...) }

// comparison is `slogate diff -format md` of the baseline and the merged
// run of a job's folder, as the pipeline's own diff saw them.
func comparison(t *testing.T, dir, run string) string {
	t.Helper()
	cmd := exec.Command(slogateBin(t), "diff", "-format", "md", "baseline/"+run+"/results.json", "merged/"+run+"/results.json")
	cmd.Dir = dir
	out, _ := cmd.CombinedOutput()
	if len(out) == 0 {
		t.Fatalf("slogate diff in %s printed nothing", dir)
	}
	return string(out)
}

// checkComment: one comment, the marker first, the run's comparison in it.
func checkComment(t *testing.T, bodies []string, mergeDir string) {
	t.Helper()
	if len(bodies) != 1 {
		t.Fatalf("%d comments carry the marker, want exactly 1 (updated in place): %q", len(bodies), bodies)
	}
	body := bodies[0]
	if !strings.HasPrefix(body, commentMarker+"\n") {
		t.Errorf("the comment does not start with %q:\n%s", commentMarker, body)
	}
	if want := comparison(t, mergeDir, "chat"); !strings.Contains(body, want) {
		t.Errorf("the comment lacks the comparison `slogate diff -format md` prints:\n--- want in it\n%s\n--- comment\n%s", want, body)
	}
	if n := strings.Count(body, "\n"); n > 60 {
		t.Errorf("the comment has %d lines, want at most 60 for a pull request", n)
	}
}

// scenario is every example's story: a pipeline on main measures v0.11.0
// and passes (its merged results are the baseline); a pull request bumps
// vllm-tag.txt to v0.12.0, three times slower, and fails with a comment
// holding the comparison; a second push to it updates that comment.
func checkScenario(t *testing.T, run func(tm *team, pr bool) (*result, string, []string), files map[string]string) {
	slogateBin(t) // built once for the package: not this test's time
	start := time.Now()
	defer func() { t.Logf("three pipelines in %v", time.Since(start).Round(time.Millisecond)) }()
	tm := newTeam(t, "v0.11.0", files)
	main, _, _ := run(tm, false)
	if slices.ContainsFunc(main.gates, func(c int) bool { return c != 0 }) || main.merge != 0 {
		t.Fatalf("the pipeline on main: gates %v, merge %d, want all 0:\n%s", main.gates, main.merge, main.log.String())
	}
	tm.setTag("v0.12.0")
	for push := 1; push <= 2; push++ {
		pr, mergeDir, comments := run(tm, true)
		if len(pr.gates) != 1 || pr.gates[0] != 1 || pr.merge != 1 {
			t.Fatalf("push %d of the upgrade: gates %v, merge %d, want 1 (a regression against the baseline):\n%s", push, pr.gates, pr.merge, pr.log.String())
		}
		checkComment(t, comments, mergeDir)
		if push == 2 {
			t.Logf("the comment:\n%s", comments[0])
		}
	}
	if b, err := os.ReadFile(filepath.Join(tm.state, "go-installs")); err == nil {
		t.Logf("slogate installed by go install at %s", strings.Fields(string(b)))
	}
}

// --- GitHub Actions ---

// ghWorkflow is the part of a workflow the test runs.
type ghWorkflow struct {
	On   map[string]any    `yaml:"on"`
	Env  map[string]string `yaml:"env"`
	Jobs map[string]struct {
		Needs     any               `yaml:"needs"`
		If        string            `yaml:"if"`
		Outputs   map[string]string `yaml:"outputs"`
		Env       map[string]string `yaml:"env"`
		Container struct {
			Image string `yaml:"image"`
		} `yaml:"container"`
		Strategy struct {
			Matrix struct {
				Include string `yaml:"include"`
			} `yaml:"matrix"`
		} `yaml:"strategy"`
		Steps []ghStep `yaml:"steps"`
	} `yaml:"jobs"`
}

type ghStep struct {
	ID   string            `yaml:"id"`
	If   string            `yaml:"if"`
	Uses string            `yaml:"uses"`
	Run  string            `yaml:"run"`
	With map[string]string `yaml:"with"`
	Env  map[string]string `yaml:"env"`
}

var ghExpr = regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)

// ghRun is one run of the workflow: its number, the artifacts it uploaded.
type ghRun struct {
	id        int
	artifacts map[string]string // name → folder
}

// runGitHub runs the workflow as GitHub would on a push to main or a
// pull request (number 7), with the test's stand-ins for the actions.
func runGitHub(tm *team, pr bool) (*result, string, []string) {
	t := tm.t
	var wf ghWorkflow
	b, err := os.ReadFile(filepath.Join(tm.repo, ".github/workflows/vllm-upgrade-gate.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &wf); err != nil {
		t.Fatal(err)
	}
	runs := readJSON[[]map[string]any](t, filepath.Join(tm.state, "github-runs.json"))
	this := &ghRun{id: 1000 + len(runs), artifacts: map[string]string{}}
	event := "push"
	if pr {
		event = "pull_request"
	}
	res := &result{}
	stepOutputs := map[string]map[string]string{}
	jobOutputs := map[string]map[string]string{}
	planOK := true
	ctx := map[string]string{
		"github.token": "stub-token", "secrets.HF_TOKEN": "", "secrets.VLLM_API_KEY": "",
		"github.event.pull_request.number": "7",
	}
	eval := func(s string, extra map[string]string) string {
		return ghExpr.ReplaceAllStringFunc(s, func(m string) string {
			e := ghExpr.FindStringSubmatch(m)[1]
			if v, ok := extra[e]; ok {
				return v
			}
			if v, ok := ctx[e]; ok {
				return v
			}
			if id, key, ok := strings.Cut(strings.TrimPrefix(e, "steps."), ".outputs."); ok && strings.HasPrefix(e, "steps.") {
				return stepOutputs[id][key]
			}
			if job, key, ok := strings.Cut(strings.TrimPrefix(e, "needs."), ".outputs."); ok && strings.HasPrefix(e, "needs.") {
				return jobOutputs[job][key]
			}
			t.Fatalf("the test does not know ${{ %s }}: teach it, or keep expressions out of the steps", e)
			return ""
		})
	}
	cond := func(c string, extra map[string]string) bool {
		switch c {
		case "":
			return true
		case "always()":
			return true
		case "needs.plan.outputs.baseline_run != ''":
			return jobOutputs["plan"]["baseline_run"] != ""
		case "github.event_name == 'pull_request'":
			return pr
		case "always() && needs.plan.result == 'success'":
			return planOK
		}
		t.Fatalf("the test does not know the condition %q", c)
		return false
	}
	// runJob runs a job's steps in one workspace; ok is false when a step
	// failed (the steps after it run only with if: always()); code is the
	// exit code of the last run step.
	runJob := func(name string, extra map[string]string, image string) (ok bool, dir string, code int) {
		job := wf.Jobs[name]
		env := map[string]string{"GITHUB_REPOSITORY": "team/app", "GITHUB_EVENT_NAME": event, "GITHUB_ACTIONS": "true", "CI": "true"}
		for k, v := range wf.Env {
			env[k] = eval(v, extra)
		}
		for k, v := range job.Env {
			env[k] = eval(v, extra)
		}
		ok = true
		dir = tm.workspace(nil)
		runner := dir + ".runner" // GITHUB_OUTPUT and the summary live outside the workspace
		mkdirAll(t, runner)
		for i, st := range job.Steps {
			if !ok && !strings.HasPrefix(st.If, "always()") || !cond(st.If, extra) {
				continue
			}
			with := map[string]string{}
			for k, v := range st.With {
				with[k] = eval(v, extra)
			}
			action, _, _ := strings.Cut(st.Uses, "@")
			switch action {
			case "actions/checkout": // the workspace is the checkout
			case "actions/setup-go":
				if f := with["go-version-file"]; f != "" {
					if _, err := os.Stat(filepath.Join(tm.repo, f)); err != nil {
						t.Errorf("%s: actions/setup-go reads go-version-file %s, which a team's repository does not have", name, f)
						ok = false
					}
				}
			case "actions/upload-artifact":
				src := filepath.Join(dir, with["path"])
				dst := filepath.Join(tm.root, "gh-artifacts", strconv.Itoa(this.id), with["name"])
				if info, err := os.Stat(src); err != nil {
					t.Errorf("%s: upload-artifact %s: %v", name, with["path"], err)
					ok = false
				} else if info.IsDir() {
					copyTree(t, src, dst)
				} else {
					copyTree(t, src, filepath.Join(dst, filepath.Base(src)))
				}
				this.artifacts[with["name"]] = dst
			case "actions/download-artifact":
				from := this.artifacts
				if id := with["run-id"]; id != "" {
					from = map[string]string{}
					for _, r := range runs {
						if fmt.Sprint(r["databaseId"]) == id {
							for k, v := range r["artifacts"].(map[string]any) {
								from[k] = v.(string)
							}
						}
					}
				}
				if pat := with["pattern"]; pat != "" {
					for n, src := range from {
						if m, _ := filepath.Match(pat, n); m {
							copyTree(t, src, filepath.Join(dir, with["path"], n))
						}
					}
				} else if src, found := from[with["name"]]; found {
					copyTree(t, src, filepath.Join(dir, with["path"]))
				} else {
					t.Errorf("%s: download-artifact %s: no such artifact in run %s", name, with["name"], cmpOr(with["run-id"], "this"))
					ok = false
				}
			case "":
				if ghExpr.MatchString(st.Run) {
					t.Errorf("%s step %d puts an expression into its script: pass it through env:", name, i)
				}
				stepEnv := maps.Clone(env)
				for k, v := range st.Env {
					stepEnv[k] = eval(v, extra)
				}
				outFile := filepath.Join(runner, fmt.Sprintf("output-%d", i))
				write(t, outFile, "")
				stepEnv["GITHUB_OUTPUT"], stepEnv["GITHUB_STEP_SUMMARY"] = outFile, filepath.Join(runner, "summary.md")
				var out string
				code, out = tm.sh(dir, bash, st.Run, stepEnv, image)
				res.logf("== %s step %d (exit %d)\n%s", name, i, code, out)
				outputs := map[string]string{}
				b, _ := os.ReadFile(outFile)
				for _, l := range strings.Split(string(b), "\n") {
					if k, v, found := strings.Cut(l, "="); found {
						outputs[k] = v
					}
				}
				if st.ID != "" {
					stepOutputs[st.ID] = outputs
				}
				if code != 0 {
					ok = false
				}
			default:
				t.Fatalf("%s uses %s, which the test does not play", name, st.Uses)
			}
		}
		outs := map[string]string{}
		for k, v := range job.Outputs {
			outs[k] = eval(v, extra)
		}
		jobOutputs[name] = outs
		return ok, dir, code
	}

	planOK, _, _ = runJob("plan", nil, "")
	if !planOK {
		t.Fatalf("the plan job failed:\n%s", res.log.String())
	}
	if inc := wf.Jobs["gate"].Strategy.Matrix.Include; inc != "${{ fromJSON(needs.plan.outputs.matrix) }}" {
		t.Fatalf("the gate's matrix is %q, not the plan's", inc)
	}
	var matrix []map[string]any
	if err := json.Unmarshal([]byte(jobOutputs["plan"]["matrix"]), &matrix); err != nil {
		t.Fatalf("the plan's matrix %q: %v", jobOutputs["plan"]["matrix"], err)
	}
	image := strings.TrimPrefix(eval(wf.Jobs["gate"].Container.Image, nil), "vllm/vllm-openai:")
	for i, m := range matrix {
		extra := map[string]string{"strategy.job-index": strconv.Itoa(i)}
		for k, v := range m {
			extra["matrix."+k] = fmt.Sprint(v)
		}
		_, _, code := runJob("gate", extra, image)
		res.gates = append(res.gates, code)
	}
	ok, mergeDir, _ := runJob("merge", map[string]string{}, "")
	res.merge = 0
	if !ok {
		res.merge = atoi(t, stepOutputs["merge"]["code"])
	}
	if !pr && ok {
		runs = append(runs, map[string]any{"databaseId": this.id, "headBranch": "main", "conclusion": "success", "artifacts": this.artifacts})
	} else {
		runs = append(runs, map[string]any{"databaseId": this.id, "headBranch": "pr", "conclusion": "failure", "artifacts": this.artifacts})
	}
	writeJSON(t, filepath.Join(tm.state, "github-runs.json"), runs)
	var bodies []string
	for _, c := range readJSON[[]map[string]any](t, filepath.Join(tm.state, "github-comments.json")) {
		if strings.Contains(c["body"].(string), commentMarker) {
			bodies = append(bodies, c["body"].(string))
		}
	}
	return res, mergeDir, bodies
}

// ghStub plays the gh commands the workflow runs: `gh run list` of the
// runs recorded in the state, and `gh api` of an issue's comments.
func ghStub(args []string) int {
	state := os.Getenv(stubState)
	var jq, method, path string
	var fields []string
	for i := 1; i < len(args); i++ {
		switch a := args[i]; a {
		case "--jq", "-q":
			i++
			jq = args[i]
		case "-X", "--method":
			i++
			method = args[i]
		case "-F", "-f", "--field", "--raw-field":
			i++
			fields = append(fields, args[i])
		case "--repo", "--workflow", "--branch", "--status", "--limit", "--json":
			i++
			if a == "--branch" || a == "--status" {
				fields = append(fields, a[2:]+"="+args[i])
			}
		case "--paginate":
		default:
			path = a
		}
	}
	var out any
	switch {
	case len(args) > 1 && args[0] == "run" && args[1] == "list":
		var runs []map[string]any
		b, _ := os.ReadFile(filepath.Join(state, "github-runs.json"))
		json.Unmarshal(b, &runs)
		list := []map[string]any{}
		for i := len(runs) - 1; i >= 0; i-- {
			r := runs[i]
			if slices.Contains(fields, "branch="+r["headBranch"].(string)) && slices.Contains(fields, "status="+r["conclusion"].(string)) {
				list = append(list, map[string]any{"databaseId": r["databaseId"]})
			}
		}
		out = list
	case args[0] == "api":
		file := filepath.Join(state, "github-comments.json")
		var comments []map[string]any
		b, _ := os.ReadFile(file)
		json.Unmarshal(b, &comments)
		body := ""
		for _, f := range fields {
			if k, v, _ := strings.Cut(f, "="); k == "body" {
				body = v
				if strings.HasPrefix(v, "@") {
					b, err := os.ReadFile(v[1:])
					if err != nil {
						fmt.Fprintln(os.Stderr, "gh (test stub):", err)
						return 1
					}
					body = string(b)
				}
			}
		}
		if method == "" && len(fields) > 0 {
			method = "POST"
		}
		issue := regexp.MustCompile(`^repos/team/app/issues/(\d+)/comments$`).FindStringSubmatch(path)
		edit := regexp.MustCompile(`^repos/team/app/issues/comments/(\d+)$`).FindStringSubmatch(path)
		switch {
		case issue != nil && (method == "" || method == "GET"):
			list := []map[string]any{}
			for _, c := range comments {
				if fmt.Sprint(c["issue"]) == issue[1] {
					list = append(list, c)
				}
			}
			out = list
		case issue != nil && method == "POST":
			c := map[string]any{"id": 500 + len(comments), "issue": issue[1], "body": body, "user": map[string]any{"login": "github-actions[bot]"}}
			comments = append(comments, c)
			out = c
		case edit != nil && method == "PATCH":
			for _, c := range comments {
				if fmt.Sprint(c["id"]) == edit[1] {
					c["body"] = body
					out = c
				}
			}
			if out == nil {
				fmt.Fprintln(os.Stderr, "gh: HTTP 404: Not Found")
				return 1
			}
		default:
			fmt.Fprintf(os.Stderr, "gh (test stub): %s %s is not played\n", method, path)
			return 1
		}
		b, _ = json.Marshal(comments)
		os.WriteFile(file, b, 0o644)
	default:
		fmt.Fprintf(os.Stderr, "gh (test stub): %q is not played\n", args)
		return 1
	}
	b, _ := json.Marshal(out)
	if jq == "" {
		os.Stdout.Write(append(b, '\n'))
		return 0
	}
	cmd := exec.Command("jq", "-r", jq)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(b), os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return 1
	}
	return 0
}

var githubFiles = map[string]string{
	"github/vllm-upgrade-gate.yml": ".github/workflows/vllm-upgrade-gate.yml",
	"github/actionlint.yaml":       ".github/actionlint.yaml",
}

// TestGitHubCopied runs the GitHub workflow in a team's repository.
func TestGitHubCopied(t *testing.T) {
	t.Parallel()
	needTools(t, "jq", "bash")
	checkScenario(t, runGitHub, githubFiles)
}

// --- helpers ---

func needTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is not installed: the copied examples cannot run", tool)
			}
			t.Skipf("%s is not installed: the copied examples cannot run", tool)
		}
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	mkdirAll(t, filepath.Dir(path))
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mkdirAll(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func appendLine(path, line string) {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err == nil {
		fmt.Fprintln(f, line)
		f.Close()
	}
}

func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	info, err := os.Stat(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return os.WriteFile(dst, b, info.Mode().Perm())
}

// copyTree copies a file or a folder (with its modes) to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		return copyFile(p, filepath.Join(dst, rel))
	})
	if err != nil {
		t.Fatal(err)
	}
}

func readJSON[T any](t *testing.T, path string) T {
	t.Helper()
	var v T
	b, err := os.ReadFile(path)
	if err != nil {
		return v
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	write(t, path, string(b))
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return n
}

var goEnvCache sync.Map

func goEnv(t *testing.T, name string) string {
	if v, ok := goEnvCache.Load(name); ok {
		return v.(string)
	}
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		t.Fatal(err)
	}
	v := strings.TrimSpace(string(out))
	goEnvCache.Store(name, v)
	return v
}

// freePort is a port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// globRE is a CI path glob as a regular expression: ** any folders, * and ?
// within one. (Hand-written: a handful of lines against a dependency for
// the test alone; GitHub, GitLab and Buildkite agree on these forms.)
func globRE(glob string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(glob); i++ {
		switch c := glob[i]; {
		case strings.HasPrefix(glob[i:], "**/"):
			b.WriteString("(.*/)?")
			i += 2
		case strings.HasPrefix(glob[i:], "**"):
			b.WriteString(".*")
			i++
		case c == '*':
			b.WriteString("[^/]*")
		case c == '?':
			b.WriteString("[^/]")
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	return regexp.MustCompile(b.String() + "$")
}

// --- the API stand-in of GitLab and Buildkite ---

// api plays GitLab's artifacts and notes and Buildkite's builds.
type api struct {
	mu         sync.Mutex
	mainMerged string   // GitLab: the merge job's artifacts of the last passing pipeline on main
	notes      []string // GitLab: the merge request's notes
	passed     string   // Buildkite: the last passed build on main
	requests   []string
}

func newAPI(t *testing.T) (*api, *httptest.Server) {
	a := &api{}
	srv := httptest.NewServer(http.HandlerFunc(a.serve))
	t.Cleanup(srv.Close)
	return a, srv
}

func (a *api) serve(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.requests = append(a.requests, r.Method+" "+r.URL.String())
	if r.Header.Get("PRIVATE-TOKEN") != "stub-token" && r.Header.Get("Authorization") != "Bearer stub-token" {
		http.Error(w, `{"message":"401 Unauthorized"}`, http.StatusUnauthorized)
		return
	}
	notes := "/api/v4/projects/42/merge_requests/7/notes"
	switch p := r.URL.Path; {
	case p == "/api/v4/projects/42/jobs/artifacts/main/download" && r.URL.Query().Get("job") == "merge":
		if a.mainMerged == "" {
			http.NotFound(w, r)
			return
		}
		zw := zip.NewWriter(w)
		filepath.WalkDir(a.mainMerged, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(a.mainMerged, path)
			f, err := zw.Create(filepath.ToSlash(rel))
			if err != nil {
				return err
			}
			src, err := os.Open(path)
			if err != nil {
				return err
			}
			defer src.Close()
			_, err = io.Copy(f, src)
			return err
		})
		zw.Close()
	case p == notes && r.Method == http.MethodGet:
		list := []map[string]any{}
		for i, n := range a.notes {
			list = append(list, map[string]any{"id": i + 1, "body": n})
		}
		json.NewEncoder(w).Encode(list)
	case p == notes && r.Method == http.MethodPost:
		a.notes = append(a.notes, r.FormValue("body"))
		fmt.Fprintf(w, `{"id": %d}`, len(a.notes))
	case strings.HasPrefix(p, notes+"/") && r.Method == http.MethodPut:
		i, err := strconv.Atoi(strings.TrimPrefix(p, notes+"/"))
		if err != nil || i < 1 || i > len(a.notes) {
			http.NotFound(w, r)
			return
		}
		a.notes[i-1] = r.FormValue("body")
		fmt.Fprintf(w, `{"id": %d}`, i)
	case p == "/v2/organizations/team/pipelines/app/builds":
		q := r.URL.Query()
		if q.Get("branch") != "main" || q.Get("state") != "passed" || a.passed == "" {
			fmt.Fprint(w, "[]")
			return
		}
		fmt.Fprintf(w, `[{"id": %q}]`, a.passed)
	default:
		http.Error(w, `{"message":"404 Not Found"}`, http.StatusNotFound)
	}
}

// --- GitLab CI ---

var gitlabFiles = map[string]string{
	"gitlab/.gitlab-ci.yml":   ".gitlab-ci.yml",
	"gitlab/slogate-gate.yml": ".gitlab/slogate-gate.yml",
}

// gitlabJob is the part of a GitLab job the test runs.
type gitlabJob struct {
	Extends   string            `yaml:"extends"`
	Image     any               `yaml:"image"`
	Variables map[string]string `yaml:"variables"`
	Script    []string          `yaml:"script"`
	Artifacts struct {
		Paths []string `yaml:"paths"`
	} `yaml:"artifacts"`
}

func gitlabJobs(t *testing.T, path string) map[string]gitlabJob {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := yaml.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	jobs := map[string]gitlabJob{}
	for name, v := range raw {
		if _, ok := v.(map[string]any); !ok || name == "variables" {
			continue
		}
		b, _ := yaml.Marshal(v)
		var j gitlabJob
		if err := yaml.Unmarshal(b, &j); err != nil {
			t.Fatalf("%s: job %s: %v", path, name, err)
		}
		jobs[name] = j
	}
	return jobs
}

// keep copies the paths a job declares as artifacts from its workspace to
// store, as the runner uploads them.
func keep(t *testing.T, dir string, paths []string, store string) {
	t.Helper()
	for _, p := range paths {
		matches, _ := filepath.Glob(filepath.Join(dir, p))
		for _, m := range matches {
			rel, _ := filepath.Rel(dir, m)
			copyTree(t, m, filepath.Join(store, rel))
		}
	}
}

// runGitLab runs the parent pipeline's plan job, the child pipeline it
// generates (a gate job per matrix entry, then merge), as GitLab would for
// a push to main or merge request 7. slogate comes from SLOGATE_URL here,
// a file:// URL of the binary under test, with its SHA-256: the other way
// of installing it.
func runGitLab(a *api, srv *httptest.Server) func(tm *team, pr bool) (*result, string, []string) {
	return func(tm *team, pr bool) (*result, string, []string) {
		t := tm.t
		res := &result{}
		sh := []string{"sh", "-e", "-c"}
		b, err := os.ReadFile(filepath.Join(tm.repo, ".gitlab-ci.yml"))
		if err != nil {
			t.Fatal(err)
		}
		var top struct {
			Variables map[string]string `yaml:"variables"`
		}
		if err := yaml.Unmarshal(b, &top); err != nil {
			t.Fatal(err)
		}
		parent := gitlabJobs(t, filepath.Join(tm.repo, ".gitlab-ci.yml"))
		sum, err := fileSHA256(slogateBin(t))
		if err != nil {
			t.Fatal(err)
		}
		env := maps.Clone(top.Variables)
		maps.Copy(env, map[string]string{"CI": "true", "GITLAB_CI": "true", "CI_API_V4_URL": srv.URL + "/api/v4", "CI_PROJECT_ID": "42",
			"CI_PIPELINE_ID": strconv.Itoa(tm.jobs), "CI_DEFAULT_BRANCH": "main", "SLOGATE_GITLAB_TOKEN": "stub-token",
			"SLOGATE_URL": "file://" + slogateBin(t), "SLOGATE_SHA256": sum})
		if pr {
			env["CI_PIPELINE_SOURCE"], env["CI_MERGE_REQUEST_IID"] = "merge_request_event", "7"
		} else {
			env["CI_PIPELINE_SOURCE"], env["CI_COMMIT_BRANCH"] = "push", "main"
		}
		store := filepath.Join(tm.root, "gitlab", strconv.Itoa(tm.jobs))
		plan := parent["plan"]
		dir := tm.workspace(nil)
		code, out := tm.sh(dir, sh, strings.Join(plan.Script, "\n"), env, "")
		res.logf("== plan (exit %d)\n%s", code, out)
		if code != 0 {
			t.Fatalf("the plan job failed:\n%s", res.log.String())
		}
		planArt := filepath.Join(store, "plan")
		keep(t, dir, plan.Artifacts.Paths, planArt)

		trigger := parent["gate"]
		childEnv := map[string]string{}
		for k, v := range trigger.Variables {
			childEnv[k] = os.Expand(v, func(k string) string { return env[k] })
		}
		var child struct {
			Include   []map[string]string `yaml:"include"`
			Variables map[string]string   `yaml:"variables"`
			Gate      struct {
				Extends  string `yaml:"extends"`
				Parallel struct {
					Matrix []map[string]string `yaml:"matrix"`
				} `yaml:"parallel"`
			} `yaml:"gate"`
		}
		b, err = os.ReadFile(filepath.Join(planArt, "gate-pipeline.yml"))
		if err != nil {
			t.Fatalf("the plan job left no gate-pipeline.yml among its artifacts: %v", err)
		}
		if err := yaml.Unmarshal(b, &child); err != nil {
			t.Fatal(err)
		}
		if len(child.Include) != 1 {
			t.Fatalf("the child pipeline includes %v", child.Include)
		}
		templates := gitlabJobs(t, filepath.Join(tm.repo, child.Include[0]["local"]))
		maps.Copy(childEnv, child.Variables)
		gate := templates[child.Gate.Extends]
		gateArt := filepath.Join(store, "gate")
		mkdirAll(t, gateArt) // a gate job may leave nothing
		for _, m := range child.Gate.Parallel.Matrix {
			jobEnv := maps.Clone(childEnv)
			maps.Copy(jobEnv, gate.Variables)
			maps.Copy(jobEnv, m)
			image, _ := gate.Image.(map[string]any)["name"].(string)
			image = strings.TrimPrefix(os.Expand(image, func(k string) string { return jobEnv[k] }), "vllm/vllm-openai:")
			dir := tm.workspace(map[string]string{".": planArt})
			code, out := tm.sh(dir, sh, strings.Join(gate.Script, "\n"), jobEnv, image)
			res.logf("== gate %s (exit %d)\n%s", m["SERVER"], code, out)
			res.gates = append(res.gates, code)
			keep(t, dir, gate.Artifacts.Paths, gateArt)
		}
		merge := templates["merge"]
		mergeEnv := maps.Clone(childEnv)
		maps.Copy(mergeEnv, map[string]string{"CI": "true", "CI_API_V4_URL": env["CI_API_V4_URL"], "CI_PROJECT_ID": "42", "SLOGATE_GITLAB_TOKEN": "stub-token"})
		dir = tm.workspace(map[string]string{".": planArt})
		copyTree(t, gateArt, dir)
		res.merge, out = tm.sh(dir, sh, strings.Join(merge.Script, "\n"), mergeEnv, "")
		res.logf("== merge (exit %d)\n%s", res.merge, out)
		if !pr && res.merge == 0 {
			keep(t, dir, merge.Artifacts.Paths, filepath.Join(store, "merge"))
			a.mu.Lock()
			a.mainMerged = filepath.Join(store, "merge")
			a.mu.Unlock()
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		var bodies []string
		for _, n := range a.notes {
			if strings.Contains(n, commentMarker) {
				bodies = append(bodies, n)
			}
		}
		return res, dir, bodies
	}
}

// TestGitLabCopied runs the GitLab pipelines in a team's repository.
func TestGitLabCopied(t *testing.T) {
	t.Parallel()
	needTools(t, "jq", "curl", "unzip", "sha256sum")
	a, srv := newAPI(t)
	checkScenario(t, runGitLab(a, srv), gitlabFiles)
}

// --- Buildkite ---

var buildkiteFiles = map[string]string{
	"buildkite/pipeline.yml": ".buildkite/pipeline.yml",
	"buildkite/plan.sh":      ".buildkite/plan.sh",
	"buildkite/gate.sh":      ".buildkite/gate.sh",
	"buildkite/merge.sh":     ".buildkite/merge.sh",
}

// bkStep is the part of a Buildkite step the test runs.
type bkStep struct {
	Command       string            `yaml:"command" json:"command"`
	Env           map[string]string `yaml:"env" json:"env"`
	ArtifactPaths []string          `yaml:"artifact_paths" json:"artifact_paths"`
	Plugins       []map[string]struct {
		Image string `json:"image"`
	} `yaml:"plugins" json:"plugins"`
	Wait *struct{} `json:"wait"`
}

// runBuildkite runs pipeline.yml's plan step, then the steps it uploads,
// as Buildkite would for a build of main or of pull request 7.
func runBuildkite(a *api, srv *httptest.Server) func(tm *team, pr bool) (*result, string, []string) {
	return func(tm *team, pr bool) (*result, string, []string) {
		t := tm.t
		res := &result{}
		var pipeline struct {
			Env   map[string]string `yaml:"env"`
			Steps []bkStep          `yaml:"steps"`
		}
		b, err := os.ReadFile(filepath.Join(tm.repo, ".buildkite/pipeline.yml"))
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(b, &pipeline); err != nil {
			t.Fatal(err)
		}
		build := fmt.Sprintf("build-%d", tm.jobs)
		store := filepath.Join(tm.state, "buildkite", build)
		env := maps.Clone(pipeline.Env)
		maps.Copy(env, map[string]string{"CI": "true", "BUILDKITE": "true", "BUILDKITE_BUILD_ID": build, "BUILDKITE_API": srv.URL + "/v2",
			"BUILDKITE_API_TOKEN": "stub-token", "BUILDKITE_ORGANIZATION_SLUG": "team", "BUILDKITE_PIPELINE_SLUG": "app",
			"BUILDKITE_BRANCH": "main", "BUILDKITE_PULL_REQUEST": "false"})
		if pr {
			env["BUILDKITE_BRANCH"], env["BUILDKITE_PULL_REQUEST"] = "upgrade", "7"
		}
		step := func(name string, s bkStep, image string) (int, string) {
			stepEnv := maps.Clone(env)
			maps.Copy(stepEnv, s.Env)
			dir := tm.workspace(nil)
			code, out := tm.sh(dir, bash, s.Command, stepEnv, image)
			res.logf("== %s (exit %d)\n%s", name, code, out)
			for _, p := range s.ArtifactPaths {
				re := globRE(p)
				filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
					rel, _ := filepath.Rel(dir, path)
					if err == nil && !d.IsDir() && re.MatchString(filepath.ToSlash(rel)) {
						copyTree(t, path, filepath.Join(store, rel))
					}
					return err
				})
			}
			return code, dir
		}
		if code, _ := step("plan", pipeline.Steps[0], ""); code != 0 {
			t.Fatalf("the plan step failed:\n%s", res.log.String())
		}
		var uploaded struct {
			Steps []bkStep `json:"steps"`
		}
		b, err = os.ReadFile(store + ".pipeline")
		if err != nil {
			t.Fatalf("the plan step uploaded no pipeline: %v", err)
		}
		if err := json.Unmarshal(b, &uploaded); err != nil {
			t.Fatal(err)
		}
		var mergeDir string
		for _, s := range uploaded.Steps {
			switch {
			case s.Wait != nil || s.Command == "":
			case len(s.Plugins) > 0:
				var image string
				for _, p := range s.Plugins {
					for _, c := range p {
						image = strings.TrimPrefix(c.Image, "vllm/vllm-openai:")
					}
				}
				code, _ := step("gate "+s.Env["SERVER"], s, image)
				res.gates = append(res.gates, code)
			default:
				res.merge, mergeDir = step("merge", s, "")
			}
		}
		if !pr && res.merge == 0 {
			a.mu.Lock()
			a.passed = build
			a.mu.Unlock()
		}
		var bodies []string
		if b, err := os.ReadFile(store + ".annotation.slogate"); err == nil {
			bodies = append(bodies, string(b))
		}
		return res, mergeDir, bodies
	}
}

// buildkiteStub plays the agent's artifact download, pipeline upload and
// annotate, over the state folder (buildkite/BUILD/ the build's artifacts).
func buildkiteStub(args []string) int {
	state := filepath.Join(os.Getenv(stubState), "buildkite")
	build := os.Getenv("BUILDKITE_BUILD_ID")
	fail := func(format string, a ...any) int {
		fmt.Fprintf(os.Stderr, "buildkite-agent (test stub): "+format+"\n", a...)
		return 1
	}
	if len(args) < 2 {
		return fail("%q", args)
	}
	var flags = map[string]string{}
	var pos []string
	for i := 2; i < len(args); i++ {
		if strings.HasPrefix(args[i], "--") && i+1 < len(args) {
			flags[args[i][2:]] = args[i+1]
			i++
			continue
		}
		pos = append(pos, args[i])
	}
	switch args[0] + " " + args[1] {
	case "artifact download":
		if len(pos) != 2 {
			return fail("artifact download PATTERN DEST, got %q", pos)
		}
		from := filepath.Join(state, cmpOr(flags["build"], build))
		re, n := globRE(pos[0]), 0
		filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
			rel, _ := filepath.Rel(from, path)
			if err == nil && !d.IsDir() && re.MatchString(filepath.ToSlash(rel)) {
				n++
				return copyFile(path, filepath.Join(pos[1], rel))
			}
			return nil
		})
		if n == 0 {
			return fail("no artifacts found for %s in build %s", pos[0], cmpOr(flags["build"], build))
		}
	case "pipeline upload":
		b, err := io.ReadAll(os.Stdin)
		if err != nil {
			return fail("%v", err)
		}
		if err := os.MkdirAll(state, 0o755); err != nil {
			return fail("%v", err)
		}
		return boolCode(os.WriteFile(filepath.Join(state, build+".pipeline"), b, 0o644) != nil)
	case "annotate --context":
		b, err := io.ReadAll(os.Stdin)
		if err != nil {
			return fail("%v", err)
		}
		return boolCode(os.WriteFile(filepath.Join(state, build+".annotation."+args[2]), b, 0o644) != nil)
	default:
		return fail("%q is not played", args)
	}
	return 0
}

func boolCode(failed bool) int {
	if failed {
		return 1
	}
	return 0
}

// TestBuildkiteCopied runs the Buildkite pipeline in a team's repository.
func TestBuildkiteCopied(t *testing.T) {
	t.Parallel()
	needTools(t, "jq", "curl", "bash")
	a, srv := newAPI(t)
	checkScenario(t, runBuildkite(a, srv), buildkiteFiles)
}

func fileSHA256(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// TestPathFilters: each example runs on a change to the engine's tag, a
// spec or the gate itself, and not on one to the team's other files (a docs
// change spends no GPU).
func TestPathFilters(t *testing.T) {
	b, err := os.ReadFile("github/vllm-upgrade-gate.yml")
	if err != nil {
		t.Fatal(err)
	}
	var paths struct {
		On map[string]struct {
			Paths []string `yaml:"paths"`
		} `yaml:"on"`
	}
	if err := yaml.Unmarshal(b, &paths); err != nil {
		t.Fatal(err)
	}
	gitlab := yamlDocs(t, "gitlab/.gitlab-ci.yml")[0]
	var gitlabPaths [2][]string
	for i := range gitlabPaths {
		for _, p := range dig(gitlab, ".when-it-matters", "rules", i, "changes", "paths").([]any) {
			gitlabPaths[i] = append(gitlabPaths[i], p.(string))
		}
	}
	for _, job := range []string{"plan", "gate"} {
		if got := dig(gitlab, job, "extends"); got != ".when-it-matters" {
			t.Errorf("GitLab job %s extends %v, not the path rules .when-it-matters", job, got)
		}
	}
	var buildkite []string
	for _, p := range dig(yamlDocs(t, "buildkite/pipeline.yml")[0], "steps", 0, "if_changed").([]any) {
		buildkite = append(buildkite, p.(string))
	}
	filters := map[string][]string{
		"GitHub pull_request": paths.On["pull_request"].Paths, "GitHub push to main": paths.On["push"].Paths,
		"GitLab merge request": gitlabPaths[0], "GitLab main": gitlabPaths[1], "Buildkite": buildkite,
	}
	own := map[string][]string{ // the files of each example, where its comment says to copy them
		"GitHub": slices.Collect(maps.Values(githubFiles)), "GitLab": slices.Collect(maps.Values(gitlabFiles)), "Buildkite": slices.Collect(maps.Values(buildkiteFiles)),
	}
	for _, tc := range []struct {
		name string
		file string
		runs bool
	}{
		{name: "the engine's tag", file: "vllm-tag.txt", runs: true},
		{name: "a spec", file: "specs/chat.hcl", runs: true},
		{name: "a spec in a folder", file: "specs/sglang/chat.hcl", runs: true},
		{name: "the README", file: "README.md"},
		{name: "a doc", file: "docs/runbook.md"},
		{name: "the service's code", file: "src/server.go"},
		{name: "a spec's name elsewhere", file: "docs/specs/chat.hcl"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for name, globs := range filters {
				if got := slices.ContainsFunc(globs, func(g string) bool { return globRE(g).MatchString(tc.file) }); got != tc.runs {
					t.Errorf("%s %v: a change to %s runs the gate: %v, want %v", name, globs, tc.file, got, tc.runs)
				}
			}
		})
	}
	for name, globs := range filters {
		platform, _, _ := strings.Cut(name, " ")
		for _, f := range own[platform] {
			if !slices.ContainsFunc(globs, func(g string) bool { return globRE(g).MatchString(f) }) && !strings.HasSuffix(f, "actionlint.yaml") {
				t.Errorf("%s %v: a change to the gate's own %s does not run it", name, globs, f)
			}
		}
	}
}
