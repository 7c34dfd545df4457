package result

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
)

// TestMetricFieldsMatchJSON sets every metric of the table through its
// accessor to a distinct value and reads it back from the cell's JSON under
// the metric's name: the table's name, field and results.json key agree.
func TestMetricFieldsMatchJSON(t *testing.T) {
	var p PrefillCell
	var d DecodeCell
	var tc TrafficCell
	want := map[Phase]map[string]float64{PhasePrefill: {}, PhaseDecode: {}, PhaseTraffic: {}}
	for i, m := range Metrics {
		v := float64(100 + i)
		switch m.Phase {
		case PhasePrefill:
			m.SetPrefill(&p, v)
		case PhaseDecode:
			m.SetDecode(&d, v)
		case PhaseTraffic:
			m.SetTraffic(&tc, v)
		}
		want[m.Phase][m.Name] = v
	}
	for phase, cell := range map[Phase]any{PhasePrefill: &p, PhaseDecode: &d, PhaseTraffic: &tc} {
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
	for _, m := range Metrics {
		var got float64
		var ok bool
		switch m.Phase {
		case PhasePrefill:
			got, ok = m.OfPrefill(&p)
		case PhaseTraffic:
			got, ok = m.OfTraffic(&tc)
		default:
			got, ok = m.OfDecode(&d)
		}
		if !ok || got != want[m.Phase][m.Name] {
			t.Errorf("%s %s: read back %v (ok=%v), want %v", m.Phase, m.Name, got, ok, want[m.Phase][m.Name])
		}
	}
}

func TestMetricTableWellFormed(t *testing.T) {
	seen := map[string]bool{}
	for _, m := range Metrics {
		key := fmt.Sprintf("%s/%s", m.Phase, m.Name)
		if seen[key] {
			t.Errorf("%s is in the table twice", key)
		}
		seen[key] = true
		if m.Doc == "" || m.Label == "" {
			t.Errorf("%s has no doc or no label", key)
		}
		fields := 0
		for _, set := range []bool{m.field.prefill != nil, m.field.decode != nil, m.field.traffic != nil} {
			if set {
				fields++
			}
		}
		if fields != 1 {
			t.Errorf("%s: needs exactly one cell field for its phase", key)
		}
		if (m.field.traffic != nil) != (m.Phase == PhaseTraffic) {
			t.Errorf("%s: field is of the wrong phase", key)
		}
		if (m.field.prefill != nil) != (m.Phase == PhasePrefill) {
			t.Errorf("%s: field is of the wrong phase", key)
		}
		if m.PercentileOf != "" {
			if _, ok := LookupMetric(m.Phase, m.PercentileOf); !ok {
				t.Errorf("%s is a percentile of unknown metric %q", key, m.PercentileOf)
			}
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
	completed, _ := LookupMetric(PhaseDecode, "completed")
	completed.SetDecode(&d, 11.5)
	if d.Completed != 12 {
		t.Errorf("completed set to 11.5 stored %d, want it rounded to 12", d.Completed)
	}
	if !completed.Integer() || completed.Optional() {
		t.Errorf("completed: Integer=%v Optional=%v, want true, false", completed.Integer(), completed.Optional())
	}
	srv, _ := LookupMetric(PhaseDecode, "server_total_tps")
	srv.SetDecode(&d, 5)
	if d.ServerTotalTPS == nil || *d.ServerTotalTPS != 5 {
		t.Fatalf("server_total_tps not set: %v", d.ServerTotalTPS)
	}
	srv.ClearDecode(&d)
	if d.ServerTotalTPS != nil {
		t.Errorf("server_total_tps still set after ClearDecode")
	}
	// A prefill metric neither reads nor writes a decode cell.
	tps, _ := LookupMetric(PhasePrefill, "tps")
	tps.SetDecode(&d, 1)
	if _, ok := tps.OfDecode(&d); ok {
		t.Error("a prefill metric read a decode cell")
	}
}

func TestMedian(t *testing.T) {
	tests := []struct {
		name string
		xs   []float64
		want float64
	}{
		{name: "one", xs: []float64{3}, want: 3},
		{name: "odd, unsorted", xs: []float64{9, 1, 5}, want: 5},
		{name: "even averages the middle two", xs: []float64{4, 1, 10, 2}, want: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := append([]float64(nil), tt.xs...)
			if got := Median.Of(tt.xs); got != tt.want {
				t.Errorf("Median.Of(%v) = %v, want %v", tt.xs, got, tt.want)
			}
			for i := range in {
				if in[i] != tt.xs[i] {
					t.Fatalf("Median.Of reordered its input: %v", tt.xs)
				}
			}
		})
	}
	if !math.IsNaN(Median.Of(nil)) {
		t.Error("median of nothing is not NaN")
	}
}

func TestMustMetric(t *testing.T) {
	if m := MustMetric(PhaseDecode, "tbt_ms"); m.Name != "tbt_ms" || m.Phase != PhaseDecode {
		t.Errorf("MustMetric(decode, tbt_ms) = %s/%s", m.Phase, m.Name)
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), `no prefill metric "total_tps"`) {
			t.Errorf("MustMetric of a decode-only name in prefill: recovered %v, want a panic naming it", r)
		}
	}()
	MustMetric(PhasePrefill, "total_tps")
}
