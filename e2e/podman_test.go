package e2e

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	res "github.com/slogate/slogate/internal/result"
)

// Container tests against a real podman (issue 21): slogate's own argv
// (`podman run --rm --name … -p 127.0.0.1:P:P -e VLLM_API_KEY IMAGE MODEL
// …`) runs the image scripts/podman-setup.sh builds, whose entrypoint
// `slogate sim serve` stands in for the vllm-openai image's `vllm serve`.
// The binary under test is mounted over the image's /slogate, so the
// container serves this checkout's simulator. However a run ends, podman
// must list no container of it and no process of it may be left: slogate,
// the podman client, conmon, and the server inside the container (which
// gets the test's mark through `-e`). The stand-in runtime of
// container_test.go keeps the faults a real runtime cannot be made to show
// (pull errors, no daemon, a container that survives rm -f).
//
// Where podman cannot run these tests skip, saying why; with CI=true they
// fail instead (.ci/run sets up podman, so a skip there is a broken setup).

// simImageEnv names the image to run instead of defaultSimImage.
const simImageEnv = "SLOGATE_SIM_IMAGE"

// defaultSimImage is the image scripts/podman-setup.sh tags.
const defaultSimImage = "localhost/slogate-sim:test"

// podmanReady checks, once, that podman answers and holds the image.
var podmanReady = sync.OnceValues(func() (string, error) {
	image := os.Getenv(simImageEnv)
	if image == "" {
		image = defaultSimImage
	}
	const fix = "run scripts/podman-setup.sh as root (it installs podman and runc, configures them and builds the image)"
	if _, err := exec.LookPath("podman"); err != nil {
		return "", fmt.Errorf("podman is not installed: %s", fix)
	}
	if out, err := exec.Command("podman", "info").CombinedOutput(); err != nil {
		return "", fmt.Errorf("`podman info` fails (%v: %s): %s", err, lastLine(string(out)), fix)
	}
	if out, err := exec.Command("podman", "image", "inspect", "--format", "{{.Id}}", image).CombinedOutput(); err != nil {
		return "", fmt.Errorf("podman has no image %s (%s): %s, or set %s to an image whose entrypoint is `slogate sim serve`",
			image, lastLine(string(out)), fix, simImageEnv)
	}
	return image, nil
})

// realPodman returns the image the tests run, or skips the test saying why
// podman cannot run it; with CI=true it fails the test instead.
func realPodman(t *testing.T) string {
	t.Helper()
	image, err := podmanReady()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%v (CI=true: the real-runtime tests must run, not skip)", err)
		}
		t.Skip(err)
	}
	return image
}

// podmanRun is one test's server in a podman container: its spec, its
// container name prefix (unique to the test, so that checks and `slogate
// clean -name-prefix` touch no other test's containers) and its mark.
type podmanRun struct {
	spec, prefix, mark, out string
	port                    int
}

