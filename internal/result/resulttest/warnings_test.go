package resulttest

import (
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/warning"
)

// slow is a slow-scrape warning quoting mean, max and n.
func slow(mean, max float64, n int) warning.Warning {
	return warning.New(warning.SlowScrape, "GET /metrics took … on average", "polling may perturb the server",
		map[string]float64{warning.FigMeanMs: mean, warning.FigMaxMs: max, warning.FigScrapes: float64(n), warning.FigIntervalMs: 50})
}

// gap is a server_total_tps cross-check warning quoting server and client.
func gap(server, client float64) warning.Warning {
	return warning.New(warning.ServerTPSGap, "server_total_tps … differs from total_tps …", "",
		map[string]float64{warning.FigServerTotalTPS: server, warning.FigTotalTPS: client, warning.FigGap: (server - client) / client})
}

// moved is an environment_moved warning of CPU pressure from before to
// after.
func moved(before, after float64) warning.Warning {
	return warning.New(warning.EnvironmentMoved, "the machine moved: …", "",
		map[string]float64{warning.FigBefore: before, warning.FigAfter: after, warning.FigBound: 40}).About("cpu_pressure")
}

// rateGap is a per-request rate warning quoting server and client.
func rateGap(server, client float64) warning.Warning {
	return warning.New(warning.ServerRequestTPSGap, "the server's own per-request rate … differs from per_request_tps …", "",
		map[string]float64{warning.FigServerPerRequestTPS: server, warning.FigPerRequestTPS: client, warning.FigGap: (server - client) / client})
}

