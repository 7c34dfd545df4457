package gate

import (
	"math"
	"strings"
	"testing"

	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/vocab"
)

// TestBaselinePowerWarnings: before any server starts, a baseline whose
// repeats and noise cannot decide the tolerance against the spec's repeats
// is warned about, once per metric (over every spec and server); a quiet
// one and no baseline are not. The settings differ (the baseline records
// none): with -allow-settings-change, the power is checked alone.
func TestBaselinePowerWarnings(t *testing.T) {
	baseline := func(noise float64) *result.Results {
		var xs []float64
		for _, k := range []float64{0, 1, -1, 2, -2} {
			xs = append(xs, 6000*math.Exp(k*noise/math.Sqrt(2.5)))
		}
		return &result.Results{Decode: []result.DecodeCell{{Matrix: "decode", Context: 8192, Concurrency: 64, Status: vocab.StatusValid,
			TotalTPS: 6000, Repeats: 5, Samples: map[string][]float64{"total_tps": xs}}}}
	}
	srv := []*spec.Server{{Name: "a"}, {Name: "b"}}
	specs := []*spec.Spec{{Measure: &spec.Measure{Repeat: 5}, Servers: srv}, {Measure: &spec.Measure{Repeat: 5}, Servers: srv}}
	fixed4 := []*spec.Spec{{Measure: &spec.Measure{Repeat: 4}, Servers: srv}}
	auto := []*spec.Spec{{Measure: &spec.Measure{Repeat: 4, RepeatAuto: true, MaxRepeat: 20}, Servers: srv}}
	tests := []struct {
		name     string
		specs    []*spec.Spec // nil: two specs of repeat = 5
		baseline *result.Results
		want     string // "" for no warning
	}{
		{"noise 5% over 5 repeats", nil, baseline(0.05), "-baseline: decode total_tps: 1 of 1 baseline cells cannot be decided within 5% with power 0.9 against 5 repeats"},
		{"noise 0.5%", nil, baseline(0.005), ""},
		{"no baseline", nil, nil, ""},
		// At noise 2.5 % four candidate repeats cannot decide against these
		// five, up to twenty (repeat = "auto"'s max_repeat) can.
		{"noise 2.5% against repeat = 4", fixed4, baseline(0.025), "-baseline: decode total_tps: 1 of 1 baseline cells cannot be decided within 5% with power 0.9 against 4 repeats"},
		{"noise 2.5% against repeat = auto, max_repeat = 20", auto, baseline(0.025), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sp := tc.specs
			if sp == nil {
				sp = specs
			}
			o := Options{Specs: sp, Baseline: tc.baseline, Policy: compare.Policy{Tolerance: 0.05, AllowSettingsChange: true}}
			got, err := o.CheckBaseline()
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == "" && len(got) > 0 || tc.want != "" && (len(got) != 1 || !strings.HasPrefix(got[0], tc.want)) {
				t.Errorf("warnings %q, want one starting %q (once for both specs)", got, tc.want)
			}
		})
	}
}
