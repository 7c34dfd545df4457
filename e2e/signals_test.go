package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	res "github.com/slogate/slogate/internal/result"
)

// Hardening tests (issue 6, item 2): SIGINT or SIGTERM to `slogate run`
// stops the server's whole process group, writes results and reports for
// what was measured, prints a summary and exits 130 or 143; no child
// survives slogate on any path.

// background is a slogate process the test signals.
type background struct {
	cmd            *exec.Cmd
	stdout, stderr syncBuffer
	done           chan struct{}
}

// syncBuffer is a bytes.Buffer a test may read while the process still
// writes to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startSlogate starts slogate with args, tagged with mark.
func startSlogate(t *testing.T, mark string, args ...string) *background {
	t.Helper()
	b := &background{cmd: exec.Command(bin, args...), done: make(chan struct{})}
	b.cmd.Env = append(childEnv(), markEnv+"="+mark, "NO_COLOR=1")
	b.cmd.Stdout, b.cmd.Stderr = &b.stdout, &b.stderr
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { b.cmd.Wait(); close(b.done) }()
	t.Cleanup(func() {
		select {
		case <-b.done:
		default:
			b.cmd.Process.Kill()
			<-b.done
		}
	})
	return b
}

// waitFor polls cond every 100 ms until it holds or d passes.
func (b *background) waitFor(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		select {
		case <-b.done:
			t.Fatalf("slogate exited (%v) while waiting for %s\nstdout:\n%s\nstderr:\n%s", b.cmd.ProcessState, what, b.stdout.String(), b.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s after %v\nstdout:\n%s\nstderr:\n%s", what, d, b.stdout.String(), b.stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// exitAfter waits at most d for slogate to exit and returns its code.
func (b *background) exitAfter(t *testing.T, d time.Duration) int {
	t.Helper()
	select {
	case <-b.done:
		return b.cmd.ProcessState.ExitCode()
	case <-time.After(d):
		b.cmd.Process.Kill()
		<-b.done
		t.Fatalf("slogate did not exit within %v of the signal\nstdout:\n%s\nstderr:\n%s", d, b.stdout.String(), b.stderr.String())
	}
	return -1
}

func cellLines(out string) int {
	b, _ := os.ReadFile(filepath.Join(out, "cells.jsonl"))
	return bytes.Count(b, []byte("\n"))
}

// fakeVLLM writes an executable that behaves like vLLM's process tree: it
// starts a helper child in the same process group (vLLM's EngineCore) and
// then runs the simulator with the arguments it was given.
func fakeVLLM(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "vllm")
	script := fmt.Sprintf("#!/bin/sh\nsleep 300 &\nexec %s sim \"$@\"\n", bin)
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestSignalDuringMeasurement: a signal in the middle of the matrix stops
// the server group (a child of the server included), keeps and reports
// every measured cell, prints the summary, and exits 128+signal.
func TestSignalDuringMeasurement(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		sig  syscall.Signal
		code int
	}{
		{name: "SIGINT", sig: syscall.SIGINT, code: 130},
		{name: "SIGTERM", sig: syscall.SIGTERM, code: 143},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			mark := newMark(t)
			defer noLeftovers(t, mark)
			spec := faultSpec(t, freePort(t), fmt.Sprintf("command = %q", fakeVLLM(t)), fastSim, `
measure {
  duration   = "1s"
  max_output = 4096
}
prefill { contexts = ["1K"] }
matrix "decode" {
  contexts    = ["1K"]
  concurrency = [1, 2, 3, 4, 5, 6]
}
`)
			out := filepath.Join(t.TempDir(), "out")
			junit := filepath.Join(t.TempDir(), "all.xml")
			b := startSlogate(t, mark, "run", "-out", out, "-junit", junit, spec)
			b.waitFor(t, "two finished cells", time.Minute, func() bool { return cellLines(out) >= 2 })
			b.cmd.Process.Signal(tc.sig)
			if code := b.exitAfter(t, 45*time.Second); code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, b.stdout.String(), b.stderr.String())
			}
			r, err := res.Read(filepath.Join(out, "results.json"))
			if err != nil {
				t.Fatal(err)
			}
			if !r.Interrupted || len(r.Prefill) != 1 || len(r.Decode) < 1 || len(r.Decode) >= 6 {
				t.Errorf("results.json: interrupted %v, %d prefill and %d decode cells", r.Interrupted, len(r.Prefill), len(r.Decode))
			}
			if n := cellLines(out); n != len(r.Prefill)+len(r.Decode) {
				t.Errorf("cells.jsonl has %d lines, results.json %d cells", n, len(r.Prefill)+len(r.Decode))
			}
			for _, name := range []string{"report.md", "report.html", "junit.xml", junit} {
				p := name
				if !filepath.IsAbs(p) {
					p = filepath.Join(out, name)
				}
				if b, err := os.ReadFile(p); err != nil || !bytes.Contains(b, []byte("1K")) {
					t.Errorf("%s not written with the measured cells: %v", name, err)
				}
			}
			stdout, stderr := b.stdout.String(), b.stderr.String()
			if !strings.Contains(stdout, "FAIL\t"+spec) {
				t.Errorf("no final summary line in stdout:\n%s", stdout)
			}
			if !strings.Contains(stderr, "interrupted by "+tc.name) {
				t.Errorf("stderr does not say the run was interrupted:\n%s", stderr)
			}
		})
	}
}