// newPodmanRun writes a spec whose server "box" runs in podman from the
// local image, serving on a fresh port with the extra simulator flags
// simArgs, measuring cells; and registers the checks that nothing of it is
// left when the test ends.
func newPodmanRun(t *testing.T, simArgs, cells string) podmanRun {
	t.Helper()
	image := realPodman(t)
	var b [4]byte
	rand.Read(b[:])
	p := podmanRun{prefix: "e2e-" + hex.EncodeToString(b[:]), mark: newMark(t), port: freePort(t),
		out: filepath.Join(t.TempDir(), "out")}
	args := fastSim
	if simArgs != "" {
		args += ", " + simArgs
	}
	src := fmt.Sprintf(`server "box" {
  model             = "Qwen/Qwen3.5-4B"
  served_model_name = "qwen"
  host              = "127.0.0.1"
  port              = %d
  max_model_len     = 16384
  ready_timeout     = "60s"
  api_key           = %q
  env               = { HF_TOKEN = %q }
  args              = [%s]
  container {
    runtime     = "podman"
    image       = %q
    name_prefix = %q
    volumes     = [%q]
    args        = ["--pull=never", "-e", %q]
  }
}
%s`, p.port, containerKey, containerHFToken, args, image, p.prefix, bin+":/slogate:ro", markEnv, cells)
	p.spec = specFile(t, "spec.hcl", src)
	// The safety net, after the checks below have looked: whatever a
	// failed test left goes.
	t.Cleanup(func() {
		if names := p.containers(t); len(names) > 0 {
			exec.Command("podman", append([]string{"rm", "-f"}, names...)...).Run()
		}
		left, _ := leftovers(p.mark)
		for _, l := range append(left, processesNaming(p.prefix+"-")...) {
			var pid int
			fmt.Sscan(l, &pid) // "PID: command line"
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	t.Cleanup(func() { p.nothingLeft(t) })
	return p
}

// containers lists podman's containers (running or not) of this test.
func (p podmanRun) containers(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("podman", "ps", "-a", "--filter", "name=^"+p.prefix+"-", "--format", "{{.Names}}").CombinedOutput()
	if err != nil {
		t.Errorf("podman ps: %v: %s", err, out)
		return nil
	}
	return strings.Fields(string(out))
}

// nothingLeft fails the test when podman still lists a container of it
// (after a few seconds for one going), or a process of it survives: one
// carrying its mark (slogate, the podman client, the server inside the
// container), or one naming its containers (conmon).
func (p podmanRun) nothingLeft(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(p.containers(t)) > 0 && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	if left := p.containers(t); len(left) > 0 {
		t.Errorf("podman still lists the test's containers %v", left)
	}
	noLeftovers(t, p.mark)
	for time.Now().Before(deadline) && len(processesNaming(p.prefix+"-")) > 0 {
		time.Sleep(200 * time.Millisecond)
	}
	if left := processesNaming(p.prefix + "-"); len(left) > 0 {
		t.Errorf("processes of the test's containers left behind:\n%s", strings.Join(left, "\n"))
	}
}

// processesNaming lists the live processes whose command line contains s.
func processesNaming(s string) []string {
	procs, _ := filepath.Glob("/proc/[0-9]*")
	var out []string
	for _, dir := range procs {
		cmdline, err := os.ReadFile(dir + "/cmdline")
		pid := 0
		fmt.Sscan(filepath.Base(dir), &pid)
		if err != nil || pid == os.Getpid() || !strings.Contains(string(cmdline), s) || !processAlive(pid) {
			continue
		}
		out = append(out, filepath.Base(dir)+": "+strings.ReplaceAll(string(cmdline), "\x00", " "))
	}
	return out
}

// processState is pid's state letter in /proc (R, S, T, Z, …), or 0.
func processState(pid int) byte {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if i := strings.LastIndexByte(string(stat), ')'); err == nil && i > 0 && len(stat) > i+2 {
		return stat[i+2]
	}
	return 0
}

// markedProcess returns the pid of the live process carrying mark whose
// command line contains all of words, or 0.
func markedProcess(mark string, words ...string) int {
	left, _ := leftovers(mark)
	for _, l := range left {
		pid, cmdline, _ := strings.Cut(l, ": ")
		ok := true
		for _, w := range words {
			ok = ok && strings.Contains(cmdline, w)
		}
		if ok {
			var n int
			fmt.Sscan(pid, &n)
			return n
		}
	}
	return 0
}

// start runs slogate on the spec in the background with args before it.
func (p podmanRun) start(t *testing.T, args ...string) *background {
	t.Helper()
	return startSlogateEnv(t, p.mark, nil, append(append([]string{"run", "-out", p.out}, args...), p.spec)...)
}

// containerName is the name the run gave its container, from its console.
func (p podmanRun) containerName(t *testing.T, console string) string {
	t.Helper()
	m := regexp.MustCompile(`--name (` + regexp.QuoteMeta(p.prefix) + `-[0-9a-f]{12}-box)`).FindStringSubmatch(console)
	if m == nil {
		t.Fatalf("the console does not show `podman run … --name %s-<run id>-box`:\n%s", p.prefix, console)
	}
	return m[1]
}

// TestContainerRealRuntime: a whole run in a real podman container from the
// local image: the launch shows podman's argv with the secrets by name,
// the server's log holds the container's output, the prefill cell is
// measured, and at the end podman lists no container of the run and no
// process of it is left.
func TestContainerRealRuntime(t *testing.T) {
	t.Parallel()
	p := newPodmanRun(t, "", oneCell)
	start := time.Now()
	r := slogate(t, p.mark, 3*time.Minute, "", nil, "run", "-out", p.out, p.spec)
	if r.Code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	console := r.Stdout + r.Stderr
	name := p.containerName(t, console)
	want := fmt.Sprintf("starting server: env 'HF_TOKEN=<redacted>' 'VLLM_API_KEY=<redacted>' podman run --rm --name %s --label slogate.run=", name)
	if !strings.Contains(console, want) || strings.Contains(console, containerKey) || strings.Contains(console, containerHFToken) {
		t.Errorf("the console does not show the launch %q with the secrets redacted:\n%s", want, console)
	}
	serverLog, _ := os.ReadFile(filepath.Join(p.out, "server.log"))
	if !strings.Contains(string(serverLog), "Application startup complete") {
		t.Errorf("server.log does not hold the container's log:\n%s", serverLog)
	}
	results, err := res.Read(filepath.Join(p.out, "results.json"))
	if err != nil || len(results.Prefill) != 1 || len(results.Decode) != 2 {
		t.Errorf("results.json: want 1 prefill and 2 decode cells: %v", err)
	}
	t.Logf("run in podman: %v", time.Since(start).Round(100*time.Millisecond))
}

// TestContainerRealRuntimeStopped: SIGINT, SIGTERM and -timeout in the middle
// of the matrix stop the podman container (stop, rm -f, ps), keep what was
// measured and leave nothing. While it runs, the container's server
// enforces the API key it got by name only.
func TestContainerRealRuntimeStopped(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		args   []string
		signal syscall.Signal
		code   int
		said   string
	}{
		{name: "SIGINT", signal: syscall.SIGINT, code: 130, said: "interrupted by SIGINT"},
		{name: "SIGTERM", signal: syscall.SIGTERM, code: 143, said: "interrupted by SIGTERM"},
		{name: "timeout", args: []string{"-timeout", "15s"}, code: 3, said: "took longer than -timeout 15s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := newPodmanRun(t, "", strings.Replace(oneCell, `"1s"`, `"60s"`, 1))
			b := p.start(t, tc.args...)
			b.waitFor(t, "the prefill cell", 2*time.Minute, func() bool { return cellLines(p.out) >= 1 })
			base := fmt.Sprintf("http://127.0.0.1:%d", p.port)
			if code, _ := simGet(t, base+"/v1/models", ""); code != 401 {
				t.Errorf("GET /v1/models without the key = %d, want 401: VLLM_API_KEY did not reach the container", code)
			}
			if code, _ := simGet(t, base+"/v1/models", containerKey); code != 200 {
				t.Errorf("GET /v1/models with the key = %d, want 200", code)
			}
			if tc.signal != 0 {
				b.cmd.Process.Signal(tc.signal)
			}
			if code := b.exitAfter(t, 2*time.Minute); code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, b.stdout.String(), b.stderr.String())
			}
			all := b.stdout.String() + b.stderr.String()
			if !strings.Contains(all, tc.said) {
				t.Errorf("the output does not say %q:\n%s", tc.said, all)
			}
			p.containerName(t, all)
			if r, err := res.Read(filepath.Join(p.out, "results.json")); err != nil || len(r.Prefill) != 1 {
				t.Errorf("results.json does not keep the prefill cell: %v", err)
			}
		})
	}
}

