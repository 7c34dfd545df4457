package spec

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/slogate/slogate/internal/requests"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/workload"
)

func ptr[T any](v T) *T { return &v }

func f64s(vs ...any) []*float64 {
	out := make([]*float64, len(vs))
	for i, v := range vs {
		switch x := v.(type) {
		case nil:
		case int:
			out[i] = ptr(float64(x))
		case float64:
			out[i] = ptr(x)
		}
	}
	return out
}

// specCmpOpts compares decoded specs: source ranges, parsed files, the
// evaluation context and condition expressions are left out (ranges are
// checked by the diagnostics fixtures; conditions by their Cells).
var specCmpOpts = cmp.Options{
	cmpopts.IgnoreFields(Spec{}, "Files", "EvalContext"),
	cmpopts.IgnoreFields(Server{}, "DeclRange"),
	cmpopts.IgnoreFields(Speculative{}, "DeclRange"),
	cmpopts.IgnoreFields(Measure{}, "DeclRange", "RepeatRange", "MaxGPUTimeRange", "BootsRange"),
	cmpopts.IgnoreFields(Workload{}, "DeclRange", "DatasetRange", "InputTokensRange", "OutputTokensRange", "PrefixRange", "TurnsRange", "SpeedRange"),
	cmpopts.IgnoreFields(Prefill{}, "DeclRange"),
	cmpopts.IgnoreFields(Matrix{}, "DeclRange", "ConcurrencyRanges"), // plan.Check's diagnostic tests them
	cmpopts.IgnoreFields(Assert{}, "DeclRange", "Condition"),
	cmpopts.IgnoreFields(Expect{}, "DeclRange", "MetricRange"), // assert.Check's expect diagnostic tests MetricRange
	cmpopts.IgnoreFields(ExpectRow{}, "Range"),
	cmpopts.IgnoreFields(Variable{}, "DeclRange"),
	cmp.Comparer(func(a, b cty.Value) bool { return a.RawEquals(b) }),
	cmp.Comparer(func(a, b cty.Type) bool { return a.Equals(b) }),
}

func decodeRef(matrix string, ctx, conc int) vocab.CellRef {
	return vocab.CellRef{Phase: vocab.PhaseDecode, Matrix: matrix, Context: ctx, Concurrency: conc}
}

func prefillRef(ctx int) vocab.CellRef {
	return vocab.CellRef{Phase: vocab.PhasePrefill, Context: ctx}
}

