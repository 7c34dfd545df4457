package assert

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/slogate/slogate/internal/judge"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/views"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/warning"
)

func ptr(v float64) *float64 { return &v }

// fixture is a measured run of server "qwen": decode matrix 8K,16K × 1,64,128
// with 8K/128 over capacity (128 × (8,192 + 4,096) > 1,000,000 KV tokens), 16K/1 errored and 16K/64, 16K/128 absent;
// prefill 8K and 16K, and 32K in the spec but not measured.
func fixture() (*spec.Spec, *result.Results) {
	sp := &spec.Spec{
		Matrices: []*spec.Matrix{{Label: "decode", Contexts: []int{8192, 16384}, Concurrency: []int{1, 64, 128}}},
		Prefill:  &spec.Prefill{Contexts: []int{8192, 16384, 32768}},
	}
	res := &result.Results{
		Schema:  result.Schema,
		Server:  result.Server{Name: "qwen", Model: "Qwen/Qwen3.5-4B", ServedModel: "qwen", Version: "0.11.0", KVCacheTokens: 1_000_000, KVCacheSource: "metrics"},
		Measure: result.Measure{MaxOutput: 4096},
		Prefill: []result.PrefillCell{
			{Context: 8192, Status: vocab.StatusValid, TPS: 40000, TTFTMs: 204.8},
			{Context: 16384, Status: vocab.StatusValid, TPS: 38000, TTFTMs: 431.2},
		},
		Decode: []result.DecodeCell{
			{Matrix: "decode", Context: 8192, Concurrency: 1, Status: vocab.StatusValid, TotalTPS: 408.2, TTFTMs: 50, TBTMs: 2.4},
			{Matrix: "decode", Context: 8192, Concurrency: 64, Status: vocab.StatusValid, TotalTPS: 5421.3, TTFTMs: 310, TBTMs: 11.8},
			{Matrix: "decode", Context: 8192, Concurrency: 128, Status: vocab.StatusOverCapacity},
			{Matrix: "decode", Context: 16384, Concurrency: 1, Status: vocab.StatusError, Reason: "HTTP 500 from /v1/completions"},
		},
	}
	return sp, res
}

// withAssert parses one assert block the way a spec file holds it, so the
// condition has real source ranges, and adds it to sp.
func withAssert(t *testing.T, sp *spec.Spec, name, cond, msg string) {
	t.Helper()
	src := fmt.Sprintf("assert %q {\n  condition     = %s\n  error_message = %q\n}\n", name, cond, msg)
	f, diags := hclsyntax.ParseConfig([]byte(src), "specs/qwen.hcl", hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatalf("parsing %s: %v", cond, diags)
	}
	sp.Files = map[string]*hcl.File{"specs/qwen.hcl": f}
	blk := f.Body.(*hclsyntax.Body).Blocks[0]
	sp.Asserts = append(sp.Asserts, &spec.Assert{
		Name:         name,
		Condition:    blk.Body.Attributes["condition"].Expr,
		ErrorMessage: msg,
		DeclRange:    blk.DefRange(),
	})
}

// overCap8K128 is the verdict line of a read of the fixture's over-capacity cell.
const overCap8K128 = `decode["8K"][128] is over capacity: 128 × (8,192 + 4,096) = 1,572,864 tokens > KV cache 1,000,000 tokens (from metrics)`

