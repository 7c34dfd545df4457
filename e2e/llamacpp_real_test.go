package e2e

// Issue 27's "Must show" on the real llama-server, beyond the engine's
// first tests (llamacpp_test.go, whose helpers these reuse): a real
// regression caught by -baseline and diff, speculative decoding with the
// model as its own draft, kill -9 of the server and SIGINT to slogate,
// traffic (open and closed loop over a named workload) and the SLO
// search, the container path on podman. Each runs once, with short
// windows. SLOGATE_LLAMACPP_SOAK=1 repeats the regression (5 rounds, 5
// repeats a side) and the slots' statuses (5 runs) and logs their figures;
// SLOGATE_LLAMACPP_BENCH=1 measures slogate's own CPU beside the server's.

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/slogate/slogate/internal/gguf"
	"github.com/slogate/slogate/internal/metric"
	res "github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// llamaSoak says whether the soak repetitions run (SLOGATE_LLAMACPP_SOAK=1).
func llamaSoak() bool { return os.Getenv("SLOGATE_LLAMACPP_SOAK") == "1" }

// llamaModel is the path of genmodels' file name (tiny.gguf, deep.gguf,
// other.gguf) in models, written there from internal/gguf when missing
// (llamaServer's folder holds only tiny.gguf without
// SLOGATE_LLAMACPP_MODELS).
func llamaModel(t *testing.T, models, name string) string {
	t.Helper()
	path := filepath.Join(models, name)
	if _, err := os.Stat(path); err == nil {
		return path
	}
	for _, m := range gguf.Models {
		if m.File == name {
			writeModel(t, m.Model, path)
			return path
		}
	}
	t.Fatalf("genmodels writes no %s", name)
	return ""
}

