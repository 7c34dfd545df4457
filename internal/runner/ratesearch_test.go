package runner

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/ratesearch"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/warning"
)

// TestQuantileOf: which traffic metrics are quantiles of a per-request
// latency, and which quantile.
func TestQuantileOf(t *testing.T) {
	tests := []struct {
		name string
		in   string
		base string
		q    float64
		ok   bool
	}{
		{name: "median", in: metric.TTFTMs, base: metric.TTFTMs, q: 0.5, ok: true},
		{name: "p99 of the table", in: metric.TTFTMsP99, base: metric.TTFTMs, q: 0.99, ok: true},
		{name: "p90 of e2e", in: metric.E2EMsP90, base: metric.E2EMs, q: 0.9, ok: true},
		{name: "naming rule's p95", in: "tbt_ms_p95", base: metric.TBTMs, q: 0.95, ok: true},
		{name: "p50 spelled out", in: "ttft_ms_p50", base: metric.TTFTMs, q: 0.5, ok: true},
		{name: "tpot median", in: metric.TPOTMs, base: metric.TPOTMs, q: 0.5, ok: true},
		{name: "a mean is not a quantile", in: metric.E2EMsMean, ok: false},
		{name: "a count is not a quantile", in: "ttft_ms_count", ok: false},
		{name: "a share is not a quantile", in: metric.GoodputShare, ok: false},
		{name: "unknown", in: "nope", ok: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base, q, ok := quantileOf(tt.in)
			if ok != tt.ok || (ok && (base != tt.base || math.Abs(q-tt.q) > 1e-12)) {
				t.Errorf("quantileOf(%q) = %q, %v, %v; want %q, %v, %v", tt.in, base, q, ok, tt.base, tt.q, tt.ok)
			}
		})
	}
}

// TestProbePoolData: the windows' data pooled for the decision: the SLO
// share over every launched request of every window (the requests that
// met the SLO, not those that completed), goodput_rps scaled
// by the windows' launches per second, a quantile over the requests' own
// values with a request that did not finish as +Inf, each with its
// counts window by window, an exact metric the windows' mean.
func TestProbePoolData(t *testing.T) {
	fin := func(ttft, e2e float64, tpot *float64) result.RequestRecord {
		return result.RequestRecord{Status: result.RequestFinished, InWindow: true, TTFTMs: ptr(ttft), E2EMs: e2e, TPOTMs: tpot}
	}
	var pp probePool
	pp.add(&result.TrafficCell{Launched: 4, GoodputShare: 0.5, MeasuredS: 2, ConcurrencyAvg: 3, Completed: 3},
		[]result.RequestRecord{fin(10, 100, ptr(5)), fin(20, 200, ptr(6)), fin(30, 300, nil),
			{Status: result.RequestCancelled, InWindow: true}})
	pp.add(&result.TrafficCell{Launched: 2, GoodputShare: 1, MeasuredS: 2, ConcurrencyAvg: 5, Completed: 2},
		[]result.RequestRecord{fin(40, 400, ptr(7)), {Status: result.RequestUnfinished, InWindow: true, TTFTMs: ptr(50)}})
	got := pp.data([]string{metric.GoodputShare, metric.GoodputRPS, metric.TTFTMsP99, metric.E2EMs, metric.TBTMs, metric.ConcurrencyAvg})
	inf := math.Inf(1)
	want := []ratesearch.Data{
		{Metric: metric.GoodputShare, Kind: ratesearch.Share, K: 4, N: 6, Windows: []ratesearch.Window{{K: 2, N: 4}, {K: 2, N: 2}}},
		{Metric: metric.GoodputRPS, Kind: ratesearch.Share, K: 4, N: 6, Scale: 1.5, Windows: []ratesearch.Window{{K: 2, N: 4}, {K: 2, N: 2}}},
		{Metric: metric.TTFTMsP99, Kind: ratesearch.Quantile, Q: 0.99, Samples: []float64{10, 20, 30, inf, 40, 50}, Windows: []ratesearch.Window{{N: 4}, {N: 2}}},
		{Metric: metric.E2EMs, Kind: ratesearch.Quantile, Q: 0.5, Samples: []float64{100, 200, 300, inf, 400, inf}, Windows: []ratesearch.Window{{N: 4}, {N: 2}}},
		{Metric: metric.TBTMs, Kind: ratesearch.Quantile, Q: 0.5, Samples: []float64{5, 6, inf, 7, inf}, Windows: []ratesearch.Window{{N: 3}, {N: 2}}},
		{Metric: metric.ConcurrencyAvg, Kind: ratesearch.Exact, Value: 4},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pooled data (-want +got):\n%s", diff)
	}
}

