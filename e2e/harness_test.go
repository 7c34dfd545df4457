// Package e2e runs the real slogate binary against real `slogate sim`
// processes with short windows. TestMain builds the binary once.
package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// bin is the slogate binary under test.
var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "slogate-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = filepath.Join(dir, "slogate")
	build := exec.Command("go", "build", "-o", bin, "../cmd/slogate")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building slogate:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// markEnv is the environment variable that tags every process a test starts
// (slogate, and through inheritance every server it launches), so that
// leftovers can be found in /proc afterwards.
const markEnv = "SLOGATE_E2E_MARK"

// newMark returns a fresh tag for one test.
func newMark(t *testing.T) string {
	var b [8]byte
	rand.Read(b[:])
	return t.Name() + "-" + hex.EncodeToString(b[:])
}

// result is what one slogate invocation did.
type result struct {
	Stdout, Stderr string
	Code           int
}

// slogate runs the binary with args in dir ("" = the e2e folder), tagged
// with mark, killed after timeout. env adds variables (KEY=VALUE).
func slogate(t *testing.T, mark string, timeout time.Duration, dir string, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), markEnv+"="+mark, "NO_COLOR=1"), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{Stdout: stdout.String(), Stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.Code = ee.ExitCode()
	default:
		t.Fatalf("slogate %v: %v", args, err)
	}
	if ctx.Err() != nil {
		t.Fatalf("slogate %v did not finish within %v\nstdout:\n%s\nstderr:\n%s", args, timeout, r.Stdout, r.Stderr)
	}
	return r
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startSim starts `slogate sim serve MODEL --port P args…` in its own process
// group, waits for /health, and stops it when the test ends. It returns the
// base URL.
func startSim(t *testing.T, mark, model string, args ...string) string {
	t.Helper()
	port := freePort(t)
	argv := append([]string{"sim", "serve", model, "--host", "127.0.0.1", "--port", fmt.Sprint(port)}, args...)
	cmd := exec.Command(bin, argv...)
	cmd.Env = append(os.Environ(), markEnv+"="+mark)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	})
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-done:
			t.Fatalf("simulator exited before it was ready:\n%s", log.String())
		default:
		}
		resp, err := http.Get(base + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return base
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("simulator not ready after 20s:\n%s", log.String())
	return ""
}

// errNoProc says why leftovers cannot look: it reads the environment of
// every process from /proc, which only Linux (and some others) provide.
var errNoProc = errors.New("/proc/self/environ is not readable, so processes left behind cannot be found by their environment")

// leftovers lists the processes still alive that carry mark in their
// environment (zombies excluded). It fails with errNoProc where /proc is
// missing instead of reporting that nothing was left.
func leftovers(mark string) ([]string, error) {
	if env, err := os.ReadFile("/proc/self/environ"); err != nil || len(env) == 0 {
		return nil, errNoProc
	}
	var out []string
	procs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil || len(procs) == 0 {
		return nil, errNoProc
	}
	needle := []byte(markEnv + "=" + mark + "\x00")
	for _, p := range procs {
		env, err := os.ReadFile(p + "/environ")
		if err != nil || !bytes.Contains(env, needle) {
			continue
		}
		stat, _ := os.ReadFile(p + "/stat")
		if i := bytes.LastIndexByte(stat, ')'); i > 0 && len(stat) > i+2 && stat[i+2] == 'Z' {
			continue
		}
		cmdline, _ := os.ReadFile(p + "/cmdline")
		out = append(out, filepath.Base(p)+": "+strings.ReplaceAll(string(cmdline), "\x00", " "))
	}
	return out, nil
}

// noLeftovers fails the test when a process tagged with mark survives
// (after a grace period of a few seconds for processes still exiting).
// Where /proc is missing it skips the test, saying why, rather than pass a
// check it cannot make (a failure already reported still fails the test).
func noLeftovers(t *testing.T, mark string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		left, err := leftovers(mark)
		if err != nil {
			t.Skipf("cannot check for processes left behind: %v", err)
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("processes left behind:\n%s", strings.Join(left, "\n"))
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestLeftoversFinder proves the check the other tests rely on: a live
// process started with the mark is found, and is no longer found once it
// has exited.
func TestLeftoversFinder(t *testing.T) {
	if _, err := leftovers("probe"); err != nil {
		t.Skipf("cannot look for processes: %v", err)
	}
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skipf("no sleep command to start a marked process: %v", err)
	}
	mark := newMark(t)
	cmd := exec.Command(sleep, "30")
	cmd.Env = append(os.Environ(), markEnv+"="+mark)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	defer func() { cmd.Process.Kill(); <-done }()
	left, err := leftovers(mark)
	if err != nil || len(left) != 1 || !strings.Contains(left[0], "sleep 30") {
		t.Fatalf("leftovers(mark) = %q, %v; want the running sleep 30", left, err)
	}
	if other, _ := leftovers(mark + "-other"); len(other) != 0 {
		t.Errorf("another mark found %q", other)
	}
	cmd.Process.Kill()
	<-done
	if left, _ := leftovers(mark); len(left) != 0 {
		t.Errorf("after the process exited: %q", left)
	}
}
