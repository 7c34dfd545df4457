package e2e

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// reportSeedResults is a results.json built from the GLM seed report's numbers
// (internal/report/testdata, regenerated with go test ./internal/report -update).
const reportSeedResults = "../internal/report/testdata/glm-5.3-flash-nvfp4-h200x2.results.json"

// TestReportCommand re-renders a saved run in every format, to stdout and
// to a file, and checks bad usage exits 2 with a message saying what to do.
func TestReportCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notJSON := filepath.Join(dir, "notes.txt")
	wrongSchema := filepath.Join(dir, "other.json")
	for path, content := range map[string]string{notJSON: "not json", wrongSchema: `{"schema":"something/else"}`} {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	abs, err := filepath.Abs(reportSeedResults)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout []string // substrings
		wantStderr []string
		wantFile   string // -o path whose content must hold wantInFile
		wantInFile []string
	}{
		{name: "markdown by default", args: []string{"report", abs}, wantStdout: []string{
			"# GLM-5.3-Flash-NVFP4 on H200 NVL 141GB ×2",
			"| 8K | 153.9 · 657 ms TTFT | 247.4 · 692 ms TTFT |",
			"| Sustained decode | 8K | 32 | Requests queued | 865.7 | 37.6 | 8,671 ms | 26.6 ms | 23.1 | 0 | 25,950 | 30.0 s |"}},
		{name: "flags after the file", args: []string{"report", abs, "-format", "md"}, wantStdout: []string{"## All measurements"}},
		{name: "html to a file", args: []string{"report", "-format", "html", "-o", filepath.Join(dir, "r.html"), abs},
			wantFile: filepath.Join(dir, "r.html"), wantInFile: []string{"<!DOCTYPE html>", "<svg ", "865.7"}},
		{name: "json", args: []string{"report", "-format=json", abs}, wantStdout: []string{`"schema": "slogate/results/v2"`, `"total_tps": 865.7`}},
		{name: "unknown format", args: []string{"report", "-format", "pdf", abs}, wantCode: 2,
			wantStderr: []string{"slogate: report: -format is md, html, json or csv, not \"pdf\"\nRun 'slogate help report' for usage.\n"}},
		{name: "no file", args: []string{"report"}, wantCode: 2, wantStderr: []string{"slogate: report: want exactly one results file, got 0\nRun 'slogate help report' for usage.\n"}},
		{name: "two files", args: []string{"report", abs, abs}, wantCode: 2, wantStderr: []string{"want exactly one results file, got 2"}},
		{name: "missing file", args: []string{"report", filepath.Join(dir, "nope.json")}, wantCode: 2,
			wantStderr: []string{"nope.json does not exist", "pass the results.json that `slogate run` wrote"}},
		{name: "a folder", args: []string{"report", dir}, wantCode: 2,
			wantStderr: []string{dir + " is a folder: pass the results.json inside it"}},
		{name: "not JSON", args: []string{"report", notJSON}, wantCode: 2, wantStderr: []string{"notes.txt: not a slogate results file", "pass a results.json written by slogate run"}},
		{name: "wrong schema", args: []string{"report", wrongSchema}, wantCode: 2, wantStderr: []string{`schema is "something/else"`}},
		{name: "unwritable -o", args: []string{"report", "-o", filepath.Join(dir, "no", "such", "dir.md"), abs}, wantCode: 2,
			wantStderr: []string{"-o " + filepath.Join(dir, "no", "such", "dir.md")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mark := newMark(t)
			r := slogate(t, mark, 20*time.Second, "", nil, tt.args...)
			if r.Code != tt.wantCode {
				t.Errorf("exit %d, want %d\nstderr:\n%s", r.Code, tt.wantCode, r.Stderr)
			}
			for _, s := range tt.wantStdout {
				if !strings.Contains(r.Stdout, s) {
					t.Errorf("stdout lacks %q", s)
				}
			}
			for _, s := range tt.wantStderr {
				if !strings.Contains(r.Stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, r.Stderr)
				}
			}
			if tt.wantCode != 0 && r.Stdout != "" {
				t.Errorf("stdout should be empty on error, got:\n%s", r.Stdout)
			}
			if tt.wantFile != "" {
				if r.Stdout != "" {
					t.Errorf("-o: stdout should be empty, got %d bytes", len(r.Stdout))
				}
				b, err := os.ReadFile(tt.wantFile)
				if err != nil {
					t.Fatal(err)
				}
				for _, s := range tt.wantInFile {
					if !strings.Contains(string(b), s) {
						t.Errorf("%s lacks %q", tt.wantFile, s)
					}
				}
			}
			if strings.HasPrefix(tt.name, "json") {
				var v map[string]any
				if err := json.Unmarshal([]byte(r.Stdout), &v); err != nil {
					t.Errorf("-format json is not JSON: %v", err)
				}
			}
			noLeftovers(t, mark)
		})
	}
}