func TestEvaluateAssert(t *testing.T) {
	const msg = "decode throughput at 8K x 64 fell below 6,000 tok/s"
	tests := []struct {
		name    string
		cond    string
		outcome vocab.Outcome
		infra   bool
		message string // "" = the error_message
		details []string
		edit    func(*result.Results) // changes the fixture's results (nil: none)
		finding result.Finding        // "" = not stated (checkFindings holds it to the outcome)
	}{
		{
			name: "pass", finding: result.FindingHeld, cond: `decode["8K"][64].total_tps >= 5000`, outcome: vocab.Pass,
			details: []string{`decode["8K"][64].total_tps = 5421.3, want >= 5000: ok`},
		},
		{
			name: "fail prints the breach", finding: result.FindingNotHeld, cond: `decode["8K"][64].total_tps >= 6000`, outcome: vocab.Fail,
			details: []string{`decode["8K"][64].total_tps = 5421.3, want >= 6000 (-9.6% from the threshold)`},
		},
		{
			name: "constant on the left is flipped", cond: `6000 <= decode["8K"][64].total_tps`, outcome: vocab.Fail,
			details: []string{`decode["8K"][64].total_tps = 5421.3, want >= 6000 (-9.6% from the threshold)`},
		},
		{
			name: "lower is better latency", cond: `decode["8K"][64].ttft_ms < 250`, outcome: vocab.Fail,
			details: []string{`decode["8K"][64].ttft_ms = 310, want < 250 (+24.0% from the threshold)`},
		},
		{
			name: "context as a number", cond: `decode[8192][64].total_tps > 5421`, outcome: vocab.Pass,
			details: []string{`decode[8192][64].total_tps = 5421.3, want > 5421: ok`},
		},
		{
			name: "context and concurrency as digit strings", cond: `decode["8192"]["64"].total_tps == 5421.3`, outcome: vocab.Pass,
			details: []string{`decode["8192"]["64"].total_tps = 5421.3, want == 5421.3: ok`},
		},
		{
			name: "lower-case suffix", cond: `decode["8k"][64].total_tps > 5421`, outcome: vocab.Pass,
			details: []string{`decode["8k"][64].total_tps = 5421.3, want > 5421: ok`},
		},
		{
			name: "compound: failed comparison first", cond: `decode["8K"][1].ttft_ms <= 100 && decode["8K"][64].total_tps >= 6000`, outcome: vocab.Fail,
			details: []string{
				`decode["8K"][64].total_tps = 5421.3, want >= 6000 (-9.6% from the threshold)`,
				`decode["8K"][1].ttft_ms = 50, want <= 100: ok`,
			},
		},
		{
			name: "computed threshold lists the other side's reads", cond: `decode["8K"][64].total_tps >= 14 * decode["8K"][1].total_tps`, outcome: vocab.Fail,
			details: []string{
				`decode["8K"][64].total_tps = 5421.3, want >= 5714.8 (14 * decode["8K"][1].total_tps) (-5.1% from the threshold)`,
				`decode["8K"][1].total_tps = 408.2`,
			},
		},
		{
			name: "for expression", cond: `min([for c in [1, 64] : decode["8K"][c].total_tps]...) > 1000`, outcome: vocab.Fail,
			details: []string{`min([for c in [1, 64] : decode["8K"][c].total_tps]...) = 408.2, want > 1000 (-59.2% from the threshold)`},
		},
		{
			name: "over capacity read fails with the arithmetic", finding: result.FindingOverCapacity, cond: `decode["8K"][128].total_tps >= 1`, outcome: vocab.Fail,
			message: overCap8K128,
			details: []string{overCap8K128},
		},
		{
			name: "over capacity read behind a short circuit", cond: `true || decode["8K"][128].total_tps > 0`, outcome: vocab.Fail,
			message: overCap8K128,
			details: []string{overCap8K128},
		},
		{
			name: "over capacity read inside a for expression", cond: `max([for c in [1, 128] : decode["8K"][c].total_tps]...) > 0`, outcome: vocab.Fail,
			message: overCap8K128,
			details: []string{overCap8K128},
		},
		{
			name: "over capacity read inside try", cond: `try(decode["8K"][128].total_tps > 0, true)`, outcome: vocab.Fail,
			message: overCap8K128,
			details: []string{overCap8K128},
		},
		{
			name: "over capacity and errored reads: the error wins", cond: `decode["8K"][128].total_tps > 0 && decode["16K"][1].ttft_ms < 100`, outcome: vocab.Error, infra: true,
			message: "cell not measured: error: HTTP 500 from /v1/completions; " + overCap8K128,
			details: []string{`decode["16K"][1]: cell not measured: error: HTTP 500 from /v1/completions`, overCap8K128},
		},
		{
			name: "errored cell", finding: result.FindingUnmeasured, cond: `decode["16K"][1].ttft_ms < 100`, outcome: vocab.Error, infra: true,
			message: "cell not measured: error: HTTP 500 from /v1/completions",
			details: []string{`decode["16K"][1]: cell not measured: error: HTTP 500 from /v1/completions`},
		},
		{
			name: "unmeasurable cell: inconclusive, not a slow server's fail", finding: result.FindingUnmeasurable, cond: `decode["16K"][1].total_tps > 1000`, outcome: vocab.Inconclusive,
			edit: func(r *result.Results) {
				r.Decode[3].Status, r.Decode[3].Reason, r.Decode[3].TotalTPS = vocab.StatusUnmeasurable, "the window held 4 output tokens in 1 s", 4
			},
			message: "cell unmeasurable: the window held 4 output tokens in 1 s",
			details: []string{`decode["16K"][1]: cell unmeasurable: the window held 4 output tokens in 1 s`},
		},
		{
			name: "unmeasurable cell's status: inconclusive, not queued or not", cond: `decode["16K"][1].status == "queued"`, outcome: vocab.Inconclusive,
			edit: func(r *result.Results) {
				r.Decode[3].Status, r.Decode[3].Reason = vocab.StatusUnmeasurable, "the server was starved"
			},
			message: "cell unmeasurable: the server was starved",
			details: []string{`decode["16K"][1]: cell unmeasurable: the server was starved`},
		},
		{
			name: "unmeasurable and errored reads: the error wins", cond: `decode["16K"][1].total_tps > 1000 && decode["16K"][64].total_tps > 0`, outcome: vocab.Error, infra: true,
			edit: func(r *result.Results) {
				r.Decode[3].Status, r.Decode[3].Reason = vocab.StatusUnmeasurable, "the window held 4 output tokens in 1 s"
			},
			message: "cell unmeasurable: the window held 4 output tokens in 1 s; cell not measured: the results have no such cell",
			details: []string{`decode["16K"][1]: cell unmeasurable: the window held 4 output tokens in 1 s`, `decode["16K"][64]: cell not measured: the results have no such cell`},
		},
		{
			name: "absent cell", cond: `decode["16K"][64].total_tps > 0`, outcome: vocab.Error, infra: true,
			message: "cell not measured: the results have no such cell",
			details: []string{`decode["16K"][64]: cell not measured: the results have no such cell`},
		},
		{
			name: "absent cell of an interrupted run", cond: `decode["16K"][64].total_tps > 0`, outcome: vocab.Error, infra: true,
			edit:    func(r *result.Results) { r.Interrupted = true },
			message: "cell not measured: the run was interrupted before measuring it",
			details: []string{`decode["16K"][64]: cell not measured: the run was interrupted before measuring it`},
		},
		{
			name: "absent cell of a run stopped by an error", cond: `decode["16K"][64].total_tps > 0`, outcome: vocab.Error, infra: true,
			edit:    func(r *result.Results) { r.Error = "the server exited (code 1)\nsee server.log" },
			message: "cell not measured: the run stopped before measuring it (the server exited (code 1))",
			details: []string{`decode["16K"][64]: cell not measured: the run stopped before measuring it (the server exited (code 1))`},
		},
		{
			name: "absent prefill cell", cond: `prefill["32K"].tps > 0`, outcome: vocab.Error, infra: true,
			message: "cell not measured: the results have no such cell",
			details: []string{`prefill["32K"]: cell not measured: the results have no such cell`},
		},
		{
			name: "status of an over-capacity cell is readable", cond: `decode["8K"][128].status == "over_capacity"`, outcome: vocab.Pass,
			details: []string{`decode["8K"][128].status = "over_capacity", want == "over_capacity": ok`},
		},
		{
			name: "prefill read", cond: `prefill["8K"].tps >= 30000`, outcome: vocab.Pass,
			details: []string{`prefill["8K"].tps = 40000, want >= 30000: ok`},
		},
		{
			name: "prefill latency by number key", cond: `prefill[8192].ttft_ms <= 200`, outcome: vocab.Fail,
			details: []string{`prefill[8192].ttft_ms = 204.8, want <= 200 (+2.4% from the threshold)`},
		},
		{
			name: "server read", cond: `server.kv_cache_tokens >= 64 * (8192 + 4096)`, outcome: vocab.Pass,
			details: []string{`server.kv_cache_tokens = 1000000, want >= 786432 (64 * (8192 + 4096)): ok`},
		},
		{
			name: "server version", cond: `server.version == "0.11.0" && server.name == "qwen"`, outcome: vocab.Pass,
			details: []string{`server.version = "0.11.0", want == "0.11.0": ok`, `server.name = "qwen", want == "qwen": ok`},
		},
		{
			name: "unknown server fact", cond: `server.max_num_seqs >= 64`, outcome: vocab.Error, infra: true,
			message: "server.max_num_seqs is not known: the run could not learn it from the server",
			details: []string{"server.max_num_seqs is not known: the run could not learn it from the server"},
		},
		// kv_cache_dtype and speculative are read only as the server stated
		// them: the spec's value beside them in results.json is what was
		// asked, not what ran.
		{
			name: "kv_cache_dtype the server did not state", cond: `server.kv_cache_dtype == "fp8"`, outcome: vocab.Error, infra: true,
			edit:    func(r *result.Results) { r.Server.KVCacheDtype = "fp8" },
			message: "server.kv_cache_dtype is not known: the run could not learn it from the server",
			details: []string{"server.kv_cache_dtype is not known: the run could not learn it from the server"},
		},
		{
			name: "kv_cache_dtype the server stated", cond: `server.kv_cache_dtype == "fp8"`, outcome: vocab.Fail,
			edit: func(r *result.Results) {
				r.Server.KVCacheDtype, r.Server.Stated = "auto", map[string]string{"kv_cache_dtype": "vllm:cache_config_info"}
			},
			details: []string{`server.kv_cache_dtype = "auto", want == "fp8"`},
		},
		{
			name: "speculative the server did not state", cond: `server.speculative == "dflash"`, outcome: vocab.Error, infra: true,
			edit:    func(r *result.Results) { r.Server.Speculative = "dflash" },
			message: "server.speculative is not known: the run could not learn it from the server",
			details: []string{"server.speculative is not known: the run could not learn it from the server"},
		},
		{
			name: "no speculation, stated", cond: `server.speculative == ""`, outcome: vocab.Pass,
			edit: func(r *result.Results) {
				r.Server.Stated = map[string]string{"speculative": "server.log (non-default args)"}
			},
			details: []string{`server.speculative = "", want == "": ok`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sp, res := fixture()
			if tc.edit != nil {
				tc.edit(res)
			}
			withAssert(t, sp, "decode_8k_64", tc.cond, msg)
			got := Evaluate(sp, nil, res, views.AssertWords{})
			if len(got) != 1 {
				t.Fatalf("got %d verdicts, want 1: %+v", len(got), got)
			}
			v := got[0]
			wantMsg := tc.message
			if wantMsg == "" {
				wantMsg = msg
			}
			want := result.Verdict{
				Test: "qwen/assert/decode_8k_64", Kind: vocab.KindAssert, Outcome: tc.outcome,
				Rule: tc.cond, File: "specs/qwen.hcl", Line: 2, Message: wantMsg,
				Details: tc.details, Infra: tc.infra,
			}
			if tc.outcome == vocab.Pass {
				want.Message = msg
			}
			if diff := cmp.Diff(want, v, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Cells" }, cmp.Ignore()), ignoreFinding); diff != "" {
				t.Errorf("verdict mismatch (-want +got):\n%s", diff)
			}
			checkFindings(t, got)
			if tc.finding != "" && v.Finding != tc.finding {
				t.Errorf("finding %q, want %q", v.Finding, tc.finding)
			}
		})
	}
}

