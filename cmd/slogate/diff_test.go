package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// writeRun writes a results.json with one prefill cell and a 1×2 decode
// matrix whose 8K×64 total_tps is tps64.
func writeRun(t *testing.T, dir, name string, tps64 float64) string {
	return writeRunWith(t, dir, name, tps64, nil)
}

// writeRunWith is writeRun with change applied to the results first.
func writeRunWith(t *testing.T, dir, name string, tps64 float64, change func(*result.Results)) string {
	t.Helper()
	r := &result.Results{
		Server:  result.Server{Name: "qwen", Model: "Qwen/Qwen3.5-4B", Version: "0.11.0"},
		Measure: result.Measure{Duration: "3s", DurationS: 3, MaxOutput: 256, Endpoint: "completions", Repeat: 1},
		Prefill: []result.PrefillCell{{Context: 8192, Status: vocab.StatusValid, TPS: 40000, TTFTMs: 204.8}},
		Decode: []result.DecodeCell{
			{Matrix: "decode", Context: 8192, Concurrency: 1, Status: vocab.StatusValid, TotalTPS: 408.2, TTFTMs: 50, TBTMs: 2.4},
			{Matrix: "decode", Context: 8192, Concurrency: 64, Status: vocab.StatusValid, TotalTPS: tps64, TTFTMs: 300, TBTMs: 10.5},
		},
	}
	if change != nil {
		change(r)
	}
	p := filepath.Join(dir, name)
	if err := r.Write(p); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCmdDiff(t *testing.T) {
	dir := t.TempDir()
	a := writeRun(t, dir, "a.json", 6018.4)
	same := writeRun(t, dir, "same.json", 6000)
	worse := writeRun(t, dir, "worse.json", 5421.3)
	overCap := writeRunWith(t, dir, "overcap.json", 0, func(r *result.Results) {
		r.Decode[1] = result.DecodeCell{Matrix: "decode", Context: 8192, Concurrency: 64, Status: vocab.StatusOverCapacity,
			Reason: "64 × (8192 + 256) = 540672 tokens > KV cache 500000 tokens"}
	})
	missing := writeRunWith(t, dir, "missing.json", 0, func(r *result.Results) { r.Decode = r.Decode[:1] })
	errored := writeRunWith(t, dir, "errored.json", 0, func(r *result.Results) {
		r.Decode[1] = result.DecodeCell{Matrix: "decode", Context: 8192, Concurrency: 64, Status: vocab.StatusError, Reason: "stream stalled"}
	})
	shorter := writeRunWith(t, dir, "shorter.json", 6000, func(r *result.Results) { r.Measure.Duration, r.Measure.DurationS = "1s", 1 })
	simulated := writeRunWith(t, dir, "simulated.json", 6000, func(r *result.Results) { r.Server.Simulated = true })
	upgraded := writeRunWith(t, dir, "upgraded.json", 6000, func(r *result.Results) {
		r.Server.Version = "0.12.0"
		r.Server.Argv = []string{"vllm", "serve", "Qwen/Qwen3.5-4B", "--max-num-seqs", "64"}
	})
	withArgv := writeRunWith(t, dir, "argv.json", 6018.4, func(r *result.Results) {
		r.Server.Argv = []string{"vllm", "serve", "Qwen/Qwen3.5-4B", "--max-num-seqs", "32"}
	})
	// The same cells measured on machines whose CPU calibration differs
	// 1.8×: B's regression on the slower one is not decided
	// (docs/method.md#machine-against-the-baseline).
	onMachine := func(name string, tps64, cal float64) string {
		return writeRunWith(t, dir, name, tps64, func(r *result.Results) {
			for i := range r.Decode {
				r.Decode[i].Environment = []result.Environment{{CalibrationMs: cal, CalibrationAfterMs: cal}}
			}
		})
	}
	fastMachine, slowMachineWorse := onMachine("fast-machine.json", 6018.4, 0.5), onMachine("slow-machine-worse.json", 5421.3, 0.9)
	// Five repeats a side: B's total_tps samples interleave with A's, its
	// median 8% lower and the estimate 4.2% (inconclusive: the bounds
	// straddle -5%), or 10% (inconclusive, the estimate beyond), or lie
	// entirely below them (regressed).
	repeated := func(name string, samples []float64) string {
		return writeRunWith(t, dir, name, metric.Median.Of(samples), func(r *result.Results) {
			r.Measure.Repeat = 5
			c := &r.Decode[1]
			c.Repeats = 5
			c.Samples = map[string][]float64{"total_tps": samples}
			c.Spread = map[string][2]float64{"total_tps": {slices.Min(samples), slices.Max(samples)}}
		})
	}
	repA := repeated("rep-a.json", []float64{5400, 6000, 6600, 7200, 5700})
	repNoise := repeated("rep-noise.json", []float64{5520, 5100, 6900, 5280, 7500})
	repWorse := repeated("rep-worse.json", []float64{5000, 5100, 5200, 5050, 5150})
	repBeyond := repeated("rep-beyond.json", []float64{5000, 5500, 6300, 5200, 6900})
	// Traffic cells, one window each: B's TTFT three times A's informs and
	// never fails; with no decode or prefill cell they are all there is.
	// A window of 400 requests decides a p99; one of 8 cannot (a p99
	// needs 299: docs/method.md#undecidable-percentiles).
	withTraffic := func(name string, ttft float64, only bool, requests int) string {
		return writeRunWith(t, dir, name, 6000, func(r *result.Results) {
			if only {
				r.Prefill, r.Decode = nil, nil
			}
			r.Traffic = []result.TrafficCell{{Traffic: "replay", Concurrency: 8, Status: vocab.StatusValid,
				AchievedRPS: 4, GoodputRPS: 4, Launched: requests, Completed: requests, TTFTMsP99: ttft, E2EMs: 500, TBTMs: 6}}
		})
	}
	trafficA, trafficB := withTraffic("traffic-a.json", 100, false, 400), withTraffic("traffic-b.json", 300, false, 400)
	trafficOnlyA, trafficOnlyB := withTraffic("traffic-only-a.json", 100, true, 400), withTraffic("traffic-only-b.json", 300, true, 400)
	fewA, fewB := withTraffic("traffic-few-a.json", 100, true, 8), withTraffic("traffic-few-b.json", 300, true, 8)
	notJSON := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notJSON, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		args     []string
		code     int
		inStdout []string
		inStderr string
		inError  string // substring of the returned error
	}{
		{name: "within tolerance", args: []string{a, same}, code: 0, inStdout: []string{
			"A: " + a + " (server qwen, Qwen/Qwen3.5-4B, vLLM 0.11.0)\nB: " + same + " (server qwen, Qwen/Qwen3.5-4B, vLLM 0.11.0)\n",
			"decode total_tps", "-0.3%", "0 regressed"}},
		{name: "regression", args: []string{a, worse}, code: 1, inStdout: []string{"-9.9% ✗", "1 regressed"}},
		{name: "improvement is not a regression", args: []string{worse, a}, code: 0, inStdout: []string{"+11.0% ↑"}},
		{name: "flags after the files", args: []string{a, worse, "-tolerance", "15%"}, code: 0, inStdout: []string{"tolerance 15%"}},
		{name: "metric filter", args: []string{"-metric", "ttft_ms", a, worse}, code: 0, inStdout: []string{"decode ttft_ms", "prefill ttft_ms"}},
		{name: "one file", args: []string{a}, code: 2, inError: "diff: want exactly two results files (A.json B.json), got 1"},
		{name: "bad tolerance", args: []string{"-tolerance", "five", a, worse}, code: 2, inError: `diff: invalid value "five" for -tolerance PCT: want a percentage such as 5% or a fraction such as 0.05`},
		{name: "tolerance as a fraction", args: []string{a, worse, "--tolerance=0.15"}, code: 0, inStdout: []string{"tolerance 15%"}},
		{name: "tolerance just below the change", args: []string{a, worse, "-tolerance", "0.09"}, code: 1, inStdout: []string{"-9.9% ✗"}},
		{name: "over capacity in B is lost", args: []string{a, overCap}, code: 1, inStdout: []string{"lost ✗",
			"✗ decode/ctx=8K/conc=64: lost: over capacity (was 6,018.4 tok/s); 64 × (8192 + 256) = 540672 tokens > KV cache 500000 tokens", "1 cell(s) lost, 0 errored"}},
		{name: "missing in B is lost", args: []string{a, missing}, code: 1, inStdout: []string{"✗ decode/ctx=8K/conc=64: lost: not measured (was 6,018.4 tok/s)"}},
		{name: "only in B is reported, not a failure", args: []string{missing, a}, code: 0, inStdout: []string{"B only", "3 on one side only; 0 cell(s) lost"}},
		{name: "errored in B is an error", args: []string{a, errored}, code: 3, inStdout: []string{"error !", "! decode/ctx=8K/conc=64: error: stream stalled (was 6,018.4 tok/s)", "0 cell(s) lost, 1 errored"}},
		{name: "different window refused", args: []string{a, shorter}, code: 2, inError: "different settings, so their numbers are not comparable:\n  window: 3s → 1s\n"},
		{name: "different window allowed", args: []string{"-allow-settings-change", a, shorter}, code: 0, inStdout: []string{"Settings differ (-allow-settings-change): window: 3s → 1s\nA: "}},
		{name: "simulated against real refused", args: []string{a, simulated}, code: 2, inError: "server: real → simulated"},
		{name: "server differences head the output", args: []string{withArgv, upgraded}, code: 0, inStdout: []string{"\nServer: vLLM 0.11.0 → 0.12.0; --max-num-seqs 32 → 64\n"}},
		{name: "repeated: interleaved samples are inconclusive (were noise, exit 0)", args: []string{repA, repNoise}, code: 4, inStdout: []string{"-4.2% ?", "-20.0…+21.1%",
			"Inconclusive: neither regressed nor shown within 5%:\n  ? total_tps at decode/ctx=8K/conc=64: -4.2% (bounds -20.0…+21.1%, each at 95.2% confidence, 5+5 repeats); noise ",
			"6 of 7 cell metrics were decided by the tolerance alone", "0 regressed, 0 improved, 6 unchanged, 1 inconclusive, "}},
		{name: "-inconclusive pass accepts an estimate inside the tolerance", args: []string{"-inconclusive", "pass", repA, repNoise}, code: 0, inStdout: []string{"; accepted (-inconclusive pass)", "1 inconclusive (1 accepted: -inconclusive pass)"}},
		{name: "-inconclusive pass: an estimate beyond the tolerance still fails", args: []string{"-inconclusive", "pass", repA, repBeyond}, code: 1, inStdout: []string{"; the estimate is beyond 5%: fails even with -inconclusive pass", "1 inconclusive (0 accepted: -inconclusive pass)"}},
		{name: "-inconclusive fail is the default", args: []string{"-inconclusive", "fail", repA, repBeyond}, code: 4, inStdout: []string{"1 inconclusive, "}},
		{name: "-inconclusive with another word", args: []string{"-inconclusive", "maybe", repA, repNoise}, code: 2, inError: `-inconclusive is fail or pass, not "maybe"`},
		{name: "repeated: samples entirely below are a regression", args: []string{repA, repWorse}, code: 1, inStdout: []string{"-15.0% ✗", "-27.8…-7.4%", "1 regressed"}},
		{name: "not statistical says how many repeats would be", args: []string{a, worse}, code: 1, inStdout: []string{"Decisions are not statistical", "measure.repeat = 3 on both runs"}},
		{name: "alpha as a flag", args: []string{"-alpha", "0.01", a, worse}, code: 1, inStdout: []string{"measure.repeat = 5 on both runs", "at α = 0.01"}},
		{name: "bad alpha", args: []string{"-alpha", "0", a, worse}, code: 2, inError: "-alpha:"},
		{name: "unknown metric", args: []string{"-metric", "speed", a, worse}, code: 2, inError: `-metric: unknown metric "speed"; the metrics are `},
		{name: "traffic cells gate after the tables", args: []string{trafficA, trafficB}, code: 1, inStdout: []string{"0 regressed",
			"\ntraffic cells (request for request when both sent one schedule; docs/method.md#comparing-traffic):\n  traffic/replay/conc=8: regressed (ttft_ms_p99); unpaired, on the cells' values alone (not statistical): the baseline has no per-request records",
			"\n    ttft_ms_p99 within 5%: +200.0% (100 → 300 ms, values only): regressed\n"}},
		{name: "traffic cells alone are compared", args: []string{trafficOnlyA, trafficOnlyB}, code: 1, inStdout: []string{"traffic/replay/conc=8: regressed (ttft_ms_p99)", "    achieved_rps: 4 → 4 req/s"}},
		{name: "a p99 of 8 requests is not a verdict", args: []string{fewA, fewB}, code: 4, inStdout: []string{"traffic/replay/conc=8: inconclusive (ttft_ms_p99, tbt_ms_p99, e2e_ms_p99)",
			"    ttft_ms_p99 within 5%: +200.0% (100 → 300 ms, values only): inconclusive (ttft_ms_p99 from 8 requests: a p99 needs ≥ 299)\n"}},
		{name: "a regression on a slower machine is not decided", args: []string{fastMachine, slowMachineWorse}, code: 4,
			inStdout: []string{"Warning: this run's machine ran the CPU calibration in 0.9 ms, the baseline's in 0.5 ms: 1.80× slower, beyond the 1.5× bound", "slogate interleave"}},
		{name: "missing file", args: []string{a, filepath.Join(dir, "nope.json")}, code: 2, inError: "nope.json does not exist"},
		{name: "not a results file", args: []string{a, notJSON}, code: 2, inError: "not a slogate results file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := runProgram(context.Background(), &stdout, &stderr, append([]string{"diff"}, tc.args...))
			if got := exit.Code(err); got != tc.code {
				t.Fatalf("exit %d (%v), want %d\nstdout:\n%s\nstderr:\n%s", got, err, tc.code, stdout.String(), stderr.String())
			}
			for _, s := range tc.inStdout {
				if !strings.Contains(stdout.String(), s) {
					t.Errorf("stdout lacks %q:\n%s", s, stdout.String())
				}
			}
			if !strings.Contains(stderr.String(), tc.inStderr) {
				t.Errorf("stderr lacks %q:\n%s", tc.inStderr, stderr.String())
			}
			if tc.code == 2 && err != nil && !exit.IsQuiet(err) && err.Error() == "" {
				t.Error("usage error without a message")
			}
			if tc.inError != "" && (err == nil || !strings.Contains(err.Error(), tc.inError)) {
				t.Errorf("error %v, want it to contain %q", err, tc.inError)
			}
		})
	}
}
