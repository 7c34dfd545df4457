package assert

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"

	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/views"
	"github.com/slogate/slogate/internal/vocab"
)

func rowAt(ctx, line int, vals ...*float64) spec.ExpectRow {
	return spec.ExpectRow{Context: ctx, Values: vals, Range: hcl.Range{Filename: "specs/qwen.hcl", Start: hcl.Pos{Line: line}}}
}

func TestEvaluateExpect(t *testing.T) {
	tests := []struct {
		name   string
		expect spec.Expect
		want   []result.Verdict
	}{
		{
			name: "higher is better: below the tolerance fails, above passes",
			expect: spec.Expect{Name: "tps", Metric: "total_tps", Tolerance: 0.05, Rows: []spec.ExpectRow{
				rowAt(8192, 10, ptr(400), ptr(6018.4), nil),
			}},
			want: []result.Verdict{
				{
					Test: "qwen/expect/tps/ctx=8K/conc=1", Kind: vocab.KindExpect, Outcome: vocab.Pass,
					Rule: "total_tps >= 380 (400 - 5%)", File: "specs/qwen.hcl", Line: 10,
					Details: []string{"total_tps = 408.2, want >= 380 (400 - 5%) (+2.0% from expected)"},
					Cells:   []vocab.CellRef{{Phase: vocab.PhaseDecode, Matrix: "decode", Context: 8192, Concurrency: 1}},
				},
				{
					Test: "qwen/expect/tps/ctx=8K/conc=64", Kind: vocab.KindExpect, Outcome: vocab.Fail,
					Rule: "total_tps >= 5717.5 (6018.4 - 5%)", File: "specs/qwen.hcl", Line: 10,
					Message: "total_tps at decode/ctx=8K/conc=64 is below the expected 6018.4 by more than 5%",
					Details: []string{"total_tps = 5421.3, want >= 5717.5 (6018.4 - 5%) (-9.9% from expected)"},
					Cells:   []vocab.CellRef{{Phase: vocab.PhaseDecode, Matrix: "decode", Context: 8192, Concurrency: 64}},
				},
			},
		},
		{
			name: "lower is better: a latency above the tolerance fails, below passes",
			expect: spec.Expect{Name: "ttft", Metric: "ttft_ms", Tolerance: 0.1, Rows: []spec.ExpectRow{
				rowAt(8192, 20, ptr(40), ptr(400)),
			}},
			want: []result.Verdict{
				{
					Test: "qwen/expect/ttft/ctx=8K/conc=1", Kind: vocab.KindExpect, Outcome: vocab.Fail,
					Rule: "ttft_ms <= 44 (40 + 10%)", File: "specs/qwen.hcl", Line: 20,
					Message: "ttft_ms at decode/ctx=8K/conc=1 is above the expected 40 by more than 10%",
					Details: []string{"ttft_ms = 50, want <= 44 (40 + 10%) (+25.0% from expected)"},
					Cells:   []vocab.CellRef{{Phase: vocab.PhaseDecode, Matrix: "decode", Context: 8192, Concurrency: 1}},
				},
				{
					Test: "qwen/expect/ttft/ctx=8K/conc=64", Kind: vocab.KindExpect, Outcome: vocab.Pass,
					Rule: "ttft_ms <= 440 (400 + 10%)", File: "specs/qwen.hcl", Line: 20,
					Details: []string{"ttft_ms = 310, want <= 440 (400 + 10%) (-22.5% from expected)"},
					Cells:   []vocab.CellRef{{Phase: vocab.PhaseDecode, Matrix: "decode", Context: 8192, Concurrency: 64}},
				},
			},
		},
		{
			name: "over capacity fails with the arithmetic; errored and absent cells are infrastructure errors",
			expect: spec.Expect{Name: "tps", Metric: "total_tps", Tolerance: 0.05, Rows: []spec.ExpectRow{
				rowAt(8192, 10, nil, nil, ptr(7000)),
				rowAt(16384, 11, ptr(300), ptr(5000)),
			}},
			want: []result.Verdict{
				{
					Test: "qwen/expect/tps/ctx=8K/conc=128", Kind: vocab.KindExpect, Outcome: vocab.Fail,
					Rule: "total_tps >= 6650 (7000 - 5%)", File: "specs/qwen.hcl", Line: 10,
					Message: overCap8K128,
					Details: []string{overCap8K128},
					Cells:   []vocab.CellRef{{Phase: vocab.PhaseDecode, Matrix: "decode", Context: 8192, Concurrency: 128}},
				},
				{
					Test: "qwen/expect/tps/ctx=16K/conc=1", Kind: vocab.KindExpect, Outcome: vocab.Error, Infra: true,
					Rule: "total_tps >= 285 (300 - 5%)", File: "specs/qwen.hcl", Line: 11,
					Message: "cell not measured: error: HTTP 500 from /v1/completions",
					Details: []string{`decode["16K"][1]: cell not measured: error: HTTP 500 from /v1/completions`},
					Cells:   []vocab.CellRef{{Phase: vocab.PhaseDecode, Matrix: "decode", Context: 16384, Concurrency: 1}},
				},
				{
					Test: "qwen/expect/tps/ctx=16K/conc=64", Kind: vocab.KindExpect, Outcome: vocab.Error, Infra: true,
					Rule: "total_tps >= 4750 (5000 - 5%)", File: "specs/qwen.hcl", Line: 11,
					Message: "cell not measured: the results have no such cell",
					Details: []string{`decode["16K"][64]: cell not measured: the results have no such cell`},
					Cells:   []vocab.CellRef{{Phase: vocab.PhaseDecode, Matrix: "decode", Context: 16384, Concurrency: 64}},
				},
			},
		},
		{
			name: "prefill rows",
			expect: spec.Expect{Name: "prefill_tps", Matrix: "prefill", Metric: "tps", Tolerance: 0.05, Rows: []spec.ExpectRow{
				rowAt(8192, 30, ptr(44000)),
				rowAt(16384, 31, ptr(38500)),
			}},
			want: []result.Verdict{
				{
					Test: "qwen/expect/prefill_tps/ctx=8K", Kind: vocab.KindExpect, Outcome: vocab.Fail,
					Rule: "tps >= 41800 (44000 - 5%)", File: "specs/qwen.hcl", Line: 30,
					Message: "tps at prefill/ctx=8K is below the expected 44000 by more than 5%",
					Details: []string{"tps = 40000, want >= 41800 (44000 - 5%) (-9.1% from expected)"},
					Cells:   []vocab.CellRef{{Phase: vocab.PhasePrefill, Context: 8192}},
				},
				{
					Test: "qwen/expect/prefill_tps/ctx=16K", Kind: vocab.KindExpect, Outcome: vocab.Pass,
					Rule: "tps >= 36575 (38500 - 5%)", File: "specs/qwen.hcl", Line: 31,
					Details: []string{"tps = 38000, want >= 36575 (38500 - 5%) (-1.3% from expected)"},
					Cells:   []vocab.CellRef{{Phase: vocab.PhasePrefill, Context: 16384}},
				},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sp, res := fixture()
			e := tc.expect
			sp.Expects = []*spec.Expect{&e}
			got := Evaluate(sp, nil, res, views.AssertWords{})
			if diff := cmp.Diff(tc.want, got, ignoreFinding); diff != "" {
				t.Errorf("verdicts (-want +got):\n%s", diff)
			}
			checkFindings(t, got)
		})
	}
}

