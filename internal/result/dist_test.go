package result

import (
	"testing"

	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/vocab"
)

// TestNamingRule: every statistic of a distribution resolves by the rule
// (docs/method.md#metric-names), reads and writes where its value lives,
// and names the rule does not make, or that are not of a distribution,
// stay unknown.
func TestNamingRule(t *testing.T) {
	tests := []struct {
		name         string
		phase        vocab.Phase
		metric       string
		ok           bool
		percentileOf string
		unit         string
		integer      bool
	}{
		{name: "p95 of a field-backed distribution", phase: vocab.PhaseDecode, metric: "ttft_ms_p95", ok: true, percentileOf: "ttft_ms", unit: "ms"},
		{name: "p99.9 spelled with _", phase: vocab.PhaseDecode, metric: "ttft_ms_p99_9", ok: true, percentileOf: "ttft_ms", unit: "ms"},
		{name: "mean", phase: vocab.PhaseDecode, metric: "tbt_ms_mean", ok: true, unit: "ms"},
		{name: "count is a whole number of samples", phase: vocab.PhaseDecode, metric: "ttft_ms_count", ok: true, unit: "samples", integer: true},
		{name: "percentile of a new distribution", phase: vocab.PhaseDecode, metric: "itl_ms_p95", ok: true, percentileOf: "itl_ms", unit: "ms"},
		{name: "traffic tpot", phase: vocab.PhaseTraffic, metric: "tpot_ms_p99", ok: true, percentileOf: "tpot_ms", unit: "ms"},
		{name: "the table's p90 is the field", phase: vocab.PhaseDecode, metric: "ttft_ms_p90", ok: true, percentileOf: "ttft_ms", unit: "ms"},
		{name: "the table's e2e_ms_mean", phase: vocab.PhaseTraffic, metric: "e2e_ms_mean", ok: true, unit: "ms"},
		{name: "p50 is the median", phase: vocab.PhaseDecode, metric: "ttft_ms_p50", ok: true, unit: "ms"},
		{name: "not a distribution", phase: vocab.PhaseDecode, metric: "total_tps_p95", ok: false},
		{name: "percentile 100 is not one", phase: vocab.PhaseDecode, metric: "ttft_ms_p100", ok: false},
		{name: "p0 is not one", phase: vocab.PhaseDecode, metric: "ttft_ms_p0", ok: false},
		{name: "leading zero is not the spelling", phase: vocab.PhaseDecode, metric: "ttft_ms_p095", ok: false},
		{name: "trailing underscore", phase: vocab.PhaseDecode, metric: "ttft_ms_p99_", ok: false},
		{name: "unknown base", phase: vocab.PhaseDecode, metric: "ttft_p99", ok: false},
		{name: "prefill has no distributions", phase: vocab.PhasePrefill, metric: "ttft_ms_p95", ok: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, ok := metric.Lookup(tt.phase, tt.metric)
			if ok != tt.ok {
				t.Fatalf("metric.Lookup(%s, %q) ok = %v, want %v", tt.phase, tt.metric, ok, tt.ok)
			}
			if !ok {
				return
			}
			if m.Name != tt.metric || m.PercentileOf != tt.percentileOf || m.Unit != tt.unit || m.Integer() != tt.integer {
				t.Errorf("got name %q, percentile of %q, unit %q, integer %v; want %q, %q, %q, %v",
					m.Name, m.PercentileOf, m.Unit, m.Integer(), tt.metric, tt.percentileOf, tt.unit, tt.integer)
			}
			var d DecodeCell
			c := TrafficCell{Launched: 1, Completed: 1} // a latency of no completed request is unmeasured
			if tt.phase == vocab.PhaseDecode {
				d.SetValue(m, 12)
				if v, ok := d.Value(m); !ok || v != 12 {
					t.Errorf("read back %v, %v", v, ok)
				}
			} else {
				c.SetValue(m, 12)
				if v, ok := c.Value(m); !ok || v != 12 {
					t.Errorf("read back %v, %v", v, ok)
				}
			}
		})
	}
}
