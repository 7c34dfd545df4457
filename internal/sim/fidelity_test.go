package sim

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	surf "github.com/slogate/slogate/internal/surface"
)

// fidelityGolden is the real vLLM whose surface the simulator matches,
// recorded by scripts/record-vllm-surface.sh from vLLM's CPU build
// (docs/simulator.md#fidelity). Regenerate it with
//
//	scripts/record-vllm-surface.sh /var/cache/slogate/vllm/0.32.0/bin/vllm-cpu
const fidelityGolden = "testdata/surface/vllm-0.32.0-cpu.json"

// simSurface writes the simulator's recorded surface to a file, to read
// beside the golden: go test ./internal/sim -run TestFidelity -sim-surface /tmp/sim.json
var simSurface = flag.String("sim-surface", "", "TestFidelity writes the simulator's recorded surface to this file")

// deliberate are the differences between the simulator's surface and the
// real vLLM's that are meant, each with why; docs/simulator.md#fidelity
// lists the same. A path ending in "/*" stands for every path below it;
// want and got, when set, are the difference's values exactly (so that a
// further change at the same place is not taken for the listed one).
// TestFidelity fails on a difference not listed here and on a listed one
// that no longer occurs.
var deliberate = []struct {
	path, want, got string
	reason          string
}{
	{path: "log/kv", want: kvLinePattern("CPU"), got: kvLinePattern("GPU"),
		reason: "the simulator imitates a GPU server: vLLM names the device the KV cache is on (_kv_cache_device_name, kv_cache_utils.py), GPU on CUDA, CPU on the CPU build the golden was recorded from; the rest of the line is the same"},
	{path: "runtime_metrics/*",
		reason: "the Python runtime's (python_*, process_*) and the HTTP instrumentator's (http_*) families are the server's runtime, not vLLM's; slogate reads none of them"},
}

// kvLinePattern is vLLM 0.32.0's KV capacity line from one engine, as
// surface.Pattern records it, for the device named.
func kvLinePattern(device string) string {
	return "(EngineCore pid=<pid>) INFO <time> [kv_cache_utils.py:<line>] " + device +
		" KV cache size: <n,nnn> tokens, Maximum concurrency for <n,nnn> tokens per request: <n.nn>x"
}

// TestFidelity records the simulator's surface with internal/surface, as
// scripts/record-vllm-surface.sh records the real vLLM's (the same
// flags: --max-model-len 1024 --max-num-seqs 2 --max-num-queued-reqs 3,
// served as "tiny"), and diffs it against the golden: every difference
// must be one of deliberate, and every one of deliberate must occur.
func TestFidelity(t *testing.T) {
	golden, err := surf.Read(fidelityGolden)
	if err != nil {
		t.Fatal(err)
	}
	got := recordSim(t)
	if *simSurface != "" {
		raw, err := surf.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(*simSurface, raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	diffs, err := surf.Diff(golden, got)
	if err != nil {
		t.Fatal(err)
	}
	release := strings.TrimSuffix(filepath.Base(fidelityGolden), ".json")
	used := make([]bool, len(deliberate))
	var unlisted []string
	for _, d := range diffs {
		i := deliberateIndex(d)
		if i < 0 {
			unlisted = append(unlisted, "  "+d.Describe(release, "simulator"))
			continue
		}
		used[i] = true
	}
	var stale []string
	for i, u := range used {
		if !u {
			stale = append(stale, "  "+deliberate[i].path+" ("+deliberate[i].reason+")")
		}
	}
	t.Logf("%d differences from %s, %d of them listed in deliberate", len(diffs), fidelityGolden, len(diffs)-len(unlisted))
	if len(unlisted) > 0 {
		t.Errorf("%d differences from %s that deliberate does not list (fix the simulator, or list one with its reason here and in docs/simulator.md#fidelity):\n%s",
			len(unlisted), fidelityGolden, strings.Join(unlisted, "\n"))
	}
	if len(stale) > 0 {
		t.Errorf("%d of deliberate's differences no longer occur (remove them here and from docs/simulator.md#fidelity):\n%s",
			len(stale), strings.Join(stale, "\n"))
	}
}

// deliberateIndex is the index of the entry of deliberate that d is, or -1.
func deliberateIndex(d surf.Difference) int {
	for i, e := range deliberate {
		p, below := strings.CutSuffix(e.path, "/*")
		switch {
		case below && !strings.HasPrefix(d.Path, p+"/"):
			continue
		case !below && d.Path != e.path:
			continue
		case e.want != "" && e.want != d.Want, e.got != "" && e.got != d.Got:
			continue
		}
		return i
	}
	return -1
}

// recordSim starts the simulator as the golden's vLLM was started, records
// its surface while it loads (a second of --sim-startup) and stops it.
func recordSim(t *testing.T) *surf.Surface {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cfg, err := parseServe([]string{"/models/tiny", "--served-model-name", "tiny", "--host", "127.0.0.1", "--port", strconv.Itoa(port),
		"--max-model-len", "1024", "--max-num-seqs", "2", "--max-num-queued-reqs", "3", "--enforce-eager",
		"--sim-startup", "1s", "--sim-tbt", "5ms", "--sim-log-interval", "0"})
	if err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(t.TempDir(), "server.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- serve(ctx, logFile, logFile, cfg) }()
	defer func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("the simulator stopped with %v", err)
		}
	}()
	rctx, rcancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer rcancel()
	s, err := surf.Record(rctx, surf.Options{URL: fmt.Sprintf("http://127.0.0.1:%d", port), Model: "tiny", Log: logPath, MaxQueued: 3, ReadyTimeout: time.Minute})
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("recording the simulator took over two minutes: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return s
}
