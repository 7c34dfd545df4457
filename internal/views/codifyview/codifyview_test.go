package codifyview

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// The metrics codify writes blocks on, from the metric table (their names
// and units are in the words).
var totalTPS, ttft, ttftP99, prefillTPS = metric.Must(vocab.PhaseDecode, metric.TotalTPS), metric.Must(vocab.PhaseDecode, metric.TTFTMs),
	metric.Must(vocab.PhaseDecode, metric.TTFTMsP99), metric.Must(vocab.PhasePrefill, metric.TPS)

// TestAssert: each kind of assert names its block and words its message
// from the limit and the figure measured.
func TestAssert(t *testing.T) {
	tests := []struct {
		name     string
		a        Assert
		wantName string
		wantMsg  string
	}{
		{name: "peak of the decode matrix",
			a:        Assert{Kind: AssertPeak, Matrix: "decode", Context: 8192, Concurrency: 64, Metric: totalTPS, AtLeast: true, Limit: 5410, Measured: 6018.47},
			wantName: "decode_peak_total_tps",
			wantMsg:  "decode throughput at 8K x 64 fell below 5410 tok/s (was 6018.5 when codified)"},
		{name: "peak of another matrix",
			a:        Assert{Kind: AssertPeak, Matrix: "long", Context: 32768, Concurrency: 8, Metric: totalTPS, AtLeast: true, Limit: 901, Measured: 1001.2},
			wantName: "long_peak_total_tps",
			wantMsg:  "long throughput at 32K x 8 fell below 901 tok/s (was 1001.2 when codified)"},
		{name: "time to first token",
			a:        Assert{Kind: AssertTTFT, Matrix: "decode", Context: 8192, Concurrency: 1, Metric: ttft, Limit: 55, Measured: 49.93},
			wantName: "decode_ttft_8k_c1",
			wantMsg:  "time to first token at 8K x 1 rose above 55 ms (was 49.93 when codified)"},
		{name: "time to first token p99",
			a:        Assert{Kind: AssertTTFTTail, Matrix: "decode", Context: 8192, Concurrency: 64, Metric: ttftP99, Limit: 564, Measured: 512.3, Samples: 640},
			wantName: "decode_ttft_p99_8k_c64",
			wantMsg:  "time to first token p99 at 8K x 64 rose above 564 ms (measured 512.3 over 640 requests)"},
		{name: "prefill",
			a:        Assert{Kind: AssertPrefill, Matrix: "prefill", Context: 16384, Metric: prefillTPS, AtLeast: true, Limit: 34200, Measured: 38001.06},
			wantName: "prefill_tps_16k",
			wantMsg:  "prefill throughput at 16K fell below 34200 tok/s (was 38001.1 when codified)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := AssertName(tc.a); got != tc.wantName {
				t.Errorf("name %q, want %q", got, tc.wantName)
			}
			if got := AssertMessage(tc.a); got != tc.wantMsg {
				t.Errorf("message:\n%s\nwant:\n%s", got, tc.wantMsg)
			}
		})
	}
}

// measured is a noise of 2.27 % on 5 repeats, which a 10 % margin needs 3
// repeats for (advised 4) and which supports 4.4 %.
var measured = Noise{Measured: true, Noise: 0.0227, Cell: vocab.CellRef{Phase: vocab.PhaseDecode, Context: 8192, Concurrency: 64},
	Metric: "total_tps", Repeats: 5, Supported: 0.044, Tightest: 0.05, RepeatFor: 3, Repeat: 4, MaxRepeats: 100}

