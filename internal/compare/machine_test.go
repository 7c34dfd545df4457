package compare

import (
	"testing"

	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/warning"
)

// machineRuns are a baseline and a run of one decode cell each (total_tps
// a → b, by the tolerance rule), each with an environment record of
// calibrations cal (0: no record), plus a traffic cell b's slow times
// slower.
func machineRuns(a, b, calA, calB, slow float64) (*result.Results, *result.Results) {
	side := func(tps, cal, slow float64, seed uint64) *result.Results {
		r := trafficRun(400, slow, seed, 3, true, true) // enough for a p99 (299)
		r.Server = result.Server{Name: "s"}
		c := decode(1024, 1, tps, 50, 2)
		if cal > 0 {
			// The fastest of the run's readings is what counts: a busy
			// moment's slower one beside it is not the machine.
			c.Environment = []result.Environment{{Repeat: 1, CalibrationMs: cal * 3, CalibrationAfterMs: cal}}
		}
		r.Decode = []result.DecodeCell{c}
		return r
	}
	return side(a, calA, 1, 1), side(b, calB, slow, 1)
}

// TestMachineAgainstTheBaseline: a run whose machine ran the CPU
// calibration beyond 1.5× either way from the baseline's says so with the
// typed warning naming both figures, and the verdicts the machine could
// explain are inconclusive: a regression on a slower machine, a pass on a
// faster one (docs/method.md#machine-against-the-baseline). A regression
// on a faster machine, an improvement on a slower one, runs within the
// bound, runs without records, -inconclusive pass and another engine are
// left as they were.
func TestMachineAgainstTheBaseline(t *testing.T) {
	tests := []struct {
		name       string
		a, b       float64 // total_tps
		calA, calB float64 // the fastest calibration, ms
		slow       float64 // the traffic cell's latencies, b over a
		policy     Policy
		engine     string // b's engine, when another
		// want: the decode cell's and the traffic cell's outcome; whether
		// each was confounded; whether the machines differ
		wantCell, wantTraffic     vocab.Outcome
		cellConf, trafficConf     bool
		wantMachine               bool
		wantBaselineMs, wantNowMs float64
	}{
		{name: "same machine: a regression fails", a: 400, b: 300, calA: 0.5, calB: 0.7, slow: 1.2,
			wantCell: vocab.Fail, wantTraffic: vocab.Fail},
		{name: "slower machine: a regression is inconclusive", a: 400, b: 300, calA: 0.5, calB: 0.9, slow: 1.2,
			wantCell: vocab.Inconclusive, wantTraffic: vocab.Inconclusive, cellConf: true, trafficConf: true,
			wantMachine: true, wantBaselineMs: 0.5, wantNowMs: 0.9},
		{name: "slower machine: an improvement passes", a: 400, b: 500, calA: 0.5, calB: 0.9, slow: 0.8,
			wantCell: vocab.Pass, wantTraffic: vocab.Pass, wantMachine: true, wantBaselineMs: 0.5, wantNowMs: 0.9},
		{name: "faster machine: a pass is inconclusive", a: 400, b: 401, calA: 0.9, calB: 0.5, slow: 1,
			wantCell: vocab.Inconclusive, wantTraffic: vocab.Inconclusive, cellConf: true, trafficConf: true,
			wantMachine: true, wantBaselineMs: 0.9, wantNowMs: 0.5},
		{name: "faster machine: a regression fails", a: 400, b: 300, calA: 0.9, calB: 0.5, slow: 1.2,
			wantCell: vocab.Fail, wantTraffic: vocab.Fail, wantMachine: true, wantBaselineMs: 0.9, wantNowMs: 0.5},
		{name: "no record in the baseline: a regression fails", a: 400, b: 300, calB: 0.9, slow: 1.2,
			wantCell: vocab.Fail, wantTraffic: vocab.Fail},
		{name: "-inconclusive pass: a regression on a slower machine fails", a: 400, b: 300, calA: 0.5, calB: 0.9, slow: 1.2,
			policy: Policy{Inconclusive: InconclusivePass}, wantCell: vocab.Fail, wantTraffic: vocab.Fail,
			wantMachine: true, wantBaselineMs: 0.5, wantNowMs: 0.9},
		{name: "another engine informs only", a: 400, b: 300, calA: 0.5, calB: 0.9, slow: 1.2, engine: "sglang", policy: Policy{AllowSettingsChange: true},
			wantCell: vocab.Pass, wantTraffic: vocab.Pass, wantMachine: true, wantBaselineMs: 0.5, wantNowMs: 0.9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := machineRuns(tt.a, tt.b, tt.calA, tt.calB, tt.slow)
			b.Server.Engine = tt.engine
			c := Build(a, b, tt.policy)
			if len(c.Cells) != 1 || len(c.Traffic) != 1 {
				t.Fatalf("%d cells, %d traffic pairs; want 1 and 1", len(c.Cells), len(c.Traffic))
			}
			cr, tp := c.Cells[0], c.Traffic[0]
			if cr.Outcome != tt.wantCell || cr.Confounded != tt.cellConf {
				t.Errorf("decode cell: %s (decided %s), confounded %v; want %s, %v", cr.Outcome, cr.Decided, cr.Confounded, tt.wantCell, tt.cellConf)
			}
			if tp.Outcome != tt.wantTraffic || tp.Confounded != tt.trafficConf {
				t.Errorf("traffic cell: %s (decided %s), confounded %v; want %s, %v", tp.Outcome, tp.Decided, tp.Confounded, tt.wantTraffic, tt.trafficConf)
			}
			if cr.InformsOnly() != (tt.engine != "" && cr.Decided != vocab.Pass) {
				t.Errorf("decode cell informs only: %v", cr.InformsOnly())
			}
			if want := vocab.Worst(tt.wantCell, tt.wantTraffic); c.Outcome != want {
				t.Errorf("comparison %s; want %s", c.Outcome, want)
			}
			rec := c.Record()
			for _, row := range append(rec.Rows, rec.Traffic...) {
				if row.Outcome == vocab.Fail && (tt.cellConf || tt.trafficConf) {
					t.Errorf("row %s %s fails in a confounded comparison", row.Cell, row.Metric)
				}
			}
			if (c.Machine != nil) != tt.wantMachine {
				t.Fatalf("machines differ: %v; want %v", c.Machine != nil, tt.wantMachine)
			}
			if !tt.wantMachine {
				if len(c.Warnings) != 0 || len(rec.Warnings) != 0 {
					t.Errorf("warnings %v; want none", c.Warnings)
				}
				return
			}
			want := warning.New(warning.MachineDiffers, "", "", map[string]float64{
				warning.FigBaselineCalibrationMs: tt.wantBaselineMs, warning.FigCalibrationMs: tt.wantNowMs, warning.FigBound: 1.5}).Textless()
			if len(c.Warnings) != 1 || !c.Warnings[0].Textless().Equal(want) {
				t.Errorf("warnings %+v; want %+v", c.Warnings, want)
			}
			if len(rec.Warnings) != 1 || rec.Warnings[0].Code != warning.MachineDiffers {
				t.Errorf("results.json's comparison warnings %+v; want the machine's", rec.Warnings)
			}
		})
	}
}
