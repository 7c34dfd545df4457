package codify_test

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/slogate/slogate/internal/command/codify"
	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/views/codifyview"
	"github.com/slogate/slogate/internal/vocab"
)

// TestBuild: codify decides the blocks as values: the expect rows rounded
// toward the passing side (null where not measured), each assert's kind,
// cell, direction, threshold (three significant digits on the passing
// side of measured × (1 ∓ margin)) and the figure it read, and the
// header's cells and percentiles left out; codifyview words them
// (TestGenerateGolden holds the words).
func TestBuild(t *testing.T) {
	m, err := codify.Build(repeatedRun(), codify.Options{Margin: 0.1, Source: "results.json"})
	if err != nil {
		t.Fatal(err)
	}
	decode := func(ctx, conc int) vocab.CellRef {
		return vocab.CellRef{Phase: vocab.PhaseDecode, Matrix: "decode", Context: ctx, Concurrency: conc}
	}
	totalTPS := metric.Must(vocab.PhaseDecode, metric.TotalTPS)
	ttft := metric.Must(vocab.PhaseDecode, metric.TTFTMs)
	ttftP99 := metric.Must(vocab.PhaseDecode, metric.TTFTMsP99)
	prefillTPS := metric.Must(vocab.PhasePrefill, metric.TPS)
	wantExpects := []codifyview.Expect{
		{Matrix: "decode", Metric: totalTPS, Tolerance: 0.1, Concurrency: []int{1, 2, 64}, Rows: []codifyview.Row{
			{Context: 8192, Values: []float64{408.2, 779.9, 6018.4}},
			{Context: 16384, Values: []float64{401.1, 760.3, math.NaN()}},
		}},
		{Matrix: "prefill", Metric: prefillTPS, Tolerance: 0.1, Rows: []codifyview.Row{
			{Context: 8192, Values: []float64{40123.4}},
			{Context: 16384, Values: []float64{38001}},
		}},
	}
	wantAsserts := []codifyview.Assert{
		{Kind: codifyview.AssertPeak, Matrix: "decode", Context: 8192, Concurrency: 64, Metric: totalTPS, AtLeast: true, Limit: 5410, Measured: 6018.47},
		{Kind: codifyview.AssertTTFT, Matrix: "decode", Context: 8192, Concurrency: 1, Metric: ttft, Limit: 55, Measured: 49.93},
		{Kind: codifyview.AssertTTFTTail, Matrix: "decode", Context: 8192, Concurrency: 64, Metric: ttftP99, Limit: 564, Measured: 512.3, Samples: 640},
		{Kind: codifyview.AssertPrefill, Matrix: "prefill", Context: 16384, Metric: prefillTPS, AtLeast: true, Limit: 34200, Measured: 38001.06},
	}
	opts := cmp.Options{cmpopts.EquateNaNs(), cmpopts.IgnoreUnexported(metric.Metric{})}
	if diff := cmp.Diff(wantExpects, m.Expects, opts); diff != "" {
		t.Errorf("expects (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantAsserts, m.Asserts, opts); diff != "" {
		t.Errorf("asserts (-want +got):\n%s", diff)
	}
	h := m.Header
	if h.Source != "results.json" || h.Margin != 0.1 || h.Unfinished != "" || h.MinSamples != metric.MinPercentileSamples {
		t.Errorf("header %+v", h)
	}
	if diff := cmp.Diff([]codifyview.LeftOut{{Cell: decode(16384, 64), Status: vocab.StatusOverCapacity}}, h.LeftOut); diff != "" {
		t.Errorf("left out (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]codifyview.Tail{{Cell: decode(8192, 1), Metric: "ttft_ms_p99", Samples: 1}}, h.FewSamples); diff != "" {
		t.Errorf("few samples (-want +got):\n%s", diff)
	}
}

// TestMeasuredNoiseFigures: the noise figures and the repeats they need,
// as values (TestMeasuredNoise holds their words): the repeat advised is
// the repeats the margin needs but at least 4, none when more than the
// estimates consider; the margin to suggest is the supported change
// rounded up to a whole percent.
func TestMeasuredNoiseFigures(t *testing.T) {
	tests := []struct {
		name                      string
		margin                    float64
		wantRepeatFor, wantRepeat int
	}{
		{name: "fewer than 4 needed", margin: 0.1, wantRepeatFor: 3, wantRepeat: 4},
		{name: "more than 4 needed", margin: 0.02, wantRepeatFor: 26, wantRepeat: 26},
		{name: "more than the estimates consider", margin: 0.001},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := codify.MeasuredNoise(repeatedRun(), tc.margin, 0)
			if !n.Measured || n.Repeats != 5 || n.Cell != (vocab.CellRef{Phase: vocab.PhaseDecode, Matrix: "decode", Context: 8192, Concurrency: 64}) || n.Metric != "total_tps" {
				t.Errorf("noise %+v, want it measured on 5 repeats of decode/ctx=8K/conc=64 total_tps", n)
			}
			if math.Abs(n.Noise-0.0227) > 0.0001 || math.Abs(n.Supported-0.044) > 0.001 || n.Tightest != 0.05 {
				t.Errorf("noise %.4f, supported %.4f, tightest %v; want 0.0227, 0.044, 0.05", n.Noise, n.Supported, n.Tightest)
			}
			if n.RepeatFor != tc.wantRepeatFor || n.Repeat != tc.wantRepeat {
				t.Errorf("repeat for %d, advised %d; want %d, %d", n.RepeatFor, n.Repeat, tc.wantRepeatFor, tc.wantRepeat)
			}
		})
	}
	if n := codify.MeasuredNoise(run(), 0.1, 0); n.Measured || n.Repeat != 4 {
		t.Errorf("no repeats: %+v, want unmeasured with repeat 4 advised", n)
	}
}
