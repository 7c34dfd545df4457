package e2e

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	res "github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// TestPlanMatrixSeedSpecs: `plan -format matrix` on the three seed specs
// prints one entry per server with the spec as given, the estimate that
// `plan -format json` gives the same server, and the GPUs the spec asks for
// (tensor_parallel_size × pipeline × data, or labels.gpu_count).
func TestPlanMatrixSeedSpecs(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	specs := []string{
		"../specs/qwen3.5-4b-h200-dflash.hcl",
		"../specs/glm-5.3-flash-nvfp4-h200x2.hcl",
		"../specs/ling-3.0-flash-int4-h200x2.hcl",
	}
	r := slogate(t, mark, time.Minute, "", nil, append([]string{"plan", "-format", "matrix"}, specs...)...)
	if r.Code != 0 {
		t.Fatalf("exit %d\n%s", r.Code, r.Stderr)
	}
	if strings.Count(strings.TrimSpace(r.Stdout), "\n") != 0 {
		t.Errorf("the matrix is not one line (a CI output variable wants one):\n%s", r.Stdout)
	}
	type entry struct {
		Spec      string `json:"spec"`
		Server    string `json:"server"`
		Estimated int64  `json:"estimated_s"`
		GPUs      int    `json:"gpus"`
	}
	var got []entry
	if err := json.Unmarshal([]byte(r.Stdout), &got); err != nil {
		t.Fatalf("%v:\n%s", err, r.Stdout)
	}
	want := []struct {
		spec, server string
		gpus         int
	}{
		{specs[0], "qwen", 1}, // tensor_parallel_size = 1
		{specs[1], "glm", 2},  // tensor_parallel_size = 2 × data_parallel_size = 1
		{specs[2], "ling", 2}, // tensor_parallel_size = 2
	}
	if len(got) != len(want) {
		t.Fatalf("%d entries, want %d:\n%s", len(got), len(want), r.Stdout)
	}
	for i, w := range want {
		g := got[i]
		if g.Spec != w.spec || g.Server != w.server || g.GPUs != w.gpus {
			t.Errorf("entry %d = %+v, want spec %s server %s gpus %d", i, g, w.spec, w.server, w.gpus)
		}
		// The estimate is the plan's, the one `plan -format json` prints.
		pj := slogate(t, mark, time.Minute, "", nil, "plan", "-format", "json", w.spec)
		var doc struct {
			Servers []struct {
				Estimated int64 `json:"estimated_s"`
			} `json:"servers"`
		}
		if err := json.Unmarshal([]byte(pj.Stdout), &doc); err != nil || len(doc.Servers) != 1 {
			t.Fatalf("plan -format json %s: %v\n%s", w.spec, err, pj.Stdout)
		}
		if g.Estimated <= 0 || g.Estimated != doc.Servers[0].Estimated {
			t.Errorf("%s: estimated_s %d, plan -format json says %d", w.server, g.Estimated, doc.Servers[0].Estimated)
		}
	}
}

// writeFleetSpec writes a spec with servers "a" and "b", both simulated on
// their own ports with flat timings and a one-cell matrix; the assert
// "not_b" fails for server b only.
func writeFleetSpec(t *testing.T) string {
	t.Helper()
	server := func(name string) string {
		return fmt.Sprintf(`server %q {
  model             = "Qwen/Qwen3.5-4B"
  served_model_name = "qwen"
  host              = "127.0.0.1"
  port              = %d
  max_model_len     = 65536
  ready_timeout     = "20s"
  args              = ["--sim-tbt", "10ms", "--sim-ttft", "100ms", "--sim-kv-tokens", "1000000"]
}
`, name, freePort(t))
	}
	src := server("a") + server("b") + `
measure {
  duration   = "1s"
  max_output = 512
}
matrix "decode" {
  contexts    = ["1K"]
  concurrency = [1]
}
assert "not_b" {
  condition     = server.name != "b"
  error_message = "server b is not wanted"
}
`
	return specFile(t, "fleet.hcl", src)
}