// TestExpectBoundary pins the tolerance edges: exactly at expected × (1 −
// tol) passes, just below fails; for latencies exactly at expected × (1 +
// tol) passes, just above fails.
func TestExpectBoundary(t *testing.T) {
	tests := []struct {
		name     string
		metric   string
		measured float64
		expected float64
		want     vocab.Outcome
	}{
		{"tps at the edge", "total_tps", 95, 100, vocab.Pass},
		{"tps just below", "total_tps", 94.99, 100, vocab.Fail},
		{"tps far above", "total_tps", 300, 100, vocab.Pass},
		{"latency at the edge", "tbt_ms", 105, 100, vocab.Pass},
		{"latency just above", "tbt_ms", 105.01, 100, vocab.Fail},
		{"latency far below", "tbt_ms", 1, 100, vocab.Pass},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sp := &spec.Spec{Matrices: []*spec.Matrix{{Label: "decode", Contexts: []int{1024}, Concurrency: []int{1}}}}
			c := result.DecodeCell{Matrix: "decode", Context: 1024, Concurrency: 1, Status: vocab.StatusValid}
			c.TotalTPS, c.TBTMs = tc.measured, tc.measured
			res := &result.Results{Server: result.Server{Name: "s"}, Decode: []result.DecodeCell{c}}
			sp.Expects = []*spec.Expect{{Name: "e", Metric: tc.metric, Tolerance: 0.05, Rows: []spec.ExpectRow{rowAt(1024, 1, ptr(tc.expected))}}}
			if got := Evaluate(sp, nil, res, views.AssertWords{})[0].Outcome; got != tc.want {
				t.Errorf("outcome %v, want %v", got, tc.want)
			}
		})
	}
}
