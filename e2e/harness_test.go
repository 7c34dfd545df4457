// Package e2e runs the real slogate binary against real `slogate sim`
// processes with short windows. TestMain builds the binary once.
package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// bin is the slogate binary under test.
var bin string

// parallelDefault is how many tests of this package run at once unless
// -parallel says otherwise. An e2e test mostly waits (measurement windows,
// steady-state holds, servers starting), so more run at once than the
// default GOMAXPROCS; the few that measure the machine itself do not call
// t.Parallel and run alone, before the others start. On 2 cores 8 took
// the package from 12 minutes to under 2.5, bounded then by its longest
// test (TestGateNoise); 6 took 3.
const parallelDefault = 8

func TestMain(m *testing.M) {
	flag.Parse()
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit {
		flag.Set("test.parallel", strconv.Itoa(max(parallelDefault, runtime.GOMAXPROCS(0))))
	}
	dir, err := os.MkdirTemp("", "slogate-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = filepath.Join(dir, "slogate")
	// Static, as the Dockerfile ships it: the podman tests run this very
	// binary inside a container with nothing else in it (podman_test.go).
	build := exec.Command("go", "build", "-o", bin, "../cmd/slogate")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
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

// notInherited are variables of the tests' own environment that would
// change what slogate or the simulator does, and so what a test sees: a
// CI job's step summary and annotations (slogate would append to the job's
// real summary), a developer's vLLM key or dev mode, an outer run's mark.
// A test that wants one sets it for its command.
var notInherited = []string{"GITHUB_STEP_SUMMARY", "GITHUB_ACTIONS", "CI", "VLLM_API_KEY", "VLLM_SERVER_DEV_MODE", markEnv}

// childEnv is the environment of a process a test starts: the tests' own
// without notInherited, then extra (KEY=VALUE).
func childEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(notInherited, name) {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// newMark returns a fresh tag for one test.
func newMark(t testing.TB) string {
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
	cmd.Env = append(append(childEnv(), markEnv+"="+mark, "NO_COLOR=1"), env...)
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

// freePort returns a loopback TCP port for a server a test starts, never
// handed out before in this process (parallel tests each get their own)
// and, while the test runs, to no other e2e process on the machine.
//
// A port taken by binding port 0 is not reserved: between its release and
// the server's bind another test could be given the same one, and any
// outgoing connection on the machine may take it as its local port. So the
// ports come from below the kernel's ephemeral range (which neither
// "port 0" nor outgoing connections use), each checked free by binding it,
// and each locked (flock on a file named after it under the temporary
// folder) until the test ends, so that concurrent e2e runs, of another
// checkout too, skip it.
func freePort(t testing.TB) int {
	t.Helper()
	port, lock, err := ports().next()
	if err != nil {
		t.Fatal(err)
	}
	if lock != nil {
		t.Cleanup(func() { lock.Close() }) // after the cleanups stopping the test's servers
	}
	return port
}

// ports is the process's port allocator.
var ports = sync.OnceValue(func() *portAllocator {
	lo, hi := portRange()
	return newPortAllocator(lo, hi, filepath.Join(os.TempDir(), "slogate-e2e-ports"))
})

// portAllocator hands out the ports of freePort.
type portAllocator struct {
	mu      sync.Mutex
	lo, hi  int // the range [lo, hi)
	at      int // where the search goes on
	given   map[int]bool
	lockDir string // "" when locks cannot be taken
}

// newPortAllocator hands out ports of [lo, hi), starting at a random one
// (so that concurrent e2e runs start apart), locked by files in lockDir.
func newPortAllocator(lo, hi int, lockDir string) *portAllocator {
	if os.MkdirAll(lockDir, 0o777) != nil {
		lockDir = ""
	}
	return &portAllocator{lo: lo, hi: hi, at: lo + mrand.IntN(hi-lo), given: map[int]bool{}, lockDir: lockDir}
}

// next returns a free port never given before, with its lock file (nil when
// the lock folder is unusable: the port is then only checked free).
func (a *portAllocator) next() (int, *os.File, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for range a.hi - a.lo {
		port := a.at
		if a.at++; a.at == a.hi {
			a.at = a.lo
		}
		if a.given[port] {
			continue
		}
		lock, ok := a.lock(port)
		if !ok {
			continue // another e2e process holds it
		}
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			if lock != nil {
				lock.Close()
			}
			continue // something else listens there
		}
		l.Close()
		a.given[port] = true
		return port, lock, nil
	}
	return 0, nil, fmt.Errorf("no free loopback port in [%d, %d)", a.lo, a.hi)
}

// lock takes port's lock file without waiting: ok is false when another
// process holds it; the file is nil when the lock folder is unusable.
func (a *portAllocator) lock(port int) (f *os.File, ok bool) {
	if a.lockDir == "" {
		return nil, true
	}
	f, err := os.OpenFile(filepath.Join(a.lockDir, fmt.Sprint(port)), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return nil, true // another user's file: the bind check still applies
	}
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		f.Close()
		return nil, false
	}
	return f, true
}

// portRange is the 10,000 ports just below the ephemeral range
// (/proc/sys/net/ipv4/ip_local_port_range, 32768 by default on Linux;
// elsewhere 20000–29999 stays clear of the usual 49152 and up).
func portRange() (lo, hi int) {
	hi = 30000
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil && n > 2024 {
				hi = n
			}
		}
	}
	return max(1024, hi-10000), hi
}