// TestSignalDuringBoot: a signal while the server is still starting stops
// it at once; results.json records the interruption.
func TestSignalDuringBoot(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	defer noLeftovers(t, mark)
	spec := faultSpec(t, freePort(t), "", fastSim+`, "--sim-startup", "5m"`, oneCell)
	out := filepath.Join(t.TempDir(), "out")
	b := startSlogate(t, mark, "run", "-sim", "-out", out, spec)
	b.waitFor(t, "the server log", 30*time.Second, func() bool {
		l, _ := os.ReadFile(filepath.Join(out, "server.log"))
		return bytes.Contains(l, []byte("Loading weights"))
	})
	b.cmd.Process.Signal(syscall.SIGTERM)
	if code := b.exitAfter(t, 45*time.Second); code != 143 {
		t.Fatalf("exit %d, want 143\nstdout:\n%s\nstderr:\n%s", code, b.stdout.String(), b.stderr.String())
	}
	r, err := res.Read(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !r.Interrupted || r.Error == "" {
		t.Errorf("results.json: interrupted %v error %q", r.Interrupted, r.Error)
	}
}

// TestSignalKillLeavesNoServer: even when slogate itself is killed (no
// chance to clean up), the server it launched does not survive it.
func TestSignalKillLeavesNoServer(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	defer noLeftovers(t, mark)
	spec := faultSpec(t, freePort(t), "", fastSim, strings.Replace(oneCell, `"1s"`, `"30s"`, 1))
	out := filepath.Join(t.TempDir(), "out")
	b := startSlogate(t, mark, "run", "-sim", "-out", out, spec)
	b.waitFor(t, "the prefill cell", time.Minute, func() bool { return cellLines(out) >= 1 })
	b.cmd.Process.Kill()
	<-b.done
	t.Cleanup(func() { killMarked(mark) }) // do not let a failure here leak the server
}

// killMarked SIGKILLs every process carrying mark (a safety net after a
// test that expects none to be left; noLeftovers has reported them first).
func killMarked(mark string) {
	left, _ := leftovers(mark) // without /proc there is nothing to find
	for _, l := range left {
		var pid int
		if _, err := fmt.Sscanf(l, "%d:", &pid); err == nil && pid > 0 {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// TestSignalLeavesEndpointRunning: with -endpoint slogate did not start the
// server, so an interrupted run must not stop it.
func TestSignalLeavesEndpointRunning(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	t.Cleanup(func() { noLeftovers(t, mark) }) // after startSim's cleanup
	base := startSim(t, mark, "Qwen/Qwen3.5-4B", "--served-model-name", "qwen", "--sim-tbt", "5ms", "--sim-ttft", "20ms", "--sim-kv-tokens", "1000000")
	spec := faultSpec(t, freePort(t), "", "", strings.Replace(oneCell, `"1s"`, `"30s"`, 1))
	out := filepath.Join(t.TempDir(), "out")
	b := startSlogate(t, mark, "run", "-endpoint", base, "-out", out, spec)
	b.waitFor(t, "the prefill cell", time.Minute, func() bool { return cellLines(out) >= 1 })
	b.cmd.Process.Signal(syscall.SIGTERM)
	if code := b.exitAfter(t, 45*time.Second); code != 143 {
		t.Fatalf("exit %d, want 143\nstderr:\n%s", code, b.stderr.String())
	}
	if code, _ := simGet(t, base+"/health", ""); code != 200 {
		t.Errorf("the endpoint's server stopped answering after slogate was interrupted (GET /health = %d)", code)
	}
}

// TestSecondSignalKillsNow: when the server's group ignores SIGTERM, the
// first signal would wait out the 30 s grace; a second one kills the group
// at once, and the run still exits 130 with nothing left behind.
func TestSecondSignalKillsNow(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	defer noLeftovers(t, mark)
	t.Cleanup(func() { killMarked(mark) })
	stubborn := filepath.Join(t.TempDir(), "vllm")
	script := fmt.Sprintf("#!/bin/sh\n(trap '' TERM; exec sleep 300) &\nexec %s sim \"$@\"\n", bin)
	if err := os.WriteFile(stubborn, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	spec := faultSpec(t, freePort(t), fmt.Sprintf("command = %q", stubborn), fastSim, strings.Replace(oneCell, `"1s"`, `"30s"`, 1))
	out := filepath.Join(t.TempDir(), "out")
	b := startSlogate(t, mark, "run", "-out", out, spec)
	b.waitFor(t, "the prefill cell", time.Minute, func() bool { return cellLines(out) >= 1 })
	first := time.Now()
	b.cmd.Process.Signal(syscall.SIGINT)
	b.waitFor(t, "the first signal's notice", 10*time.Second, func() bool {
		return strings.Contains(b.stderr.String(), "signal again to kill the server now")
	})
	// The notice comes before the runner stops the server: the simulator's
	// shutdown line says its group got SIGTERM, so the runner is waiting
	// out the grace period for the sleep that ignores it.
	b.waitFor(t, "the server's shutdown line", 20*time.Second, func() bool {
		l, _ := os.ReadFile(filepath.Join(out, "server.log"))
		return bytes.Contains(l, []byte("Shutting down FastAPI HTTP server."))
	})
	b.cmd.Process.Signal(syscall.SIGINT)
	if code := b.exitAfter(t, 20*time.Second); code != 130 {
		t.Fatalf("exit %d, want 130\nstdout:\n%s\nstderr:\n%s", code, b.stdout.String(), b.stderr.String())
	}
	// Without the second signal the exit comes 30 s (the grace) after the
	// first; the margin is for a loaded machine.
	if took := time.Since(first); took > 20*time.Second {
		t.Errorf("exited %v after the first signal: the second did not cut the 30 s grace short", took.Round(time.Millisecond))
	}
	if !strings.Contains(b.stderr.String(), "killing the server's process group now") {
		t.Errorf("stderr does not say the server is being killed:\n%s", b.stderr.String())
	}
}
