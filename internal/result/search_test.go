package result

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/slogate/slogate/internal/vocab"
)

// TestSearchJSON round-trips both kinds of search and checks which keys
// each writes: a rate search writes no concurrency search's context,
// range, concurrency or decode cell, and a concurrency search's JSON keeps
// its keys (concurrency 0 included, when none was found).
func TestSearchJSON(t *testing.T) {
	tests := []struct {
		name    string
		in      Search
		keys    []string // top-level keys that must be present
		absent  []string // top-level keys that must be absent
		probeIn []string // keys of the first probe that must be present
		probeNo []string // keys of the first probe that must be absent
	}{
		{
			name: "concurrency search",
			in: Search{Name: "max_users", Context: 8192, Range: [2]int{1, 64}, Objective: "cell.per_request_tps >= 50",
				Concurrency: 16, Found: true, Monotone: true, ConfirmedBy: 17,
				Probes: []SearchProbe{{Concurrency: 16, Passed: true,
					Cell: DecodeCell{Matrix: "search/max_users", Context: 8192, Concurrency: 16, Status: vocab.StatusValid}}}},
			keys:    []string{"name", "context", "range", "objective", "concurrency", "found", "monotone", "probes"},
			absent:  []string{"traffic", "rate_range", "rate", "rate_lower", "rate_upper"},
			probeIn: []string{"concurrency", "passed", "cell"},
			probeNo: []string{"rate", "traffic_cell", "decision", "windows"},
		},
		{
			name: "concurrency search without an answer keeps concurrency 0",
			in: Search{Name: "max_users", Context: 8192, Range: [2]int{4, 64}, Objective: "cell.per_request_tps >= 50", Monotone: true,
				Probes: []SearchProbe{{Concurrency: 4, Cell: DecodeCell{Matrix: "search/max_users", Context: 8192, Concurrency: 4, Status: vocab.StatusValid}}}},
			keys:    []string{"concurrency", "found"},
			probeIn: []string{"concurrency", "passed", "cell"},
		},
		{
			name: "rate search",
			in: Search{Name: "capacity", Traffic: "chat", RateRange: [2]float64{0.5, 20}, Objective: "cell.goodput_share >= 0.95",
				Rate: 6.25, RateLower: 5.9, RateUpper: 6.6, Precision: 0.025, Confidence: 0.95, ClientLimit: 18, Found: true, Monotone: true,
				Probes: []SearchProbe{{Rate: 6.25, Passed: true, Decision: DecisionMet, Windows: 2,
					Traffic: &TrafficCell{Traffic: "search/capacity", Rate: 6.25, Arrivals: "poisson", Seed: 1, Status: vocab.StatusValid, GoodputShare: 0.99},
					Judgement: &ProbeJudgement{Rule: ProbeMet, Intervals: []ProbeInterval{
						{Metric: "goodput_share", Point: 0.99, Lower: 0.97, Upper: 1, DesignEffect: 2.5},
						{Metric: "ttft_ms_p99", Point: 310, Lower: 280, Upper: Figure(math.Inf(1)), DesignEffect: Figure(math.Inf(1))}}}}},
				Check: &SearchCheck{Rate: 6.25, Windows: []CheckWindow{}, Stop: &CheckStop{Rule: CheckWindowUnmeasured, Seed: 1, CellReason: "HTTP 500"}}},
			keys:    []string{"name", "traffic", "rate_range", "rate", "rate_lower", "rate_upper", "precision", "confidence", "client_limit", "probes", "check"},
			absent:  []string{"context", "range", "concurrency"},
			probeIn: []string{"rate", "passed", "traffic_cell", "decision", "windows", "judgement"},
			probeNo: []string{"cell", "concurrency", "reason"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(&tt.in)
			if err != nil {
				t.Fatal(err)
			}
			var got Search
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.in, got); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
			var top struct {
				Probes []map[string]json.RawMessage `json:"probes"`
			}
			var keys map[string]json.RawMessage
			if err := json.Unmarshal(b, &keys); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &top); err != nil {
				t.Fatal(err)
			}
			checkKeys(t, "search", keys, tt.keys, tt.absent)
			checkKeys(t, "probe", top.Probes[0], tt.probeIn, tt.probeNo)
			if got.IsRate() != (tt.in.Traffic != "") {
				t.Errorf("IsRate() = %v", got.IsRate())
			}
		})
	}
}

