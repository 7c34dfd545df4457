package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	res "github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/result/resulttest"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/warning"
)

// Capacity and status truth on vLLM-shaped servers (docs/method.md#kv-capacity,
// docs/method.md#statuses): the simulator exposes its KV cache as vLLM does
// (docs/vllm.md#cache-config-info), with data parallelism, a hybrid model's
// block layout and older builds' log lines, and the runner must read the
// real capacity from it.

// hybridDP2 is a hybrid model on two data-parallel engines of 100,000
// tokens each: num_gpu_blocks × block_size is about twice the capacity.
const hybridDP2 = `"-dp", "2", "--sim-hybrid", "--sim-kv-tokens", "100000", "--sim-tbt", "5ms", "--sim-ttft", "20ms", "--sim-prefill-tps", "1000000"`

// kvTruth is what a simulator says about its KV cache on /metrics.
type kvTruth struct {
	sizePerEngine int64 // kv_cache_size_tokens (the capacity of one engine)
	engines       int
	blocksTimes   int64 // num_gpu_blocks × block_size, as a naive reader takes them
}

// capacity is the server's true capacity: every engine's.
func (k kvTruth) capacity() int64 { return k.sizePerEngine * int64(k.engines) }

var (
	cacheInfoRe = regexp.MustCompile(`(?m)^vllm:cache_config_info\{(.*)\} 1`)
	labelRe     = regexp.MustCompile(`(\w+)="([^"]*)"`)
)

// simKVTruth starts a simulator with args (quoted, comma-separated, as in a
// spec) and reads its vllm:cache_config_info series with regular
// expressions, independently of the runner's reader. The simulator runs
// until the test ends (under its own mark, checked after it is stopped).
func simKVTruth(t *testing.T, args string) kvTruth {
	t.Helper()
	mark := newMark(t) + "-truth"
	t.Cleanup(func() { noLeftovers(t, mark) }) // runs after startSim's cleanup stops it
	var argv []string
	for _, a := range strings.Split(args, ",") {
		argv = append(argv, strings.Trim(strings.TrimSpace(a), `"`))
	}
	base := startSim(t, mark, "Qwen/Qwen3.5-4B", append([]string{"--served-model-name", "qwen", "--max-model-len", "16384"}, argv...)...)
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	page, _ := io.ReadAll(resp.Body)
	var k kvTruth
	for _, m := range cacheInfoRe.FindAllStringSubmatch(string(page), -1) {
		labels := map[string]string{}
		for _, l := range labelRe.FindAllStringSubmatch(m[1], -1) {
			labels[l[1]] = l[2]
		}
		size, _ := strconv.ParseInt(labels["kv_cache_size_tokens"], 10, 64)
		blocks, _ := strconv.ParseInt(labels["num_gpu_blocks"], 10, 64)
		bs, _ := strconv.ParseInt(labels["block_size"], 10, 64)
		k.sizePerEngine, k.blocksTimes = size, blocks*bs
		k.engines++
	}
	if k.sizePerEngine == 0 || k.engines == 0 {
		t.Fatalf("no kv_cache_size_tokens in the simulator's /metrics:\n%s", page)
	}
	return k
}

// hybridMatrix measures 8K × 1 (the KV cross-check) and lists 8K × 32, which
// needs 32 × (8,192 + 256) = 270,336 tokens: over the true 200K, under
// num_gpu_blocks × block_size.
const hybridMatrix = `
measure {
  duration   = "1s"
  max_output = 256
}
matrix "decode" {
  contexts    = ["8K"]
  concurrency = [1, 32]
}
`

const need8Kx32 = 32 * (8192 + 256)

