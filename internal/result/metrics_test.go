package result

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/vocab"
)

// TestMetricFieldsMatchJSON sets every metric of the table through its
// accessor to a distinct value and reads it back from the cell's JSON under
// the metric's name: the table's name, field and results.json key agree.
func TestMetricFieldsMatchJSON(t *testing.T) {
	var p PrefillCell
	var d DecodeCell
	var tc TrafficCell
	want := map[vocab.Phase]map[string]float64{vocab.PhasePrefill: {}, vocab.PhaseDecode: {}, vocab.PhaseTraffic: {}}
	for i, m := range metric.Table {
		v := float64(100 + i)
		switch m.Phase {
		case vocab.PhasePrefill:
			p.SetValue(m, v)
		case vocab.PhaseDecode:
			d.SetValue(m, v)
		case vocab.PhaseTraffic:
			tc.SetValue(m, v)
		}
		want[m.Phase][m.Name] = v
	}
	for phase, cell := range map[vocab.Phase]any{vocab.PhasePrefill: &p, vocab.PhaseDecode: &d, vocab.PhaseTraffic: &tc} {
		b, err := json.Marshal(cell)
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		stats, _ := got["stats"].(map[string]any)
		for name, v := range want[phase] {
			if _, top := got[name]; !top && stats[name] == v {
				continue // a statistic of the naming rule lives in "stats" (docs/method.md#metric-names)
			}
			if got[name] != v {
				t.Errorf("%s %s: JSON key holds %v, want %v (the table's field is not the key's field)", phase, name, got[name], v)
			}
		}
	}
	for _, m := range metric.Table {
		var got float64
		var ok bool
		switch m.Phase {
		case vocab.PhasePrefill:
			got, ok = p.Value(m)
		case vocab.PhaseTraffic:
			got, ok = tc.Value(m)
		default:
			got, ok = d.Value(m)
		}
		if !ok || got != want[m.Phase][m.Name] {
			t.Errorf("%s %s: read back %v (ok=%v), want %v", m.Phase, m.Name, got, ok, want[m.Phase][m.Name])
		}
	}
}

// TestMetricStorage: every metric of the table has exactly one cell field,
// of its phase, stored as the table says (Integer, Optional), and every
// field is of a metric of the table.
func TestMetricStorage(t *testing.T) {
	for _, m := range metric.Table {
		key := fmt.Sprintf("%s/%s", m.Phase, m.Name)
		f, ok := fields[fieldKey{m.Phase, m.Name}]
		if !ok {
			t.Errorf("%s has no cell field", key)
			continue
		}
		n := 0
		for _, set := range []bool{f.prefill != nil, f.decode != nil, f.traffic != nil} {
			if set {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%s: needs exactly one cell field for its phase", key)
		}
		if (f.traffic != nil) != (m.Phase == vocab.PhaseTraffic) {
			t.Errorf("%s: field is of the wrong phase", key)
		}
		if (f.prefill != nil) != (m.Phase == vocab.PhasePrefill) {
			t.Errorf("%s: field is of the wrong phase", key)
		}
		if f.integer != m.Integer() || f.optional != m.Optional() {
			t.Errorf("%s: stored with integer=%v optional=%v, the table says %v, %v", key, f.integer, f.optional, m.Integer(), m.Optional())
		}
	}
	for k := range fields {
		if _, ok := metric.Lookup(k.phase, k.name); !ok {
			t.Errorf("%s/%s has a cell field but is not in the table", k.phase, k.name)
		}
	}
}

func TestCellMetric(t *testing.T) {
	v := 0.75
	d := DecodeCell{TotalTPS: 6018.4, Completed: 12, OutputTokens: 12247, SpeculativeAcceptRate: &v}
	p := PrefillCell{TPS: 46700, TTFTMs: 175}
	tests := []struct {
		name   string
		get    func(string) (float64, bool)
		metric string
		want   float64
		wantOK bool
	}{
		{name: "decode float", get: d.Metric, metric: "total_tps", want: 6018.4, wantOK: true},
		{name: "decode int", get: d.Metric, metric: "completed", want: 12, wantOK: true},
		{name: "decode int64", get: d.Metric, metric: "output_tokens", want: 12247, wantOK: true},
		{name: "optional present", get: d.Metric, metric: "spec_accept_rate", want: 0.75, wantOK: true},
		{name: "optional absent", get: d.Metric, metric: "server_total_tps", wantOK: false},
		{name: "unknown decode", get: d.Metric, metric: "tps", wantOK: false},
		{name: "prefill", get: p.Metric, metric: "ttft_ms", want: 175, wantOK: true},
		{name: "unknown prefill", get: p.Metric, metric: "total_tps", wantOK: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := tt.get(tt.metric)
			if ok != tt.wantOK || got != tt.want {
				t.Errorf("Metric(%q) = %v, %v; want %v, %v", tt.metric, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestSetAndClear(t *testing.T) {
	var d DecodeCell
	completed, _ := metric.Lookup(vocab.PhaseDecode, "completed")
	d.SetValue(completed, 11.5)
	if d.Completed != 12 {
		t.Errorf("completed set to 11.5 stored %d, want it rounded to 12", d.Completed)
	}
	if !completed.Integer() || completed.Optional() {
		t.Errorf("completed: Integer=%v Optional=%v, want true, false", completed.Integer(), completed.Optional())
	}
	srv, _ := metric.Lookup(vocab.PhaseDecode, "server_total_tps")
	d.SetValue(srv, 5)
	if d.ServerTotalTPS == nil || *d.ServerTotalTPS != 5 {
		t.Fatalf("server_total_tps not set: %v", d.ServerTotalTPS)
	}
	d.ClearValue(srv)
	if d.ServerTotalTPS != nil {
		t.Errorf("server_total_tps still set after ClearValue")
	}
	// A prefill metric neither reads nor writes a decode cell.
	tps, _ := metric.Lookup(vocab.PhasePrefill, "tps")
	d.SetValue(tps, 1)
	if _, ok := d.Value(tps); ok {
		t.Error("a prefill metric read a decode cell")
	}
}
