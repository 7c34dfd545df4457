package views

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/judge"
	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/numfmt"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/warning"
)

// compareBaseline is the baseline view's verdicts of res against base.
func compareBaseline(base, res *result.Results, p compare.Policy) []result.Verdict {
	return judge.Baseline(compare.Build(base, res, p), JudgeWords{})
}

// withBaseline is what -baseline shows of res against base: the verdicts,
// the console notes and the refusal of settings that differ.
func withBaseline(base, res *result.Results, p compare.Policy) (verdicts []result.Verdict, notes []string, err error) {
	v := Baseline{C: compare.Build(base, res, p)}
	return judge.Baseline(v.C, JudgeWords{}), v.Notes(), v.Refusal()
}

func TestCompareBaseline(t *testing.T) {
	cell := func(ctx, conc int, tps, ttft, tbt float64) result.DecodeCell {
		return result.DecodeCell{Matrix: "decode", Context: ctx, Concurrency: conc, Status: vocab.StatusValid, TotalTPS: tps, TTFTMs: ttft, TBTMs: tbt}
	}
	over := func(ctx, conc int) result.DecodeCell {
		return result.DecodeCell{Matrix: "decode", Context: ctx, Concurrency: conc, Status: vocab.StatusOverCapacity}
	}
	base := &result.Results{Server: result.Server{Name: "old"},
		Prefill: []result.PrefillCell{{Context: 8192, Status: vocab.StatusValid, TPS: 40000, TTFTMs: 204.8}},
		Decode: []result.DecodeCell{
			cell(8192, 1, 408.2, 50, 2.4),
			cell(8192, 64, 6018.4, 300, 10.5),
			cell(16384, 1, 400, 80, 2.5),
			over(16384, 64),
		},
	}
	res := &result.Results{Server: result.Server{Name: "qwen"},
		Prefill: []result.PrefillCell{{Context: 8192, Status: vocab.StatusValid, TPS: 39500, TTFTMs: 207.4}},
		Decode: []result.DecodeCell{
			cell(8192, 1, 410, 49, 2.4),
			cell(8192, 64, 5421.3, 300, 10.5),
			{Matrix: "decode", Context: 16384, Concurrency: 1, Status: vocab.StatusError, Reason: "stream stalled"},
			cell(16384, 64, 4000, 900, 12),
			cell(32768, 1, 380, 120, 2.6),
		},
	}
	ref := func(phase vocab.Phase, ctx, conc int) []vocab.CellRef {
		if phase == vocab.PhasePrefill {
			return []vocab.CellRef{{Phase: phase, Context: ctx}}
		}
		return []vocab.CellRef{{Phase: phase, Matrix: "decode", Context: ctx, Concurrency: conc}}
	}
	const rule = "within 5% of the baseline"
	want := []result.Verdict{
		{
			Test: "qwen/baseline/prefill/ctx=8K", Kind: vocab.KindBaseline, Outcome: vocab.Pass, Finding: result.FindingCompared, Rule: rule,
			Details: []string{"tps: baseline 40000, now 39500 (-1.2%, 1+1 runs: not statistical)"},
			Cells:   ref(vocab.PhasePrefill, 8192, 0),
		},
		{
			Test: "qwen/baseline/decode/ctx=8K/conc=1", Kind: vocab.KindBaseline, Outcome: vocab.Pass, Finding: result.FindingCompared, Rule: rule,
			Details: []string{
				"total_tps: baseline 408.2, now 410 (+0.4%, 1+1 runs: not statistical)",
				"ttft_ms: baseline 50, now 49 (-2.0%, 1+1 runs: not statistical)",
				"tbt_ms: baseline 2.4, now 2.4 (0.0%, 1+1 runs: not statistical)",
			},
			Cells: ref(vocab.PhaseDecode, 8192, 1),
		},
		{
			Test: "qwen/baseline/decode/ctx=8K/conc=64", Kind: vocab.KindBaseline, Outcome: vocab.Fail, Finding: result.FindingCompared, Rule: rule,
			Message: "total_tps regressed beyond 5% against the baseline",
			Details: []string{
				"total_tps: baseline 6018.4, now 5421.3 (-9.9%, 1+1 runs: not statistical), regressed beyond 5% (higher is better)",
				"ttft_ms: baseline 300, now 300 (0.0%, 1+1 runs: not statistical)",
				"tbt_ms: baseline 10.5, now 10.5 (0.0%, 1+1 runs: not statistical)",
			},
			Cells: ref(vocab.PhaseDecode, 8192, 64),
		},
		{
			Test: "qwen/baseline/decode/ctx=16K/conc=1", Kind: vocab.KindBaseline, Outcome: vocab.Error, Infra: true, Finding: result.FindingNotMeasured, Rule: rule,
			Message: "cell not measured: error: stream stalled",
			Details: []string{`decode["16K"][1]: cell not measured: error: stream stalled (the baseline measured it)`},
			Cells:   ref(vocab.PhaseDecode, 16384, 1),
		},
		{
			Test: "qwen/baseline/decode/ctx=16K/conc=64", Kind: vocab.KindBaseline, Outcome: vocab.Skip, Finding: result.FindingBaselineUnmeasured, Rule: rule,
			Message: "baseline cell not measured: over capacity",
			Cells:   ref(vocab.PhaseDecode, 16384, 64),
		},
		{
			Test: "qwen/baseline/decode/ctx=32K/conc=1", Kind: vocab.KindBaseline, Outcome: vocab.Skip, Finding: result.FindingNotInBaseline, Rule: rule,
			Message: "not in the baseline",
			Cells:   ref(vocab.PhaseDecode, 32768, 1),
		},
	}
	got := compareBaseline(base, res, compare.Policy{Tolerance: 0.05})
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("verdicts (-want +got):\n%s", diff)
	}
}

