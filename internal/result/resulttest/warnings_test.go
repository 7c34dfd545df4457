package resulttest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/slogate/slogate/internal/result"
)

func TestUnexplainedWarnings(t *testing.T) {
	const (
		slow      = "GET /metrics took 10.1 ms on average (max 55.0 ms, 49 scrapes at one per 50ms): polling may perturb the server (docs/method.md#polling)"
		crossLow  = "server_total_tps 331.1 differs from total_tps 378.5 by -12.5%"
		crossHigh = "server_total_tps 100.2 differs from total_tps 96.6 by +3.7%"
		other     = "no /metrics around the window: server_total_tps not measured"
	)
	tps := func(v float64) *float64 { return &v }
	tests := []struct {
		name string
		cell result.DecodeCell
		want []string
	}{
		{name: "slow scrapes quoted from the record",
			cell: result.DecodeCell{Warnings: []string{slow}, Polling: &result.Polling{Scrapes: 49, MeanMs: 10.1, MaxMs: 55}}},
		{name: "the slow-scrape warning of a cell whose mean is 5 ms",
			cell: result.DecodeCell{Warnings: []string{"GET /metrics took 5.0 ms on average (max 55.0 ms, 49 scrapes at one per 50ms)"}, Polling: &result.Polling{Scrapes: 49, MeanMs: 5, MaxMs: 55}},
			want: []string{"GET /metrics took 5.0 ms on average (max 55.0 ms, 49 scrapes at one per 50ms)"}},
		{name: "slow-scrape figures that are not the record's",
			cell: result.DecodeCell{Warnings: []string{slow}, Polling: &result.Polling{Scrapes: 48, MeanMs: 10.1, MaxMs: 55}},
			want: []string{slow}},
		{name: "a slow-scrape warning without a record",
			cell: result.DecodeCell{Warnings: []string{slow}}, want: []string{slow}},
		// 12.5 % of 0.518 s is 64.8 ms: two scrapes of 32.4 ms.
		{name: "a cross-check two stalled scrapes explain",
			cell: result.DecodeCell{Warnings: []string{crossLow}, TotalTPS: 378.5, ServerTotalTPS: tps(331.1), MeasuredS: 0.518, Polling: &result.Polling{Scrapes: 10, MeanMs: 3, MaxMs: 32.5}}},
		{name: "a cross-check longer than two of the slowest scrapes",
			cell: result.DecodeCell{Warnings: []string{crossLow}, TotalTPS: 378.5, ServerTotalTPS: tps(331.1), MeasuredS: 0.518, Polling: &result.Polling{Scrapes: 10, MeanMs: 3, MaxMs: 32}},
			want: []string{crossLow}},
		{name: "a cross-check above total_tps, explained",
			cell: result.DecodeCell{Warnings: []string{crossHigh}, TotalTPS: 96.6, ServerTotalTPS: tps(100.2), MeasuredS: 2, Polling: &result.Polling{Scrapes: 40, MeanMs: 2, MaxMs: 40}}},
		{name: "cross-check figures that are not the record's",
			cell: result.DecodeCell{Warnings: []string{crossHigh}, TotalTPS: 96.6, ServerTotalTPS: tps(100.3), MeasuredS: 2, Polling: &result.Polling{Scrapes: 40, MeanMs: 2, MaxMs: 400}},
			want: []string{crossHigh}},
		{name: "a cross-check without recorded scrapes",
			cell: result.DecodeCell{Warnings: []string{crossHigh}, TotalTPS: 96.6, ServerTotalTPS: tps(100.2), MeasuredS: 2},
			want: []string{crossHigh}},
		{name: "any other warning, beside tolerated ones",
			cell: result.DecodeCell{Warnings: []string{slow, other}, Polling: &result.Polling{Scrapes: 49, MeanMs: 10.1, MaxMs: 55}},
			want: []string{other}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, UnexplainedWarnings(tc.cell)); diff != "" {
				t.Errorf("UnexplainedWarnings (-want +got):\n%s", diff)
			}
		})
	}
}