// TestCapacityDataParallelHybrid: with two engines and a hybrid layout the
// capacity is kv_cache_size_tokens × 2 (source "metrics"), not
// num_gpu_blocks × block_size (once or per engine); 8K × 32 is over
// capacity; the concurrency-1 cross-check, reading the usage of the engine
// holding the stream, agrees with it.
func TestCapacityDataParallelHybrid(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	defer noLeftovers(t, mark)
	truth := simKVTruth(t, hybridDP2)
	if truth.engines != 2 || truth.blocksTimes < need8Kx32 || truth.capacity() >= need8Kx32 {
		t.Fatalf("premise: %+v should be 2 engines whose blocks × size fit 8K × 32 (%d tokens) and whose capacity does not", truth, need8Kx32)
	}
	o := runFault(t, mark, 2*time.Minute, "-sim", faultSpec(t, freePort(t), "", hybridDP2, hybridMatrix))
	if o.r.Code != 0 || o.results == nil {
		t.Fatalf("want exit 0\n%s", o.dump())
	}
	if s := o.results.Server; s.KVCacheTokens != truth.capacity() || s.KVCacheSource != vocab.KVSourceMetrics {
		t.Errorf("capacity %d from %q, want %d (2 × kv_cache_size_tokens %d) from metrics; num_gpu_blocks × block_size is %d",
			s.KVCacheTokens, s.KVCacheSource, truth.capacity(), truth.sizePerEngine, truth.blocksTimes)
	}
	cells := decodeCells(t, o, 2)
	if c := cells["ctx=8K/conc=32"]; c.Status != vocab.StatusOverCapacity {
		t.Errorf("8K × 32: status %s, want over_capacity (%d tokens > %d)", c.Status, need8Kx32, truth.capacity())
	}
	c := cells["ctx=8K/conc=1"]
	check := c.KVUsageCheck
	if c.Status != vocab.StatusValid || check == nil {
		t.Fatalf("8K × 1: status %s (%s), kv_usage_check %+v; want valid with a check", c.Status, c.Reason, check)
	}
	if check.Engines != 2 || !within(float64(check.ImpliedCapacityTokens), float64(truth.capacity()), 0.05) || len(resulttest.UnexplainedWarnings(c)) != 0 {
		t.Errorf("8K × 1: kv_usage_check %+v, warnings %q; want 2 engines and an implied capacity within 5%% of %d, no warning",
			check, c.Warnings, truth.capacity())
	}
	if check.ResidentTokens <= 8192 || check.ResidentTokens > 8192+256 || check.Samples == 0 {
		t.Errorf("8K × 1: resident %d tokens in %d samples, want 8,192 + the tokens generated so far", check.ResidentTokens, check.Samples)
	}
}

// TestCapacityFromLogLines: a build before the kv_cache_size_tokens label
// (--sim-no-kv-size-label: two log lines per engine) gives the capacity
// from the "GPU KV cache size" lines, summed over the engines.
func TestCapacityFromLogLines(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	defer noLeftovers(t, mark)
	truth := simKVTruth(t, hybridDP2)
	// Only the over-capacity cell: nothing is measured.
	o := runFault(t, mark, time.Minute, "-sim", "-run", "conc=32", faultSpec(t, freePort(t), "", hybridDP2+`, "--sim-no-kv-size-label"`, hybridMatrix))
	if o.r.Code != 0 || o.results == nil {
		t.Fatalf("want exit 0\n%s", o.dump())
	}
	if s := o.results.Server; s.KVCacheTokens != truth.capacity() || s.KVCacheSource != vocab.KVSourceLog {
		t.Errorf("capacity %d from %q, want %d (two engines' log lines) from log", s.KVCacheTokens, s.KVCacheSource, truth.capacity())
	}
	if c := decodeCells(t, o, 1)["ctx=8K/conc=32"]; c.Status != vocab.StatusOverCapacity {
		t.Errorf("8K × 32: status %s, want over_capacity", c.Status)
	}
}