// TestCompareBaselineLostCells: a cell the baseline measured and the new
// run lacks entirely or ran over capacity is lost, a failure (exit 1, not
// the infrastructure's 3) quoting the baseline's value and the capacity
// arithmetic; latencies regress upward.
func TestCompareBaselineLostCells(t *testing.T) {
	base := &result.Results{Server: result.Server{Name: "qwen"}, Decode: []result.DecodeCell{
		{Matrix: "decode", Context: 8192, Concurrency: 1, Status: vocab.StatusValid, TotalTPS: 400, TTFTMs: 50, TBTMs: 2},
		{Matrix: "decode", Context: 8192, Concurrency: 2, Status: vocab.StatusValid, TotalTPS: 800, TTFTMs: 50, TBTMs: 2},
		{Matrix: "decode", Context: 8192, Concurrency: 64, Status: vocab.StatusValid, TotalTPS: 6018.4, TTFTMs: 300, TBTMs: 10.5},
	}}
	res := &result.Results{Server: result.Server{Name: "qwen"}, Decode: []result.DecodeCell{
		{Matrix: "decode", Context: 8192, Concurrency: 1, Status: vocab.StatusQueued, TotalTPS: 400, TTFTMs: 60, TBTMs: 2},
		{Matrix: "decode", Context: 8192, Concurrency: 64, Status: vocab.StatusOverCapacity,
			Reason: "64 × (8192 + 256) = 540672 tokens > KV cache 500000 tokens"},
	}}
	got := compareBaseline(base, res, compare.Policy{Tolerance: 0.05})
	if len(got) != 3 {
		t.Fatalf("got %d verdicts, want 3", len(got))
	}
	if got[0].Outcome != vocab.Fail || got[0].Message != "ttft_ms regressed beyond 5% against the baseline" {
		t.Errorf("conc=1: %v %q, want a ttft_ms regression", got[0].Outcome, got[0].Message)
	}
	if got[1].Outcome != vocab.Fail || got[1].Infra || got[1].Message != "lost: not measured (was 800.0 tok/s)" {
		t.Errorf("conc=2: %v infra=%v %q, want a lost cell", got[1].Outcome, got[1].Infra, got[1].Message)
	}
	wantOver := []string{
		`decode["8K"][64]: lost: over capacity (was 6,018.4 tok/s): the baseline measured this cell, this run did not`,
		"64 × (8192 + 256) = 540672 tokens > KV cache 500000 tokens",
	}
	if got[2].Outcome != vocab.Fail || got[2].Message != "lost: over capacity (was 6,018.4 tok/s)" || !cmp.Equal(got[2].Details, wantOver) {
		t.Errorf("conc=64: %v %q %q, want lost to over capacity", got[2].Outcome, got[2].Message, got[2].Details)
	}
	if code := compare.Build(base, res, compare.Policy{Tolerance: 0.05}).ExitCode(); code != 1 {
		t.Errorf("ExitCode = %d, want 1 (a lost cell is a failure, not infrastructure)", code)
	}
}