// TestProbePoolOutputTPS: a probe's output tokens per second are its
// windows' output tokens ÷ their measured seconds, a window in which no
// request completed (no output_tps) adding its seconds and no tokens.
func TestProbePoolOutputTPS(t *testing.T) {
	cell := func(measuredS, tps float64) *result.TrafficCell {
		c := &result.TrafficCell{MeasuredS: measuredS}
		if tps >= 0 {
			c.SetValue(metric.Must(vocab.PhaseTraffic, metric.OutputTPS), tps)
		}
		return c
	}
	tests := []struct {
		name  string
		cells []*result.TrafficCell
		want  float64
	}{
		{name: "no window", want: 0},
		{name: "one window: its own", cells: []*result.TrafficCell{cell(5, 1234.5)}, want: 1234.5},
		// (2·1,000 + 6·600) ÷ 8 = 700, not the windows' mean of 800.
		{name: "windows weighed by their seconds", cells: []*result.TrafficCell{cell(2, 1000), cell(6, 600)}, want: 700},
		// (4·900 + 4·0) ÷ 8.
		{name: "a window of no completed request", cells: []*result.TrafficCell{cell(4, 900), cell(4, -1)}, want: 450},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var pp probePool
			for _, c := range tt.cells {
				pp.add(c, nil)
			}
			if got := pp.outputTPS(); got != tt.want {
				t.Errorf("outputTPS() = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestObjectiveCell: the cell an objective is evaluated over holds the
// values given, a value of no samples at the metric's worst, and counts
// a request so that latency values read as measured.
func TestObjectiveCell(t *testing.T) {
	last := &result.TrafficCell{Status: vocab.StatusValid, GoodputShare: 0.5, TTFTMsP99: 100, Stats: map[string]float64{"ttft_ms_p95": 90}}
	c := objectiveCell(last, map[string]float64{metric.GoodputShare: 0.97, metric.TTFTMsP99: math.NaN(), "ttft_ms_p95": 80, metric.GoodputRPS: math.NaN()})
	tests := []struct {
		name   string
		metric string
		want   float64
	}{
		{name: "a share set", metric: metric.GoodputShare, want: 0.97},
		{name: "a latency of no samples is the slowest", metric: metric.TTFTMsP99, want: math.Inf(1)},
		{name: "a rate of no samples is the lowest", metric: metric.GoodputRPS, want: math.Inf(-1)},
		{name: "a statistic of the naming rule", metric: "ttft_ms_p95", want: 80},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if v, ok := c.Metric(tt.metric); !ok || v != tt.want {
				t.Errorf("%s = %v, %v; want %v", tt.metric, v, ok, tt.want)
			}
		})
	}
	if last.GoodputShare != 0.5 || last.Stats["ttft_ms_p95"] != 90 {
		t.Errorf("the last window's cell changed: %+v", last)
	}
}

// TestClientLag: only an error cell carrying warning.ClientLag is
// unmeasurable for client lag.
func TestClientLag(t *testing.T) {
	lag := warning.New(warning.ClientLag, "client lag", "p99 lag 40 ms", nil)
	tests := []struct {
		name string
		cell result.TrafficCell
		want bool
	}{
		{name: "unmeasurable with client lag", cell: result.TrafficCell{Status: vocab.StatusUnmeasurable, Reason: "the client fell behind", Warnings: []warning.Warning{lag}}, want: true},
		{name: "error without it", cell: result.TrafficCell{Status: vocab.StatusError, Reason: "HTTP 500"}},
		{name: "valid cell with the warning", cell: result.TrafficCell{Status: vocab.StatusValid, Warnings: []warning.Warning{lag}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if reason, ok := clientLag(&tt.cell); ok != tt.want || (ok && reason != tt.cell.Reason) {
				t.Errorf("clientLag = %q, %v; want %v", reason, ok, tt.want)
			}
		})
	}
}

// TestRateMonotone: a probe met with confidence above one failed with
// confidence shows the objective is not monotone; undecided probes do not.
func TestRateMonotone(t *testing.T) {
	p := func(rate float64, d string) result.SearchProbe { return result.SearchProbe{Rate: rate, Decision: d} }
	tests := []struct {
		name   string
		probes []result.SearchProbe
		want   bool
	}{
		{name: "monotone", probes: []result.SearchProbe{p(1, "met"), p(16, "failed"), p(4, "met"), p(8, "failed")}, want: true},
		{name: "met above failed", probes: []result.SearchProbe{p(1, "met"), p(16, "met"), p(4, "failed")}, want: false},
		{name: "undecided above failed", probes: []result.SearchProbe{p(1, "met"), p(4, "failed"), p(8, "undecided")}, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := rateMonotone(tt.probes); got != tt.want {
				t.Errorf("rateMonotone = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestKeptRecordsDropProbes: a resumed run keeps the traffic block's own
// cells and drops every search probe's, a rate probe's included (a search
// is run again as a whole), even at a rate the block measures too.
func TestKeptRecordsDropProbes(t *testing.T) {
	own := result.TrafficCell{Traffic: "chat", Context: 1024, Rate: 4, Status: vocab.StatusValid}
	probe := own
	probe.Search = "capacity"
	recs := []result.CellRecord{
		{Server: "qwen", Phase: vocab.PhaseTraffic, Traffic: &own},
		{Server: "qwen", Phase: vocab.PhaseTraffic, Traffic: &probe},
		{Server: "qwen", Phase: vocab.PhaseDecode, Decode: &result.DecodeCell{Search: "max_users", Context: 1024, Concurrency: 4, Status: vocab.StatusValid}},
	}
	kept := keptRecords(recs, "qwen")
	if len(kept) != 1 || kept[0].Traffic == nil || kept[0].Traffic.Search != "" {
		t.Errorf("kept %+v, want the block's own cell only", kept)
	}
}

// TestProbeJudgement: a probe's judgement keeps its rule and intervals;
// one undecided at its last window keeps about how many windows would
// decide it, with the rule saying whether max_windows allows them or
// even many would not (its values at the objective's edge). The report's
// TestProbeReason words them.
func TestProbeJudgement(t *testing.T) {
	iv := []ratesearch.Interval{{Metric: metric.GoodputShare, Point: 0.9, Lower: 0.5, Upper: 1, DesignEffect: 12.5},
		{Metric: "ttft_ms_p99", Point: math.Inf(1), Lower: 310, Upper: math.Inf(1), DesignEffect: math.Inf(1)}}
	ivs := []result.ProbeInterval{{Metric: metric.GoodputShare, Point: 0.9, Lower: 0.5, Upper: 1, DesignEffect: 12.5},
		{Metric: "ttft_ms_p99", Point: result.Figure(math.Inf(1)), Lower: 310, Upper: result.Figure(math.Inf(1)), DesignEffect: result.Figure(math.Inf(1))}}
	undecided := ratesearch.Probe{Decision: ratesearch.Undecided, Point: ratesearch.Met, Intervals: iv, Windows: 4}
	with := func(p ratesearch.Probe, toDecide int) ratesearch.Probe { p.ToDecide = toDecide; return p }
	tests := []struct {
		name  string
		probe ratesearch.Probe
		want  result.ProbeJudgement
	}{
		{name: "met", probe: ratesearch.Probe{Decision: ratesearch.Met, Intervals: iv, Windows: 2},
			want: result.ProbeJudgement{Rule: result.ProbeMet, Intervals: ivs}},
		{name: "failed", probe: ratesearch.Probe{Decision: ratesearch.Failed, Point: ratesearch.Failed, Intervals: iv, Windows: 3},
			want: result.ProbeJudgement{Rule: result.ProbeFailed, Intervals: ivs}},
		{name: "saturated", probe: ratesearch.Probe{Decision: ratesearch.Failed, Point: ratesearch.Failed, Windows: 1, Saturated: true, Reason: "past capacity"},
			want: result.ProbeJudgement{Rule: result.ProbeSaturated, Intervals: []result.ProbeInterval{}}},
		{name: "undecided, before its last window", probe: undecided,
			want: result.ProbeJudgement{Rule: result.ProbeUndecided, Point: result.DecisionMet, Intervals: ivs}},
		{name: "undecided at its last window", probe: with(undecided, 234),
			want: result.ProbeJudgement{Rule: result.ProbeUndecidedWindows, Point: result.DecisionMet, Intervals: ivs, ToDecide: 234}},
		{name: "undecided beyond max_windows", probe: with(undecided, 3400),
			want: result.ProbeJudgement{Rule: result.ProbeUndecidedBeyond, Point: result.DecisionMet, Intervals: ivs, ToDecide: 3400, MaxWindowsAllowed: 1000}},
		{name: "undecided on the edge", probe: with(undecided, ratesearch.MaxToDecide),
			want: result.ProbeJudgement{Rule: result.ProbeUndecidedEdge, Point: result.DecisionMet, Intervals: ivs, ToDecide: ratesearch.MaxToDecide}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(&tt.want, probeJudgement(tt.probe)); diff != "" {
				t.Errorf("probeJudgement (-want +got):\n%s", diff)
			}
		})
	}
}