// TestCapacityFromLogForms: the other KV log forms a real server prints
// (--sim-kv-log): the concurrency line alone gives concurrency × length;
// vLLM 0.19's two lines, whose size line is wrong for a hybrid model, give
// concurrency × length with a warning naming both numbers and vLLM #40691,
// on the console and in results.json. The concurrency is printed with two
// decimals, so the capacity is within 0.5 % of the truth.
func TestCapacityFromLogForms(t *testing.T) {
	t.Parallel()
	truth := simKVTruth(t, hybridDP2)
	tests := []struct {
		form string
		warn bool
	}{
		{form: "concurrency-only"},
		{form: "v0.19", warn: true},
	}
	for _, tc := range tests {
		t.Run(tc.form, func(t *testing.T) {
			t.Parallel()
			mark := newMark(t)
			defer noLeftovers(t, mark)
			o := runFault(t, mark, time.Minute, "-sim", "-run", "conc=32",
				faultSpec(t, freePort(t), "", hybridDP2+`, "--sim-no-kv-size-label", "--sim-kv-log", "`+tc.form+`"`, hybridMatrix))
			if o.r.Code != 0 || o.results == nil {
				t.Fatalf("want exit 0\n%s", o.dump())
			}
			s := o.results.Server
			if s.KVCacheSource != vocab.KVSourceLog || !within(float64(s.KVCacheTokens), float64(truth.capacity()), 0.005) {
				t.Errorf("capacity %d from %q, want %d ± 0.5 %% from log", s.KVCacheTokens, s.KVCacheSource, truth.capacity())
			}
			// The #40691 warning: kv_doubtful about the log it read (what
			// it says of the two lines is vLLM's, internal/engine/vllm's
			// TestKVFromLog), shown on the console as recorded.
			i := slices.IndexFunc(o.results.Warnings, func(w warning.Warning) bool { return w.Code == warning.KVDoubtful })
			if got := i >= 0; got != tc.warn {
				t.Fatalf("a kv_doubtful warning: %v, want %v (warnings %+v)", got, tc.warn, o.results.Warnings)
			}
			if tc.warn {
				if w := o.results.Warnings[i]; w.Subject != vocab.KVSourceLog || !strings.Contains(o.r.Stdout+o.r.Stderr, w.String()) {
					t.Errorf("warning %+v: want it about %q and on the console\n%s", w, vocab.KVSourceLog, o.dump())
				}
			}
		})
	}
}

// TestCapacitySpecWinsAndCrossCheckWarns: the spec's kv_cache_tokens beats
// both the metric and the log lines the server offers; set to twice the
// truth, the concurrency-1 cross-check warns that it is suspect, and
// leaves the capacity as the spec says.
func TestCapacitySpecWinsAndCrossCheckWarns(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	defer noLeftovers(t, mark)
	truth := simKVTruth(t, hybridDP2)
	specKV := 2 * truth.capacity()
	o := runFault(t, mark, 2*time.Minute, "-sim", faultSpec(t, freePort(t), fmt.Sprintf("  kv_cache_tokens = %d", specKV), hybridDP2, `
measure {
  duration   = "1s"
  max_output = 256
}
matrix "decode" {
  contexts    = ["8K"]
  concurrency = [1]
}
`))
	if o.r.Code != 0 || o.results == nil {
		t.Fatalf("want exit 0\n%s", o.dump())
	}
	if s := o.results.Server; s.KVCacheTokens != specKV || s.KVCacheSource != vocab.KVSourceSpec {
		t.Errorf("capacity %d from %q, want the spec's %d", s.KVCacheTokens, s.KVCacheSource, specKV)
	}
	c := decodeCells(t, o, 1)["ctx=8K/conc=1"]
	if c.KVUsageCheck == nil || !within(float64(c.KVUsageCheck.ImpliedCapacityTokens), float64(truth.capacity()), 0.05) {
		t.Fatalf("8K × 1: kv_usage_check %+v, want an implied capacity within 5%% of the truth %d", c.KVUsageCheck, truth.capacity())
	}
	i := slices.IndexFunc(c.Warnings, func(w warning.Warning) bool { return w.Code == warning.KVCapacity })
	if i < 0 {
		t.Fatalf("8K × 1 warnings %q lack a kv_capacity warning", c.Warnings)
	}
	ratio, _ := c.Warnings[i].Figure(warning.FigRatio)
	capacity, _ := c.Warnings[i].Figure(warning.FigCapacityTokens)
	if capacity != float64(specKV) || !within(ratio, 2, 0.05) {
		t.Errorf("8K × 1 kv_capacity figures %v, want the spec's capacity %d at 2.0× the implied", c.Warnings[i].Figures, specKV)
	}
	o.wantSaid(t, "the spec's kv_cache_tokens is suspect")
}