// TestWithBaseline: runs measured with different settings are refused
// (exit 2) unless allowed, and then the differences head the notes; server
// differences are noted, never refused; repeated cells are decided by the
// interval of the change, whose bounds the detail line shows, and a
// comparison the noise leaves open is inconclusive (it was "not
// significant", a pass, before the three outcomes).
func TestWithBaseline(t *testing.T) {
	run := func(window float64, version string, tps ...float64) *result.Results {
		r := &result.Results{Server: result.Server{Name: "qwen", Version: version},
			Measure: result.Measure{Duration: numfmt.Shortest(window) + "s", DurationS: window, MaxOutput: 256, Endpoint: "completions", Repeat: len(tps)},
			Decode: []result.DecodeCell{{Matrix: "decode", Context: 8192, Concurrency: 64, Status: vocab.StatusValid,
				TotalTPS: metric.Median.Of(tps), TTFTMs: 300, TBTMs: 10.5, Repeats: len(tps),
				Samples: map[string][]float64{"total_tps": tps}}}}
		return r
	}
	base := run(3, "0.26.1", 6000, 6100, 5900, 6050, 5950)
	t.Run("settings differ", func(t *testing.T) {
		v, _, err := withBaseline(base, run(1, "0.26.1", 6000, 6100, 5900, 6050, 5950), compare.Policy{Tolerance: 0.05})
		if exit.Code(err) != exit.Usage || err == nil || !strings.Contains(err.Error(), "not comparable:\n  window: 3s → 1s\n") || v != nil {
			t.Errorf("err %v (exit %d), %d verdicts; want exit 2 naming the window and no verdicts", err, exit.Code(err), len(v))
		}
	})
	t.Run("settings differ, allowed", func(t *testing.T) {
		v, notes, err := withBaseline(base, run(1, "0.27.2", 6000, 6100, 5900, 6050, 5950), compare.Policy{Tolerance: 0.05, AllowSettingsChange: true})
		want := []string{"baseline: settings differ (-allow-settings-change): window: 3s → 1s", "baseline: server vLLM 0.26.1 → 0.27.2"}
		if err != nil || len(v) != 1 || !cmp.Equal(notes[:2], want) {
			t.Errorf("err %v, %d verdicts, notes %q; want %q", err, len(v), notes, want)
		}
	})
	t.Run("noise is inconclusive, not a pass", func(t *testing.T) {
		v, notes, err := withBaseline(base, run(3, "0.26.1", 5500, 6120, 5400, 6080, 5300), compare.Policy{Tolerance: 0.05})
		want := "total_tps: baseline 6000, now 5500: inconclusive, -8.3% (bounds -10.9…+2.0%, each at 95.2% confidence, 5+5 repeats); noise 4.9%: 34 repeats a side would decide it"
		if err != nil || v[0].Outcome != vocab.Inconclusive || v[0].Details[0] != want ||
			v[0].Message != "total_tps inconclusive against the baseline: neither regressed nor shown within 5%; measure more (or -inconclusive pass)" {
			t.Errorf("err %v, %v %q %q; want inconclusive with %q", err, v[0].Outcome, v[0].Message, v[0].Details, want)
		}
		if len(notes) != 1 || !strings.Contains(notes[0], "2 of 3 cell metrics were decided by the tolerance alone") {
			t.Errorf("notes %q, want one saying ttft_ms and tbt_ms were not decided statistically", notes)
		}
	})
	t.Run("an unmeasurable cell is not compared: inconclusive, never regressed", func(t *testing.T) {
		now := run(3, "0.26.1", 400, 410, 390, 405, 395) // -93 %, were it compared
		now.Decode[0].Status, now.Decode[0].Reason = vocab.StatusUnmeasurable, "the client's per_request_tps 226.0 is 0.47× the server's own 479.2 tok/s"
		v, _, err := withBaseline(base, now, compare.Policy{Tolerance: 0.05, Inconclusive: compare.InconclusivePass})
		want := "not compared: this run's cell is unmeasurable: the client's per_request_tps 226.0 is 0.47× the server's own 479.2 tok/s"
		if err != nil || v[0].Outcome != vocab.Inconclusive || v[0].Message != want {
			t.Errorf("err %v, %v %q; want inconclusive: %q", err, v[0].Outcome, v[0].Message, want)
		}
	})
	t.Run("runs left out are counted", func(t *testing.T) {
		now := run(3, "0.26.1", 6000, 6100, 5900, 6050, 5950)
		now.Decode[0].Excluded = []result.ExcludedRun{{Repeat: 2, Status: vocab.StatusUnmeasurable, Reason: "…"}}
		v, _, _ := withBaseline(base, now, compare.Policy{Tolerance: 0.05})
		want := "runs left out of the comparison as unmeasurable (or their machine moved): 0 of the baseline's, 1 of this run's"
		if !slices.Contains(v[0].Details, want) {
			t.Errorf("details %q; want %q", v[0].Details, want)
		}
	})
	t.Run("-inconclusive pass: an estimate beyond the tolerance still fails", func(t *testing.T) {
		v, _, _ := withBaseline(base, run(3, "0.26.1", 5500, 6120, 5400, 6080, 5300), compare.Policy{Tolerance: 0.05, Inconclusive: compare.InconclusivePass})
		if v[0].Outcome != vocab.Fail || !strings.HasSuffix(v[0].Details[0], "; the estimate is beyond 5%: fails even with -inconclusive pass") ||
			v[0].Message != "total_tps inconclusive against the baseline, and estimated beyond 5%: fails even with -inconclusive pass" {
			t.Errorf("%v %q %q; want a failure for the estimate", v[0].Outcome, v[0].Message, v[0].Details)
		}
	})
	t.Run("-inconclusive pass accepts an estimate inside the tolerance", func(t *testing.T) {
		v, _, _ := withBaseline(base, run(3, "0.26.1", 5700, 6150, 5550, 6050, 5850), compare.Policy{Tolerance: 0.05, Inconclusive: compare.InconclusivePass})
		if v[0].Outcome != vocab.Pass || !strings.HasSuffix(v[0].Details[0], "; accepted (-inconclusive pass)") || v[0].Message != "" {
			t.Errorf("%v %q %q; want a pass, accepted", v[0].Outcome, v[0].Message, v[0].Details)
		}
	})
	t.Run("another engine: refused, then allowed it informs and never gates", func(t *testing.T) {
		sg := run(3, "0.5.5", 5400, 5420, 5300, 5380, 5350)
		sg.Server.Engine = "sglang"
		if _, _, err := withBaseline(base, sg, compare.Policy{Tolerance: 0.05}); exit.Code(err) != exit.Usage || !strings.Contains(err.Error(), "engine: vllm → sglang") {
			t.Fatalf("err %v, want exit 2 naming the engine change", err)
		}
		v, notes, err := withBaseline(base, sg, compare.Policy{Tolerance: 0.05, AllowSettingsChange: true})
		if err != nil || v[0].Outcome != vocab.Pass || !strings.Contains(v[0].Details[0], "(-10.4%, bounds -11.7…-9.2% at 95.2% confidence each, 5+5 runs), regressed beyond 5%") ||
			v[len(v)-1].Details[len(v[len(v)-1].Details)-1] != "(informs only: fail against a baseline of another engine, which never gates)" {
			t.Errorf("err %v, %v %q; want a pass keeping the regression's interval, marked as informing", err, v[0].Outcome, v[0].Details)
		}
		if !strings.Contains(strings.Join(notes, "\n"), "engines differ (vLLM → SGLang): the comparison informs") {
			t.Errorf("notes %q lack the engine note", notes)
		}
	})
	t.Run("a traffic cell is a verdict: the rule, then the value", func(t *testing.T) {
		withTraffic := func(r *result.Results, ttft float64) *result.Results {
			r.Traffic = []result.TrafficCell{{Traffic: "replay", Concurrency: 8, Status: vocab.StatusValid,
				AchievedRPS: 4, GoodputRPS: 4, Launched: 400, Completed: 400, TTFTMsP99: ttft, E2EMs: 500, TBTMs: 6}}
			return r
		}
		v, notes, err := withBaseline(withTraffic(run(3, "0.26.1", 6000, 6100, 5900, 6050, 5950), 100),
			withTraffic(run(3, "0.26.1", 6000, 6100, 5900, 6050, 5950), 300), compare.Policy{Tolerance: 0.05})
		if err != nil || len(v) != 2 || v[0].Outcome != vocab.Pass || strings.Contains(strings.Join(notes, "\n"), "traffic") {
			t.Fatalf("err %v, verdicts %v, notes %q; want the decode cell's passing verdict, then the traffic cell's, no traffic notes", err, v, notes)
		}
		tv := v[1]
		if tv.Test != "qwen/baseline/traffic/replay/conc=8" || tv.Outcome != vocab.Fail || tv.Message != "ttft_ms_p99 regressed beyond 5% against the baseline" ||
			!slices.Contains(tv.Details, "ttft_ms_p99 within 5%: +200.0% (100 → 300 ms, values only): regressed") {
			t.Errorf("traffic verdict %s %v %q %q; want a regression of ttft_ms_p99 quoting rule and value", tv.Test, tv.Outcome, tv.Message, tv.Details)
		}
	})
	t.Run("regression", func(t *testing.T) {
		v, _, _ := withBaseline(base, run(3, "0.26.1", 5400, 5420, 5300, 5380, 5350), compare.Policy{Tolerance: 0.05})
		if v[0].Outcome != vocab.Fail || !strings.Contains(v[0].Details[0], "(-10.4%, bounds -11.7…-9.2% at 95.2% confidence each, 5+5 runs), regressed beyond 5%") {
			t.Errorf("%v %q; want a regression with its bounds", v[0].Outcome, v[0].Details)
		}
	})
}

