package e2e

// The committed llama.cpp spec, specs/llamacpp/tiny.hcl, as a user runs
// it: against the real llama-server (llamaServer's, skipping without one
// and failing under CI=true), with short windows through -var; and the
// error a user meets when scripts/llama-server cannot run (no root file
// system, not root), which needs no server and so runs everywhere.

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/slogate/slogate/internal/vocab"
)

// llamaSpecFile is the example spec these tests run, as committed.
const llamaSpecFile = "../specs/llamacpp/tiny.hcl"

// TestLlamaCppExampleSpec: specs/llamacpp/tiny.hcl passes on the real
// llama-server with 1-second windows: every assert passes (one stream
// decodes, four streams on two slots queue, open-loop traffic completes,
// every correctness prompt is answered), the prefill, decode and traffic
// cells and the correctness block's 12 outputs are in results.json, and
// nothing is left behind. It keeps CI's added time low: one run, 10 to
// 17 s on two cores, beside the other tests (its asserts hold on a loaded
// machine: a queue on two slots, tokens and answers at all).
func TestLlamaCppExampleSpec(t *testing.T) {
	t.Parallel()
	server, models := llamaServer(t)
	mark := newMark(t)
	port := freePort(t)
	out := filepath.Join(t.TempDir(), "out")
	start := time.Now()
	r := runLlama(t, mark, "run", "-out", out, "-var", "llama_server="+server, "-var", "model="+llamaModel(t, models, "tiny.gguf"),
		"-var", "duration=1s", "-var", "port="+strconv.Itoa(port), llamaSpecFile)
	t.Logf("slogate run %s took %.1f s", llamaSpecFile, time.Since(start).Seconds())
	starved := starvedOnly(t, r.Code, out)
	if r.Code != 0 && !starved {
		t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	results := readResults(t, out)
	outcomes := map[string]vocab.Outcome{}
	for _, v := range results.Verdicts {
		outcomes[v.Test] = v.Outcome
	}
	for _, name := range []string{"streams", "queued_above_slots", "traffic", "answers"} {
		test := "tiny/assert/" + name
		if got := outcomes[test]; starved && got == vocab.Inconclusive {
			continue // it read a cell the client could not measure
		}
		if got := outcomes[test]; got != vocab.Pass || !strings.Contains(r.Stdout, "--- PASS: "+test) {
			t.Errorf("%s: outcome %q, want pass, said so on the console\n%s", test, got, r.Stdout)
		}
	}
	if len(results.Prefill) != 1 || len(results.Decode) != 2 || len(results.Traffic) != 1 {
		t.Errorf("results.json has %d prefill, %d decode, %d traffic cells; want 1, 2, 1", len(results.Prefill), len(results.Decode), len(results.Traffic))
	}
	if b := results.CorrectnessBlock("greedy"); b == nil || len(b.Outputs) != 12 || b.Errors != 0 {
		t.Errorf("correctness block greedy: %+v, want 12 outputs and no errors", b)
	}
	noLlamaLeft(t, port)
}

// TestLlamaCppWrapperRefused: when scripts/llama-server cannot run the
// server, what it says tells the user what to run. Without its root file
// system, `slogate run` of the example spec exits 3 and quotes the
// wrapper's line from server.log: the setup command with its path, and
// the native alternative. Not root (checked where the test runs as root
// and setpriv can drop it), the wrapper says it needs root and why.
func TestLlamaCppWrapperRefused(t *testing.T) {
	t.Parallel()
	wrapper, err := filepath.Abs("../scripts/llama-server")
	if err != nil {
		t.Fatal(err)
	}
	setup := filepath.Join(filepath.Dir(wrapper), "llamacpp-setup.sh")
	native := "docs/llamacpp.md#getting-llama-server"
	t.Run("no root file system", func(t *testing.T) {
		mark := newMark(t)
		missing := filepath.Join(t.TempDir(), "no-root")
		r := slogate(t, mark, time.Minute, "", []string{"SLOGATE_LLAMACPP_ROOT=" + missing},
			"run", "-out", filepath.Join(t.TempDir(), "out"), "-var", "llama_server="+wrapper, "-var", "port="+strconv.Itoa(freePort(t)), llamaSpecFile)
		noLeftovers(t, mark)
		all := r.Stdout + r.Stderr
		for _, want := range []string{"the server exited before it was ready (exit status 127)",
			"no llama-server in " + missing + ": build that root once with `sudo " + setup + "`", native} {
			if !strings.Contains(all, want) {
				t.Errorf("the run does not say %q\nexit %d\nstdout:\n%s\nstderr:\n%s", want, r.Code, r.Stdout, r.Stderr)
			}
		}
		if r.Code != 3 {
			t.Errorf("exit %d, want 3 (the server did not start)", r.Code)
		}
	})
	t.Run("not root", func(t *testing.T) {
		setpriv, err := exec.LookPath("setpriv")
		if err != nil || os.Geteuid() != 0 {
			t.Skip("needs root and setpriv to run the wrapper as another user")
		}
		// A root file system the user nobody can look into (t.TempDir's
		// folders are the test's own, mode 0700): only root is missing.
		root, err := os.MkdirTemp("", "slogate-llamacpp-root-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(root) })
		if err := os.Chmod(root, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(root, "usr", "bin"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "usr", "bin", "llama-server"), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", wrapper, "--version")
		cmd.Env = childEnv("SLOGATE_LLAMACPP_ROOT=" + root)
		b, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 126 {
			t.Errorf("exit %v, want 126\n%s", err, b)
		}
		for _, want := range []string{"needs root, and runs as user nobody", "chroots into " + root, "Run slogate as root (sudo)", native} {
			if !strings.Contains(string(b), want) {
				t.Errorf("the wrapper does not say %q:\n%s", want, b)
			}
		}
	})
}