// TestEvaluateSpecErrors covers conditions that are wrong as written: an
// Error with a diagnostic that is not an infrastructure error.
func TestEvaluateSpecErrors(t *testing.T) {
	tests := []struct {
		name    string
		cond    string
		message string
	}{
		{"not a bool", `decode["8K"][64].total_tps`, "condition is a number, not a bool"},
		{"null", `null`, "condition is null: it must be true or false"},
		{"optional metric not reported is null", `decode["8K"][64].server_total_tps > 1`, "condition could not be evaluated: Operation failed: Error during operation: argument must not be null."},
		{"misspelt metric", `decode["8K"][64].total_tpz > 1`, `condition could not be evaluated: Unsupported attribute: This object does not have an attribute named "total_tpz".`},
		{"concurrency outside the matrix", `decode["8K"][3].total_tps > 1`, `condition could not be evaluated: Invalid index: The given key does not identify an element in this collection value.`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sp, res := fixture()
			withAssert(t, sp, "broken", tc.cond, "")
			v := Evaluate(sp, nil, res, views.AssertWords{})[0]
			if v.Outcome != vocab.Error || v.Infra {
				t.Errorf("outcome %v infra %v, want error without infra", v.Outcome, v.Infra)
			}
			if v.Message != tc.message {
				t.Errorf("message %q, want %q", v.Message, tc.message)
			}
			if len(v.Details) == 0 || v.Details[0] == "" {
				t.Fatalf("no diagnostic in details")
			}
			if want := "on specs/qwen.hcl line 2"; !containsLine(v.Details, want) {
				t.Errorf("details do not point at %s:\n%s", want, joinLines(v.Details))
			}
		})
	}
}

