package metric

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/slogate/slogate/internal/vocab"
)

func TestTableWellFormed(t *testing.T) {
	seen := map[string]bool{}
	for _, m := range Table {
		key := fmt.Sprintf("%s/%s", m.Phase, m.Name)
		if seen[key] {
			t.Errorf("%s is in the table twice", key)
		}
		seen[key] = true
		if m.Doc == "" || m.Label == "" {
			t.Errorf("%s has no doc or no label", key)
		}
		if m.PercentileOf != "" {
			if _, ok := Lookup(m.Phase, m.PercentileOf); !ok {
				t.Errorf("%s is a percentile of unknown metric %q", key, m.PercentileOf)
			}
		}
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

func TestMust(t *testing.T) {
	if m := Must(vocab.PhaseDecode, "tbt_ms"); m.Name != "tbt_ms" || m.Phase != vocab.PhaseDecode {
		t.Errorf("Must(decode, tbt_ms) = %s/%s", m.Phase, m.Name)
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), `no prefill metric "total_tps"`) {
			t.Errorf("Must of a decode-only name in prefill: recovered %v, want a panic naming it", r)
		}
	}()
	Must(vocab.PhasePrefill, "total_tps")
}

// TestStats: the percentiles asked for add their statistics, not the
// ones the table has as fields; every distribution gets a mean and a count.
func TestStats(t *testing.T) {
	names := map[string]bool{}
	for _, m := range Stats(vocab.PhaseDecode, []float64{50, 90, 95, 99, 99.9}) {
		names[m.Name] = true
	}
	for _, want := range []string{"ttft_ms_p95", "ttft_ms_p99_9", "ttft_ms_mean", "ttft_ms_count", "tbt_ms_p95",
		"itl_ms_p90", "itl_ms_p99_9", "itl_ms_count", "tpot_ms_mean"} {
		if !names[want] {
			t.Errorf("Stats lacks %s", want)
		}
	}
	for _, not := range []string{"ttft_ms_p90", "ttft_ms_p99", "ttft_ms", "total_tps_mean"} {
		if names[not] {
			t.Errorf("Stats has %s (a field of the table, or not a distribution)", not)
		}
	}
	for _, m := range Stats(vocab.PhaseTraffic, DefaultPercentiles) {
		if m.Name == "e2e_ms_mean" {
			t.Error("e2e_ms_mean is a field of the table: Stats must not add it again")
		}
	}
	if got := PercentileName("ttft_ms", 99.9); got != "ttft_ms_p99_9" {
		t.Errorf("PercentileName(99.9) = %q", got)
	}
}

func TestTurnMetrics(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"ttft_ms_turn1", true}, {"ttft_ms_turn12", true}, {"ttft_ms_turn0", false},
		{"ttft_ms_turn01", false}, {"ttft_ms_turn", false}, {"ttft_ms_turnx", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, ok := Lookup(vocab.PhaseTraffic, tt.name)
			if ok != tt.ok || ok && (m.Name != tt.name || m.Unit != "ms" || !m.Optional()) {
				t.Errorf("Lookup(traffic, %q) = %+v, %v; want ok %v", tt.name, m, ok, tt.ok)
			}
			if _, ok := Lookup(vocab.PhaseDecode, tt.name); ok {
				t.Errorf("%q is a decode metric", tt.name)
			}
		})
	}
	if ms := TurnMetrics(); len(ms) != MaxTurnMetrics || ms[2].Name != "ttft_ms_turn3" {
		t.Errorf("TurnMetrics = %d metrics, third %q", len(ms), ms[2].Name)
	}
}

// TestWithTails: a median with a tail is followed by its p90 and p99 rows,
// named, labelled and defined by the naming rule, in its phase, unit,
// precision and direction; a row without a tail stands alone.
func TestWithTails(t *testing.T) {
	median := Metric{Name: "x_ms", Phase: vocab.PhaseTraffic, Label: "X", Unit: "ms", Precision: 1,
		HigherIsBetter: true, Samples: "requests", Doc: "median x", tail: "x of a request"}
	plain := Metric{Name: "y", Phase: vocab.PhaseTraffic, Label: "Y", Unit: "s", Doc: "y"}
	tests := []struct {
		name string
		rows []Metric
		want []Metric
	}{
		{name: "no tail", rows: []Metric{plain}, want: []Metric{plain}},
		{name: "a median's tail, then a plain row", rows: []Metric{median, plain}, want: []Metric{
			{Name: "x_ms", Phase: vocab.PhaseTraffic, Label: "X", Unit: "ms", Precision: 1,
				HigherIsBetter: true, Samples: "requests", Doc: "median x"},
			{Name: "x_ms_p90", Phase: vocab.PhaseTraffic, Label: "X p90", Unit: "ms", Precision: 1,
				HigherIsBetter: true, PercentileOf: "x_ms", Doc: "90th percentile x of a request"},
			{Name: "x_ms_p99", Phase: vocab.PhaseTraffic, Label: "X p99", Unit: "ms", Precision: 1,
				HigherIsBetter: true, PercentileOf: "x_ms", Doc: "99th percentile x of a request"},
			plain,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := withTails(tt.rows); !slices.Equal(got, tt.want) {
				t.Errorf("withTails:\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
	for _, m := range Table {
		if m.tail != "" {
			t.Errorf("Table's %s/%s keeps its tail %q: withTails clears it", m.Phase, m.Name, m.tail)
		}
	}
}