// TestBaselineWarnings: before the run, a baseline of 5 repeats at noise
// 5% cannot be decided against the 5 repeats planned (a power_shortfall
// warning; compare's TestBaselineWarnings checks its figures); a quiet
// baseline gives no warning.
func TestBaselineWarnings(t *testing.T) {
	spread := func(noise float64) []float64 {
		// Five values of log standard deviation noise: 0, ±a, ±2a with
		// a = noise / √2.5.
		a := noise / math.Sqrt(2.5)
		var out []float64
		for _, k := range []float64{0, 1, -1, 2, -2} {
			out = append(out, 6000*math.Exp(k*a))
		}
		return out
	}
	base := func(noise float64) *result.Results {
		return &result.Results{Measure: result.Measure{Duration: "3s", DurationS: 3, Repeat: 5},
			Decode: []result.DecodeCell{{Matrix: "decode", Context: 8192, Concurrency: 64, Status: vocab.StatusValid,
				TotalTPS: 6000, Repeats: 5, Samples: map[string][]float64{"total_tps": spread(noise)}}}}
	}
	planned := compare.Planned{Window: 3 * time.Second, Repeat: 5}
	c := compare.BuildPlanned(base(0.05), planned, compare.Policy{Tolerance: 0.05})
	if got := (Baseline{C: c}).PowerWarnings(); len(got) != 1 || got[0].Code != warning.PowerShortfall || got[0].Subject != "total_tps" || got[0].Figures[warning.FigCandidateRepeats] != 5 {
		t.Errorf("power warnings %+v, want one power_shortfall of total_tps against the 5 repeats planned", got)
	}
	if got := compare.BuildPlanned(base(0.005), planned, compare.Policy{Tolerance: 0.05}).Power; len(got) != 0 {
		t.Errorf("a quiet baseline warns: %+v", got)
	}
	// The settings planned differ from the baseline's: refused before the
	// run (exit 2), naming each difference; allowed, nothing is refused.
	for _, tc := range []struct {
		name    string
		planned compare.Planned
		allow   bool
		want    string // "" for no refusal
	}{
		{"window and server kind", compare.Planned{Window: time.Second, Repeat: 5, Simulated: true}, false, "not comparable:\n  window: 3s → 1s\n  server: real → simulated\n"},
		{"another engine", compare.Planned{Window: 3 * time.Second, Repeat: 5, Engine: "sglang"}, false, "not comparable:\n  engine: vllm → sglang\n"},
		{"repeat", compare.Planned{Window: 3 * time.Second, Repeat: 3}, false, "not comparable:\n  repeat: 5 → 3\n"},
		{"the same settings", planned, false, ""},
		{"allowed", compare.Planned{Window: time.Second, Repeat: 5, Engine: "sglang"}, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Baseline{C: compare.BuildPlanned(base(0.005), tc.planned, compare.Policy{Tolerance: 0.05, AllowSettingsChange: tc.allow})}.Refusal()
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (exit.Code(err) != exit.Usage || err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("refusal %v, want exit 2 saying %q", err, tc.want)
			}
		})
	}
}