func TestUnexplainedWarnings(t *testing.T) {
	var (
		slow10    = slow(10.1, 55, 49)
		crossLow  = gap(331.1, 378.5)
		crossHigh = gap(100.2, 96.6)
		other     = warning.New(warning.NoMetrics, "no /metrics around the window", "server_total_tps not measured", nil)
		// An old results.json's warnings are plain strings: no code, so
		// never explained, whatever they say.
		oldSlow = warning.Warning{Summary: "GET /metrics took 10.1 ms on average (max 55.0 ms, 49 scrapes at one per 50ms): polling may perturb the server (docs/method.md#polling)"}
	)
	tps := func(v float64) *float64 { return &v }
	// Loads above and at this machine's CPUs.
	overloaded, within := float64(runtime.NumCPU())+0.5, float64(runtime.NumCPU())
	tests := []struct {
		name string
		cell result.DecodeCell
		want []warning.Warning
	}{
		{name: "slow scrapes quoted from the record",
			cell: result.DecodeCell{Warnings: []warning.Warning{slow10}, Polling: &result.Polling{Scrapes: 49, MeanMs: 10.1, MaxMs: 55}}},
		{name: "the slow-scrape warning of a cell whose mean is 5 ms",
			cell: result.DecodeCell{Warnings: []warning.Warning{slow(5, 55, 49)}, Polling: &result.Polling{Scrapes: 49, MeanMs: 5, MaxMs: 55}},
			want: []warning.Warning{slow(5, 55, 49)}},
		{name: "slow-scrape figures that are not the record's",
			cell: result.DecodeCell{Warnings: []warning.Warning{slow10}, Polling: &result.Polling{Scrapes: 48, MeanMs: 10.1, MaxMs: 55}},
			want: []warning.Warning{slow10}},
		{name: "a slow-scrape maximum that is not the record's",
			cell: result.DecodeCell{Warnings: []warning.Warning{slow10}, Polling: &result.Polling{Scrapes: 49, MeanMs: 10.1, MaxMs: 54}},
			want: []warning.Warning{slow10}},
		{name: "a slow-scrape warning without a record",
			cell: result.DecodeCell{Warnings: []warning.Warning{slow10}}, want: []warning.Warning{slow10}},
		{name: "an old file's slow-scrape text, which has no code",
			cell: result.DecodeCell{Warnings: []warning.Warning{oldSlow}, Polling: &result.Polling{Scrapes: 49, MeanMs: 10.1, MaxMs: 55}},
			want: []warning.Warning{oldSlow}},
		// 12.5 % of 0.518 s is 64.8 ms: two scrapes of 32.4 ms.
		{name: "a cross-check two stalled scrapes explain",
			cell: result.DecodeCell{Warnings: []warning.Warning{crossLow}, TotalTPS: 378.5, ServerTotalTPS: tps(331.1), MeasuredS: 0.518, Polling: &result.Polling{Scrapes: 10, MeanMs: 3, MaxMs: 32.5}}},
		{name: "a cross-check longer than two of the slowest scrapes",
			cell: result.DecodeCell{Warnings: []warning.Warning{crossLow}, TotalTPS: 378.5, ServerTotalTPS: tps(331.1), MeasuredS: 0.518, Polling: &result.Polling{Scrapes: 10, MeanMs: 3, MaxMs: 32}},
			want: []warning.Warning{crossLow}},
		{name: "a cross-check above total_tps, explained",
			cell: result.DecodeCell{Warnings: []warning.Warning{crossHigh}, TotalTPS: 96.6, ServerTotalTPS: tps(100.2), MeasuredS: 2, Polling: &result.Polling{Scrapes: 40, MeanMs: 2, MaxMs: 40}}},
		{name: "cross-check figures that are not the record's",
			cell: result.DecodeCell{Warnings: []warning.Warning{crossHigh}, TotalTPS: 96.6, ServerTotalTPS: tps(100.3), MeasuredS: 2, Polling: &result.Polling{Scrapes: 40, MeanMs: 2, MaxMs: 400}},
			want: []warning.Warning{crossHigh}},
		{name: "a cross-check total_tps that is not the record's",
			cell: result.DecodeCell{Warnings: []warning.Warning{crossHigh}, TotalTPS: 96.7, ServerTotalTPS: tps(100.2), MeasuredS: 2, Polling: &result.Polling{Scrapes: 40, MeanMs: 2, MaxMs: 400}},
			want: []warning.Warning{crossHigh}},
		{name: "a cross-check without recorded scrapes",
			cell: result.DecodeCell{Warnings: []warning.Warning{crossHigh}, TotalTPS: 96.6, ServerTotalTPS: tps(100.2), MeasuredS: 2},
			want: []warning.Warning{crossHigh}},
		{name: "a machine that moved, its pressure in the record",
			cell: result.DecodeCell{Warnings: []warning.Warning{moved(20, 70)}, Environment: []result.Environment{
				{Repeat: 1, CPUPressure: tps(20), CPUPressureAfter: tps(30)}, {Repeat: 2, CPUPressure: tps(30), CPUPressureAfter: tps(70)}}}},
		{name: "a moved warning whose pressure is not the record's",
			cell: result.DecodeCell{Warnings: []warning.Warning{moved(20, 71)}, Environment: []result.Environment{
				{Repeat: 1, CPUPressure: tps(20), CPUPressureAfter: tps(30)}, {Repeat: 2, CPUPressure: tps(30), CPUPressureAfter: tps(70)}}},
			want: []warning.Warning{moved(20, 71)}},
		{name: "a client slower than the server on a machine loaded past its CPUs",
			cell: result.DecodeCell{Warnings: []warning.Warning{rateGap(200, 172.3)}, PerRequestTPS: 172.3, ServerPerRequestTPS: tps(200),
				Environment: []result.Environment{{Repeat: 1, Load1: 1, Load1After: 1.5}, {Repeat: 2, Load1: 1.5, Load1After: overloaded}}}},
		{name: "a client slower than the server on a machine within its CPUs",
			cell: result.DecodeCell{Warnings: []warning.Warning{rateGap(200, 172.3)}, PerRequestTPS: 172.3, ServerPerRequestTPS: tps(200),
				Environment: []result.Environment{{Repeat: 1, Load1: within, Load1After: within}}},
			want: []warning.Warning{rateGap(200, 172.3)}},
		{name: "a client faster than the server, however loaded the machine",
			cell: result.DecodeCell{Warnings: []warning.Warning{rateGap(150, 172.3)}, PerRequestTPS: 172.3, ServerPerRequestTPS: tps(150),
				Environment: []result.Environment{{Repeat: 1, Load1: overloaded, Load1After: overloaded}}},
			want: []warning.Warning{rateGap(150, 172.3)}},
		{name: "a rate gap whose figures are not the record's",
			cell: result.DecodeCell{Warnings: []warning.Warning{rateGap(200, 172.3)}, PerRequestTPS: 172.4, ServerPerRequestTPS: tps(200),
				Environment: []result.Environment{{Repeat: 1, Load1: overloaded, Load1After: overloaded}}},
			want: []warning.Warning{rateGap(200, 172.3)}},
		{name: "any other warning, beside tolerated ones",
			cell: result.DecodeCell{Warnings: []warning.Warning{slow10, other}, Polling: &result.Polling{Scrapes: 49, MeanMs: 10.1, MaxMs: 55}},
			want: []warning.Warning{other}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, UnexplainedWarnings(tc.cell)); diff != "" {
				t.Errorf("UnexplainedWarnings (-want +got):\n%s", diff)
			}
		})
	}
}