// reportRunSpec is a quick spec for `slogate run -sim`: one prefill cell, two
// decode cells, an assertion that holds and one that cannot.
const reportRunSpec = `server "demo" {
  model             = "Qwen/Qwen3.5-4B"
  served_model_name = "qwen"
  host              = "127.0.0.1"
  port              = PORT
  ready_timeout     = "30s"
}

measure {
  duration   = "1s"
  max_output = 256
}

prefill { contexts = ["8K"] }

matrix "decode" {
  contexts    = ["8K"]
  concurrency = [1, 4]
}

assert "decode_8k_1" {
  condition     = decode["8K"][1].total_tps > 0
  error_message = "no tokens at all"
}

assert "impossible" {
  condition     = decode["8K"][4].total_tps >= 1e9
  error_message = "a billion tokens per second, please"
}
`

// TestRunJSONReports runs the real `slogate run -sim -json` and checks that stdout
// is nothing but test2json events, that gotestsum turns it into JUnit, that
// -junit and the -out folder hold every report, and the CI conveniences.
func TestRunJSONReports(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	specPath := filepath.Join(dir, "demo.hcl")
	if err := os.WriteFile(specPath, []byte(strings.Replace(reportRunSpec, "PORT", fmt.Sprint(freePort(t)), 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	summary := filepath.Join(dir, "summary.md")
	mark := newMark(t)
	r := slogate(t, mark, 90*time.Second, dir,
		[]string{"GITHUB_ACTIONS=true", "GITHUB_STEP_SUMMARY=" + summary},
		"run", "-sim", "-json", "-out", out, "-junit", filepath.Join(dir, "all.xml"), "demo.hcl")
	noLeftovers(t, mark)
	if r.Code != 1 {
		t.Fatalf("exit %d, want 1 (one assertion fails)\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}

	// stdout: only events, each with the test2json keys.
	type event struct {
		Time    time.Time
		Action  string
		Package string
		Test    string
		Elapsed *float64
		Output  *string
	}
	actions := map[string]string{}
	var last event
	var text strings.Builder
	for i, line := range strings.Split(strings.TrimSuffix(r.Stdout, "\n"), "\n") {
		var e event
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil {
			t.Fatalf("stdout line %d is not a test2json event: %v\n%s", i+1, err, line)
		}
		if e.Package != "demo.hcl" || e.Time.IsZero() {
			t.Errorf("line %d: Package %q, Time %v", i+1, e.Package, e.Time)
		}
		if e.Output != nil {
			text.WriteString(*e.Output)
		}
		switch e.Action {
		case "pass", "fail", "skip":
			actions[e.Test] = e.Action
		}
		last = e
	}
	if last.Action != "fail" || last.Test != "" {
		t.Errorf("last event %+v, want the package's fail", last)
	}
	for test, want := range map[string]string{
		"demo/prefill/ctx=8K": "pass", "demo/decode/ctx=8K/conc=1": "pass", "demo/decode/ctx=8K/conc=4": "pass",
		"demo/assert/decode_8k_1": "pass", "demo/assert/impossible": "fail",
	} {
		if actions[test] != want {
			t.Errorf("%s: %q, want %q", test, actions[test], want)
		}
	}
	for _, want := range []string{"--- FAIL: demo/assert/impossible", "demo.hcl:27: ", "a billion tokens per second, please", "FAIL\tdemo.hcl\t"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("Output events lack %q:\n%s", want, text.String())
		}
	}
	// Annotations go to stderr under -json.
	if !strings.Contains(r.Stderr, "::error file=demo.hcl,line=27,title=demo/assert/impossible::") {
		t.Errorf("no annotation on stderr:\n%s", r.Stderr)
	}
	if b, err := os.ReadFile(summary); err != nil || !strings.Contains(string(b), "| demo/assert/impossible | FAIL |") {
		t.Errorf("step summary: %v\n%s", err, b)
	}
	for _, name := range []string{"results.json", "report.md", "report.html", "junit.xml"} {
		if b, err := os.ReadFile(filepath.Join(out, name)); err != nil || len(b) == 0 {
			t.Errorf("-out %s: %v", name, err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "all.xml")); err != nil || !strings.Contains(string(b), `name="demo/assert/impossible"`) {
		t.Errorf("-junit file: %v\n%s", err, b)
	}
	// The saved run re-renders.
	rr := slogate(t, mark, 20*time.Second, dir, nil, "report", filepath.Join(out, "results.json"))
	if rr.Code != 0 || !strings.Contains(rr.Stdout, "| demo/assert/impossible | FAIL |") {
		t.Errorf("slogate report on the run: exit %d\n%s%s", rr.Code, rr.Stdout, rr.Stderr)
	}
}

// TestRunJSONThroughGotestsum is the CI recipe of docs/commands.md#output:
// gotestsum --junitfile j.xml --raw-command -- slogate run -json SPEC.
func TestRunJSONThroughGotestsum(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs gotestsum: skipped with -short")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH, so `go tool gotestsum` cannot run")
	}
	dir := t.TempDir()
	specPath := filepath.Join(dir, "demo.hcl")
	if err := os.WriteFile(specPath, []byte(strings.Replace(reportRunSpec, "PORT", fmt.Sprint(freePort(t)), 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	junit := filepath.Join(dir, "j.xml")
	mark := newMark(t)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, goBin, "tool", "gotestsum", "--junitfile", junit, "--raw-command", "--",
		bin, "run", "-sim", "-json", "-out", filepath.Join(dir, "out"), specPath)
	cmd.Dir = ".."
	cmd.Env = append(childEnv(), markEnv+"="+mark, "GOVERSION=go-test")
	output, err := cmd.CombinedOutput()
	noLeftovers(t, mark)
	if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() != 1) {
		t.Fatalf("gotestsum: %v\n%s", err, output)
	}
	b, err := os.ReadFile(junit)
	if err != nil {
		t.Fatalf("gotestsum wrote no JUnit: %v\n%s", err, output)
	}
	var doc struct {
		Suites []struct {
			Name     string `xml:"name,attr"`
			Failures int    `xml:"failures,attr"`
			Cases    []struct {
				Name    string    `xml:"name,attr"`
				Failure *struct{} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("invalid JUnit: %v\n%s", err, b)
	}
	if len(doc.Suites) != 1 || doc.Suites[0].Name != specPath {
		t.Fatalf("suites %+v, want one named %s\n%s", doc.Suites, specPath, b)
	}
	failed := map[string]bool{}
	for _, c := range doc.Suites[0].Cases {
		failed[c.Name] = c.Failure != nil
	}
	if !failed["demo/assert/impossible"] || failed["demo/assert/decode_8k_1"] {
		t.Errorf("JUnit outcomes %v: want demo/assert/impossible failed and decode_8k_1 passed\n%s", failed, b)
	}
}
