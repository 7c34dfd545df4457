package measure

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slogate/slogate/internal/promread"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/warning"
)

// TestServerTPSGapWarning: server_total_tps is the server's generated
// tokens over the time between its two reads; more than 2 % off total_tps
// is a server_tps_gap warning quoting both figures and their gap (what
// resulttest matches against the cell's record), within 2 % none.
func TestServerTPSGapWarning(t *testing.T) {
	t0 := time.Unix(1000, 0)
	tests := []struct {
		name     string
		total    float64
		tokens   float64 // generated between the reads, 2 s apart
		wantTPS  float64
		wantWarn []warning.Warning
	}{
		{name: "below by 12.5 %", total: 400, tokens: 700, wantTPS: 350,
			wantWarn: []warning.Warning{{Code: warning.ServerTPSGap,
				Figures: map[string]float64{warning.FigServerTotalTPS: 350, warning.FigTotalTPS: 400, warning.FigGap: -0.125}}}},
		{name: "above by 5 %", total: 100, tokens: 210, wantTPS: 105,
			wantWarn: []warning.Warning{{Code: warning.ServerTPSGap,
				Figures: map[string]float64{warning.FigServerTotalTPS: 105, warning.FigTotalTPS: 100, warning.FigGap: 0.05}}}},
		{name: "within 2 %", total: 100, tokens: 203, wantTPS: 101.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cell := &result.DecodeCell{TotalTPS: tt.total}
			storeServerTotalTPS(cell, metricsAround{
				before:   promread.Snapshot{GenerationTokens: 1000, HasGenerationTokens: true},
				after:    promread.Snapshot{GenerationTokens: 1000 + tt.tokens, HasGenerationTokens: true},
				beforeAt: t0, afterAt: t0.Add(2 * time.Second), ok: true})
			if cell.ServerTotalTPS == nil || *cell.ServerTotalTPS != tt.wantTPS {
				t.Fatalf("server_total_tps %v, want %v", cell.ServerTotalTPS, tt.wantTPS)
			}
			if diff := cmp.Diff(tt.wantWarn, warning.Textless(cell.Warnings)); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStoreServerLatency: a decode cell records the means of the server's
// request-latency histograms over its window, in ms, from the reads on
// either side of it; none where a read lacks the histogram or the window
// saw no request.
func TestStoreServerLatency(t *testing.T) {
	at := func(ttft, itl promread.SumCount) promread.Snapshot { return promread.Snapshot{TTFT: ttft, ITL: itl} }
	tests := []struct {
		name          string
		before, after promread.Snapshot
		wantTTFT      *float64
		wantITL       *float64
	}{
		{name: "both histograms", before: at(promread.SumCount{Sum: 1, Count: 10, Has: true}, promread.SumCount{Sum: 2, Count: 1000, Has: true}),
			after:    at(promread.SumCount{Sum: 1.25, Count: 20, Has: true}, promread.SumCount{Sum: 5, Count: 2000, Has: true}),
			wantTTFT: ptr(25.0), wantITL: ptr(3.0)},
		{name: "no request finished its first token", before: at(promread.SumCount{Sum: 1, Count: 10, Has: true}, promread.SumCount{}),
			after: at(promread.SumCount{Sum: 1, Count: 10, Has: true}, promread.SumCount{})},
		{name: "an engine without histograms", before: promread.Snapshot{}, after: promread.Snapshot{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c result.DecodeCell
			storeServerLatency(&c, tt.before, tt.after)
			if !cmp.Equal(c.ServerTTFTMsMean, tt.wantTTFT) || !cmp.Equal(c.ServerITLMsMean, tt.wantITL) || c.ServerE2EMsMean != nil {
				t.Errorf("TTFT %v, ITL %v, E2E %v; want %v, %v, none", deref(c.ServerTTFTMsMean), deref(c.ServerITLMsMean), deref(c.ServerE2EMsMean), deref(tt.wantTTFT), deref(tt.wantITL))
			}
		})
	}
}

func ptr(v float64) *float64 { return &v }

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