// TestContainerRealRuntimeIgnoresSIGTERM: a container whose server ignores
// SIGTERM (--sim-ignore-sigterm). On SIGINT `podman stop -t 30` waits out
// the grace period and kills it; a second SIGINT cuts that short and goes
// to `rm -f`. Either way nothing is left.
func TestContainerRealRuntimeIgnoresSIGTERM(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		second bool
	}{
		{name: "grace period runs out"},
		{name: "second signal", second: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := newPodmanRun(t, `"--sim-ignore-sigterm"`, strings.Replace(oneCell, `"1s"`, `"60s"`, 1))
			b := p.start(t)
			b.waitFor(t, "the prefill cell", 2*time.Minute, func() bool { return cellLines(p.out) >= 1 })
			first := time.Now()
			b.cmd.Process.Signal(syscall.SIGINT)
			b.waitFor(t, "`podman stop -t 30`", 30*time.Second, func() bool { return markedProcess(p.mark, "podman", "stop", "-t", "30") != 0 })
			if tc.second {
				b.cmd.Process.Signal(syscall.SIGINT)
			}
			if code := b.exitAfter(t, 2*time.Minute); code != 130 {
				t.Fatalf("exit %d, want 130\nstdout:\n%s\nstderr:\n%s", code, b.stdout.String(), b.stderr.String())
			}
			took := time.Since(first)
			serverLog, _ := os.ReadFile(filepath.Join(p.out, "server.log"))
			if !strings.Contains(string(serverLog), "ignoring SIGTERM (--sim-ignore-sigterm)") {
				t.Errorf("server.log does not show the server ignoring SIGTERM:\n%s", serverLog)
			}
			switch {
			case tc.second && took > 25*time.Second:
				t.Errorf("exited %v after the first signal: the second did not cut stop's 30 s short", took.Round(time.Millisecond))
			case !tc.second && took < 29*time.Second:
				t.Errorf("exited %v after SIGINT: the container did not take stop's 30 s, so it did not ignore SIGTERM", took.Round(time.Millisecond))
			}
			t.Logf("exit %v after the first signal", took.Round(100*time.Millisecond))
		})
	}
}