// TestRunServerRunsOnlyThatServer: `run -server b` of a two-server spec
// measures and judges b alone, into -out itself; an unknown name is a usage
// error listing the servers there are.
func TestRunServerRunsOnlyThatServer(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	defer noLeftovers(t, mark)
	spec := writeFleetSpec(t)
	out := filepath.Join(t.TempDir(), "out")
	r := slogate(t, mark, 2*time.Minute, "", nil, "run", "-sim", "-server", "b", "-out", out, spec)
	if r.Code != 1 {
		t.Fatalf("exit %d, want 1 (b's assert fails)\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	for _, want := range []string{"--- PASS: b/decode/ctx=1K/conc=1", "--- FAIL: b/assert/not_b"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.Stdout)
		}
	}
	if strings.Contains(r.Stdout, "a/") {
		t.Errorf("server a was run or judged:\n%s", r.Stdout)
	}
	got := readResults(t, out) // -out is b's folder: one server runs
	if got.Server.Name != "b" || len(got.Verdicts) != 1 || got.Verdicts[0].Test != "b/assert/not_b" {
		t.Errorf("results: server %q verdicts %+v", got.Server.Name, got.Verdicts)
	}

	r = slogate(t, mark, time.Minute, "", nil, "run", "-sim", "-server", "c", spec)
	if r.Code != 2 || !strings.Contains(r.Stderr, `-server "c": no spec defines that server; the servers are "a" (`+spec+`), "b" (`+spec+`)`) {
		t.Errorf("unknown server: exit %d, stderr:\n%s", r.Code, r.Stderr)
	}
}

