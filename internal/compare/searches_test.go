package compare

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/slogate/slogate/internal/result"
)

// TestRecordBaselineSearches: the record keeps the baseline's searches of
// the names the run also searched, with the baseline's GPUs and price, so
// that the reports chart and price both answers; a search only one run
// has is left out.
func TestRecordBaselineSearches(t *testing.T) {
	price := 3.5
	rate := result.Search{Name: "capacity", Traffic: "steady", RateRange: [2]float64{1, 16}, Rate: 6.2, RateLower: 5.9, RateUpper: 6.6, Found: true}
	tests := []struct {
		name      string
		base, run []result.Search
		gpuTime   *result.GPUTime
		want      []result.BaselineSearch
	}{
		{name: "shared search", base: []result.Search{rate, {Name: "old"}}, run: []result.Search{{Name: "capacity", Traffic: "steady"}},
			gpuTime: &result.GPUTime{GPUs: 2},
			want:    []result.BaselineSearch{{Search: rate, GPUs: 2, PricePerGPUHour: &price}}},
		{name: "CPU baseline", base: []result.Search{rate}, run: []result.Search{{Name: "capacity"}},
			gpuTime: &result.GPUTime{CPU: true},
			want:    []result.BaselineSearch{{Search: rate, CPU: true, PricePerGPUHour: &price}}},
		{name: "no GPU time recorded", base: []result.Search{rate}, run: []result.Search{{Name: "capacity"}},
			want: []result.BaselineSearch{{Search: rate, PricePerGPUHour: &price}}},
		{name: "no shared search", base: []result.Search{rate}, run: []result.Search{{Name: "other"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := &result.Results{Schema: result.Schema, Server: result.Server{Name: "qwen", PricePerGPUHour: &price}, Search: tc.base, GPUTime: tc.gpuTime}
			b := &result.Results{Schema: result.Schema, Server: result.Server{Name: "qwen"}, Search: tc.run}
			rec := Build(a, b, Policy{Tolerance: 0.05}).Record()
			if rec == nil {
				t.Fatal("no record")
			}
			if diff := cmp.Diff(tc.want, rec.Searches); diff != "" {
				t.Errorf("searches (-want +got):\n%s", diff)
			}
		})
	}
}
