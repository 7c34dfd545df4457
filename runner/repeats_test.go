package runner

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/slogate/slogate/result"
)

func ptr(v float64) *float64 { return &v }

// TestCombineRepeats: repeats combine every metric of the table by its
// median with [min, max] in Spread; an optional metric only when every run
// has it; an errored run is the result.
func TestCombineRepeats(t *testing.T) {
	tests := []struct {
		name       string
		runs       []result.DecodeCell
		wantRate   *float64
		wantSpread map[string][2]float64 // the entries checked
		wantStatus result.Status
	}{
		{name: "optional metric in every run",
			runs: []result.DecodeCell{
				{Status: result.StatusValid, TBTMsP99: 9, SpeculativeAcceptRate: ptr(0.5), OutputTokens: 11},
				{Status: result.StatusValid, TBTMsP99: 3, SpeculativeAcceptRate: ptr(0.7), OutputTokens: 12},
				{Status: result.StatusValid, TBTMsP99: 5, SpeculativeAcceptRate: ptr(0.6), OutputTokens: 15},
			},
			wantRate:   ptr(0.6),
			wantSpread: map[string][2]float64{"tbt_ms_p99": {3, 9}, "spec_accept_rate": {0.5, 0.7}, "output_tokens": {11, 15}},
			wantStatus: result.StatusValid},
		{name: "optional metric missing in one run keeps the first run's",
			runs: []result.DecodeCell{
				{Status: result.StatusValid, SpeculativeAcceptRate: ptr(0.5)},
				{Status: result.StatusValid},
			},
			wantRate:   ptr(0.5),
			wantSpread: map[string][2]float64{"spec_accept_rate": {}},
			wantStatus: result.StatusValid},
		{name: "an errored run is the result",
			runs: []result.DecodeCell{
				{Status: result.StatusValid, TotalTPS: 5},
				{Status: result.StatusError, Reason: "stalled"},
			},
			wantStatus: result.StatusError},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := combineDecode(tc.runs)
			if c.Status != tc.wantStatus {
				t.Fatalf("status %s, want %s", c.Status, tc.wantStatus)
			}
			if diff := cmp.Diff(tc.wantRate, c.SpeculativeAcceptRate); diff != "" {
				t.Errorf("spec_accept_rate (-want +got):\n%s", diff)
			}
			for name, want := range tc.wantSpread {
				if got := c.Spread[name]; got != want {
					t.Errorf("Spread[%s] = %v, want %v", name, got, want)
				}
			}
		})
	}
	if c := combineDecode([]result.DecodeCell{{Status: result.StatusValid, TBTMsP99: 9, OutputTokens: 11}, {Status: result.StatusValid, TBTMsP99: 3, OutputTokens: 12}}); c.TBTMsP99 != 6 || c.OutputTokens != 12 {
		t.Errorf("two runs: tbt_ms_p99 %v output_tokens %d, want 6 and 12 (the median 11.5 rounded)", c.TBTMsP99, c.OutputTokens)
	}
	p := combinePrefill([]result.PrefillCell{{Status: result.StatusValid, TPS: 10, TTFTMs: 300}, {Status: result.StatusValid, TPS: 30, TTFTMs: 100}, {Status: result.StatusValid, TPS: 20, TTFTMs: 200}})
	if p.TPS != 20 || p.TTFTMs != 200 || p.Repeats != 3 || p.Spread["tps"] != [2]float64{10, 30} || p.Spread["ttft_ms"] != [2]float64{100, 300} {
		t.Errorf("prefill combined = %+v", p)
	}
}