// TestBaselineMachineDiffers: a run on a machine whose CPU calibration is
// beyond the bound from the baseline's gives the comparison's warning as a
// note, and each verdict the machine rule left undecided says what the
// numbers decided, both calibrations and the way to decide it
// (docs/method.md#machine-against-the-baseline).
func TestBaselineMachineDiffers(t *testing.T) {
	run := func(tps, cal float64) *result.Results {
		return &result.Results{Server: result.Server{Name: "s"}, Decode: []result.DecodeCell{{Matrix: "decode", Context: 1024, Concurrency: 1,
			Status: vocab.StatusValid, TotalTPS: tps, TTFTMs: 50, TBTMs: 2,
			Environment: []result.Environment{{CalibrationMs: cal, CalibrationAfterMs: cal}}}}}
	}
	tests := []struct {
		name        string
		base, now   *result.Results
		wantOutcome vocab.Outcome
		wantLine    string // the verdict's last line; "" for none of the rule's
		wantNotes   int    // the method's note, and the machine's when they differ
	}{
		{name: "slower machine, regressed", base: run(400, 0.5), now: run(300, 0.9), wantOutcome: vocab.Inconclusive, wantNotes: 2,
			wantLine: "(not decided: regressed on a machine 1.80× slower than the baseline's (CPU calibration 0.9 ms against 0.5 ms), which alone could make it; compare the builds on one machine with slogate interleave)"},
		{name: "faster machine, within tolerance", base: run(400, 0.9), now: run(401, 0.5), wantOutcome: vocab.Inconclusive, wantNotes: 2,
			wantLine: "(not decided: within tolerance on a machine 1.80× faster than the baseline's (CPU calibration 0.5 ms against 0.9 ms), which could hide a regression; compare the builds on one machine with slogate interleave)"},
		{name: "same machine, regressed", base: run(400, 0.5), now: run(300, 0.6), wantOutcome: vocab.Fail, wantNotes: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			notes := wantUndecidedLine(t, tt.base, tt.now, compare.Policy{}, tt.wantOutcome, tt.wantLine)
			if len(notes) != tt.wantNotes {
				t.Errorf("notes %q; want %d", notes, tt.wantNotes)
			}
		})
	}
}

