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