// TestFigureJSON: a figure is a JSON number when finite and a string
// when not, and reads back as it was (NaN included).
func TestFigureJSON(t *testing.T) {
	tests := []struct {
		name string
		in   Figure
		json string
	}{
		{name: "finite", in: 0.9913, json: `0.9913`},
		{name: "large", in: 1e21, json: `1e+21`},
		{name: "+Inf", in: Figure(math.Inf(1)), json: `"+Inf"`},
		{name: "-Inf", in: Figure(math.Inf(-1)), json: `"-Inf"`},
		{name: "NaN", in: Figure(math.NaN()), json: `"NaN"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.in)
			if err != nil || string(b) != tt.json {
				t.Fatalf("Marshal = %s, %v; want %s", b, err, tt.json)
			}
			var got Figure
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			if math.Float64bits(float64(got)) != math.Float64bits(float64(tt.in)) && !(math.IsNaN(float64(got)) && math.IsNaN(float64(tt.in))) {
				t.Errorf("read back %v, want %v", got, tt.in)
			}
		})
	}
	var f Figure
	if err := json.Unmarshal([]byte(`"many"`), &f); err == nil {
		t.Errorf("Unmarshal(\"many\") = %v, want an error", f)
	}
}

func checkKeys(t *testing.T, what string, m map[string]json.RawMessage, present, absent []string) {
	t.Helper()
	for _, k := range present {
		if _, ok := m[k]; !ok {
			t.Errorf("%s: key %q missing", what, k)
		}
	}
	for _, k := range absent {
		if _, ok := m[k]; ok {
			t.Errorf("%s: key %q present", what, k)
		}
	}
}

func TestRateProbe(t *testing.T) {
	s := Search{Traffic: "chat", Probes: []SearchProbe{
		{Rate: 1, Traffic: &TrafficCell{Rate: 1}},
		{Rate: 2, Traffic: &TrafficCell{Rate: 2}},
	}}
	tests := []struct {
		name string
		rate float64
		ok   bool
	}{
		{name: "measured", rate: 2, ok: true},
		{name: "not measured", rate: 3, ok: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, ok := s.RateProbe(tt.rate)
			if ok != tt.ok || (ok && p.Rate != tt.rate) {
				t.Errorf("RateProbe(%v) = %v, %v", tt.rate, p, ok)
			}
		})
	}
}

// TestCapacityComparisonJSON round-trips a capacity comparison and checks
// its keys: both answers keep their bounds even when 0 (not bounded).
func TestCapacityComparisonJSON(t *testing.T) {
	in := Comparison{Baseline: "a", Tolerance: 0.05, Alpha: 0.05, Outcome: vocab.Fail, Rows: []ComparisonRow{},
		Capacity: []CapacityComparison{{Search: "capacity", Tolerance: 0.05, Decision: "regressed", Outcome: vocab.Fail, Reason: "capacity lost",
			Baseline: CapacityAnswer{Found: true, Rate: 10, Lower: 9.6, Upper: 10.4, Precision: 0.025},
			Now:      CapacityAnswer{Found: true, Rate: 8, Lower: 7.7, Precision: 0.025, ClientLimit: 12}}}}
	b, err := json.Marshal(&in)
	if err != nil {
		t.Fatal(err)
	}
	var got Comparison
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(in, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	var doc struct {
		Capacity []struct {
			Now map[string]any `json:"now"`
		} `json:"capacity"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"found", "rate", "rate_lower", "rate_upper", "precision", "client_limit"} {
		if _, ok := doc.Capacity[0].Now[k]; !ok {
			t.Errorf("now has no %q: %v", k, doc.Capacity[0].Now)
		}
	}
}