// TestMergeResultsFolders: two servers measured into two folders merge into
// one results set — both runs' verdicts as recorded, JUnit cases of both,
// a report section for each — exiting with the worst run's code: 1 when one
// run has a failed assert, 3 when one ended with an infrastructure error.
func TestMergeResultsFolders(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	defer noLeftovers(t, mark)
	spec := writeFleetSpec(t)
	runs := filepath.Join(t.TempDir(), "runs")
	r := slogate(t, mark, 2*time.Minute, "", nil, "run", "-sim", "-out", runs, spec)
	if r.Code != 1 {
		t.Fatalf("run: exit %d, want 1\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	a, b := filepath.Join(runs, "a"), filepath.Join(runs, "b")

	t.Run("pass only", func(t *testing.T) {
		merged := filepath.Join(t.TempDir(), "merged")
		r := slogate(t, mark, time.Minute, "", nil, "merge", "-out", merged, a)
		if r.Code != 0 || !strings.Contains(r.Stdout, "ok    merged 1 runs into "+merged+" (exit 0)") {
			t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
		}
	})

	t.Run("one failed assert exits 1", func(t *testing.T) {
		merged := filepath.Join(t.TempDir(), "merged")
		summary := filepath.Join(t.TempDir(), "summary.md")
		r := slogate(t, mark, time.Minute, "", []string{"GITHUB_STEP_SUMMARY=" + summary}, "merge", "-out", merged, a, b)
		if r.Code != 1 {
			t.Fatalf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
		}
		for _, want := range []string{"ok    a\t" + spec + "\texit 0", "FAIL  b\t" + spec + "\texit 1", "FAIL  merged 2 runs"} {
			if !strings.Contains(r.Stdout, want) {
				t.Errorf("stdout lacks %q:\n%s", want, r.Stdout)
			}
		}
		m := readMerged(t, merged)
		if m.ExitCode != 1 || m.Outcome != vocab.Fail || len(m.Runs) != 2 {
			t.Fatalf("merged: exit %d outcome %v runs %d", m.ExitCode, m.Outcome, len(m.Runs))
		}
		// The verdicts are those recorded, not evaluated again.
		for i, want := range []struct {
			dir     string
			outcome vocab.Outcome
		}{{"a", vocab.Pass}, {"b", vocab.Fail}} {
			run := m.Runs[i]
			recorded := readResults(t, filepath.Join(runs, want.dir))
			if run.Dir != want.dir || run.Outcome != want.outcome || len(run.Results.Verdicts) != 1 ||
				run.Results.Verdicts[0].Outcome != recorded.Verdicts[0].Outcome || run.Results.Verdicts[0].Test != want.dir+"/assert/not_b" {
				t.Errorf("run %d: dir %q outcome %v verdicts %+v", i, run.Dir, run.Outcome, run.Results.Verdicts)
			}
			// Each server's results.json is kept for a later -baseline.
			if copied := readResults(t, filepath.Join(merged, want.dir)); copied.Server.Name != want.dir {
				t.Errorf("%s/results.json holds server %q", want.dir, copied.Server.Name)
			}
		}
		cases := junitCases(t, filepath.Join(merged, "junit.xml"))
		for _, want := range []string{"a/decode/ctx=1K/conc=1 pass", "a/assert/not_b pass", "b/decode/ctx=1K/conc=1 pass", "b/assert/not_b failure"} {
			if !cases[want] {
				t.Errorf("junit.xml lacks case %q; has %v", want, cases)
			}
		}
		md := readFile(t, filepath.Join(merged, "report.md"))
		for _, want := range []string{"# slogate: FAIL across 2 servers", "| a | " + spec + " | PASS | 0 | 1 pass |", "| b | " + spec + " | FAIL | 1 | 1 fail |",
			"- **b/assert/not_b** FAIL", "## Verdicts"} {
			if !strings.Contains(md, want) {
				t.Errorf("report.md lacks %q:\n%s", want, md)
			}
		}
		if n := strings.Count(md, "\n## Qwen3.5-4B on "); n != 2 {
			t.Errorf("report.md has %d server sections, want 2:\n%s", n, md)
		}
		html := readFile(t, filepath.Join(merged, "report.html"))
		if n := strings.Count(html, `<section class="run" id="run-`); n != 2 || !strings.Contains(html, "b/assert/not_b") || strings.Count(html, "<main>") != 1 {
			t.Errorf("report.html: %d run sections, want 2 and one <main>", n)
		}
		if s := readFile(t, summary); !strings.Contains(s, "### slogate merge: FAIL across 2 servers") || strings.Count(s, "### slogate ") != 3 {
			t.Errorf("step summary:\n%s", s)
		}
	})

	t.Run("one errored run exits 3", func(t *testing.T) {
		broken := filepath.Join(t.TempDir(), "broken")
		r := slogate(t, mark, time.Minute, "", nil, "run", "-server", "a", "-out", broken, writeBrokenSpec(t))
		if r.Code != 3 {
			t.Fatalf("broken run: exit %d, want 3\nstderr:\n%s", r.Code, r.Stderr)
		}
		merged := filepath.Join(t.TempDir(), "merged")
		r = slogate(t, mark, time.Minute, "", nil, "merge", "-out", merged, b, broken)
		if r.Code != 3 || !strings.Contains(r.Stdout, "FAIL  a\t") || !strings.Contains(r.Stdout, "exit 3") {
			t.Errorf("exit %d, want 3\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
		}
		if m := readMerged(t, merged); m.ExitCode != 3 || m.Outcome != vocab.Error || m.Runs[1].Outcome != vocab.Error {
			t.Errorf("merged: exit %d outcome %v", m.ExitCode, m.Outcome)
		}
		if md := readFile(t, filepath.Join(merged, "report.md")); !strings.Contains(md, "- **a** ended early: ") {
			t.Errorf("report.md does not say a ended early:\n%s", md)
		}
	})

	t.Run("same server twice is a usage error", func(t *testing.T) {
		r := slogate(t, mark, time.Minute, "", nil, "merge", "-out", t.TempDir(), a, a)
		if r.Code != 2 || !strings.Contains(r.Stderr, `both hold server "a"`) {
			t.Errorf("exit %d\nstderr:\n%s", r.Code, r.Stderr)
		}
	})

	t.Run("a folder of folders says to pass its subfolders", func(t *testing.T) {
		r := slogate(t, mark, time.Minute, "", nil, "merge", "-out", t.TempDir(), runs)
		if r.Code != 2 || !strings.Contains(r.Stderr, "has no results.json, but its subfolders do: pass them ("+filepath.Join(runs, "*")+")") {
			t.Errorf("exit %d\nstderr:\n%s", r.Code, r.Stderr)
		}
	})
}

// writeBrokenSpec writes a spec whose server "a" exits at start (its
// command is `false`): its run ends with exit 3.
func writeBrokenSpec(t *testing.T) string {
	t.Helper()
	src := fmt.Sprintf(`server "a" {
  command       = "false"
  model         = "Qwen/Qwen3.5-4B"
  host          = "127.0.0.1"
  port          = %d
  ready_timeout = "20s"
}
measure { duration = "1s" }
matrix "decode" {
  contexts    = ["1K"]
  concurrency = [1]
}
`, freePort(t))
	path := filepath.Join(t.TempDir(), "broken.hcl")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func readMerged(t *testing.T, dir string) *res.Merged {
	t.Helper()
	m, err := res.DecodeMerged(dir, []byte(readFile(t, filepath.Join(dir, "results.json"))))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// junitCases reads a JUnit file into a set of "name result" strings, the
// result one of pass, failure, error, skipped.
func junitCases(t *testing.T, path string) map[string]bool {
	t.Helper()
	var doc struct {
		Suites []struct {
			Cases []struct {
				Name    string    `xml:"name,attr"`
				Failure *struct{} `xml:"failure"`
				Error   *struct{} `xml:"error"`
				Skipped *struct{} `xml:"skipped"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(readFile(t, path)), &doc); err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, s := range doc.Suites {
		for _, c := range s.Cases {
			word := "pass"
			switch {
			case c.Failure != nil:
				word = "failure"
			case c.Error != nil:
				word = "error"
			case c.Skipped != nil:
				word = "skipped"
			}
			out[c.Name+" "+word] = true
		}
	}
	return out
}

// TestMergeSeedAndSGLangTwin (issue 29): the Ling seed spec and its SGLang
// twin, specs/ling-….hcl and specs/sglang/ling-….hcl, share a file name
// and a server name. Each run alone keeps the names it always had
// (ling/decode/…, so that its baselines and JUnit history still match);
// `slogate merge -out merged vllm sglang` names them apart by the folder
// that tells the specs apart, in its folders, stdout, junit.xml and
// report.md, each naming its own spec file, and so does one run of both
// (its default folders, -junit); the same run twice is refused naming its
// spec; a baseline of a single run still matches by its names.
func TestMergeSeedAndSGLangTwin(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	defer noLeftovers(t, mark)
	root := t.TempDir()
	const ling = "ling-3.0-flash-int4-h200x2"
	vllmSpec, sglangSpec := "specs/"+ling+".hcl", "specs/sglang/"+ling+".hcl"
	port := regexp.MustCompile(`(?m)^(\s*port\s*=\s*)8000$`)
	for _, p := range []string{vllmSpec, sglangSpec} {
		src, err := os.ReadFile(filepath.Join("..", p))
		if err != nil {
			t.Fatal(err)
		}
		if !port.Match(src) {
			t.Fatalf("%s: no port = 8000 line to move to a free port", p)
		}
		src = port.ReplaceAll(src, []byte(fmt.Sprintf("${1}%d", freePort(t))))
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, p), src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cell := []string{"-run", `decode/ctx=8K/conc=1$`, "-duration", "500ms"}
	for _, run := range []struct{ out, spec string }{{"vllm", vllmSpec}, {"sglang", sglangSpec}} {
		r := slogate(t, mark, 2*time.Minute, root, nil, append(append([]string{"run", "-sim"}, cell...), "-out", run.out, run.spec)...)
		if r.Code != 0 {
			t.Fatalf("run %s: exit %d\nstdout:\n%s\nstderr:\n%s", run.spec, r.Code, r.Stdout, r.Stderr)
		}
		if !strings.Contains(r.Stdout, "=== RUN   ling/decode/ctx=8K/conc=1\n") {
			t.Errorf("run %s alone does not keep the test names it had (ling/decode/ctx=8K/conc=1):\n%s", run.spec, r.Stdout)
		}
	}

	r := slogate(t, mark, time.Minute, root, nil, "merge", "-out", "merged", "vllm", "sglang")
	if r.Code != 0 {
		t.Fatalf("merge: exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	runs := []struct{ name, spec, source string }{
		{ling + "/ling", vllmSpec, "vllm"},
		{"sglang/" + ling + "/ling", sglangSpec, "sglang"},
	}
	junit := readFile(t, filepath.Join(root, "merged", "junit.xml"))
	md := readFile(t, filepath.Join(root, "merged", "report.md"))
	for _, run := range runs {
		if want := "ok    " + run.name + "\t" + run.spec + "\texit 0\t" + run.source + "\n"; !strings.Contains(r.Stdout, want) {
			t.Errorf("merge's stdout lacks %q:\n%s", want, r.Stdout)
		}
		if got := readResults(t, filepath.Join(root, "merged", filepath.FromSlash(run.name))); got.Spec != run.spec {
			t.Errorf("merged/%s/results.json is of %s, want %s", run.name, got.Spec, run.spec)
		}
		if want := `classname="` + run.spec + `" name="` + run.name + `/decode/ctx=8K/conc=1"`; !strings.Contains(junit, want) {
			t.Errorf("merged junit.xml lacks %s:\n%s", want, junit)
		}
		if want := "Server **" + run.name + "** of " + run.spec + ": PASS"; !strings.Contains(md, want) {
			t.Errorf("merged report.md lacks %q", want)
		}
	}

	r = slogate(t, mark, time.Minute, root, nil, "merge", "-out", "twice", "vllm", "vllm")
	if want := `merge: vllm/results.json and vllm/results.json both hold server "ling" of ` + vllmSpec + ": merge each run once"; r.Code != 2 || !strings.Contains(r.Stderr, want) {
		t.Errorf("the same run twice: exit %d, want 2 saying %q\n%s", r.Code, want, r.Stderr)
	}

	// Both specs in one run: each gets its own default folder (and latest),
	// and -junit names the runs as merge does.
	r = slogate(t, mark, 3*time.Minute, root, nil, append(append([]string{"run", "-sim"}, cell...), "-junit", "both.xml", vllmSpec, sglangSpec)...)
	if r.Code != 0 {
		t.Fatalf("run of both specs: exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	both := readFile(t, filepath.Join(root, "both.xml"))
	for _, run := range runs {
		latest := filepath.Join(root, "slogate-out", filepath.FromSlash(run.name), "latest")
		if got := readResults(t, latest); got.Spec != run.spec {
			t.Errorf("%s holds a run of %s, want %s", latest, got.Spec, run.spec)
		}
		if want := `classname="` + run.spec + `" name="` + run.name + `/decode/ctx=8K/conc=1"`; !strings.Contains(both, want) {
			t.Errorf("-junit of both specs lacks %s:\n%s", want, both)
		}
	}

	// The merged copy of a run is a baseline its spec's next run matches
	// by the names it always had.
	baseline := filepath.Join("merged", "sglang", ling, "ling", "results.json")
	r = slogate(t, mark, 2*time.Minute, root, nil, append(append([]string{"run", "-sim"}, cell...), "-baseline", baseline, "-out", "again", sglangSpec)...)
	if !strings.Contains(r.Stdout, "=== RUN   ling/baseline/decode/ctx=8K/conc=1\n") || strings.Contains(r.Stdout+r.Stderr, "B only") || r.Code == 2 || r.Code == 3 {
		t.Errorf("-baseline of the merged copy: exit %d, want the cell compared as ling/baseline/decode/ctx=8K/conc=1\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
}