// TestNoise: the noise advice above the blocks and -margin's warning,
// worded from the figures codify measured.
func TestNoise(t *testing.T) {
	tight := measured
	tight.RepeatFor, tight.Repeat = 26, 26
	wide := measured
	wide.RepeatFor, wide.Repeat = 0, 0
	unsized := measured
	unsized.Repeats, unsized.Supported, unsized.Tightest = 1, math.NaN(), math.NaN()
	tests := []struct {
		name        string
		n           Noise
		margin      float64
		wantComment string
		wantWarning string
	}{
		{name: "no repeats", n: Noise{Repeat: 4, Noise: math.NaN(), Supported: math.NaN(), Tightest: math.NaN(), MaxRepeats: 100}, margin: 0.1,
			wantComment: "# No cell was repeated, so no noise was measured: measure with repeat = 4 or more (or \"auto\")\n" +
				"# to size repeat and tolerance from it.\n"},
		{name: "a margin the noise supports", n: measured, margin: 0.1,
			wantComment: "# Measured noise (the largest CV over the repeated cells): 2.27% (decode/ctx=8K/conc=64 total_tps).\n" +
				"# A 10% tolerance needs 3 repeats a side at that noise; copy into the spec's measure block:\n" +
				"#   repeat = 4\n" +
				"# With 5 repeats a side the smallest change a gate can tell from this noise is 4.4%.\n"},
		{name: "a margin below the noise", n: tight, margin: 0.02,
			wantComment: "# Measured noise (the largest CV over the repeated cells): 2.27% (decode/ctx=8K/conc=64 total_tps).\n" +
				"# A 2% tolerance needs 26 repeats a side at that noise; copy into the spec's measure block:\n" +
				"#   repeat = 26\n" +
				"# With 5 repeats a side the smallest change a gate can tell from this noise is 4.4%.\n",
			wantWarning: "-margin 2% is below what the measured noise allows: at 2.27% noise (decode/ctx=8K/conc=64 total_tps) 5 repeats a side tell a change from noise only from 4.4%; use -margin 5% or more, or measure with repeat = 26"},
		{name: "a margin no estimate reaches", n: wide, margin: 0.001,
			wantComment: "# Measured noise (the largest CV over the repeated cells): 2.27% (decode/ctx=8K/conc=64 total_tps).\n" +
				"# A 0.1% tolerance needs more than 100 repeats a side at that noise: widen it.\n" +
				"# With 5 repeats a side the smallest change a gate can tell from this noise is 4.4%.\n",
			wantWarning: "-margin 0.1% is below what the measured noise allows: at 2.27% noise (decode/ctx=8K/conc=64 total_tps) 5 repeats a side tell a change from noise only from 4.4%; use -margin 5% or more, or measure with more than 100 repeats a side"},
		{name: "repeats that cannot attain alpha", n: unsized, margin: 0.01,
			wantComment: "# Measured noise (the largest CV over the repeated cells): 2.27% (decode/ctx=8K/conc=64 total_tps).\n" +
				"# A 1% tolerance needs 3 repeats a side at that noise; copy into the spec's measure block:\n" +
				"#   repeat = 4\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.n.Comment(tc.margin); got != tc.wantComment {
				t.Errorf("comment:\n%s\nwant:\n%s", got, tc.wantComment)
			}
			if got := tc.n.Warning(tc.margin); got != tc.wantWarning {
				t.Errorf("warning:\n%s\nwant:\n%s", got, tc.wantWarning)
			}
		})
	}
}