// TestContainerRealRuntimeSlogateKilled: kill -9 of slogate leaves the
// podman client, which gets SIGTERM as its parent dies and passes it to the
// container: the container stops and is removed. When the client is killed
// too, the container survives, and `slogate clean -runtime podman
// -name-prefix P` removes it (and only the test's).
func TestContainerRealRuntimeSlogateKilled(t *testing.T) {
	t.Parallel()
	t.Run("client passes the signal", func(t *testing.T) {
		t.Parallel()
		p := newPodmanRun(t, "", strings.Replace(oneCell, `"1s"`, `"60s"`, 1))
		b := p.start(t)
		b.waitFor(t, "the prefill cell", 2*time.Minute, func() bool { return cellLines(p.out) >= 1 })
		b.cmd.Process.Kill()
		<-b.done
		// nothingLeft (at cleanup) waits for the container to go.
	})
	t.Run("client killed too, then slogate clean", func(t *testing.T) {
		t.Parallel()
		p := newPodmanRun(t, "", strings.Replace(oneCell, `"1s"`, `"60s"`, 1))
		b := p.start(t)
		b.waitFor(t, "the prefill cell", 2*time.Minute, func() bool { return cellLines(p.out) >= 1 })
		client := markedProcess(p.mark, "podman", "run", "--name", p.prefix)
		if client == 0 {
			t.Fatalf("no `podman run --name %s-…` client among the run's processes", p.prefix)
		}
		// Like a CI system killing the whole tree at once, without giving
		// the client its parent-death signal to pass on: slogate is
		// stopped (it cannot react to its client's end), the client
		// killed, then slogate. (Stopping the client instead and killing
		// slogate first would orphan the client's stopped process group,
		// and the kernel would send it SIGHUP, which podman's sig-proxy
		// passes to the container.)
		syscall.Kill(b.cmd.Process.Pid, syscall.SIGSTOP)
		b.waitFor(t, "slogate to stop", 10*time.Second, func() bool { return processState(b.cmd.Process.Pid) == 'T' })
		syscall.Kill(client, syscall.SIGKILL)
		b.cmd.Process.Kill()
		<-b.done
		time.Sleep(time.Second)
		left := p.containers(t)
		if len(left) != 1 {
			t.Fatalf("after kill -9 of slogate and its client podman lists %v, want the one container still there", left)
		}
		// Another run's container (created, not started), named with the
		// prefix but not PREFIX-…: clean -name-prefix must leave it.
		decoy := p.prefix + "x-other-box"
		if out, err := exec.Command("podman", "create", "--name", decoy, "--label", "slogate.run=other", "--pull=never", realPodman(t), "m").CombinedOutput(); err != nil {
			t.Fatalf("podman create %s: %v: %s", decoy, err, out)
		}
		t.Cleanup(func() { exec.Command("podman", "rm", "-f", decoy).Run() })
		r := slogate(t, p.mark, time.Minute, "", nil, "clean", "-runtime", "podman", "-name-prefix", p.prefix)
		if r.Code != 0 || strings.TrimSpace(r.Stdout) != "removed "+left[0] {
			t.Fatalf("clean: exit %d, want 0 and only `removed %s`\nstdout:\n%s\nstderr:\n%s", r.Code, left[0], r.Stdout, r.Stderr)
		}
		if got := p.containers(t); len(got) != 0 {
			t.Errorf("after clean podman still lists %v", got)
		}
		if exec.Command("podman", "container", "exists", decoy).Run() != nil {
			t.Errorf("clean -name-prefix %s removed %s, another run's container", p.prefix, decoy)
		}
		r = slogate(t, p.mark, time.Minute, "", nil, "clean", "-runtime", "podman", "-name-prefix", p.prefix)
		if want := "no container labelled slogate.run and named " + p.prefix + "-… in podman"; r.Code != 0 || !strings.Contains(r.Stdout, want) {
			t.Errorf("a second clean: exit %d, want 0 saying %q\nstdout:\n%s\nstderr:\n%s", r.Code, want, r.Stdout, r.Stderr)
		}
	})
}
