package compare

import (
	"fmt"
	"testing"

	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// waitRuns are a baseline and a run of one decode cell each, 5 runs a
// side of total_tps around a and b (a spread of ±1 %) and tbt_ms its
// inverse, each run recording its server's wait (waitA, waitB, %), on
// servers that ran without GPUs unless gpu; the runs numbered in outB are
// left out of b's figures, their wait 95 %.
func waitRuns(a, b, waitA, waitB float64, gpu bool, outB ...int) (*result.Results, *result.Results) {
	side := func(tps, wait float64, out []int) *result.Results {
		r := &result.Results{Schema: result.Schema, Server: result.Server{Name: "s"}, GPUTime: &result.GPUTime{CPU: !gpu, GPUs: 1}}
		c := decode(256, 1, tps, 5, 1000/tps)
		c.Repeats = 5
		c.Samples = map[string][]float64{}
		for i, f := range []float64{0.99, 1.005, 1, 0.995, 1.01} {
			c.Samples["total_tps"] = append(c.Samples["total_tps"], tps*f)
			c.Samples["tbt_ms"] = append(c.Samples["tbt_ms"], 1000/(tps*f))
			w := wait
			c.Environment = append(c.Environment, result.Environment{Repeat: i + 1, ServerWaitPct: &w})
		}
		for _, n := range out {
			w := 95.0
			c.Environment = append(c.Environment, result.Environment{Repeat: n, ServerWaitPct: &w})
			c.Excluded = append(c.Excluded, result.ExcludedRun{Repeat: n, Status: vocab.StatusUnmeasurable, Reason: "the server was starved"})
		}
		r.Decode = []result.DecodeCell{c}
		return r
	}
	return side(a, waitA, nil), side(b, waitB, outB)
}

// TestServerWaitAgainstTheBaseline: on servers that ran without GPUs, a
// regression no larger than the CPU time this run's server lost to other
// work (its wait for a CPU against the baseline's) is inconclusive, and
// so is a pass the CPU time it gained could make; a regression beyond
// what the wait explains, one at the same wait, one on GPU servers or
// under -inconclusive pass stands, and a run left out of the figures is
// left out of the wait (docs/method.md#server-wait-against-the-baseline).
func TestServerWaitAgainstTheBaseline(t *testing.T) {
	tests := []struct {
		name         string
		a, b         float64 // total_tps
		waitA, waitB float64
		gpu          bool
		outB         []int
		policy       Policy // with a tolerance of 5 %
		want         vocab.Outcome
		wantWaited   bool
	}{
		// 40 % against 30 %: 1 − 0.6 ÷ 0.7 = 14 % less CPU time, which
		// alone could make the server 0.86² = 0.73 times as fast
		// (lostSpeed).
		{name: "10 % slower, 14 % less CPU time: inconclusive", a: 400, b: 360, waitA: 30, waitB: 40, want: vocab.Inconclusive, wantWaited: true},
		{name: "2× slower, 14 % less CPU time: regressed", a: 400, b: 200, waitA: 30, waitB: 40, want: vocab.Fail},
		{name: "10 % slower at the same wait: regressed", a: 400, b: 360, waitA: 30, waitB: 30, want: vocab.Fail},
		// 0.97² = 0.94: 15 % slower is beyond it by more than 5 %.
		{name: "15 % slower, 3 % less CPU time: regressed", a: 400, b: 340, waitA: 30, waitB: 32, want: vocab.Fail},
		{name: "10 % slower, 3 % less CPU time: inconclusive", a: 400, b: 360, waitA: 30, waitB: 32, want: vocab.Inconclusive, wantWaited: true},
		{name: "GPU servers: regressed", a: 400, b: 360, waitA: 30, waitB: 40, gpu: true, want: vocab.Fail},
		{name: "-inconclusive pass: regressed", a: 400, b: 360, waitA: 30, waitB: 40, policy: Policy{Inconclusive: InconclusivePass}, want: vocab.Fail},
		{name: "a starved run left out is not in the wait", a: 400, b: 360, waitA: 30, waitB: 30, outB: []int{6, 7, 8, 9, 10, 11}, want: vocab.Fail},
		// 10 % against 40 %: 50 % more CPU time, which alone could make
		// a build half as fast look 10 % faster (1.5² = 2.25).
		{name: "10 % faster, 50 % more CPU time: inconclusive", a: 400, b: 440, waitA: 40, waitB: 10, want: vocab.Inconclusive, wantWaited: true},
		{name: "unchanged, 1 % more CPU time: passes", a: 400, b: 400, waitA: 31, waitB: 30, want: vocab.Pass},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := waitRuns(tt.a, tt.b, tt.waitA, tt.waitB, tt.gpu, tt.outB...)
			p := tt.policy
			p.Tolerance = 0.05
			c := Build(a, b, p)
			if len(c.Cells) != 1 {
				t.Fatalf("%d cells; want 1", len(c.Cells))
			}
			cr := c.Cells[0]
			if cr.Outcome != tt.want || (cr.Waited != nil) != tt.wantWaited || c.Outcome != tt.want {
				t.Fatalf("cell %s (decided %s), waited %+v, comparison %s; want %s, waited %v", cr.Outcome, cr.Decided, cr.Waited, c.Outcome, tt.want, tt.wantWaited)
			}
			if tt.wantWaited {
				if cr.Waited.BaselinePct != tt.waitA || cr.Waited.NowPct != tt.waitB {
					t.Errorf("waits %+v; want %v and %v", *cr.Waited, tt.waitA, tt.waitB)
				}
				for _, row := range c.Record().Rows {
					if row.Outcome == vocab.Fail || row.Decision == Regressed.Key() && row.Outcome != vocab.Inconclusive {
						t.Errorf("results.json's row %s %s (%s) is %s; want none failed", row.Cell, row.Metric, row.Decision, row.Outcome)
					}
				}
			}
		})
	}
}

// TestWaitShiftLost: the CPU time lost is against what the baseline's
// server got, not a difference of percentages.
func TestWaitShiftLost(t *testing.T) {
	for _, tc := range []struct {
		name string
		w    WaitShift
		want string
	}{
		{name: "half of a quiet server's", w: WaitShift{BaselinePct: 0, NowPct: 50}, want: "0.500"},
		{name: "a loaded baseline", w: WaitShift{BaselinePct: 50, NowPct: 75}, want: "0.500"},
		{name: "more than the baseline's", w: WaitShift{BaselinePct: 40, NowPct: 10}, want: "-0.500"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := fmt.Sprintf("%.3f", tc.w.Lost()); got != tc.want {
				t.Errorf("Lost() = %s; want %s", got, tc.want)
			}
		})
	}
}