// TestStatusRestartGapsAreNotQueued: short outputs restart streams often,
// so fewer than C are past their first token on average, on a server with
// ample KV and no cap: valid, with a note, never queued.
func TestStatusRestartGapsAreNotQueued(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	defer noLeftovers(t, mark)
	o := runFault(t, mark, 2*time.Minute, "-sim", faultSpec(t, freePort(t), "", `"--sim-prefill-tps", "1000000"`, `
measure {
  duration   = "2s"
  max_output = 64
}
matrix "decode" {
  contexts    = ["8K"]
  concurrency = [16]
}
`))
	if o.r.Code != 0 || o.results == nil {
		t.Fatalf("want exit 0\n%s", o.dump())
	}
	c := decodeCells(t, o, 1)["ctx=8K/conc=16"]
	if c.Status != vocab.StatusValid {
		t.Errorf("8K × 16: status %s (%s), want valid", c.Status, c.Reason)
	}
	// The premise: the restart gaps show in active_avg (64-token outputs
	// take well under a second; each restart waits for its first token).
	gaps := slices.IndexFunc(c.Notes, func(w warning.Warning) bool { return w.Code == warning.RestartGaps })
	if c.ActiveAvg >= 0.95*16 || gaps < 0 || !cmp.Equal(c.Notes[gaps].Figures, map[string]float64{warning.FigActiveAvg: c.ActiveAvg, warning.FigConcurrency: 16}) {
		t.Errorf("8K × 16: active_avg %.2f, notes %+v; want under 15.2 with a restart_gaps note quoting it and 16", c.ActiveAvg, c.Notes)
	}
}

// TestStatusQueuedOnPreemption: with --sim-preempt the server admits all 8
// streams and preempts when their growing outputs fill the KV cache
// (8 × (1,024 + 2,304) tokens: about 4.6 s in at 2 ms a token, after the
// 3 s hold, early in the 6 s window that closes about 9 s in, so a slow
// machine delaying the first preemption by seconds still has it inside;
// preemptions then go on every second or so as the others grow). The
// spec's kv_cache_tokens lets the cell run although 8 × (1,024 + 4,096)
// do not fit.
func TestStatusQueuedOnPreemption(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	defer noLeftovers(t, mark)
	o := runFault(t, mark, 2*time.Minute, "-sim", faultSpec(t, freePort(t), "  kv_cache_tokens = 1000000",
		`"--sim-preempt", "--sim-kv-tokens", "26624", "--sim-tbt", "2ms", "--sim-ttft", "20ms", "--sim-prefill-tps", "1000000"`, `
measure {
  duration   = "6s"
  max_output = 4096
}
matrix "decode" {
  contexts    = ["1K"]
  concurrency = [8]
}
`))
	if o.r.Code != 0 || o.results == nil {
		t.Fatalf("want exit 0\n%s", o.dump())
	}
	c := decodeCells(t, o, 1)["ctx=1K/conc=8"]
	if c.Status != vocab.StatusQueued || c.Preemptions == nil || *c.Preemptions == 0 || !strings.Contains(c.Reason, "preempted") {
		t.Errorf("1K × 8: status %s (%s), preemptions %v; want queued with preemptions > 0 in the reason", c.Status, c.Reason, deref64(c.Preemptions))
	}
}

