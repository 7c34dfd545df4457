package assert

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/slogate/slogate/result"
)

func TestCompareBaseline(t *testing.T) {
	cell := func(ctx, conc int, tps, ttft, tbt float64) result.DecodeCell {
		return result.DecodeCell{Matrix: "decode", Context: ctx, Concurrency: conc, Status: result.StatusValid, TotalTPS: tps, TTFTMs: ttft, TBTMs: tbt}
	}
	over := func(ctx, conc int) result.DecodeCell {
		return result.DecodeCell{Matrix: "decode", Context: ctx, Concurrency: conc, Status: result.StatusOverCapacity}
	}
	base := &result.Results{Server: result.Server{Name: "old"},
		Prefill: []result.PrefillCell{{Context: 8192, Status: result.StatusValid, TPS: 40000, TTFTMs: 204.8}},
		Decode: []result.DecodeCell{
			cell(8192, 1, 408.2, 50, 2.4),
			cell(8192, 64, 6018.4, 300, 10.5),
			cell(16384, 1, 400, 80, 2.5),
			over(16384, 64),
		},
	}
	res := &result.Results{Server: result.Server{Name: "qwen"},
		Prefill: []result.PrefillCell{{Context: 8192, Status: result.StatusValid, TPS: 39500, TTFTMs: 207.4}},
		Decode: []result.DecodeCell{
			cell(8192, 1, 410, 49, 2.4),
			cell(8192, 64, 5421.3, 300, 10.5),
			{Matrix: "decode", Context: 16384, Concurrency: 1, Status: result.StatusError, Reason: "stream stalled"},
			cell(16384, 64, 4000, 900, 12),
			cell(32768, 1, 380, 120, 2.6),
		},
	}
	ref := func(phase result.Phase, ctx, conc int) []result.CellRef {
		if phase == result.PhasePrefill {
			return []result.CellRef{{Phase: phase, Context: ctx}}
		}
		return []result.CellRef{{Phase: phase, Matrix: "decode", Context: ctx, Concurrency: conc}}
	}
	const rule = "within 5% of the baseline"
	want := []result.Verdict{
		{
			Test: "qwen/baseline/prefill/ctx=8K", Kind: result.KindBaseline, Outcome: result.Pass, Rule: rule,
			Details: []string{"tps: baseline 40000, now 39500 (-1.2%)"},
			Cells:   ref(result.PhasePrefill, 8192, 0),
		},
		{
			Test: "qwen/baseline/decode/ctx=8K/conc=1", Kind: result.KindBaseline, Outcome: result.Pass, Rule: rule,
			Details: []string{
				"total_tps: baseline 408.2, now 410 (+0.4%)",
				"ttft_ms: baseline 50, now 49 (-2.0%)",
				"tbt_ms: baseline 2.4, now 2.4 (0.0%)",
			},
			Cells: ref(result.PhaseDecode, 8192, 1),
		},
		{
			Test: "qwen/baseline/decode/ctx=8K/conc=64", Kind: result.KindBaseline, Outcome: result.Fail, Rule: rule,
			Message: "total_tps regressed beyond 5% against the baseline",
			Details: []string{
				"total_tps: baseline 6018.4, now 5421.3 (-9.9%), regressed beyond 5% (higher is better)",
				"ttft_ms: baseline 300, now 300 (0.0%)",
				"tbt_ms: baseline 10.5, now 10.5 (0.0%)",
			},
			Cells: ref(result.PhaseDecode, 8192, 64),
		},
		{
			Test: "qwen/baseline/decode/ctx=16K/conc=1", Kind: result.KindBaseline, Outcome: result.Error, Infra: true, Rule: rule,
			Message: "cell not measured: error: stream stalled",
			Details: []string{`decode["16K"][1]: cell not measured: error: stream stalled (the baseline measured it)`},
			Cells:   ref(result.PhaseDecode, 16384, 1),
		},
		{
			Test: "qwen/baseline/decode/ctx=16K/conc=64", Kind: result.KindBaseline, Outcome: result.Skip, Rule: rule,
			Message: "baseline cell not measured: over capacity",
			Cells:   ref(result.PhaseDecode, 16384, 64),
		},
		{
			Test: "qwen/baseline/decode/ctx=32K/conc=1", Kind: result.KindBaseline, Outcome: result.Skip, Rule: rule,
			Message: "not in the baseline",
			Cells:   ref(result.PhaseDecode, 32768, 1),
		},
	}
	got := CompareBaseline(base, res, 0.05)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("verdicts (-want +got):\n%s", diff)
	}
}

// TestCompareBaselineMissingCell: a cell the baseline measured and the new
// run lacks entirely is an infrastructure error, and latencies regress upward.
func TestCompareBaselineMissingCell(t *testing.T) {
	base := &result.Results{Server: result.Server{Name: "qwen"}, Decode: []result.DecodeCell{
		{Matrix: "decode", Context: 8192, Concurrency: 1, Status: result.StatusValid, TotalTPS: 400, TTFTMs: 50, TBTMs: 2},
		{Matrix: "decode", Context: 8192, Concurrency: 2, Status: result.StatusValid, TotalTPS: 800, TTFTMs: 50, TBTMs: 2},
	}}
	res := &result.Results{Server: result.Server{Name: "qwen"}, Decode: []result.DecodeCell{
		{Matrix: "decode", Context: 8192, Concurrency: 1, Status: result.StatusQueued, TotalTPS: 400, TTFTMs: 60, TBTMs: 2},
	}}
	got := CompareBaseline(base, res, 0.05)
	if len(got) != 2 {
		t.Fatalf("got %d verdicts, want 2", len(got))
	}
	if got[0].Outcome != result.Fail || got[0].Message != "ttft_ms regressed beyond 5% against the baseline" {
		t.Errorf("conc=1: %v %q, want a ttft_ms regression", got[0].Outcome, got[0].Message)
	}
	if got[1].Outcome != result.Error || !got[1].Infra || got[1].Message != "cell not measured: not measured" {
		t.Errorf("conc=2: %v infra=%v %q, want an infrastructure error", got[1].Outcome, got[1].Infra, got[1].Message)
	}
	if code := ExitCode(got); code != 3 {
		t.Errorf("ExitCode = %d, want 3", code)
	}
}