// writeModel writes m's GGUF file to path, whole or not at all (a rename,
// so that a server reading the path never sees half a model).
func writeModel(t *testing.T, m gguf.Llama, path string) {
	t.Helper()
	f, err := m.File()
	if err != nil {
		t.Fatal(err)
	}
	tmp := path + ".tmp"
	w, err := os.Create(tmp)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteTo(w); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// llamaRoot is the llama.cpp root scripts/llama-server chroots into.
func llamaRoot() string {
	if root := os.Getenv("SLOGATE_LLAMACPP_ROOT"); root != "" {
		return root
	}
	return "/var/cache/slogate/llamacpp-root"
}

// noLlamaLeft fails the test when a llama-server serving port, or the
// wrapper that started it, is still alive, or a mount in the llama.cpp
// root is left on the host (the wrapper's mounts live in the server's own
// mount namespace and must vanish with it).
func noLlamaLeft(t *testing.T, port int) {
	t.Helper()
	portArg := "\x00--port\x00" + strconv.Itoa(port) + "\x00"
	var left []string
	deadline := time.Now().Add(5 * time.Second)
	for {
		left = left[:0]
		procs, _ := filepath.Glob("/proc/[0-9]*")
		for _, dir := range procs {
			cmdline, err := os.ReadFile(dir + "/cmdline")
			pid, _ := strconv.Atoi(filepath.Base(dir))
			if err != nil || !bytes.Contains(append(cmdline, 0), []byte(portArg)) || !bytes.Contains(cmdline, []byte("llama-server")) || !processAlive(pid) {
				continue
			}
			left = append(left, filepath.Base(dir)+": "+strings.ReplaceAll(string(cmdline), "\x00", " "))
		}
		if len(left) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(left) > 0 {
		t.Errorf("llama-server (or scripts/llama-server) of port %d left behind:\n%s", port, strings.Join(left, "\n"))
	}
	root, _ := filepath.EvalSymlinks(llamaRoot())
	if m, err := os.ReadFile("/proc/mounts"); err == nil && root != "" && strings.Contains(string(m), " "+root+"/") {
		t.Errorf("a mount in the llama.cpp root %s is left on the host:\n%s", root, m)
	}
}

// gateLine is the line of a baseline comparison for metric: "total_tps:
// baseline 431.2, now 150.3 (-65.1%, …), regressed beyond 5% (higher is
// better)".
func gateLine(out, metric string) string {
	for line := range strings.SplitSeq(out, "\n") {
		if l := strings.TrimSpace(line); strings.HasPrefix(l, metric+": baseline ") {
			return l
		}
	}
	return ""
}

// TestLlamaCppRegression: a real regression caught. A baseline run on
// tiny.gguf; then the same spec, unchanged, with deep.gguf (three times the
// layers: each token costs about three times as much) behind the same model
// path: -baseline at 5 % exits 1 and says which metrics regressed; the
// identical build (tiny.gguf back) at 10 % is not regressed (exit 0, or 4
// when its repeats cannot tell). `slogate diff` says the same of the saved
// results. Each cell is measured 3 times a side, so the comparison is the
// statistical one (docs/method.md#comparing-runs); with
// SLOGATE_LLAMACPP_SOAK=1, 5 rounds of 5 repeats a side, figures logged.
// It measures the machine, so it does not run in parallel with the others.
func TestLlamaCppRegression(t *testing.T) {
	server, models := llamaServer(t)
	tiny, deep := llamaModel(t, models, "tiny.gguf"), llamaModel(t, models, "deep.gguf")
	rounds, repeat := 1, 3
	if llamaSoak() {
		rounds, repeat = 5, 5
	}
	dir := t.TempDir()
	model := filepath.Join(dir, "model.gguf")
	swap := func(from string) {
		t.Helper()
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(model+".tmp", b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(model+".tmp", model); err != nil {
			t.Fatal(err)
		}
	}
	port := freePort(t)
	spec := llamaSpec(t, llamaSpecOpts{Command: server, Model: model, Port: port, MaxModelLen: 512, MaxNumSeqs: 1,
		Body: llamaWorkload + fmt.Sprintf(`
measure {
  duration   = "1s"
  max_output = 128
  repeat     = %d
}
matrix "decode" {
  contexts    = ["256"]
  concurrency = [1]
}
`, repeat)})
	const test = "tiny/baseline/decode/ctx=256/conc=1"
	for round := 1; round <= rounds; round++ {
		mark := newMark(t)
		base, slow, same := filepath.Join(dir, fmt.Sprint(round, "-base")), filepath.Join(dir, fmt.Sprint(round, "-deep")), filepath.Join(dir, fmt.Sprint(round, "-same"))

		swap(tiny)
		// A machine that starved the server cannot hold the gate to
		// anything (docs/method.md#unmeasurable): measured once more, then
		// skipped with the reasons, never passed.
		starvedTwice := func(what, out string, code int, again func() (string, int)) string {
			t.Helper()
			if !starvedOnly(t, code, out) {
				return out
			}
			out, code = again()
			if starvedOnly(t, code, out) {
				t.Skipf("round %d: the machine starved the server in %s twice (load average %.1f): nothing to gate on", round, what, loadAverage())
			}
			return out
		}
		r := runLlama(t, mark, "run", "-out", base, spec)
		base = starvedTwice("the baseline run", base, r.Code, func() (string, int) {
			r = runLlama(t, mark, "run", "-out", base+"-again", spec)
			return base + "-again", r.Code
		})
		if r.Code != 0 && !starvedOnly(t, r.Code, base) {
			t.Fatalf("round %d: the baseline run exited %d\nstdout:\n%s\nstderr:\n%s", round, r.Code, r.Stdout, r.Stderr)
		}
		baseline := filepath.Join(base, "results.json")

		swap(deep)
		r = runLlama(t, mark, "run", "-out", slow, "-baseline", baseline, "-tolerance", "5%", spec)
		slow = starvedTwice("deep.gguf's run", slow, r.Code, func() (string, int) {
			r = runLlama(t, mark, "run", "-out", slow+"-again", "-baseline", baseline, "-tolerance", "5%", spec)
			return slow + "-again", r.Code
		})
		if r.Code == 4 && loadedMachine() {
			// Inconclusive, not passed: at load average 20 CI saw the 3
			// repeats' noise reach 47 %, too much to tell even the deep
			// model's 2× slower tokens at 5 %. Measured once more; a second
			// inconclusive fails.
			t.Logf("round %d, load average %.1f: deep.gguf inconclusive; measuring it once more:\n%s", round, loadAverage(), gateLine(r.Stdout, "tbt_ms"))
			slow += "-again"
			r = runLlama(t, mark, "run", "-out", slow, "-baseline", baseline, "-tolerance", "5%", spec)
		}
		line := gateLine(r.Stdout, "tbt_ms")
		if r.Code != 1 || !strings.Contains(r.Stdout, "--- FAIL: "+test) || !strings.HasSuffix(line, "regressed beyond 5% (lower is better)") ||
			!strings.Contains(r.Stdout, "regressed beyond 5% against the baseline") {
			t.Errorf("round %d: deep.gguf behind the same path: exit %d, want 1 with %s failed and tbt_ms regressed beyond 5%%\nstdout:\n%s\nstderr:\n%s", round, r.Code, test, r.Stdout, r.Stderr)
		}
		b, d := llamaCell(t, readResults(t, base), 256, 1), llamaCell(t, readResults(t, slow), 256, 1)
		// The figures agree with the verdict: every token takes longer
		// on the deep model, in every run kept. A run the client could
		// not measure is left out (docs/method.md#unmeasurable): under
		// stress --cpu 2 two of deep's three were, and the one kept has
		// no samples list.
		if bk, dk := keptRuns(b, "total_tps"), keptRuns(d, "total_tps"); len(bk) == 0 || len(dk) == 0 {
			t.Errorf("round %d: no total_tps kept: tiny.gguf %v (%s, %d left out), deep.gguf %v (%s, %d left out)", round, bk, b.Status, len(b.Excluded), dk, d.Status, len(d.Excluded))
		} else if slices.Max(dk) >= slices.Min(bk) {
			t.Errorf("round %d: deep.gguf's total_tps runs %v overlap tiny.gguf's %v", round, dk, bk)
		}

		swap(tiny)
		r2 := runLlama(t, mark, "run", "-out", same, "-baseline", baseline, "-tolerance", "10%", spec)
		if r2.Code == 1 {
			// The same bytes cannot have regressed; the machine's other
			// load can have slowed this run (on a shared 2-core machine a
			// load average of 14 took one repeat from 700 to 51 tok/s).
			// Measured once more; a second regression fails.
			la, _ := os.ReadFile("/proc/loadavg")
			t.Logf("round %d: the identical build regressed (load average %s); measuring it once more:\n%s", round, strings.TrimSpace(string(la)), gateLine(r2.Stdout, "total_tps"))
			same += "-again"
			r2 = runLlama(t, mark, "run", "-out", same, "-baseline", baseline, "-tolerance", "10%", spec)
		}
		// Judged by outcomes: exit 4 is a regression the server's lost CPU
		// time could make (docs/method.md#server-wait-against-the-baseline),
		// whose metric lines still say what the figures show ("regressed
		// beyond") under a verdict left undecided. At load average 14 the
		// identical build read −28.7 % so, its server waiting 13 % against
		// the baseline's 6 %.
		passed := r2.Code == 0 && !strings.Contains(r2.Stdout, "regressed beyond")
		if !strings.Contains(r2.Stdout, test) || !(passed || r2.Code == 4 && noFailedVerdict(readResults(t, same))) {
			t.Errorf("round %d: the identical build at 10%%: exit %d, want 0 or 4 and no regression\nstdout:\n%s\nstderr:\n%s", round, r2.Code, r2.Stdout, r2.Stderr)
		}
		s := llamaCell(t, readResults(t, same), 256, 1)
		t.Logf("round %d, %d repeats a side: total_tps tiny %.1f %v, deep %.1f %v (exit %d), tiny again %.1f %v (exit %d)\n  deep: %s\n  same: %s",
			round, repeat, b.TotalTPS, b.Samples["total_tps"], d.TotalTPS, d.Samples["total_tps"], r.Code, s.TotalTPS, s.Samples["total_tps"], r2.Code,
			line, gateLine(r2.Stdout, "tbt_ms"))

		if round == 1 {
			dr := runLlama(t, mark, "diff", "-tolerance", "5%", baseline, filepath.Join(slow, "results.json"))
			if dr.Code != 1 || !strings.Contains(diffSection(dr.Stdout, "decode tbt_ms"), "% ✗") || strings.Contains(dr.Stdout, "by cell metric: 0 regressed, ") {
				t.Errorf("diff of tiny and deep at 5%%: exit %d, want 1 with tbt_ms regressed\nstdout:\n%s\nstderr:\n%s", dr.Code, dr.Stdout, dr.Stderr)
			}
			ds := runLlama(t, mark, "diff", "-tolerance", "10%", baseline, filepath.Join(same, "results.json"))
			if (ds.Code != 0 && ds.Code != 4) || (ds.Code == 0 && !strings.Contains(ds.Stdout, "by cell metric: 0 regressed, ")) {
				t.Errorf("diff of tiny and tiny at 10%%: exit %d, want 0 or 4 and no regression\nstdout:\n%s\nstderr:\n%s", ds.Code, ds.Stdout, ds.Stderr)
			}
		}
		noLlamaLeft(t, port)
	}
}

// noFailedVerdict reports whether no verdict of r failed or errored: an
// undecided one (inconclusive) is the machine's, not a regression.
func noFailedVerdict(r *res.Results) bool {
	for _, v := range r.Verdicts {
		if v.Outcome == vocab.Fail || v.Outcome == vocab.Error {
			return false
		}
	}
	return true
}

// keptRuns are the values of metric name over the runs of decode cell c
// that its figures kept: its samples when it kept several, its value when
// it kept one, none when it kept none (docs/method.md#unmeasurable).
func keptRuns(c res.DecodeCell, name string) []float64 {
	if xs := c.Samples[name]; len(xs) > 0 {
		return xs
	}
	if v, ok := c.Value(metric.Must(vocab.PhaseDecode, name)); ok && c.Status.Measured() {
		return []float64{v}
	}
	return nil
}

// diffSection is the table of `slogate diff`'s text output headed by
// title ("decode tbt_ms"), up to the next blank line.
func diffSection(out, title string) string {
	i := strings.Index(out, "\n"+title+" ")
	if i < 0 {
		return ""
	}
	sec, _, _ := strings.Cut(out[i+1:], "\n\n")
	return sec
}

// meanLenRE is llama-server's per-request log line of speculative decoding
// (docs/llamacpp.md#speculative-decoding): "draft acceptance = 1.00000 (
// 159 accepted /   159 generated), mean len =  4.97".
var meanLenRE = regexp.MustCompile(`draft acceptance = [0-9.]+ \(\s*(\d+) accepted /\s*(\d+) generated\), mean len =\s*([0-9.]+)`)

// TestLlamaCppSpeculative: tiny.gguf as its own draft (num_speculative_
// tokens = 4) at temperature 0 accepts nearly every draft: the decode
// cell's spec_accept_len (1 + accepted ÷ verification steps, from
// llamacpp:spec_decode_*) is above 4, at most 1 + 4, and within 10 % of
// the acceptance length the server itself logged for the requests it
// served (each request's "mean len" in server.log).
func TestLlamaCppSpeculative(t *testing.T) {
	t.Parallel()
	server, models := llamaServer(t)
	tiny := llamaModel(t, models, "tiny.gguf")
	mark := newMark(t)
	spec := llamaSpec(t, llamaSpecOpts{Command: server, Model: tiny, Port: freePort(t), MaxModelLen: 512, MaxNumSeqs: 1,
		Server: fmt.Sprintf(`  speculative {
    method                 = "draft"
    model                  = %q
    num_speculative_tokens = 4
  }
`, tiny), Body: `
workload {
  instruction = "Write about it."
  sampling    = { temperature = 0 }
}
measure {
  duration   = "4s"
  max_output = 48
}
matrix "decode" {
  contexts    = ["256"]
  concurrency = [1]
}
`})
	// llama-server adds to its speculative counters as a request
	// finishes, so requests must finish inside the window: 48 tokens
	// take 1.1 s at the 42 tok/s a loaded CI machine gave (2 s windows
	// of 128-token requests, 3 s each there, saw none finish).
	out := filepath.Join(t.TempDir(), "out")
	r := runLlama(t, mark, "run", "-out", out, spec)
	if r.Code != 0 && !starvedOnly(t, r.Code, out) {
		t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if !strings.Contains(r.Stdout, "--spec-type draft-simple -md "+tiny+" --spec-draft-n-max 4") {
		t.Errorf("the launch does not render the speculative block:\n%s", r.Stdout)
	}
	c := llamaCell(t, readResults(t, out), 256, 1)
	log, _ := os.ReadFile(filepath.Join(out, "server.log"))
	var lens []float64
	for _, m := range meanLenRE.FindAllStringSubmatch(string(log), -1) {
		v, _ := strconv.ParseFloat(m[3], 64)
		lens = append(lens, v)
	}
	if len(lens) == 0 {
		t.Fatalf("server.log has no speculative timing line (the server did not speculate):\n%s", log)
	}
	logged := median(lens)
	t.Logf("spec_accept_len %v, spec_accept_rate %v; the server's per-request mean len: median %.2f of %d requests %v",
		deref(c.SpeculativeAcceptLen), deref(c.SpeculativeAcceptRate), logged, len(lens), lens)
	if c.SpeculativeAcceptLen == nil {
		t.Fatalf("the cell records no spec_accept_len: %+v", c)
	}
	got := *c.SpeculativeAcceptLen
	if got <= 4 || got > 5+1e-9 || math.Abs(got-logged) > 0.1*logged {
		t.Errorf("spec_accept_len %.3f, want in (4, 5] and within 10%% of the server's own %.2f", got, logged)
	}
	// A step's accepted tokens come as a burst of chunks microseconds
	// apart (docs/method.md#bursts): the TBT is the burst's gap ÷ its
	// tokens, near 1 ÷ per_request_tps, never the gaps inside a burst
	// (0.02 ms before bursts were read as one chunk). A starved server's
	// cell holds the machine's contention, not the build's (its chunks
	// read in batches: 17.5 ms against 37.7 at 0.12 CPUs), and no gate
	// reads it: its client timings are not held to this.
	if c.Status == vocab.StatusUnmeasurable {
		t.Logf("the cell is unmeasurable (%s): its tbt_ms %.3f is not checked", c.Reason, c.TBTMs)
		return
	}
	if perTok := 1000 / c.PerRequestTPS; c.TBTMs < 0.5*perTok || c.TBTMs > 2*perTok {
		t.Errorf("tbt_ms %.3f, want near 1000 ÷ per_request_tps %.1f = %.2f ms", c.TBTMs, c.PerRequestTPS, perTok)
	}
}

// llamaKillSpec is a prefill cell and a decode matrix whose 3 s windows a
// signal falls inside.
const llamaKillSpec = llamaWorkload + `
measure {
  duration   = "3s"
  max_output = 128
}
prefill { contexts = ["256"] }
matrix "decode" {
  contexts    = ["256"]
  concurrency = [1, 2]
}
`

// TestLlamaCppKilled: kill -9 of llama-server in the middle of the run
// exits 3 saying the server exited, keeps the cells measured before it in
// results.json and cells.jsonl, and leaves no process (the server, the
// wrapper, slogate) and no mount; SIGINT to slogate exits 130 with the
// server stopped by SIGTERM (its log ends with its own clean-up).
func TestLlamaCppKilled(t *testing.T) {
	t.Parallel()
	server, models := llamaServer(t)
	tiny := llamaModel(t, models, "tiny.gguf")
	for _, tc := range []struct {
		name string
		code int
		said string
	}{
		{name: "kill -9 llama-server", code: 3, said: "exited during the run"},
		{name: "SIGINT slogate", code: 130, said: "interrupted by SIGINT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			mark := newMark(t)
			port := freePort(t)
			spec := llamaSpec(t, llamaSpecOpts{Command: server, Model: tiny, Port: port, MaxModelLen: 512, MaxNumSeqs: 2, Body: llamaKillSpec})
			out := filepath.Join(t.TempDir(), "out")
			b := startSlogate(t, mark, "run", "-out", out, spec)
			b.waitFor(t, "the prefill cell and the first decode cell", 2*time.Minute, func() bool { return cellLines(out) >= 2 })
			pid := markedProcess(mark, "llama-server", "--port")
			if pid == 0 {
				t.Fatalf("no llama-server process carries the test's mark")
			}
			if tc.code == 3 {
				syscall.Kill(pid, syscall.SIGKILL)
			} else {
				b.cmd.Process.Signal(syscall.SIGINT)
			}
			code := b.exitAfter(t, time.Minute)
			o := outcome{r: result{Stdout: b.stdout.String(), Stderr: b.stderr.String(), Code: code}, out: out}
			if r, err := res.Read(filepath.Join(out, "results.json")); err == nil {
				o.results = r
			}
			if f, err := os.Open(filepath.Join(out, "cells.jsonl")); err == nil {
				o.cells, _ = res.ReadCells(f)
				f.Close()
			}
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s", code, tc.code, o.dump())
			}
			o.wantSaid(t, tc.said)
			o.wantKept(t, tc.code == 3)
			// Kept: valid, or (on a machine loaded by the tests beside it)
			// unmeasurable with its figures and the rule that judged it.
			kept := func(status vocab.Status, reason string, figure float64) bool {
				return status == vocab.StatusValid || status == vocab.StatusUnmeasurable && reason != "" && figure > 0
			}
			if len(o.results.Prefill) != 1 || !kept(o.results.Prefill[0].Status, o.results.Prefill[0].Reason, o.results.Prefill[0].TPS) ||
				len(o.results.Decode) < 1 || o.results.Decode[0].Concurrency != 1 ||
				!kept(o.results.Decode[0].Status, o.results.Decode[0].Reason, o.results.Decode[0].TotalTPS) {
				t.Errorf("results.json does not keep the measured prefill and 256 × 1 cells: %+v %+v", o.results.Prefill, o.results.Decode)
			}
			noLeftovers(t, mark)
			noLlamaLeft(t, port)
			if _, _, err := get(fmt.Sprintf("http://127.0.0.1:%d/health", port)); err == nil {
				t.Errorf("port %d still answers after the run", port)
			}
			if tc.code == 130 {
				log, _ := os.ReadFile(filepath.Join(out, "server.log"))
				if !strings.Contains(string(log), "cleaning up before exit") {
					t.Errorf("server.log does not show llama-server's own stop:\n%s", log)
				}
			}
		})
	}
}

// TestLlamaCppTrafficAndSearch: on the real server, open-loop and
// closed-loop traffic over a named workload (random prompts of 64 to 192
// tokens, 64-token outputs) complete their requests (the closed loop at 2
// on 2 slots valid; the open loop valid or queued by the server's waiting
// requests, as Poisson arrivals may put a third in flight), and the SLO search
// for the largest concurrency whose cells are valid (none waiting for a
// slot: llamacpp:requests_deferred) finds --parallel, 2, with 3 and 4
// queued.
func TestLlamaCppTrafficAndSearch(t *testing.T) {
	t.Parallel()
	server, models := llamaServer(t)
	mark := newMark(t)
	spec := llamaSpec(t, llamaSpecOpts{Command: server, Model: llamaModel(t, models, "tiny.gguf"), Port: freePort(t), MaxModelLen: 512, MaxNumSeqs: 2,
		Body: llamaWorkload + `
measure {
  duration   = "2s"
  max_output = 128
}
workload "mix" {
  prompt        = "random"
  input_tokens  = { min = 64, max = 192 }
  output_tokens = 64
}
traffic "open" {
  workload = "mix"
  rate     = [4]
  duration = "3s"
  warmup   = "0s"
}
traffic "closed" {
  workload    = "mix"
  concurrency = [2]
  duration    = "3s"
  warmup      = "0s"
}
search "slots" {
  context     = "256"
  concurrency = [1, 4]
  objective   = cell.status == "valid" && cell.per_request_tps > 0
}
assert "slots" {
  condition     = search["slots"].concurrency == 2 && search["slots"].found && search["slots"].monotone
  error_message = "the search did not find the server's 2 slots"
}
assert "traffic" {
  condition     = open[4].completed > 0 && closed[2].completed > 0
  error_message = "no traffic request completed"
}
`})
	out := filepath.Join(t.TempDir(), "out")
	r := runLlama(t, mark, "run", "-out", out, spec)
	// Under stress --cpu 2 a probe the client could not measure stops the
	// search undecided: exit 4 with the assert inconclusive, never 3.
	starved := starvedOnly(t, r.Code, out)
	if r.Code != 0 && !starved {
		t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	results := readResults(t, out)
	if len(results.Search) != 1 {
		t.Fatalf("results.json has %d searches, want 1", len(results.Search))
	}
	wants := []string{"--- PASS: tiny/traffic/open/rate=4", "--- PASS: tiny/traffic/closed/conc=2"}
	if stopped := results.Search[0].StoppedUnmeasurable(); !stopped {
		wants = append(wants, "search tiny/search/slots: concurrency 2 meets the objective at ctx=256 (3 fails", "--- PASS: tiny/assert/slots")
	} else if !strings.Contains(r.Stdout, "--- FAIL: tiny/assert/slots") || !strings.Contains(r.Stdout, "tiny/assert/slots (inconclusive): ") {
		t.Errorf("a search stopped at a probe the client could not measure, and the assert reading it is not inconclusive:\n%s", r.Stdout)
	}
	for _, want := range wants {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("the run does not say %q\n%s", want, r.Stdout)
		}
	}
	probes := map[int]vocab.Status{}
	for _, p := range results.Search[0].Probes {
		probes[p.Concurrency] = p.Cell.Status
	}
	for c, want := range map[int]vocab.Status{1: vocab.StatusValid, 2: vocab.StatusValid, 3: vocab.StatusQueued, 4: vocab.StatusQueued} {
		if got, ran := probes[c]; ran && !measuredOrStarved(got, want, starved) || !ran && !starved {
			t.Errorf("search probes %v: want 1 and 2 valid, 3 and 4 queued (2 slots)", probes)
			break
		}
	}
	for _, c := range results.Traffic {
		t.Logf("traffic %s: %d completed, %s %s", c.Traffic, c.Completed, c.Status, c.Reason)
		// The closed loop keeps 2 requests in flight on 2 slots: none
		// waits. Poisson arrivals at 4/s can put a third in flight, so
		// the open loop is valid, or queued by the server's own waiting
		// requests (llamacpp:requests_deferred), never anything else.
		// The closed loop too, under CI's load: a slot freed and the next
		// request sent can meet the server's deferred gauge between its
		// own two updates (CI saw two polls in a row once).
		ok := c.Status == vocab.StatusValid ||
			c.Status == vocab.StatusQueued && strings.Contains(c.Reason, "the server reported waiting requests")
		if c.Completed == 0 || !ok {
			t.Errorf("traffic cell %s: %d completed, %s (%s); want requests completed and valid (the open loop: or queued by the server's waiting requests)", c.Traffic, c.Completed, c.Status, c.Reason)
		}
	}
	if len(results.Traffic) != 2 {
		t.Errorf("%d traffic cells, want 2", len(results.Traffic))
	}
}

// TestLlamaCppContainer: the same kind of spec with the server in a real
// podman container (the image scripts/llamacpp-setup.sh --podman made of
// the same root, entrypoint llama-server), the models reaching it through
// a read-only volume: the run passes, KV capacity from the container's
// /props, and podman lists no container of the run afterwards.
func TestLlamaCppContainer(t *testing.T) {
	t.Parallel()
	_, models := llamaServer(t)
	llamaModel(t, models, "tiny.gguf")
	image := os.Getenv("SLOGATE_LLAMACPP_IMAGE")
	if image == "" {
		image = "localhost/llama-cpp:test"
	}
	var why string
	if _, err := exec.LookPath("podman"); err != nil {
		why = "podman is not installed: run scripts/podman-setup.sh and scripts/llamacpp-setup.sh --podman as root"
	} else if out, err := exec.Command("podman", "image", "inspect", "--format", "{{.Id}}", image).CombinedOutput(); err != nil {
		why = fmt.Sprintf("podman has no image %s (%s): run scripts/llamacpp-setup.sh --podman as root, or set SLOGATE_LLAMACPP_IMAGE", image, lastLine(string(out)))
	}
	if why != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s (CI=true: the real-engine tests must run, not skip)", why)
		}
		t.Skip(why)
	}
	var rb [4]byte
	rand.Read(rb[:])
	prefix := "e2e-llama-" + hex.EncodeToString(rb[:])
	mark := newMark(t)
	containers := func() []string {
		out, err := exec.Command("podman", "ps", "-a", "--filter", "name=^"+prefix+"-", "--format", "{{.Names}}").CombinedOutput()
		if err != nil {
			t.Errorf("podman ps: %v: %s", err, out)
		}
		return strings.Fields(string(out))
	}
	t.Cleanup(func() {
		if names := containers(); len(names) > 0 {
			exec.Command("podman", append([]string{"rm", "-f"}, names...)...).Run()
		}
	})
	spec := llamaSpec(t, llamaSpecOpts{Model: "/models/tiny.gguf", Port: freePort(t), MaxModelLen: 512, MaxNumSeqs: 2,
		Server: fmt.Sprintf(`  container {
    runtime     = "podman"
    image       = %q
    name_prefix = %q
    volumes     = [%q]
    args        = ["--pull=never", "-e", %q]
  }
`, image, prefix, models+":/models:ro", markEnv), Body: llamaWorkload + `
measure {
  duration   = "2s"
  max_output = 64
}
matrix "decode" {
  contexts    = ["256"]
  concurrency = [1, 2]
}
`})
	out := filepath.Join(t.TempDir(), "out")
	r := runLlama(t, mark, "run", "-out", out, spec)
	starved := starvedOnly(t, r.Code, out)
	if r.Code != 0 && !starved {
		t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if !strings.Contains(r.Stdout, "podman run --rm --name "+prefix+"-") || !strings.Contains(r.Stdout, " -m /models/tiny.gguf ") {
		t.Errorf("the launch is not podman's with the model in the volume:\n%s", r.Stdout)
	}
	results := readResults(t, out)
	if results.Server.KVCacheTokens != 1024 || results.Server.KVCacheSlots != 2 {
		t.Errorf("KV cache %d tokens in %d slots, want the container's -c 1024 in 2", results.Server.KVCacheTokens, results.Server.KVCacheSlots)
	}
	for _, conc := range []int{1, 2} {
		if c := llamaCell(t, results, 256, conc); !measuredOrStarved(c.Status, vocab.StatusValid, starved) {
			t.Errorf("256 × %d: %s (%s), want valid", conc, c.Status, c.Reason)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(containers()) > 0 && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	if left := containers(); len(left) > 0 {
		t.Errorf("podman still lists the run's containers %v", left)
	}
	if left := processesNaming(prefix + "-"); len(left) > 0 {
		t.Errorf("processes of the run's container left behind:\n%s", strings.Join(left, "\n"))
	}
}

// TestLlamaCppSlotsSoak (SLOGATE_LLAMACPP_SOAK=1): 5 runs in a row on 2
// slots: the cells at concurrency 1 and 2 are valid, 3 and 4 queued
// (llamacpp:requests_deferred: requests waiting for a slot), each run.
func TestLlamaCppSlotsSoak(t *testing.T) {
	if !llamaSoak() {
		t.Skip("the soak runs with SLOGATE_LLAMACPP_SOAK=1 (TestLlamaCppRun checks the statuses once)")
	}
	server, models := llamaServer(t)
	spec := llamaSpec(t, llamaSpecOpts{Command: server, Model: llamaModel(t, models, "tiny.gguf"), Port: freePort(t), MaxModelLen: 512, MaxNumSeqs: 2,
		Body: llamaWorkload + `
measure {
  duration   = "2s"
  max_output = 64
}
matrix "decode" {
  contexts    = ["256"]
  concurrency = [1, 2, 3, 4]
}
`})
	for run := 1; run <= 5; run++ {
		out := filepath.Join(t.TempDir(), "out")
		r := runLlama(t, newMark(t), "run", "-out", out, spec)
		if r.Code != 0 {
			t.Fatalf("run %d: exit %d\nstdout:\n%s\nstderr:\n%s", run, r.Code, r.Stdout, r.Stderr)
		}
		results := readResults(t, out)
		var figures []string
		for conc, want := range map[int]vocab.Status{1: vocab.StatusValid, 2: vocab.StatusValid, 3: vocab.StatusQueued, 4: vocab.StatusQueued} {
			c := llamaCell(t, results, 256, conc)
			if c.Status != want {
				t.Errorf("run %d: 256 × %d is %s (%s), want %s", run, conc, c.Status, c.Reason, want)
			}
		}
		for _, c := range results.Decode {
			figures = append(figures, fmt.Sprintf("×%d %s %.0f tok/s (active %.2f)", c.Concurrency, c.Status, c.TotalTPS, c.ActiveAvg))
		}
		t.Logf("run %d: %s", run, strings.Join(figures, ", "))
	}
}

// cpuTicks is a process's utime + stime in clock ticks (/proc/PID/stat
// fields 14 and 15), or -1 once it is gone.
func cpuTicks(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	i := bytes.LastIndexByte(b, ')')
	if err != nil || i < 0 {
		return -1
	}
	f := strings.Fields(string(b[i+2:]))
	if len(f) < 13 {
		return -1
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return u + s
}

// clockTicks is the kernel's USER_HZ, the unit of /proc/PID/stat's times
// (100 on every Linux slogate runs on; getconf says when it can).
func clockTicks() float64 {
	if out, err := exec.Command("getconf", "CLK_TCK").Output(); err == nil {
		if v, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64); err == nil && v > 0 {
			return v
		}
	}
	return 100
}

// TestLlamaCppCPUShare (SLOGATE_LLAMACPP_BENCH=1): slogate's own CPU while
// it drives llama-server, beside the server's, at 1 and 8 streams (8 slots,
// one thread each way: -t 1): both processes' utime + stime read from
// /proc over the decode cell, each as a share of the machine (all cores)
// and per generated token. It logs the figures; it fails only when it
// cannot read them, or when slogate uses more CPU than the server it
// measures.
func TestLlamaCppCPUShare(t *testing.T) {
	if os.Getenv("SLOGATE_LLAMACPP_BENCH") != "1" {
		t.Skip("the benchmark runs with SLOGATE_LLAMACPP_BENCH=1")
	}
	server, models := llamaServer(t)
	tiny := llamaModel(t, models, "tiny.gguf")
	hz, cores := clockTicks(), float64(runtime.NumCPU())
	for _, streams := range []int{1, 8} {
		t.Run(fmt.Sprintf("streams=%d", streams), func(t *testing.T) {
			mark := newMark(t)
			port := freePort(t)
			spec := llamaSpec(t, llamaSpecOpts{Command: server, Model: tiny, Port: port, MaxModelLen: 512, MaxNumSeqs: 8, Body: llamaWorkload + fmt.Sprintf(`
measure {
  duration   = "10s"
  max_output = 256
}
matrix "decode" {
  contexts    = ["256"]
  concurrency = [%d]
}
`, streams)})
			out := filepath.Join(t.TempDir(), "out")
			b := startSlogate(t, mark, "run", "-out", out, spec)
			// The span: from the decode cell's start (its warm-up and
			// steady-state gate included) to its line in cells.jsonl.
			var srvPid int
			b.waitFor(t, "llama-server", time.Minute, func() bool {
				srvPid = markedProcess(mark, "llama-server", "--port")
				return srvPid != 0
			})
			b.waitFor(t, "the decode streams", time.Minute, func() bool { return strings.Contains(b.stdout.String(), "=== RUN   tiny/decode/") })
			t0, s0, m0 := time.Now(), cpuTicks(b.cmd.Process.Pid), cpuTicks(srvPid)
			var t1 time.Time
			var s1, m1 int64
			b.waitFor(t, "the decode cell", 2*time.Minute, func() bool {
				if s, m := cpuTicks(b.cmd.Process.Pid), cpuTicks(srvPid); s >= 0 && m >= 0 {
					t1, s1, m1 = time.Now(), s, m
				}
				return cellLines(out) >= 1
			})
			if code := b.exitAfter(t, time.Minute); code != 0 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, b.stdout.String(), b.stderr.String())
			}
			noLeftovers(t, mark)
			wall := t1.Sub(t0).Seconds()
			if s0 < 0 || m0 < 0 || wall <= 0 {
				t.Fatalf("could not read /proc/PID/stat of slogate (%d) and llama-server (%d)", s0, m0)
			}
			c := llamaCell(t, readResults(t, out), 256, streams)
			sc, mc := float64(s1-s0)/hz, float64(m1-m0)/hz
			t.Logf("%d streams over %.1f s: slogate %.2f CPU-s (%.1f %% of %g cores), llama-server %.2f CPU-s (%.1f %%); cell %.0f tok/s, %s; slogate %.0f µs of CPU a token",
				streams, wall, sc, 100*sc/(wall*cores), cores, mc, 100*mc/(wall*cores), c.TotalTPS, c.Status, 1e6*sc/(c.TotalTPS*wall))
			if sc >= mc {
				t.Errorf("slogate used %.2f CPU-s, the server it measures %.2f", sc, mc)
			}
		})
	}
}

// TestLlamaCppSettlesAfterOverload: llama-server notices a closed request
// only when it next polls its connection (every second), so after a cell
// at 20 req/s on 2 slots it still runs, and starts, the requests the
// client closed. The next cell, constant arrivals at 2 req/s with no
// warm-up, waits for the server to go idle (settle_s > 0) and is valid:
// without the wait it measured that backlog, queued, with a TTFT p99 of
// 570 to 670 ms against about 10 ms (three runs here; docs/method.md#settle).
func TestLlamaCppSettlesAfterOverload(t *testing.T) {
	t.Parallel()
	server, models := llamaServer(t)
	mark := newMark(t)
	spec := llamaSpec(t, llamaSpecOpts{Command: server, Model: llamaModel(t, models, "tiny.gguf"), Port: freePort(t), MaxModelLen: 512, MaxNumSeqs: 2,
		Body: llamaWorkload + llamaMix + `
measure { max_output = 64 }
traffic "over" {
  workload = "mix"
  rate     = [20]
  duration = "2s"
  warmup   = "0s"
  # The overload is what the next cell must settle after: run it whole,
  # never stopped as saturated (docs/method.md#saturation).
  saturation_after = "0s"
}
traffic "after" {
  workload = "mix"
  rate     = [2]
  arrivals = "constant"
  duration = "2s"
  warmup   = "0s"
}
`})
	out := filepath.Join(t.TempDir(), "out")
	r := runLlama(t, mark, "run", "-out", out, spec)
	if r.Code != 0 {
		t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	results := readResults(t, out)
	if len(results.Traffic) != 2 {
		t.Fatalf("%d traffic cells, want 2", len(results.Traffic))
	}
	over, after := results.Traffic[0], results.Traffic[1]
	t.Logf("over: %s, TTFT p99 %.0f ms; after: settled %.2f s, %s, TTFT p99 %.0f ms", over.Status, over.TTFTMsP99, after.SettleS, after.Status, after.TTFTMsP99)
	if over.Traffic != "over" || after.Traffic != "after" {
		t.Fatalf("traffic cells %s, %s: want over, then after", over.Traffic, after.Traffic)
	}
	if after.SettleS > 0 && after.Status == vocab.StatusQueued && loadedMachine() {
		// Settled, then queued by the machine: beside stress --cpu 2 (load
		// average 10) the starved server queued 2 req/s on its own, TTFT
		// p99 222 ms against the 570 to 670 ms of a cell measured on the
		// backlog. The wait, this test's subject, happened; a quiet
		// machine must also show the cell valid.
		t.Logf("load average %.1f: the cell after the overload settled %.2f s, then queued (%s)", loadAverage(), after.SettleS, after.Reason)
	} else if after.SettleS <= 0 || after.Status != vocab.StatusValid {
		t.Errorf("the cell after the overload: settled %.2f s, %s (%s), TTFT p99 %.0f ms; want a wait for the server's closed requests, then valid",
			after.SettleS, after.Status, after.Reason, after.TTFTMsP99)
	}
	if want := "before its first request for the server to finish those an earlier cell had closed"; !strings.Contains(r.Stdout, want) {
		t.Errorf("the console does not say the cell waited (%q)\n%s", want, r.Stdout)
	}
}

// TestKeptRuns: a cell's kept runs are its samples, or its one value when
// the runs left out left it one, or none when it kept none.
func TestKeptRuns(t *testing.T) {
	tests := []struct {
		name string
		cell res.DecodeCell
		want []float64
	}{
		{name: "several kept", cell: res.DecodeCell{Status: vocab.StatusValid, TotalTPS: 2, Repeats: 3, Samples: map[string][]float64{"total_tps": {1, 2, 3}}}, want: []float64{1, 2, 3}},
		{name: "one kept of three", cell: res.DecodeCell{Status: vocab.StatusValid, TotalTPS: 7, Excluded: make([]res.ExcludedRun, 2)}, want: []float64{7}},
		{name: "none kept", cell: res.DecodeCell{Status: vocab.StatusUnmeasurable, TotalTPS: 7, Excluded: make([]res.ExcludedRun, 3)}, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := keptRuns(tt.cell, "total_tps"); !slices.Equal(got, tt.want) {
				t.Errorf("keptRuns = %v, want %v", got, tt.want)
			}
		})
	}
}