// TestUnfitReasons: why a run is refused, one indented line a reason.
func TestUnfitReasons(t *testing.T) {
	tests := []struct {
		name       string
		unfinished string
		errored    []string
		want       string
	}{
		{name: "did not finish", unfinished: "it was interrupted",
			want: "  the run did not finish: it was interrupted"},
		{name: "one errored cell", errored: []string{"decode/ctx=8K/conc=64: HTTP 500 from /v1/completions"},
			want: "  1 cell could not be measured:\n    decode/ctx=8K/conc=64: HTTP 500 from /v1/completions"},
		{name: "both", unfinished: "it ended early: boom", errored: []string{"prefill/ctx=16K: error", "decode/ctx=8K/conc=2: HTTP 500"},
			want: "  the run did not finish: it ended early: boom\n  2 cells could not be measured:\n    prefill/ctx=16K: error\n    decode/ctx=8K/conc=2: HTTP 500"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := UnfitReasons(tc.unfinished, tc.errored); got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

// run is the run the header describes.
var run = &result.Results{Server: result.Server{Name: "qwen", Model: "Qwen/Qwen3.5-4B", Version: "0.11.0"},
	Started: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)}

// TestHeaderText: the comment above the blocks, from the source and margin
// to every cell and percentile left out.
func TestHeaderText(t *testing.T) {
	decode := func(ctx, conc int) vocab.CellRef {
		return vocab.CellRef{Phase: vocab.PhaseDecode, Context: ctx, Concurrency: conc}
	}
	tests := []struct {
		name string
		h    Header
		want string
	}{
		{name: "no source, nothing left out", h: Header{Run: run, Margin: 0.1, Noise: measured},
			want: "# Generated by slogate codify from a slogate run (server qwen, Qwen/Qwen3.5-4B, vLLM 0.11.0, 2026-11-30).\n" +
				"# Expected values are the measured ones; tolerance and thresholds allow a 10% margin.\n" +
				measured.Comment(0.1)},
		{name: "forced, with cells and percentiles left out",
			h: Header{Source: "out/results.json", Run: run, Margin: 0.05, Noise: measured, Unfinished: "it was interrupted",
				LeftOut: []LeftOut{
					{Cell: vocab.CellRef{Phase: vocab.PhasePrefill, Context: 16384}, Status: vocab.StatusError, Reason: "error"},
					{Cell: decode(8192, 64), Status: vocab.StatusError, Reason: "HTTP 500 from /v1/completions"},
					{Cell: decode(16384, 64), Status: vocab.StatusOverCapacity},
				},
				FewSamples: []Tail{
					{Cell: decode(8192, 1), Metric: "ttft_ms_p99", Samples: 1},
					{Cell: decode(8192, 2), Metric: "ttft_ms_p99", Samples: 12},
					{Cell: decode(8192, 32), Metric: "ttft_ms_p99", Samples: -1},
				},
				MinSamples: 20},
			want: "# Generated by slogate codify from out/results.json (server qwen, Qwen/Qwen3.5-4B, vLLM 0.11.0, 2026-11-30).\n" +
				"# Expected values are the measured ones; tolerance and thresholds allow a 5% margin.\n" +
				measured.Comment(0.05) +
				"# Codified with -force although the run did not finish: it was interrupted.\n" +
				"# Cells it never reached have no expectation.\n" +
				"# Left out, no numbers to take:\n" +
				"#   prefill/ctx=16K: error\n" +
				"#   decode/ctx=8K/conc=64: HTTP 500 from /v1/completions\n" +
				"#   decode/ctx=16K/conc=64: over capacity\n" +
				"# Left out, percentiles of fewer than 20 samples (docs/method.md#metric-names):\n" +
				"#   decode/ctx=8K/conc=1 ttft_ms_p99: 1 sample\n" +
				"#   decode/ctx=8K/conc=2 ttft_ms_p99: 12 samples\n" +
				"#   decode/ctx=8K/conc=32 ttft_ms_p99: sample count not recorded\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, HeaderText(tc.h)); diff != "" {
				t.Errorf("header (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRender: the blocks as HCL: a decode matrix's rows with null where a
// cell was not measured (and the matrix named when it is not "decode"),
// prefill's one value a row, and each assert's condition.
func TestRender(t *testing.T) {
	m := Model{
		Header: Header{Run: run, Margin: 0.1, Noise: Noise{Repeat: 4}},
		Expects: []Expect{
			{Matrix: "long", Metric: totalTPS, Tolerance: 0.1, Concurrency: []int{1, 8},
				Rows: []Row{{Context: 32768, Values: []float64{101.5, math.NaN()}}}},
			{Matrix: "prefill", Metric: prefillTPS, Tolerance: 0.1, Rows: []Row{{Context: 8192, Values: []float64{40123.4}}}},
		},
		Asserts: []Assert{
			{Kind: AssertTTFT, Matrix: "long", Context: 32768, Concurrency: 1, Metric: ttft, Limit: 55, Measured: 49.93},
			{Kind: AssertPrefill, Matrix: "prefill", Context: 8192, Metric: prefillTPS, AtLeast: true, Limit: 36100, Measured: 40123.4},
		},
	}
	want := HeaderText(m.Header) + `
# Rows: contexts; columns: concurrency 1, 8; null = not measured.
expect "long_total_tps" {
  matrix    = "long"
  metric    = "total_tps"
  tolerance = 0.1
  values = {
    "32K" = [101.5, null]
  }
}

expect "prefill_tps" {
  matrix    = "prefill"
  metric    = "tps"
  tolerance = 0.1
  values = {
    "8K" = 40123.4
  }
}

assert "long_ttft_32k_c1" {
  condition     = long["32K"][1].ttft_ms <= 55
  error_message = "time to first token at 32K x 1 rose above 55 ms (was 49.93 when codified)"
}

assert "prefill_tps_8k" {
  condition     = prefill["8K"].tps >= 36100
  error_message = "prefill throughput at 8K fell below 36100 tok/s (was 40123.4 when codified)"
}
`
	if diff := cmp.Diff(want, string(Render(m))); diff != "" {
		t.Errorf("Render (-want +got):\n%s", diff)
	}
}