// startSim starts `slogate sim serve MODEL --port P args…` in its own process
// group, waits for /health, and stops it when the test ends. It returns the
// base URL. A port another process bound first (possible, if unlikely: see
// freePort) is retried with another one.
func startSim(t testing.TB, mark, model string, args ...string) string {
	t.Helper()
	return startSimEnv(t, mark, nil, model, args...)
}

// startSimEnv is startSim with env (NAME=value) added to the simulator's
// environment.
func startSimEnv(t testing.TB, mark string, env []string, model string, args ...string) string {
	t.Helper()
	for range 3 {
		if base, ok := startSimOnce(t, mark, env, model, freePort(t), args...); ok {
			return base
		}
	}
	t.Fatalf("simulator: the port was taken three times in a row")
	return ""
}

// startSimOnce is one try of startSim: ok is false when the port turned out
// to be taken.
func startSimOnce(t testing.TB, mark string, env []string, model string, port int, args ...string) (base string, ok bool) {
	t.Helper()
	argv := append([]string{"sim", "serve", model, "--host", "127.0.0.1", "--port", fmt.Sprint(port)}, args...)
	cmd := exec.Command(bin, argv...)
	cmd.Env = append(childEnv(env...), markEnv+"="+mark)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var log syncBuffer
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
	base = fmt.Sprintf("http://127.0.0.1:%d", port)
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-done:
			if strings.Contains(log.String(), "address already in use") {
				t.Logf("port %d was taken before the simulator bound it; trying another", port)
				return "", false
			}
			t.Fatalf("simulator exited before it was ready:\n%s", log.String())
		default:
		}
		resp, err := http.Get(base + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return base, true
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("simulator not ready after 20s:\n%s", log.String())
	return "", false
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
func noLeftovers(t testing.TB, mark string) {
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
	t.Parallel()
	if _, err := leftovers("probe"); err != nil {
		t.Skipf("cannot look for processes: %v", err)
	}
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skipf("no sleep command to start a marked process: %v", err)
	}
	mark := newMark(t)
	cmd := exec.Command(sleep, "30")
	cmd.Env = append(childEnv(), markEnv+"="+mark)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	defer func() { cmd.Process.Kill(); <-done }()
	// Between fork and exec the child's /proc environ is still this
	// process's: on a loaded machine the first look can come before the
	// exec (a CI rehearsal saw none), so look again for up to 10 s.
	left, err := leftovers(mark)
	for deadline := time.Now().Add(10 * time.Second); err == nil && len(left) == 0 && time.Now().Before(deadline); left, err = leftovers(mark) {
		time.Sleep(20 * time.Millisecond)
	}
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

// TestFreePort proves what parallel tests rely on: every port is handed
// out once, and one that another e2e process has locked or something
// listens on is passed over.
func TestFreePort(t *testing.T) {
	t.Parallel()
	t.Run("distinct under concurrent calls", func(t *testing.T) {
		var mu sync.Mutex
		seen := map[int]bool{}
		var wg sync.WaitGroup
		for range 64 {
			wg.Go(func() {
				port, _, err := ports().next()
				mu.Lock()
				defer mu.Unlock()
				if err != nil || seen[port] {
					t.Errorf("port %d (%v) handed out twice", port, err)
				}
				seen[port] = true
			})
		}
		wg.Wait()
	})
	// A range of one port: [p, p+1).
	onePort := func(t *testing.T) (*portAllocator, int) {
		p := freePort(t)
		return newPortAllocator(p, p+1, t.TempDir()), p
	}
	t.Run("never the same port twice", func(t *testing.T) {
		a, p := onePort(t)
		if got, lock, err := a.next(); got != p || err != nil {
			t.Fatalf("next() = %d, %v; want %d", got, err, p)
		} else {
			lock.Close()
		}
		if got, _, err := a.next(); err == nil {
			t.Errorf("next() gave %d again, want an error", got)
		}
	})
	t.Run("locked by another process", func(t *testing.T) {
		a, p := onePort(t)
		f, err := os.OpenFile(filepath.Join(a.lockDir, fmt.Sprint(p)), os.O_CREATE|os.O_RDWR, 0o666)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			t.Fatal(err)
		}
		if got, _, err := a.next(); err == nil {
			t.Errorf("next() gave %d, which another allocator holds", got)
		}
	})
	t.Run("listened on", func(t *testing.T) {
		a, p := onePort(t)
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		if got, _, err := a.next(); err == nil {
			t.Errorf("next() gave %d, where something listens", got)
		}
	})
}
