package compare

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// TestBootLevels: Kalibera and Jones's estimators recover the variance
// components of simulated boots × repeats (log-normal, within-boot σ 0.02,
// between-boot σ 0.05 or none), and the optimal repeats a boot follow
// from them and the costs; too few boots or repeats give nothing.
func TestBootLevels(t *testing.T) {
	gen := func(seed uint64, boots, repeats int, within, between float64) ([]float64, []int) {
		rng := rand.New(rand.NewPCG(seed, 1))
		var xs []float64
		var bs []int
		for b := 1; b <= boots; b++ {
			offset := between * rng.NormFloat64()
			for range repeats {
				xs = append(xs, 1000*math.Exp(offset+within*rng.NormFloat64()))
				bs = append(bs, b)
			}
		}
		return xs, bs
	}
	tests := []struct {
		name                string
		boots, repeats      int
		between             float64
		wantBetween         [2]float64 // range
		wantPerBoot         [2]int
		wantOK              bool
		bootCost, perRepeat time.Duration
	}{
		{name: "boots differ", boots: 60, repeats: 5, between: 0.05, wantBetween: [2]float64{0.0017, 0.0035},
			wantPerBoot: [2]int{3, 6}, wantOK: true, bootCost: 100 * time.Second, perRepeat: time.Second},
		{name: "boots alike", boots: 60, repeats: 5, between: 0, wantBetween: [2]float64{0, 0.00004},
			wantPerBoot: [2]int{20, math.MaxInt}, wantOK: true, bootCost: 100 * time.Second, perRepeat: time.Second},
		{name: "one boot", boots: 1, repeats: 10, between: 0.05},
		{name: "one repeat a boot", boots: 5, repeats: 1, between: 0.05},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			xs, bs := gen(7, tc.boots, tc.repeats, 0.02, tc.between)
			lv, ok := BootLevels(xs, bs, tc.bootCost, tc.perRepeat, 0.05, 0.05)
			if ok != tc.wantOK {
				t.Fatalf("ok = %v, want %v (%+v)", ok, tc.wantOK, lv)
			}
			if !ok {
				return
			}
			t.Logf("%+v", lv)
			if lv.Within < 0.0003 || lv.Within > 0.0005 {
				t.Errorf("within = %g, want about 0.02² = 0.0004", lv.Within)
			}
			if lv.Between < tc.wantBetween[0] || lv.Between > tc.wantBetween[1] {
				t.Errorf("between = %g, want in %v", lv.Between, tc.wantBetween)
			}
			// Boots alike: many repeats in few boots (or none seen: 0).
			if (lv.RepeatsPerBoot < tc.wantPerBoot[0] || lv.RepeatsPerBoot > tc.wantPerBoot[1]) && !(tc.between == 0 && lv.RepeatsPerBoot == 0) {
				t.Errorf("repeats a boot = %d, want in %v (√(100 × within ÷ between))", lv.RepeatsPerBoot, tc.wantPerBoot)
			}
			if lv.Between > 0 && lv.BootsFor < 2 {
				t.Errorf("boots_for = %d, want at least 2", lv.BootsFor)
			}
		})
	}
}
