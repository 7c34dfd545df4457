package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/slogate/slogate/internal/numfmt"
	slores "github.com/slogate/slogate/internal/result"
)

// happened is the line scripts/demo.sh must end the upgrade's output with:
// on a quiet machine the 20 % slower simulator meets every SLO of the seed
// report, but its TTFT at 16 streams is within 3 % of the floor, and a
// machine loaded by other work (stress --cpu 2) adds enough to break it;
// the script must then say how many SLOs broke, counted from the verdicts.
func happened(upgrade string) string {
	n := regexp.MustCompile(`(?m)^--- FAIL: qwen/(assert|expect)/`).FindAllStringIndex(upgrade, -1)
	if len(n) == 0 {
		return "What happened: the upgrade still met every SLO of the spec"
	}
	return fmt.Sprintf("What happened: the upgrade broke %d SLO(s) of the spec, and -baseline says by how much each cell moved.", len(n))
}

// TestDemo runs `make demo`'s script as written (scripts/demo.sh with
// specs/demo.hcl, from a copy of the two) on a free port: the first run
// passes its seed-report SLOs, the 20 % slower upgrade is caught by
// -baseline (exit 1 of that run), the script says so in two lines and exits
// 0; both runs keep their folders and latest points at the upgrade's.
func TestDemo(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	defer noLeftovers(t, mark)
	dir := t.TempDir()
	for _, f := range []string{"specs/demo.hcl", "scripts/demo.sh"} {
		b, err := os.ReadFile(filepath.Join("..", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "scripts/demo.sh", bin, "-var", fmt.Sprintf("port=%d", freePort(t)))
	cmd.Dir = dir
	cmd.Env = append(childEnv(), markEnv+"="+mark, "NO_COLOR=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	out := stdout.String()
	if err != nil {
		t.Fatalf("demo: %v\nstdout:\n%s\nstderr:\n%s", err, out, stderr.String())
	}
	first, upgrade, ok := strings.Cut(out, "== 2/2")
	if !ok {
		t.Fatalf("no second run:\n%s", out)
	}
	for _, want := range []string{"--- PASS: qwen/assert/decode_8k_16", "\nPASS\nok  \tspecs/demo.hcl"} {
		if !strings.Contains(first, want) {
			t.Errorf("the first run lacks %q:\n%s", want, first)
		}
	}
	for _, want := range []string{
		"baseline: server --sim-slowdown 1.2 added",
		"--- FAIL: qwen/baseline/decode/ctx=8K/conc=16",
		"regressed beyond 5%",
		"\nFAIL\tspecs/demo.hcl",
		happened(upgrade),
		"--- FAIL: qwen/baseline/decode/ctx=8K/conc=1",
		"2 of them regressed beyond the 5 % tolerance, so the run exited 1",
	} {
		if !strings.Contains(upgrade, want) {
			t.Errorf("the upgrade run lacks %q:\n%s", want, upgrade)
		}
	}
	runs, _ := filepath.Glob(filepath.Join(dir, "slogate-out", "demo", "qwen", "2*", "results.json"))
	latest, _ := os.Readlink(filepath.Join(dir, "slogate-out", "demo", "qwen", "latest"))
	if len(runs) != 2 || !strings.Contains(runs[1], latest) {
		t.Fatalf("results %v, latest → %q: want both runs kept, latest the upgrade's", runs, latest)
	}
	// The upgrade's report.md tabulates the comparison: a row per cell and
	// metric with both runs' recorded values, the regression failing.
	up, err := slores.Read(runs[1])
	if err != nil {
		t.Fatal(err)
	}
	firstRun, err := slores.Read(runs[0])
	if err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(filepath.Dir(runs[1]), "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	was, _ := firstRun.DecodeCell("decode", 8192, 16)
	now, _ := up.DecodeCell("decode", 8192, 16)
	row := fmt.Sprintf("| decode/ctx=8K/conc=16 | total_tps (tok/s) | %s | %s | ", numfmt.Value(was.TotalTPS), numfmt.Value(now.TotalTPS))
	if up.Comparison == nil || !strings.Contains(string(md), "## Baseline comparison") || !strings.Contains(string(md), row) ||
		!strings.Contains(string(md), "| FAIL: regressed |") {
		t.Errorf("the upgrade's report.md lacks the comparison row %q…FAIL: regressed:\n%s", row, md)
	}
}