// TestStatusQueuedOnSGLangRetraction: SGLang admits more streams than
// their whole outputs fit (its new_token_ratio admission) and retracts
// some when the pool runs out (docs/sglang.md#admission); the simulator
// counts them in sglang:num_retracted_requests_total, and the cell is
// queued with the retractions in its reason, as vLLM's preemptions make
// it (8 × (1,024 + 4,096) tokens in a 26,624-token pool).
func TestStatusQueuedOnSGLangRetraction(t *testing.T) {
	t.Parallel()
	mark := newMark(t)
	defer noLeftovers(t, mark)
	o := runFault(t, mark, 2*time.Minute, "-sim", faultSpec(t, freePort(t), "  engine = \"sglang\"\n  kv_cache_tokens = 1000000",
		`"--sim-kv-tokens", "26624", "--sim-tbt", "2ms", "--sim-ttft", "20ms", "--sim-prefill-tps", "1000000"`, `
measure {
  duration   = "6s"
  max_output = 4096
}
matrix "decode" {
  contexts    = ["1K"]
  concurrency = [8]
}
`))
	if o.r.Code != 0 || o.results == nil {
		t.Fatalf("want exit 0\n%s", o.dump())
	}
	c := decodeCells(t, o, 1)["ctx=1K/conc=8"]
	if c.Status != vocab.StatusQueued || c.Preemptions == nil || *c.Preemptions == 0 ||
		!strings.Contains(c.Reason, fmt.Sprintf("the server preempted %d requests during the window (sglang:num_retracted_requests_total: requests retracted to the queue", *c.Preemptions)) {
		t.Errorf("1K × 8: status %s (%s), preemptions %v; want queued with the retractions in the reason", c.Status, c.Reason, deref64(c.Preemptions))
	}
}

