package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slogate/slogate/internal/compare"
	res "github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/views"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/warning"
)

// gateMatrix is a one-row matrix whose 1K×4 cell needs 4 × (1024 + 1024) =
// 8,192 KV tokens: measured with --sim-kv-tokens 100000, over capacity
// with 6000 (1K×1 needs 2,048 and fits both).
const gateMatrix = `
measure {
  duration   = "1s"
  max_output = 1024
}
matrix "decode" {
  contexts    = ["1K"]
  concurrency = [1, 4]
}
`

// TestGateLostCapacity: an upgrade that loses KV capacity, so that a cell
// measured before is over capacity now, fails the gate (exit 1) in `diff`
// and under `run -baseline`, naming the cell and "lost"; the server header
// shows the flag that changed. A diff of runs measured with different
// -duration is refused (exit 2) naming the window, and compared with
// -allow-settings-change; `run -baseline` refuses it before starting a server.
func TestGateLostCapacity(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	defer noLeftovers(t, mark)
	port := freePort(t)
	before := writeSpecLen(t, port, 4096, `"--sim-tbt", "10ms", "--sim-ttft", "50ms", "--sim-kv-tokens", "100000"`, gateMatrix)
	after := writeSpecLen(t, port, 4096, `"--sim-tbt", "10ms", "--sim-ttft", "50ms", "--sim-kv-tokens", "6000"`, gateMatrix)
	dir := t.TempDir()
	outA, outB, outLong := filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "long")

	if r := slogate(t, mark, 2*time.Minute, "", nil, "run", "-sim", "-out", outA, before); r.Code != 0 {
		t.Fatalf("run A: exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if c, _ := readResults(t, outA).DecodeCell("decode", 1024, 4); c == nil || !c.Status.Measured() {
		t.Fatalf("run A did not measure 1K×4: %+v", c)
	}
	if r := slogate(t, mark, 2*time.Minute, "", nil, "run", "-sim", "-out", outB, after); r.Code != 0 {
		t.Fatalf("run B: exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if c, _ := readResults(t, outB).DecodeCell("decode", 1024, 4); c == nil || c.Status != vocab.StatusOverCapacity {
		t.Fatalf("run B: 1K×4 is %+v, want over capacity", c)
	}
	a, b := filepath.Join(outA, "results.json"), filepath.Join(outB, "results.json")

	t.Run("diff", func(t *testing.T) {
		r := slogate(t, mark, 20*time.Second, "", nil, "diff", a, b)
		if r.Code != 1 {
			t.Fatalf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
		}
		for _, want := range []string{"✗ decode/ctx=1K/conc=4: lost: over capacity (was ", "tok/s); 4 × (1024 + 1024) = 8192 tokens > KV cache 6000 tokens",
			"Server: --sim-kv-tokens 100000 → 6000", "1 cell(s) lost"} {
			if !strings.Contains(r.Stdout, want) {
				t.Errorf("stdout lacks %q:\n%s", want, r.Stdout)
			}
		}
	})
	t.Run("baseline", func(t *testing.T) {
		r := slogate(t, mark, 2*time.Minute, "", nil, "run", "-sim", "-baseline", a, "-out", filepath.Join(dir, "gate"), after)
		if r.Code != 1 {
			t.Fatalf("exit %d, want 1 (a lost cell is a failure, not infrastructure)\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
		}
		for _, want := range []string{"--- FAIL: sim/baseline/decode/ctx=1K/conc=4", "lost: over capacity (was ", "baseline: server --sim-kv-tokens 100000 → 6000"} {
			if !strings.Contains(r.Stdout, want) {
				t.Errorf("stdout lacks %q:\n%s", want, r.Stdout)
			}
		}
	})

	if r := slogate(t, mark, 2*time.Minute, "", nil, "run", "-sim", "-duration", "2s", "-out", outLong, before); r.Code != 0 {
		t.Fatalf("run with -duration 2s: exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	long := filepath.Join(outLong, "results.json")
	t.Run("diff refuses another window", func(t *testing.T) {
		r := slogate(t, mark, 20*time.Second, "", nil, "diff", a, long)
		if r.Code != 2 || !strings.Contains(r.Stderr, "different settings") || !strings.Contains(r.Stderr, "window: 1s → 2s") {
			t.Errorf("exit %d, want 2 naming the window\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
		}
	})
	t.Run("diff allows another window", func(t *testing.T) {
		r := slogate(t, mark, 20*time.Second, "", nil, "diff", "-allow-settings-change", a, long)
		if r.Code != 0 && r.Code != 1 {
			t.Errorf("exit %d, want 0 or 1\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
		}
		if !strings.HasPrefix(r.Stdout, "Settings differ (-allow-settings-change): window: 1s → 2s\n") {
			t.Errorf("the settings do not head the output:\n%s", r.Stdout)
		}
	})
	t.Run("baseline refuses another window before starting", func(t *testing.T) {
		start := time.Now()
		r := slogate(t, mark, 20*time.Second, "", nil, "run", "-sim", "-baseline", long, "-out", filepath.Join(dir, "refused"), before)
		if r.Code != 2 || !strings.Contains(r.Stderr, "window: 2s → 1s") {
			t.Errorf("exit %d, want 2 naming the window\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
		}
		if strings.Contains(r.Stdout+r.Stderr, "starting server") || time.Since(start) > 10*time.Second {
			t.Errorf("a server was started, or the refusal took %v:\n%s%s", time.Since(start), r.Stdout, r.Stderr)
		}
	})
}

// noiseMatrix is 4 decode cells repeated 5 times; noiseMetrics compares 5
// metrics of them: 20 cell metrics. No prefill cells: a cold 1K or 2K
// prefill takes tens of milliseconds, where the scheduler's jitter on a
// loaded machine, not the server, decides its tps and ttft_ms.
const noiseMatrix = `
measure {
  duration   = "1s"
  max_output = 1024
  repeat     = 5
}
matrix "decode" {
  contexts    = ["1K", "2K"]
  concurrency = [4, 8]
}
`

var noiseMetrics = []string{"total_tps", "per_request_tps", "ttft_ms", "tbt_ms", "tbt_ms_p90"}

// TestGateNoise: with 5 repeats and --sim-noise 0.05 (about 4% per repeat
// at 1s windows), two runs of the same configuration (other seeds) give at
// most two regressions among 20 cell metrics, every one decided by an
// interval, and the rest within the tolerance or inconclusive (exit 4 when
// any is, with the inconclusive lines); a 10% slower --sim-tbt is regressed
// or inconclusive in every decode throughput and tbt cell, never within
// the tolerance, and fails with exit 1; run -baseline gives the same
// outcomes as verdicts (results.json, JUnit type inconclusive), and
// -inconclusive takes fail or pass only. The three runs go in parallel, so
// that the load of a busy machine weighs on all of them alike (the runs
// would otherwise measure the machine, not the server).
func TestGateNoise(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("four runs of 20 repeated cells")
	}
	mark := newMark(t)
	defer noLeftovers(t, mark)
	dir := t.TempDir()
	runs := map[string]string{}
	specs := map[string]string{}
	var wg sync.WaitGroup
	done := map[string]*result{}
	for _, r := range []struct{ name, tbt, seed string }{{"a", "40ms", "1"}, {"same", "40ms", "2"}, {"slower", "44ms", "3"}, {"gated", "44ms", "4"}} {
		out := filepath.Join(dir, r.name)
		runs[r.name] = filepath.Join(out, "results.json")
		spec := writeSpec(t, freePort(t), `"--sim-tbt", "`+r.tbt+`", "--sim-ttft", "200ms", "--sim-kv-tokens", "1000000", "--sim-noise", "0.05", "--sim-seed", "`+r.seed+`"`, noiseMatrix)
		specs[r.name] = spec
		if r.name == "gated" {
			continue // run against a's results below
		}
		res := &result{}
		done[r.name] = res
		wg.Add(1)
		go func() {
			defer wg.Done()
			*res = slogateAsync(mark, 8*time.Minute, "run", "-sim", "-out", out, spec) // not the map: written by the loop
		}()
	}
	wg.Wait()
	for name, r := range done {
		if r.Code != 0 {
			t.Fatalf("run %s: exit %d\nstdout:\n%s\nstderr:\n%s", name, r.Code, r.Stdout, r.Stderr)
		}
	}
	metricFlag := strings.Join(noiseMetrics, ",")
	decisions := func(t *testing.T, b string, policy compare.InconclusivePolicy) []compare.Table {
		ra, err := res.Read(runs["a"])
		if err != nil {
			t.Fatal(err)
		}
		rb, err := res.Read(b)
		if err != nil {
			t.Fatal(err)
		}
		c := compare.Build(ra, rb, compare.Policy{Tolerance: 0.05, Metrics: noiseMetrics, Inconclusive: policy})
		if c.Refused {
			t.Fatalf("the runs' settings differ: %v", c.Settings)
		}
		return c.Tables
	}

	// At 5% run-to-run noise with 5 repeats a side the interval calls about
	// 0.1% of identical cell metrics a regression (compare's
	// TestNoiseRates); allowing two of 20 cannot fail by chance. Most of the
	// rest are inconclusive at the noise a loaded machine adds (a run here:
	// 5 within, 15 inconclusive), each listed with what would decide it.
	t.Run("same configuration", func(t *testing.T) {
		r := slogate(t, mark, 20*time.Second, "", nil, "diff", "-metric", metricFlag, runs["a"], runs["same"])
		within, inconclusive, regressed, cells := 0, 0, 0, 0
		for _, tb := range decisions(t, runs["same"], compare.InconclusiveFail) {
			for _, c := range tb.Cells {
				cells++
				switch {
				case c.Test == nil:
					t.Errorf("%s %s: not decided by an interval (%d and %d samples)", tb.Title(), c.Ref.Name(), len(c.A.Samples), len(c.B.Samples))
				case c.Change == compare.Regressed:
					regressed++
					t.Logf("%s %s: regressed, Δ %.1f%% bounds %s", tb.Title(), c.Ref.Name(), c.Delta*100, views.BoundsText(&c))
				case c.Change == compare.Inconclusive:
					inconclusive++
				case c.Change == compare.Unchanged, c.Change == compare.Improved:
					within++
				}
			}
		}
		t.Logf("identical configurations: %d of %d cell metrics within the tolerance, %d inconclusive, %d regressed\n%s", within, cells, inconclusive, regressed, r.Stdout)
		wantCode, wantLine := 0, "0 inconclusive"
		switch {
		case regressed > 0:
			wantCode, wantLine = 1, fmt.Sprintf("%d regressed", regressed)
		case inconclusive > 0:
			wantCode, wantLine = 4, "Inconclusive: neither regressed nor shown within 5%:\n  ? "
		}
		if r.Code != wantCode || !strings.Contains(r.Stdout, wantLine) || !strings.Contains(r.Stdout, "Decisions are statistical") ||
			!strings.Contains(r.Stdout, fmt.Sprintf(" %d inconclusive", inconclusive)) {
			t.Errorf("exit %d, want %d with %q, decided statistically\nstdout:\n%s\nstderr:\n%s", r.Code, wantCode, wantLine, r.Stdout, r.Stderr)
		}
		if regressed > 2 {
			t.Errorf("%d of %d cell metrics regressed: identical configurations should be within the tolerance or inconclusive", regressed, cells)
		}
		if got := strings.Count(r.Stdout, "\n  ? "); got != inconclusive {
			t.Errorf("%d inconclusive lines for %d inconclusive cell metrics", got, inconclusive)
		}
		if cells < 20 {
			t.Errorf("only %d cell metrics compared", cells)
		}
		// -inconclusive pass accepts the inconclusive cells whose estimate
		// is inside the tolerance; one beyond it still fails.
		beyond := 0
		for _, tb := range decisions(t, runs["same"], compare.InconclusivePass) {
			for _, c := range tb.Cells {
				if c.Change == compare.Inconclusive && c.Outcome == vocab.Fail {
					beyond++
				}
			}
		}
		p := slogate(t, mark, 20*time.Second, "", nil, "diff", "-inconclusive", "pass", "-metric", metricFlag, runs["a"], runs["same"])
		wantPass := 0
		if regressed+beyond > 0 {
			wantPass = 1
		}
		if p.Code != wantPass || inconclusive > 0 && !strings.Contains(p.Stdout, fmt.Sprintf("%d inconclusive (%d accepted: -inconclusive pass)", inconclusive, inconclusive-beyond)) {
			t.Errorf("-inconclusive pass: exit %d, want %d (%d regressed, %d inconclusive estimated beyond 5%%)\nstdout:\n%s", p.Code, wantPass, regressed, beyond, p.Stdout)
		}
	})
	// A server 10% slower is within the tolerance in about 0.2% of cells at
	// 5% noise with 5 repeats (compare's TestNoiseRates), 0.03 of these 16
	// on average; it is regressed in about a third, so that a gate without
	// any (P ≈ 0.2%) would be wrong too.
	t.Run("10% slower tbt", func(t *testing.T) {
		r := slogate(t, mark, 20*time.Second, "", nil, "diff", "-metric", metricFlag, runs["a"], runs["slower"])
		if r.Code != 1 || !strings.Contains(r.Stdout, "✗\n") {
			t.Errorf("exit %d, want 1 with cells marked ✗\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
		}
		regressed, inconclusive, applies := 0, 0, 0
		for _, tb := range decisions(t, runs["slower"], compare.InconclusiveFail) {
			if tb.Phase != vocab.PhaseDecode || tb.Metric.Name == "ttft_ms" {
				continue // a slower step leaves the first token's time alone
			}
			for _, c := range tb.Cells {
				applies++
				switch {
				case c.Test == nil:
					t.Errorf("%s %s: not decided by an interval", tb.Title(), c.Ref.Name())
				case c.Change == compare.Regressed:
					regressed++
				case c.Change == compare.Inconclusive:
					inconclusive++
				default:
					t.Errorf("%s %s: %v (Δ %.1f%%, bounds %s) on a server 10%% slower", tb.Title(), c.Ref.Name(), c.Change, c.Delta*100, views.BoundsText(&c))
				}
			}
		}
		t.Logf("10%% slower tbt: %d of %d decode throughput and tbt cell metrics regressed, %d inconclusive\n%s", regressed, applies, inconclusive, r.Stdout)
		if regressed == 0 || applies < 16 {
			t.Errorf("%d of %d cell metrics regressed", regressed, applies)
		}
	})
	// The same decisions as a gate: run -baseline turns them into verdicts;
	// results.json records inconclusive ones as such, and junit.xml gives
	// them a failure of their own type.
	t.Run("run -baseline of a 10% slower server", func(t *testing.T) {
		out := filepath.Join(dir, "gated")
		r := slogate(t, mark, 8*time.Minute, "", nil, "run", "-sim", "-baseline", runs["a"], "-out", out, specs["gated"])
		got, err := res.Read(runs["gated"])
		if err != nil {
			t.Fatalf("%v\nstdout:\n%s\nstderr:\n%s", err, r.Stdout, r.Stderr)
		}
		outcomes := map[vocab.Outcome]int{}
		for _, v := range got.Verdicts {
			if v.Kind == vocab.KindBaseline {
				outcomes[v.Outcome]++
			}
		}
		t.Logf("run -baseline: exit %d, baseline verdicts %v", r.Code, outcomes)
		wantCode := 4
		if outcomes[vocab.Fail] > 0 {
			wantCode = 1
		}
		if r.Code != wantCode || outcomes[vocab.Pass] > 0 || outcomes[vocab.Fail]+outcomes[vocab.Inconclusive] != 4 ||
			!strings.Contains(r.Stdout, "--- FAIL: sim/baseline/decode/ctx=") {
			t.Errorf("exit %d, want %d; baseline verdicts %v, want 4 failed or inconclusive\nstdout:\n%s\nstderr:\n%s", r.Code, wantCode, outcomes, r.Stdout, r.Stderr)
		}
		// The pre-run check: 5 baseline repeats at about 4% noise cannot
		// decide a change of 5% with power 0.9 against 5 repeats. The
		// warning is the one compare gives for the baseline's recorded
		// samples, printed as its view says.
		ra, err := res.Read(runs["a"])
		if err != nil {
			t.Fatal(err)
		}
		printed := 0
		for _, s := range compare.BaselineWarnings(ra, 5, 0.05, compare.DefaultAlpha) {
			w := s.Warning(views.PowerShortfallWords(s))
			if w.Code == warning.PowerShortfall && w.Subject == "total_tps" && w.Figures[warning.FigCandidateRepeats] == 5 && w.Figures[warning.FigTolerance] == 0.05 &&
				strings.Contains(r.Stderr, "slogate: warning: "+views.BaselineWarningLine(w)+"\n") {
				printed++
			}
		}
		if printed == 0 {
			t.Errorf("no power_shortfall warning of total_tps against 5 repeats printed:\n%s", r.Stderr)
		}
		junit := readFile(t, filepath.Join(out, "junit.xml"))
		if outcomes[vocab.Inconclusive] > 0 && (!strings.Contains(junit, `type="inconclusive"`) || !strings.Contains(r.Stdout, "inconclusive against the baseline: neither regressed nor shown within 5%")) {
			t.Errorf("%d inconclusive verdicts, but no JUnit failure of type inconclusive or no message:\n%s\nstdout:\n%s", outcomes[vocab.Inconclusive], junit, r.Stdout)
		}
	})
	t.Run("-inconclusive takes fail or pass", func(t *testing.T) {
		for _, args := range [][]string{{"run", "-sim", "-inconclusive", "maybe", specs["a"]}, {"diff", "-inconclusive", "maybe", runs["a"], runs["same"]}} {
			r := slogate(t, mark, 20*time.Second, "", nil, args...)
			if r.Code != 2 || !strings.Contains(r.Stderr, `-inconclusive is fail or pass, not "maybe"`) || strings.Contains(r.Stdout+r.Stderr, "starting server") {
				t.Errorf("%s -inconclusive maybe: exit %d, want 2 naming the choices, no server\nstdout:\n%s\nstderr:\n%s", args[0], r.Code, r.Stdout, r.Stderr)
			}
		}
	})
}

// slogateAsync is slogate for a goroutine: it reports a failure to start or
// a timeout in the result (exit -1, the reason on Stderr) instead of
// failing the test.
func slogateAsync(mark string, timeout time.Duration, args ...string) result {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(childEnv(), markEnv+"="+mark, "NO_COLOR=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{Stdout: stdout.String(), Stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		r.Code, r.Stderr = -1, r.Stderr+fmt.Sprintf("\nslogate did not finish within %v", timeout)
	case err == nil:
	case errors.As(err, &ee):
		r.Code = ee.ExitCode()
	default:
		r.Code, r.Stderr = -1, err.Error()
	}
	return r
}