// wantUndecidedLine compares now with base under p and wants one verdict
// of outcome want whose last line is wantLine, or, when wantLine is "",
// no "(not decided" line; it returns the comparison's notes.
func wantUndecidedLine(t *testing.T, base, now *result.Results, p compare.Policy, want vocab.Outcome, wantLine string) []string {
	t.Helper()
	verdicts, notes, err := withBaseline(base, now, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(verdicts) != 1 {
		t.Fatalf("%d verdicts; want 1", len(verdicts))
	}
	v := verdicts[0]
	if v.Outcome != want {
		t.Errorf("outcome %s; want %s", v.Outcome, want)
	}
	last := v.Details[len(v.Details)-1]
	if wantLine != "" && last != wantLine {
		t.Errorf("last line\n%s\nwant\n%s", last, wantLine)
	}
	if wantLine == "" && strings.HasPrefix(last, "(not decided") {
		t.Errorf("last line %q, want none of the rule's", last)
	}
	return notes
}

// TestBaselineServerWaited: a verdict the server-wait rule left undecided
// says what the numbers decided, both waits, the CPU time they differ by
// and the way to decide it (docs/method.md#server-wait-against-the-baseline).
func TestBaselineServerWaited(t *testing.T) {
	run := func(tps, wait float64) *result.Results {
		return &result.Results{Server: result.Server{Name: "s"}, GPUTime: &result.GPUTime{CPU: true}, Decode: []result.DecodeCell{{Matrix: "decode", Context: 1024, Concurrency: 1,
			Status: vocab.StatusValid, TotalTPS: tps, TTFTMs: 50, TBTMs: 1000 / tps,
			Environment: []result.Environment{{Repeat: 1, ServerWaitPct: &wait}}}}}
	}
	tests := []struct {
		name        string
		base, now   *result.Results
		wantOutcome vocab.Outcome
		wantLine    string // the verdict's last line; "" for none of the rule's
	}{
		{name: "less CPU time, regressed", base: run(400, 30), now: run(360, 40), wantOutcome: vocab.Inconclusive,
			wantLine: "(not decided: regressed while the server waited for a CPU 40 % of the time it was ready to run, against 30 % in the baseline: 14 % less CPU time than the baseline's, which alone could make it; compare the builds on one machine with slogate interleave)"},
		{name: "more CPU time, within tolerance", base: run(400, 40), now: run(401, 10), wantOutcome: vocab.Inconclusive,
			wantLine: "(not decided: within tolerance while the server waited for a CPU 10 % of the time it was ready to run, against 40 % in the baseline: 50 % more CPU time than the baseline's, which could hide a regression; compare the builds on one machine with slogate interleave)"},
		{name: "same wait, regressed", base: run(400, 30), now: run(360, 30), wantOutcome: vocab.Fail},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantUndecidedLine(t, tt.base, tt.now, compare.Policy{Tolerance: 0.05}, tt.wantOutcome, tt.wantLine)
		})
	}
}