// TestMidStreamErrorShapes: both shapes of docs/vllm.md#mid-stream-errors
// make the cell an error carrying the server's message.
func TestMidStreamErrorShapes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, args string }{
		{name: "nested", args: `"--sim-midstream-error-after", "5"`},
		{name: "flat", args: `"--sim-midstream-error-after", "5", "--sim-flat-errors"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			mark := newMark(t)
			defer noLeftovers(t, mark)
			o := runFault(t, mark, 2*time.Minute, "-sim", faultSpec(t, freePort(t), "", fastSim+", "+tc.args, `
measure {
  duration   = "1s"
  max_output = 256
}
matrix "decode" {
  contexts    = ["1K"]
  concurrency = [1]
}
`))
			if o.r.Code != 3 || o.results == nil {
				t.Fatalf("want exit 3 (a cell could not be measured)\n%s", o.dump())
			}
			const msg = "server error in stream: simulated mid-stream error (--sim-midstream-error-after) (InternalServerError)"
			if c := decodeCells(t, o, 1)["ctx=1K/conc=1"]; c.Status != vocab.StatusError || !strings.Contains(c.Reason, msg) {
				t.Errorf("1K × 1: status %s reason %q, want error with %q", c.Status, c.Reason, msg)
			}
		})
	}
}

// decodeCells returns the run's decode cells by "ctx=8K/conc=1", failing
// unless there are n.
func decodeCells(t *testing.T, o outcome, n int) map[string]res.DecodeCell {
	t.Helper()
	cells := map[string]res.DecodeCell{}
	for _, c := range o.results.Decode {
		cells[strings.TrimPrefix(c.Ref().Name(), "decode/")] = c
	}
	if len(o.results.Decode) != n {
		t.Fatalf("%d decode cells, want %d\n%s", len(o.results.Decode), n, o.dump())
	}
	return cells
}

func deref64(p *int64) string {
	if p == nil {
		return "nil"
	}
	return strconv.FormatInt(*p, 10)
}

// TestSeedCapacityOnTheSimulator: each seed spec's launch, on a simulator
// exposing itself as that server really does (Qwen3.5 and Ling are hybrid:
// -var sim_args=["--sim-hybrid"]; GLM is one engine on two GPUs), gives a
// KV capacity from the metrics inside the bounds the seed report sets (its
// largest measured cell fits, its smallest over-capacity cell does not:
// internal/sim/profiles/*.json kv_cache_tokens_bounds), and the seed's
// over-capacity cells are skipped as over capacity. Only those cells are
// selected, so only their contexts' cold prefills are measured, made quick
// with fastPrefill.
func TestSeedCapacityOnTheSimulator(t *testing.T) {
	t.Parallel()
	const fastPrefill = `"--sim-prefill-tps", "100000000"`
	for _, tc := range []struct {
		name, spec, simArgs string
		over                []string // the seed report's over-capacity cells
	}{
		{name: "qwen", spec: "qwen3.5-4b-h200-dflash.hcl", simArgs: `["--sim-hybrid", ` + fastPrefill + `]`, over: []string{"251K/conc=128"}},
		{name: "ling", spec: "ling-3.0-flash-int4-h200x2.hcl", simArgs: `["--sim-hybrid", ` + fastPrefill + `]`, over: []string{"128K/conc=128", "251K/conc=64", "251K/conc=128"}},
		{name: "glm", spec: "glm-5.3-flash-nvfp4-h200x2.hcl", simArgs: `[` + fastPrefill + `]`, over: []string{"32K/conc=128", "64K/conc=64", "128K/conc=32",
			"256K/conc=16", "512K/conc=8", "1019K/conc=4", "1019K/conc=128"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			mark := newMark(t)
			t.Cleanup(func() { noLeftovers(t, mark) }) // after startSim's cleanup
			spec := "../specs/" + tc.spec
			base, env := startSeedSim(t, mark, spec, tc.simArgs)
			var names []string
			for _, c := range tc.over {
				names = append(names, regexp.QuoteMeta(tc.name+"/decode/ctx="+c))
			}
			out := t.TempDir()
			r := slogate(t, mark, time.Minute, "", env, "run", "-endpoint", base, "-var", "sim_args="+tc.simArgs,
				"-run", "^("+strings.Join(names, "|")+")$", "-out", out, spec)
			if r.Code != 0 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
			}
			results := readResults(t, out)
			lo, hi := profileKVBounds(t, tc.name)
			if s := results.Server; s.KVCacheSource != vocab.KVSourceMetrics || s.KVCacheTokens < lo || s.KVCacheTokens >= hi {
				t.Errorf("capacity %d from %q, want from metrics in [%d, %d) (the seed's largest measured cell fits, its smallest over-capacity cell does not)",
					s.KVCacheTokens, s.KVCacheSource, lo, hi)
			}
			if len(results.Decode) != len(tc.over) {
				t.Fatalf("%d decode cells, want %d\n%s", len(results.Decode), len(tc.over), r.Stdout)
			}
			for _, c := range results.Decode {
				if c.Status != vocab.StatusOverCapacity {
					t.Errorf("%s: status %s, want over_capacity as in the seed report", c.Ref().Name(), c.Status)
				}
			}
		})
	}
}

// profileKVBounds reads a simulator profile's kv_cache_tokens_bounds: the
// capacity range the seed report allows.
func profileKVBounds(t *testing.T, profile string) (lo, hi int64) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "internal", "sim", "profiles", profile+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		Bounds [2]int64 `json:"kv_cache_tokens_bounds"`
	}
	if err := json.Unmarshal(b, &p); err != nil || p.Bounds[1] <= p.Bounds[0] {
		t.Fatalf("%s.json: bounds %v, %v", profile, p.Bounds, err)
	}
	return p.Bounds[0], p.Bounds[1]
}
