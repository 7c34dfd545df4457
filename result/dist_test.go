package result

import (
	"testing"
)

// TestNamingRule: every statistic of a distribution resolves by the rule
// (docs/method.md#metric-names), reads and writes where its value lives,
// and names the rule does not make, or that are not of a distribution,
// stay unknown.
func TestNamingRule(t *testing.T) {
	tests := []struct {
		name         string
		phase        Phase
		metric       string
		ok           bool
		percentileOf string
		unit         string
		integer      bool
	}{
		{name: "p95 of a field-backed distribution", phase: PhaseDecode, metric: "ttft_ms_p95", ok: true, percentileOf: "ttft_ms", unit: "ms"},
		{name: "p99.9 spelled with _", phase: PhaseDecode, metric: "ttft_ms_p99_9", ok: true, percentileOf: "ttft_ms", unit: "ms"},
		{name: "mean", phase: PhaseDecode, metric: "tbt_ms_mean", ok: true, unit: "ms"},
		{name: "count is a whole number of samples", phase: PhaseDecode, metric: "ttft_ms_count", ok: true, unit: "samples", integer: true},
		{name: "percentile of a new distribution", phase: PhaseDecode, metric: "itl_ms_p95", ok: true, percentileOf: "itl_ms", unit: "ms"},
		{name: "traffic tpot", phase: PhaseTraffic, metric: "tpot_ms_p99", ok: true, percentileOf: "tpot_ms", unit: "ms"},
		{name: "the table's p90 is the field", phase: PhaseDecode, metric: "ttft_ms_p90", ok: true, percentileOf: "ttft_ms", unit: "ms"},
		{name: "the table's e2e_ms_mean", phase: PhaseTraffic, metric: "e2e_ms_mean", ok: true, unit: "ms"},
		{name: "p50 is the median", phase: PhaseDecode, metric: "ttft_ms_p50", ok: true, unit: "ms"},
		{name: "not a distribution", phase: PhaseDecode, metric: "total_tps_p95", ok: false},
		{name: "percentile 100 is not one", phase: PhaseDecode, metric: "ttft_ms_p100", ok: false},
		{name: "p0 is not one", phase: PhaseDecode, metric: "ttft_ms_p0", ok: false},
		{name: "leading zero is not the spelling", phase: PhaseDecode, metric: "ttft_ms_p095", ok: false},
		{name: "trailing underscore", phase: PhaseDecode, metric: "ttft_ms_p99_", ok: false},
		{name: "unknown base", phase: PhaseDecode, metric: "ttft_p99", ok: false},
		{name: "prefill has no distributions", phase: PhasePrefill, metric: "ttft_ms_p95", ok: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, ok := LookupMetric(tt.phase, tt.metric)
			if ok != tt.ok {
				t.Fatalf("LookupMetric(%s, %q) ok = %v, want %v", tt.phase, tt.metric, ok, tt.ok)
			}
			if !ok {
				return
			}
			if m.Name != tt.metric || m.PercentileOf != tt.percentileOf || m.Unit != tt.unit || m.Integer() != tt.integer {
				t.Errorf("got name %q, percentile of %q, unit %q, integer %v; want %q, %q, %q, %v",
					m.Name, m.PercentileOf, m.Unit, m.Integer(), tt.metric, tt.percentileOf, tt.unit, tt.integer)
			}
			var d DecodeCell
			var c TrafficCell
			if tt.phase == PhaseDecode {
				m.SetDecode(&d, 12)
				if v, ok := m.OfDecode(&d); !ok || v != 12 {
					t.Errorf("read back %v, %v", v, ok)
				}
			} else {
				m.SetTraffic(&c, 12)
				if v, ok := m.OfTraffic(&c); !ok || v != 12 {
					t.Errorf("read back %v, %v", v, ok)
				}
			}
		})
	}
}

// TestStatMetrics: the percentiles asked for add their statistics, not the
// ones the table has as fields; every distribution gets a mean and a count.
func TestStatMetrics(t *testing.T) {
	names := map[string]bool{}
	for _, m := range StatMetrics(PhaseDecode, []float64{50, 90, 95, 99, 99.9}) {
		names[m.Name] = true
	}
	for _, want := range []string{"ttft_ms_p95", "ttft_ms_p99_9", "ttft_ms_mean", "ttft_ms_count", "tbt_ms_p95",
		"itl_ms_p90", "itl_ms_p99_9", "itl_ms_count", "tpot_ms_mean"} {
		if !names[want] {
			t.Errorf("StatMetrics lacks %s", want)
		}
	}
	for _, not := range []string{"ttft_ms_p90", "ttft_ms_p99", "ttft_ms", "total_tps_mean"} {
		if names[not] {
			t.Errorf("StatMetrics has %s (a field of the table, or not a distribution)", not)
		}
	}
	for _, m := range StatMetrics(PhaseTraffic, DefaultPercentiles) {
		if m.Name == "e2e_ms_mean" {
			t.Error("e2e_ms_mean is a field of the table: StatMetrics must not add it again")
		}
	}
	if got := PercentileName("ttft_ms", 99.9); got != "ttft_ms_p99_9" {
		t.Errorf("PercentileName(99.9) = %q", got)
	}
}