func TestLoadValid(t *testing.T) {
	tests := []struct {
		name string
		path string
		want *Spec
	}{
		{
			name: "minimal spec gets every default",
			path: "testdata/valid/minimal.hcl",
			want: &Spec{
				Filename: "testdata/valid/minimal.hcl",
				Servers: []*Server{{
					Name: "qwen", Engine: "vllm", Command: "vllm", Model: "Qwen/Qwen3.5-4B",
					Host: "0.0.0.0", Port: 8000, ReadyTimeout: 30 * time.Minute,
				}},
				Measure:  &Measure{Duration: 30 * time.Second, DurationText: "30s", MaxOutput: 4096, Endpoint: "completions", Repeat: 1, Boots: 1},
				Workload: &Workload{Options: workload.Options{Prompt: "article", Seed: DefaultSeed}},
				Matrices: []*Matrix{{Label: "decode", Contexts: []int{8192}, Concurrency: []int{1}}},
				Asserts: []*Assert{{Name: "decode_8k_1", Cells: []vocab.CellRef{decodeRef("decode", 8192, 1)},
					Metrics: map[vocab.Phase][]string{vocab.PhaseDecode: {"total_tps"}}}},
			},
		},
		{
			name: "a price per GPU-hour",
			path: "testdata/valid/price.hcl",
			want: &Spec{
				Filename: "testdata/valid/price.hcl",
				Servers: []*Server{{
					Name: "qwen", Engine: "vllm", Command: "vllm", Model: "Qwen/Qwen3.5-4B",
					Host: "0.0.0.0", Port: 8000, ReadyTimeout: 30 * time.Minute, PricePerGPUHour: ptr(3.5),
				}},
				Measure:  &Measure{Duration: 30 * time.Second, DurationText: "30s", MaxOutput: 4096, Endpoint: "completions", Repeat: 1, Boots: 1},
				Workload: &Workload{Options: workload.Options{Prompt: "article", Seed: DefaultSeed}},
				Matrices: []*Matrix{{Label: "decode", Contexts: []int{8192}, Concurrency: []int{1}}},
			},
		},
		{
			name: "every block and attribute",
			path: "testdata/valid/full.hcl",
			want: &Spec{
				Filename: "testdata/valid/full.hcl",
				Servers: []*Server{
					{
						Name: "big", Engine: "vllm", Command: "$HOME/venv/bin/vllm", Model: "org/Model", ServedModelName: "big",
						TensorParallelSize: ptr(2), PipelineParallelSize: ptr(1), DataParallelSize: ptr(1),
						EnableExpertParallel: ptr(true), MaxModelLen: ptr(262144), GPUMemoryUtilization: ptr(0.9),
						MaxNumBatchedTokens: ptr(8192), MaxNumSeqs: ptr(64), AttentionBackend: "flash_attn",
						KVCacheDtype: "fp8", EnablePrefixCaching: ptr(false), KVCacheTokens: ptr(int64(1 << 20)),
						Speculative: &Speculative{
							Method: "eagle3", Model: "org/Draft", NumSpeculativeTokens: ptr(3),
							Config: map[string]any{"kv_cache_dtype": "auto", "draft_tensor_parallel_size": json.Number("1")},
						},
						Args:         []string{"--trust-remote-code", "--seed=7"},
						Env:          map[string]string{"VLLM_USE_V2_MODEL_RUNNER": "1"},
						APIKey:       "fallback-key",
						Host:         "127.0.0.1",
						Port:         9000,
						ReadyTimeout: time.Hour,
						Labels:       map[string]string{"quantization": "FP8", "gpu": "H200 NVL"},
					},
					{Name: "small", Engine: "vllm", Command: "vllm", Model: "org/Small", Host: "0.0.0.0", Port: 8000, ReadyTimeout: 30 * time.Minute},
				},
				Measure: &Measure{Duration: 2 * time.Second, DurationText: "2s", MaxOutput: 1024, Endpoint: "chat", Repeat: 3, Boots: 1},
				Prefill: &Prefill{Contexts: []int{8192, 32768, 131072}},
				Workload: &Workload{Options: workload.Options{
					Prompt: "article", Document: "The reference text.\n", Instruction: "Write a long article about it.",
					Distinct: true, Seed: DefaultSeed,
					Sampling:           map[string]json.Number{"temperature": "0.6", "top_p": "0.95", "top_k": "20", "seed": "7"},
					ChatTemplateKwargs: map[string]any{"enable_thinking": false},
				}},
				Matrices: []*Matrix{
					{Label: "decode", Contexts: []int{8192, 32768}, Concurrency: []int{1, 4, 16}},
					{Label: "long", Contexts: []int{131072}, Concurrency: []int{1}},
				},
				Asserts: []*Assert{
					{Name: "decode_8k_4", ErrorMessage: "too slow", Cells: []vocab.CellRef{decodeRef("decode", 8192, 4)},
						Metrics: map[vocab.Phase][]string{vocab.PhaseDecode: {"total_tps", "ttft_ms"}}},
					{Name: "prefill_and_long", Cells: []vocab.CellRef{prefillRef(131072), decodeRef("long", 131072, 1)},
						Metrics: map[vocab.Phase][]string{vocab.PhasePrefill: {"tps"}, vocab.PhaseDecode: {"total_tps"}}},
					{Name: "whole_row", Cells: []vocab.CellRef{
						decodeRef("decode", 32768, 1), decodeRef("decode", 32768, 4), decodeRef("decode", 32768, 16)}},
					{Name: "capacity", ReadsServer: true},
					{Name: "status_and_labels", ReadsServer: true, Cells: []vocab.CellRef{decodeRef("decode", 8192, 1)}},
				},
				Expects: []*Expect{
					{Name: "decode_total_tps", Matrix: "decode", Metric: "total_tps", Tolerance: 0.1, Rows: []ExpectRow{
						{Context: 8192, Values: f64s(400, 1500, nil)},
						{Context: 32768, Values: f64s(370, 1300, 3000)},
					}},
					{Name: "prefill_tps", Matrix: "prefill", Metric: "tps", Tolerance: 0.05, Rows: []ExpectRow{
						{Context: 8192, Values: f64s(46700)},
						{Context: 131072, Values: f64s(33100)},
					}},
				},
				Variables: []*Variable{
					{Name: "tp", Description: "tensor parallel size", Type: "number", TypeConstraint: cty.Number,
						Default: cty.NumberIntVal(2), Value: cty.NumberIntVal(2)},
					{Name: "limit", TypeConstraint: cty.DynamicPseudoType,
						Default: cty.NumberIntVal(6000), Value: cty.NumberIntVal(6000)},
				},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, diags := Load(tt.path, LoadOptions{LookupEnv: testEnv, ReadDataset: requests.ReadDataset, ReadItems: requests.ReadItems})
			if len(diags) > 0 {
				t.Fatalf("diagnostics: %v", diags)
			}
			if diff := cmp.Diff(tt.want, got, specCmpOpts); diff != "" {
				t.Errorf("decoded spec (-want +got):\n%s", diff)
			}
			if got.EvalContext == nil || got.Files[tt.path] == nil {
				t.Errorf("EvalContext or Files not set")
			}
		})
	}
}

