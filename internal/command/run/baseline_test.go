package run

import (
	"time"

	"math"
	"testing"

	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/warning"
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
		// want is the candidate repeats of the one power_shortfall
		// warning of decode total_tps; 0 for no warning.
		want float64
	}{
		{"noise 5% over 5 repeats", nil, baseline(0.05), 5},
		{"noise 0.5%", nil, baseline(0.005), 0},
		{"no baseline", nil, nil, 0},
		// At noise 2.5 % four candidate repeats cannot decide against these
		// five, up to twenty (repeat = "auto"'s max_repeat) can.
		{"noise 2.5% against repeat = 4", fixed4, baseline(0.025), 4},
		{"noise 2.5% against repeat = auto, max_repeat = 20", auto, baseline(0.025), 0},
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
			if tc.want == 0 {
				if len(got) > 0 {
					t.Errorf("warnings %+v, want none", got)
				}
				return
			}
			if len(got) != 1 || got[0].Code != warning.PowerShortfall || got[0].Subject != "total_tps" || !figureIs(got[0], warning.FigCandidateRepeats, tc.want) {
				t.Errorf("warnings %+v, want one power_shortfall of total_tps against %v repeats (once for both specs and servers)", got, tc.want)
			}
		})
	}
}

// figureIs reports whether w holds figure name with value want.
func figureIs(w warning.Warning, name string, want float64) bool {
	v, ok := w.Figure(name)
	return ok && v == want
}

// TestBaselineCoarseSearch: with a baseline, a rate search whose precision
// is more than half the tolerance is warned about before the run, with
// its precision and the tolerance; at half or finer, or a concurrency
// search, it is not.
func TestBaselineCoarseSearch(t *testing.T) {
	rate := func(name string, p float64) *spec.Search {
		return &spec.Search{Name: name, Traffic: "chat", RateLo: 1, RateHi: 8, Precision: p}
	}
	tests := []struct {
		name      string
		search    *spec.Search
		tolerance float64
		want      bool
	}{
		{name: "the default against the default tolerance", search: rate("capacity", spec.DefaultPrecision), want: false},
		{name: "5% against 5%", search: rate("capacity", 0.05), tolerance: 0.05, want: true},
		{name: "5% against the default", search: rate("capacity", 0.05), want: true},
		{name: "5% against 10%", search: rate("capacity", 0.05), tolerance: 0.10, want: false},
		{name: "a concurrency search", search: &spec.Search{Name: "max_users", Context: 8192, Lo: 1, Hi: 64}, tolerance: 0.01, want: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sp := []*spec.Spec{{Measure: &spec.Measure{}, Searches: []*spec.Search{tc.search}}}
			o := Options{Specs: sp, Baseline: &result.Results{}, Policy: compare.Policy{Tolerance: tc.tolerance}}
			got, err := o.CheckBaseline()
			if err != nil {
				t.Fatal(err)
			}
			tol := tc.tolerance
			if tol == 0 {
				tol = compare.DefaultTolerance
			}
			switch {
			case !tc.want && len(got) > 0:
				t.Errorf("warnings %+v, want none", got)
			case tc.want && (len(got) != 1 || got[0].Code != warning.SearchPrecisionCoarse || got[0].Subject != tc.search.Name ||
				!figureIs(got[0], warning.FigPrecision, tc.search.Precision) || !figureIs(got[0], warning.FigTolerance, tol)):
				t.Errorf("warnings %+v, want one %s about %s with its precision and tolerance %v", got, warning.SearchPrecisionCoarse, tc.search.Name, tol)
			}
		})
	}
}

// TestBaselineShortTrafficTails: before a -baseline run, an open-loop
// traffic block the baseline measured whose window holds fewer requests
// at some rate than a comparison decides a p99 from (299 at α 0.05, 459 at
// 0.01) is warned of once, at its lowest such rate, with what the window
// holds and needs; a block long enough, a closed loop, or one the baseline
// lacks is not (docs/method.md#undecidable-percentiles).
func TestBaselineShortTrafficTails(t *testing.T) {
	block := func(rates []float64, conc []int) *spec.Traffic {
		return &spec.Traffic{Label: "steady", Context: 1024, Rates: rates, Concurrency: conc, Duration: 30 * time.Second}
	}
	measured := &result.Results{Traffic: []result.TrafficCell{{Traffic: "steady", Context: 1024, Rate: 4}}}
	tests := []struct {
		name     string
		block    *spec.Traffic
		base     *result.Results
		alpha    float64
		wantRate float64 // 0: no warning
		wantNeed float64
	}{
		{name: "4 req/s for 30 s holds 120", block: block([]float64{10, 4}, nil), base: measured, wantRate: 4, wantNeed: 299},
		{name: "10 req/s for 30 s holds 300", block: block([]float64{10}, nil), base: measured},
		{name: "10 req/s at α 0.01 needs 459", block: block([]float64{10}, nil), base: measured, alpha: 0.01, wantRate: 10, wantNeed: 459},
		{name: "a closed loop", block: block(nil, []int{8}), base: measured},
		{name: "the baseline has no such traffic", block: block([]float64{4}, nil), base: &result.Results{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sp := []*spec.Spec{{Measure: &spec.Measure{}, Traffic: []*spec.Traffic{tc.block}}}
			o := Options{Specs: sp, Baseline: tc.base, Policy: compare.Policy{Alpha: tc.alpha}}
			got, err := o.CheckBaseline()
			if err != nil {
				t.Fatal(err)
			}
			var tails []warning.Warning
			for _, w := range got {
				if w.Code == warning.TrafficTailUndecidable {
					tails = append(tails, w)
				}
			}
			switch {
			case tc.wantRate == 0 && len(tails) > 0:
				t.Errorf("warnings %+v, want none", tails)
			case tc.wantRate > 0 && (len(tails) != 1 || tails[0].Subject != "steady" || !figureIs(tails[0], warning.FigRate, tc.wantRate) ||
				!figureIs(tails[0], warning.FigNeedRequests, tc.wantNeed) || !figureIs(tails[0], warning.FigRequests, tc.wantRate*30) || !figureIs(tails[0], warning.FigWindowS, 30)):
				t.Errorf("warnings %+v, want one about steady at %v req/s needing %v", tails, tc.wantRate, tc.wantNeed)
			}
		})
	}
}
