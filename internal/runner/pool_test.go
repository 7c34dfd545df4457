package runner

import (
	"slices"
	"testing"

	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// TestPool: boots pool as measure.boots pools them: every repeat of every
// boot a run of the cell (the median of all of them, not of the boots'
// medians), an errored boot the cell's error, an unmeasurable boot left
// out beside measured ones, a traffic cell's windows combined per metric.
func TestPool(t *testing.T) {
	decode := func(status vocab.Status, samples ...float64) result.DecodeCell {
		c := result.DecodeCell{Matrix: "decode", Context: 1024, Concurrency: 1, Status: status, TotalTPS: samples[len(samples)/2]}
		if len(samples) > 1 {
			c.Repeats, c.Samples = len(samples), map[string][]float64{metric.TotalTPS: samples}
		}
		return c
	}
	prefill := func(tps ...float64) result.PrefillCell {
		return result.PrefillCell{Context: 1024, Status: vocab.StatusValid, TPS: tps[0], Repeats: len(tps), Samples: map[string][]float64{metric.TPS: tps}}
	}
	traffic := func(status vocab.Status, ttft float64) result.TrafficCell {
		c := result.TrafficCell{Traffic: "t", Context: 1024, Rate: 4, Status: status, Launched: 20, Completed: 20}
		c.SetValue(metric.Must(vocab.PhaseTraffic, metric.TTFTMs), ttft)
		return c
	}
	tests := []struct {
		name        string
		boots       []*result.Results
		wantStatus  vocab.Status
		wantTPS     float64
		wantRepeats int
	}{
		{name: "every repeat a run: the median of the four, not of the boots' medians",
			boots: []*result.Results{{Decode: []result.DecodeCell{decode(vocab.StatusValid, 100, 101)}}, {Decode: []result.DecodeCell{decode(vocab.StatusValid, 200, 300)}}},
			// Boots' medians 100.5 and 250 would give 175.25.
			wantStatus: vocab.StatusValid, wantTPS: 150.5, wantRepeats: 4},
		{name: "an errored boot: the cell is an error",
			boots:      []*result.Results{{Decode: []result.DecodeCell{decode(vocab.StatusValid, 100, 101)}}, {Decode: []result.DecodeCell{decode(vocab.StatusError, 0)}}},
			wantStatus: vocab.StatusError},
		{name: "an unmeasurable boot beside measured ones: left out",
			boots: []*result.Results{{Decode: []result.DecodeCell{decode(vocab.StatusValid, 100, 102)}}, {Decode: []result.DecodeCell{decode(vocab.StatusUnmeasurable, 10)}},
				{Decode: []result.DecodeCell{decode(vocab.StatusValid, 104, 106)}}},
			wantStatus: vocab.StatusValid, wantTPS: 103, wantRepeats: 4},
		{name: "a cell only some boots measured: over those",
			boots:      []*result.Results{{Decode: []result.DecodeCell{decode(vocab.StatusValid, 100, 110)}}, {}},
			wantStatus: vocab.StatusValid, wantTPS: 105, wantRepeats: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Pool(tc.boots)
			if len(got.Decode) != 1 {
				t.Fatalf("%d decode cells, want 1", len(got.Decode))
			}
			c := got.Decode[0]
			if c.Status != tc.wantStatus {
				t.Fatalf("status %s, want %s", c.Status, tc.wantStatus)
			}
			if tc.wantStatus == vocab.StatusError {
				return
			}
			if c.TotalTPS != tc.wantTPS || c.Repeats != tc.wantRepeats || len(c.Samples[metric.TotalTPS]) != tc.wantRepeats {
				t.Errorf("total_tps %v over %d repeats, samples %v; want %v over %d", c.TotalTPS, c.Repeats, c.Samples[metric.TotalTPS], tc.wantTPS, tc.wantRepeats)
			}
		})
	}
	t.Run("the boots' cost summed", func(t *testing.T) {
		got := Pool([]*result.Results{{GPUTime: &result.GPUTime{ServerS: 10, Boots: 1, StartupS: []float64{2}}}, {GPUTime: &result.GPUTime{ServerS: 12.5, Boots: 1, StartupS: []float64{3}}}})
		if g := got.GPUTime; g.ServerS != 22.5 || g.Boots != 2 || !slices.Equal(g.StartupS, []float64{2, 3}) {
			t.Errorf("gpu time %+v: want 22.5 s over 2 boots", g)
		}
	})
	t.Run("prefill and traffic", func(t *testing.T) {
		got := Pool([]*result.Results{
			{Prefill: []result.PrefillCell{prefill(10, 20)}, Traffic: []result.TrafficCell{traffic(vocab.StatusValid, 50)}},
			{Prefill: []result.PrefillCell{prefill(30, 40)}, Traffic: []result.TrafficCell{traffic(vocab.StatusValid, 70)}},
			{Prefill: []result.PrefillCell{prefill(50, 60)}, Traffic: []result.TrafficCell{traffic(vocab.StatusError, 0)}},
		})
		if p := got.Prefill[0]; p.TPS != 35 || !slices.Equal(p.Samples[metric.TPS], []float64{10, 20, 30, 40, 50, 60}) {
			t.Errorf("prefill tps %v, samples %v; want 35 over the six repeats", p.TPS, p.Samples[metric.TPS])
		}
		if c := got.Traffic[0]; c.Status != vocab.StatusError {
			t.Errorf("traffic status %s, want the errored window's", c.Status)
		}
		got = Pool([]*result.Results{{Traffic: []result.TrafficCell{traffic(vocab.StatusValid, 50)}}, {Traffic: []result.TrafficCell{traffic(vocab.StatusValid, 70)}}})
		if v, _ := got.Traffic[0].Value(metric.Must(vocab.PhaseTraffic, metric.TTFTMs)); v != 60 {
			t.Errorf("traffic ttft_ms %v, want 60, the windows' median", v)
		}
		// The pooled percentile is as decidable as its shortest window.
		short, long := traffic(vocab.StatusValid, 50), traffic(vocab.StatusValid, 70)
		short.Completed, long.Completed = 12, 300
		got = Pool([]*result.Results{{Traffic: []result.TrafficCell{short}}, {Traffic: []result.TrafficCell{long}}})
		if n := got.Traffic[0].Completed; n != 12 {
			t.Errorf("pooled traffic completed %d, want 12, the fewest a window completed", n)
		}
	})
}