// TestRangesKept checks that decoded structs point back at their source.
func TestRangesKept(t *testing.T) {
	s, diags := Load("testdata/valid/full.hcl", LoadOptions{LookupEnv: testEnv, ReadDataset: requests.ReadDataset, ReadItems: requests.ReadItems})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	tests := []struct {
		name string
		rng  hcl.Range
		line int
	}{
		{name: "server", rng: s.Servers[0].DeclRange, line: 12},
		{name: "speculative", rng: s.Servers[0].Speculative.DeclRange, line: 28},
		{name: "measure", rng: s.Measure.DeclRange, line: 53},
		{name: "prefill", rng: s.Prefill.DeclRange, line: 60},
		{name: "matrix", rng: s.Matrices[1].DeclRange, line: 67},
		{name: "assert", rng: s.Asserts[0].DeclRange, line: 72},
		{name: "condition", rng: s.Asserts[0].Condition.Range(), line: 73},
		{name: "expect", rng: s.Expects[0].DeclRange, line: 89},
		{name: "expect row", rng: s.Expects[0].Rows[1].Range, line: 94},
		{name: "variable", rng: s.Variables[1].DeclRange, line: 8},
		{name: "workload", rng: s.Workload.DeclRange, line: 111},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.rng.Filename != "testdata/valid/full.hcl" || tt.rng.Start.Line != tt.line {
				t.Errorf("range %s, want line %d", tt.rng, tt.line)
			}
		})
	}
}

// TestEvalContext checks the functions a condition can call and var.
func TestEvalContext(t *testing.T) {
	s, diags := Load("testdata/valid/full.hcl", LoadOptions{LookupEnv: testEnv, Vars: map[string]string{"tp": "4"}})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	tests := []struct {
		name, expr string
		want       cty.Value
	}{
		{name: "var", expr: `var.tp`, want: cty.NumberIntVal(4)},
		{name: "min max", expr: `max(1, min(5, 3))`, want: cty.NumberIntVal(3)},
		{name: "format", expr: `format("%.1f", 2.25)`, want: cty.StringVal("2.2")},
		{name: "env", expr: `env("SLOGATE_TEST")`, want: cty.StringVal("yes")},
		{name: "can", expr: `can(env("NOPE"))`, want: cty.False},
		{name: "coalesce", expr: `coalesce(null, "b")`, want: cty.StringVal("b")},
		{name: "join length", expr: `strlen(join(",", ["a", "b"])) + length(["x"])`, want: cty.NumberIntVal(4)},
		{name: "anytrue", expr: `anytrue([false, true])`, want: cty.True},
		{name: "ceil floor abs", expr: `ceil(1.2) + floor(1.8) + abs(-1)`, want: cty.NumberIntVal(4)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expr, d := parseExpr(tt.expr)
			if d.HasErrors() {
				t.Fatal(d)
			}
			got, d := expr.Value(s.EvalContext)
			if d.HasErrors() {
				t.Fatal(d)
			}
			if !got.RawEquals(tt.want) {
				t.Errorf("%s = %#v, want %#v", tt.expr, got, tt.want)
			}
		})
	}
}

// TestSpecsDir loads every real spec: they must be valid with or without
// the environment variables they read.
func TestSpecsDir(t *testing.T) {
	for _, path := range seedSpecPaths(t, true) {
		t.Run(path, func(t *testing.T) {
			_, diags := Load(path, LoadOptions{LookupEnv: testEnv, ReadDataset: requests.ReadDataset, ReadItems: requests.ReadItems})
			if len(diags) > 0 {
				t.Errorf("diagnostics: %v", diags)
			}
		})
	}
}

// TestAssertedMetrics: the metrics a spec's asserts read by name and its
// expects set, by phase, each once in order of first appearance, which a
// baseline comparison compares beside its defaults (docs/method.md#comparing-runs).
func TestAssertedMetrics(t *testing.T) {
	s, diags := Load("testdata/valid/full.hcl", LoadOptions{LookupEnv: testEnv, ReadDataset: requests.ReadDataset, ReadItems: requests.ReadItems})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	want := map[vocab.Phase][]string{
		vocab.PhaseDecode:  {"total_tps", "ttft_ms"},
		vocab.PhasePrefill: {"tps"},
	}
	if diff := cmp.Diff(want, s.AssertedMetrics()); diff != "" {
		t.Errorf("AssertedMetrics (-want +got):\n%s", diff)
	}
}