func containsLine(lines []string, sub string) bool {
	return strings.Contains(strings.Join(lines, "\n"), sub)
}

func joinLines(l []string) string { return strings.Join(l, "\n") }

func TestEvaluateCells(t *testing.T) {
	sp, res := fixture()
	withAssert(t, sp, "two", `decode["8K"][64].total_tps >= 2 * prefill["16K"].tps / 1000 && decode[8192][1].ttft_ms < 100`, "")
	got := Evaluate(sp, nil, res, views.AssertWords{})[0].Cells
	want := []vocab.CellRef{
		{Phase: vocab.PhaseDecode, Matrix: "decode", Context: 8192, Concurrency: 64},
		{Phase: vocab.PhasePrefill, Context: 16384},
		{Phase: vocab.PhaseDecode, Matrix: "decode", Context: 8192, Concurrency: 1},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cells read (-want +got):\n%s", diff)
	}
}

// TestOverCapacityLine: the arithmetic uses this run's KV capacity and
// max_output; when the results lack them (or disagree with the status) the
// line repeats the runner's reason instead of inventing numbers.
func TestOverCapacityLine(t *testing.T) {
	ref := vocab.CellRef{Phase: vocab.PhaseDecode, Matrix: "decode", Context: 257024, Concurrency: 128}
	tests := []struct {
		name   string
		server result.Server
		maxOut int
		reason string
		want   string
	}{
		{
			name:   "capacity from metrics",
			server: result.Server{KVCacheTokens: 24_000_000, KVCacheSource: "metrics"}, maxOut: 4096,
			want: `decode["251K"][128] is over capacity: 128 × (257,024 + 4,096) = 33,423,360 tokens > KV cache 24,000,000 tokens (from metrics)`,
		},
		{
			name:   "capacity without a source",
			server: result.Server{KVCacheTokens: 24_000_000}, maxOut: 4096,
			want: `decode["251K"][128] is over capacity: 128 × (257,024 + 4,096) = 33,423,360 tokens > KV cache 24,000,000 tokens`,
		},
		{
			name: "capacity unknown: the runner's reason", maxOut: 4096, reason: "128 × (257024 + 4096) = 33423360 tokens > KV cache 24000000 tokens",
			want: `decode["251K"][128] is over capacity: 128 × (257024 + 4096) = 33423360 tokens > KV cache 24000000 tokens`,
		},
		{
			name:   "numbers that fit: the runner's reason",
			server: result.Server{KVCacheTokens: 1 << 40}, maxOut: 4096, reason: "from a resumed run",
			want: `decode["251K"][128] is over capacity: from a resumed run`,
		},
		{
			name:   "data parallelism: fits one engine's pool: the runner's reason",
			server: result.Server{KVCacheTokens: 40_000_000, KVCacheEngines: 2}, maxOut: 4096, reason: "from the runner",
			want: `decode["251K"][128] is over capacity: from the runner`,
		},
		{
			name:   "data parallelism: the arithmetic of one engine's pool",
			server: result.Server{KVCacheTokens: 32_000_000, KVCacheEngines: 2, KVCacheSource: "metrics"}, maxOut: 4096,
			want: `decode["251K"][128] is over capacity: ⌈128 ÷ 2⌉ = 64 per engine × (257,024 + 4,096) = 16,711,680 tokens > one engine's KV cache 16,000,000 tokens (32,000,000 over 2 engines) (from metrics)`,
		},
		{
			name: "nothing known", want: `decode["251K"][128] is over capacity`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := &result.Results{Server: tc.server, Measure: result.Measure{MaxOutput: tc.maxOut}}
			if got := overCapacityLine(ref, res, tc.reason); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestEvaluateTraffic: conditions read traffic cells by label, context and
// rate (non-integer rates by their string), or by rate or concurrency
// alone when the block's workload sets the lengths (LABEL[RATE],
// LABEL[CONC]); a closed loop at a context reads LABEL[CTX][CONC]. A read
// of an errored traffic cell is an infrastructure error naming the cell.
func TestEvaluateTraffic(t *testing.T) {
	sp := &spec.Spec{Traffic: []*spec.Traffic{
		{Label: "steady", Context: 8192, Rates: []float64{0.5, 1, 4, 8, 16}},
		{Label: "replay", Concurrency: []int{8, 32}},
		{Label: "open", Rates: []float64{8}},
		{Label: "closed", Context: 1024, Concurrency: []int{8}},
	}}
	res := &result.Results{Schema: result.Schema, Server: result.Server{Name: "qwen"},
		Traffic: []result.TrafficCell{
			{Traffic: "steady", Context: 8192, Rate: 0.5, Status: vocab.StatusValid, GoodputRPS: 0.49, Launched: 300, Completed: 300, TTFTMsP99: 80},
			// No request completed in rate 1's window: its latencies are
			// unmeasured (the fields hold 0), its counts and share are not.
			{Traffic: "steady", Context: 8192, Rate: 1, Status: vocab.StatusValid, Launched: 2, Completed: 0, Warnings: []warning.Warning{warning.New(warning.NoCompletion, "no request completed", "", nil)}},
			// 42 requests: a p99 cannot be decided from them, a median can.
			{Traffic: "steady", Context: 8192, Rate: 4, Status: vocab.StatusValid, GoodputRPS: 3.9, Launched: 42, Completed: 42, TTFTMs: 50, TTFTMsP99: 120},
			{Traffic: "steady", Context: 8192, Rate: 8, Status: vocab.StatusError, Reason: "HTTP 500"},
			// Stopped early: past the server's capacity.
			{Traffic: "steady", Context: 8192, Rate: 16, Status: vocab.StatusSaturated, Reason: "past the server's capacity at 16 req/s", GoodputRPS: 2},
			{Traffic: "replay", Concurrency: 8, Status: vocab.StatusValid, GoodputRPS: 7, TTFTMsP99: 90},
			{Traffic: "replay", Concurrency: 32, Status: vocab.StatusError, Reason: "HTTP 500"},
			{Traffic: "open", Rate: 8, Status: vocab.StatusValid, GoodputRPS: 7.5},
			{Traffic: "closed", Context: 1024, Concurrency: 8, Status: vocab.StatusValid, GoodputRPS: 6},
		}}
	tests := []struct {
		name    string
		cond    string
		outcome vocab.Outcome
		detail  string
		finding result.Finding // "" = not stated
	}{
		{name: "a saturated cell fails its rule", cond: `steady["8K"][16].goodput_rps >= 1`, outcome: vocab.Fail, finding: result.FindingSaturated,
			detail: `steady["8K"][16]: cell saturated: past the server's capacity at 16 req/s`},
		{name: "a saturated cell beside an errored one: an error", cond: `steady["8K"][16].goodput_rps >= 1 && steady["8K"][8].goodput_rps >= 1`, outcome: vocab.Error,
			finding: result.FindingUnmeasured, detail: `steady["8K"][8]: cell not measured: error: HTTP 500`},
		{name: "a saturated cell's status is readable", cond: `steady["8K"][16].status == "saturated"`, outcome: vocab.Pass,
			detail: `steady["8K"][16].status = "saturated", want == "saturated": ok`},
		{name: "integer rate passes", cond: `steady["8K"][4].goodput_rps >= 3.5`, outcome: vocab.Pass,
			detail: `steady["8K"][4].goodput_rps = 3.9, want >= 3.5: ok`},
		{name: "integer rate fails", cond: `steady["8K"][4].goodput_rps >= 3.95`, outcome: vocab.Fail,
			detail: `steady["8K"][4].goodput_rps = 3.9, want >= 3.95 (-1.3% from the threshold)`},
		{name: "fractional rate as a string", cond: `steady["8K"]["0.5"].ttft_ms_p99 <= 100`, outcome: vocab.Pass,
			detail: `steady["8K"]["0.5"].ttft_ms_p99 = 80, want <= 100: ok`},
		{name: "a p99 of 42 requests that holds: inconclusive", cond: `steady["8K"][4].ttft_ms_p99 <= 200`, outcome: vocab.Inconclusive,
			detail: `steady["8K"][4]: ttft_ms_p99 from 42 requests: a p99 needs ≥ 299`},
		{name: "a p99 of 42 requests that does not hold: inconclusive, never failed", cond: `steady["8K"][4].ttft_ms_p99 <= 100`, outcome: vocab.Inconclusive,
			detail: `steady["8K"][4]: ttft_ms_p99 from 42 requests: a p99 needs ≥ 299`},
		{name: "a median of 42 requests decides", cond: `steady["8K"][4].ttft_ms <= 40`, outcome: vocab.Fail,
			detail: `steady["8K"][4].ttft_ms = 50, want <= 40 (+25.0% from the threshold)`},
		{name: "a p99 of 42 requests beside an errored cell: an error", cond: `steady["8K"][4].ttft_ms_p99 <= 200 && steady["8K"][8].goodput_rps >= 1`, outcome: vocab.Error,
			detail: `steady["8K"][8]: cell not measured: error: HTTP 500`},
		{name: "latency of a cell where nothing completed", cond: `steady["8K"][1].ttft_ms_p99 < 2000`, outcome: vocab.Error,
			detail: `steady["8K"][1]: latency not measured: no request completed in the cell's window`},
		{name: "its e2e mean, under an or", cond: `steady["8K"][1].e2e_ms_mean < 2000 || true`, outcome: vocab.Error,
			detail: `steady["8K"][1]: latency not measured: no request completed in the cell's window`},
		{name: "its naming-rule percentile", cond: `steady["8K"][1].tpot_ms_p99 < 50`, outcome: vocab.Error,
			detail: `steady["8K"][1]: latency not measured: no request completed in the cell's window`},
		{name: "its goodput share is measured", cond: `steady["8K"][1].goodput_share >= 0.9`, outcome: vocab.Fail,
			detail: `steady["8K"][1].goodput_share = 0, want >= 0.9 (-100.0% from the threshold)`},
		{name: "its counts are measured", cond: `steady["8K"][1].launched == 2`, outcome: vocab.Pass,
			detail: `steady["8K"][1].launched = 2, want == 2: ok`},
		{name: "errored cell", cond: `steady["8K"][8].goodput_rps >= 1`, outcome: vocab.Error,
			detail: `steady["8K"][8]: cell not measured: error: HTTP 500`},
		{name: "closed loop without context", cond: `replay[8].goodput_rps >= 6.5`, outcome: vocab.Pass,
			detail: `replay[8].goodput_rps = 7, want >= 6.5: ok`},
		{name: "open loop without context", cond: `open[8].goodput_rps >= 7.6`, outcome: vocab.Fail,
			detail: `open[8].goodput_rps = 7.5, want >= 7.6 (-1.3% from the threshold)`},
		{name: "closed loop at a context", cond: `closed["1K"][8].goodput_rps == 6`, outcome: vocab.Pass,
			detail: `closed["1K"][8].goodput_rps = 6, want == 6: ok`},
		{name: "errored closed-loop cell", cond: `replay[32].goodput_rps >= 1`, outcome: vocab.Error,
			detail: `replay[32]: cell not measured: error: HTTP 500`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sp := *sp
			sp.Asserts = nil
			withAssert(t, &sp, "a", tt.cond, "")
			v := Evaluate(&sp, &spec.Server{Name: "qwen"}, res, views.AssertWords{})[0]
			if v.Outcome != tt.outcome {
				t.Errorf("outcome %v, want %v (%+v)", v.Outcome, tt.outcome, v)
			}
			if tt.finding != "" && v.Finding != tt.finding {
				t.Errorf("finding %q, want %q", v.Finding, tt.finding)
			}
			checkFindings(t, []result.Verdict{v})
			if !slices.Contains(v.Details, tt.detail) {
				t.Errorf("details %q lack %q", v.Details, tt.detail)
			}
		})
	}
}

// ignoreFinding leaves a verdict's finding out of a comparison whose
// want states the outcome; checkFindings then checks that the finding
// gives that outcome.
var ignoreFinding = cmpopts.IgnoreFields(result.Verdict{}, "Finding")

// checkFindings: every verdict carries a finding, and its outcome is the
// one the judge decides for it.
func checkFindings(t *testing.T, vs []result.Verdict) {
	t.Helper()
	for _, v := range vs {
		o, infra := judge.Decide(v.Finding)
		if v.Finding == "" || o != v.Outcome || infra != v.Infra {
			t.Errorf("%s: finding %q decides %v (infra %v), the verdict says %v (infra %v)", v.Test, v.Finding, o, infra, v.Outcome, v.Infra)
		}
	}
}

// TestNotBoolDiag: a condition that evaluates to another type than bool is
// an error diagnostic at the condition, naming the type.
func TestNotBoolDiag(t *testing.T) {
	rng := hcl.Range{Filename: "spec.hcl", Start: hcl.Pos{Line: 3, Column: 15}, End: hcl.Pos{Line: 3, Column: 40}}
	tests := []struct {
		name string
		typ  cty.Type
		want string
	}{
		{name: "a number", typ: cty.Number, want: `The condition evaluated to a number; write a comparison such as decode["8K"][64].total_tps >= 6000.`},
		{name: "a string", typ: cty.String, want: `The condition evaluated to a string; write a comparison such as decode["8K"][64].total_tps >= 6000.`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := notBoolDiag(rng, tt.typ)
			if len(d) != 1 || d[0].Severity != hcl.DiagError || d[0].Summary != "Condition is not a bool" || d[0].Detail != tt.want || *d[0].Subject != rng {
				t.Errorf("diagnostic %+v, want an error at %v: %q", d, rng, tt.want)
			}
		})
	}
}
