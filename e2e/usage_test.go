package e2e

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Usage errors before anything is created (docs/commands.md#running): a
// run that cannot measure (-sim on an engine the simulator does not
// imitate, a command that is not installed, an endpoint that does not
// answer) says why first, with its exit code, and prints no plan and
// creates no folder: nothing of it is left behind.

// wantNothingCreated fails unless a refused run printed nothing on stdout
// and left neither the default results folder under cwd (the folder it ran
// in; "" when it wrote only into -out) nor its -out.
func wantNothingCreated(t *testing.T, r result, cwd, out string) {
	t.Helper()
	if r.Stdout != "" {
		t.Errorf("stdout of a run refused before it measured: want nothing (no plan, no estimate, no FAIL), got:\n%s", r.Stdout)
	}
	if cwd != "" {
		cwd = filepath.Join(cwd, "slogate-out")
	}
	for _, dir := range []string{cwd, out} {
		if dir == "" {
			continue
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			found, _ := filepath.Glob(filepath.Join(dir, "*"))
			t.Errorf("%s was created by a run that never measured (holding %v)", dir, found)
		}
	}
}

// takenPort is a port something already listens on (accepting and
// dropping, like a stale server), for as long as the test runs.
func takenPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return l.Addr().(*net.TCPAddr).Port
}

// TestUsageErrorsBeforeAnything: each refusal exits with its code, says
// why on stderr as its first words, and creates nothing, into the default
// folder and into -out alike; several servers' problems are said at once.
func TestUsageErrorsBeforeAnything(t *testing.T) {
	t.Parallel()
	notExecutable := filepath.Join(t.TempDir(), "vllm")
	if err := os.WriteFile(notExecutable, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	llama := func(name string) string {
		return fmt.Sprintf("server %q {\n  engine = \"llamacpp\"\n  model  = \"/models/tiny.gguf\"\n  port   = %d\n}\n", name, freePort(t))
	}
	vllm := func(name string, port int, attrs string) string {
		return fmt.Sprintf("server %q {\n  model = \"Qwen/Qwen3.5-4B\"\n  host  = \"127.0.0.1\"\n  port  = %d\n%s\n}\n", name, port, attrs)
	}
	for _, tc := range []struct {
		name    string
		servers string
		args    []string // before the spec
		code    int
		said    []string
	}{
		{name: "-sim on llama.cpp", servers: llama("tiny"), args: []string{"-sim"}, code: 2,
			said: []string{`-sim: slogate's simulator imitates vLLM and SGLang, not llama.cpp (server "tiny", engine = "llamacpp"): drop -sim`}},
		{name: "command not on PATH", servers: vllm("q", freePort(t), `  command = "vllm-not-installed"`), code: 3,
			said: []string{`the server's command "vllm-not-installed" cannot be run: exec: "vllm-not-installed": executable file not found in $PATH (is the command installed and on PATH?`}},
		{name: "command not executable", servers: vllm("q", freePort(t), fmt.Sprintf("  command = %q", notExecutable)), code: 3,
			said: []string{fmt.Sprintf("the server's command %q cannot be run", notExecutable), "permission denied"}},
		{name: "endpoint unreachable", servers: vllm("q", freePort(t), ""), args: []string{"-endpoint", fmt.Sprintf("http://127.0.0.1:%d", freePort(t))}, code: 3,
			said: []string{"is unreachable or not ready", "(is the server running? check -endpoint)"}},
		{name: "boots under -endpoint", servers: vllm("q", freePort(t), "") + "measure {\n  repeat = 2\n  boots = 2\n}\n", args: []string{"-endpoint", "http://127.0.0.1:1"}, code: 2,
			said: []string{"measure.boots = 2 restarts the server between groups of repeats, which -endpoint cannot"}},
		{name: "every server's problem at once, the worst code", servers: llama("tiny") + vllm("busy", takenPort(t), ""), args: []string{"-sim"}, code: 3,
			said: []string{`not llama.cpp (server "tiny"`, `server "busy": port 127.0.0.1:`, "already accepts connections"}},
	} {
		for _, into := range []string{"default folder", "-out"} {
			t.Run(tc.name+"/"+into, func(t *testing.T) {
				t.Parallel()
				mark := newMark(t)
				defer noLeftovers(t, mark)
				cwd := t.TempDir()
				spec := specFile(t, "spec.hcl", tc.servers+"matrix \"decode\" {\n  contexts    = [\"1K\"]\n  concurrency = [1]\n}\n")
				args := append([]string{"run", "-duration", "1s"}, tc.args...)
				out := ""
				if into == "-out" {
					out = filepath.Join(cwd, "out")
					args = append(args, "-out", out)
				}
				start := time.Now()
				r := slogate(t, mark, time.Minute, cwd, nil, append(args, spec)...)
				if r.Code != tc.code {
					t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.Code, tc.code, r.Stdout, r.Stderr)
				}
				if !strings.HasPrefix(r.Stderr, "slogate: ") {
					t.Errorf("stderr does not open with the reason:\n%s", r.Stderr)
				}
				for _, s := range tc.said {
					if !strings.Contains(r.Stderr, s) {
						t.Errorf("stderr does not say %q:\n%s", s, r.Stderr)
					}
				}
				if strings.Contains(r.Stderr, "holds no results") || strings.Contains(r.Stderr, "server.log") {
					t.Errorf("stderr speaks of a results folder that was never made:\n%s", r.Stderr)
				}
				wantNothingCreated(t, r, cwd, out)
				if d := time.Since(start); d > 15*time.Second {
					t.Errorf("took %v to refuse", d)
				}
			})
		}
	}
}

// TestUsageErrorJSON: under -json a run refused before it measured is a
// failed test2json package whose output is the reason, as an invalid spec
// is, so that gotestsum shows it; still nothing is created.
func TestUsageErrorJSON(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	defer noLeftovers(t, mark)
	cwd := t.TempDir()
	spec := specFile(t, "tiny.hcl", fmt.Sprintf("server \"tiny\" {\n  engine = \"llamacpp\"\n  model  = \"/models/tiny.gguf\"\n  port   = %d\n}\nmatrix \"decode\" {\n  contexts    = [\"1K\"]\n  concurrency = [1]\n}\n", freePort(t)))
	r := slogate(t, mark, time.Minute, cwd, nil, "run", "-json", "-sim", spec)
	if r.Code != 2 {
		t.Fatalf("exit %d, want 2\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	var output strings.Builder
	var last string
	for _, line := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
		var e struct{ Action, Package, Output string }
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("stdout line %q is no test2json event: %v", line, err)
		}
		if e.Package != spec {
			t.Errorf("event of package %q, want %q", e.Package, spec)
		}
		output.WriteString(e.Output)
		last = e.Action
	}
	if last != "fail" || !strings.Contains(output.String(), "-sim: slogate's simulator imitates vLLM and SGLang, not llama.cpp") {
		t.Errorf("want a failed package saying why; last action %q, output:\n%s", last, output.String())
	}
	if _, err := os.Stat(filepath.Join(cwd, "slogate-out")); !os.IsNotExist(err) {
		t.Errorf("slogate-out was created by a run refused under -json")
	}
}
