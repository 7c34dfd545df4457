package views

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/slogate/slogate/internal/compare"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// capacityRuns are two runs with five rate searches: one that lost a
// third of its capacity, one unchanged, one too close to call, one
// whose candidate met its objective at no rate, and one decided by its
// paired check.
func capacityRuns() (a, b *result.Results) {
	s := func(name string, rate, lower, upper float64) result.Search {
		return result.Search{Name: name, Traffic: "chat", RateRange: [2]float64{1, 32}, Objective: "cell.goodput_share >= 0.95",
			Found: rate > 0, Rate: rate, RateLower: lower, RateUpper: upper, Precision: 0.025, Confidence: 0.95}
	}
	a = &result.Results{Server: result.Server{Name: "srv"}, Search: []result.Search{s("lost", 10, 9.6, 10.4), s("same", 10, 9.6, 10.4), s("close", 10, 9.6, 10.4), s("none", 10, 9.6, 10.4)}}
	none := s("none", 0, 0, 1)
	b = &result.Results{Server: result.Server{Name: "srv"}, Search: []result.Search{s("lost", 6.6, 6.3, 6.9), s("same", 10, 9.6, 0), s("close", 9.3, 8.9, 9.7), none}}
	b.Search[1].ClientLimit = 12
	// "paired": the bounds say within, the paired check (the baseline's
	// check windows replayed at 9.5 req/s) says regressed, and decides.
	pa, pb := s("paired", 10, 9.6, 10.4), s("paired", 10, 9.6, 10.4)
	pa.Check = &result.SearchCheck{Rate: 10}
	pb.Replay = &result.SearchCheck{Rate: 9.5, BaselineRate: 10, Tolerance: 0.05}
	for i, v := range []float64{0.96, 0.95, 0.97} {
		pa.Check.Windows = append(pa.Check.Windows, result.CheckWindow{Seed: int64(i), Values: map[string]float64{"goodput_share": v}, Launched: 300})
		pb.Replay.Windows = append(pb.Replay.Windows, result.CheckWindow{Seed: int64(i), Values: map[string]float64{"goodput_share": v - 0.05 - 0.01*float64(i)}, Launched: 300})
	}
	a.Search, b.Search = append(a.Search, pa), append(b.Search, pb)
	return a, b
}

// TestCapacityGolden renders the rate searches compared as diff's text,
// Markdown and JSON (the JSON validated against docs/diff.schema.json)
// and as -baseline's verdicts, against testdata/capacity.golden.
// Regenerate with: go test ./internal/views -run TestCapacityGolden -update
func TestCapacityGolden(t *testing.T) {
	a, b := capacityRuns()
	d := Diff{PathA: "a.json", PathB: "b.json", C: compare.Build(a, b, compare.Policy{Tolerance: 0.05})}
	if d.C.Outcome != vocab.Fail || d.C.ExitCode() != 1 {
		t.Errorf("outcome %s exit %d, want fail, exit 1 (a search lost capacity)", d.C.Outcome, d.C.ExitCode())
	}
	var buf bytes.Buffer
	buf.WriteString("== text\n")
	if err := d.Text(&buf); err != nil {
		t.Fatal(err)
	}
	buf.WriteString("== markdown\n")
	if err := d.Markdown(&buf); err != nil {
		t.Fatal(err)
	}
	var js bytes.Buffer
	if err := d.JSON(&js); err != nil {
		t.Fatal(err)
	}
	schema, err := jsonschema.NewCompiler().Compile(filepath.Join("..", "..", "docs", "diff.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(js.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if err := schema.Validate(doc); err != nil {
		t.Fatalf("the document does not fit docs/diff.schema.json: %v\n%s", err, js.String())
	}
	buf.WriteString("== json\n")
	buf.Write(js.Bytes())
	buf.WriteString("== -baseline verdicts\n")
	for _, v := range (Baseline{C: d.C}).Verdicts() {
		buf.WriteString(v.Test + ": " + v.Outcome.String() + ": " + v.Message + "\n")
		for _, l := range v.Details {
			buf.WriteString("  " + l + "\n")
		}
	}
	golden := filepath.Join("testdata", "capacity.golden")
	if *update {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/views -run TestCapacityGolden -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), buf.String()); diff != "" {
		t.Errorf("differs from %s (-want +got); if intended, run go test ./internal/views -run TestCapacityGolden -update:\n%s", golden, diff)
	}
	// Whatever the golden file is regenerated to, each search's decision.
	var got []string
	for _, v := range (Baseline{C: d.C}).Verdicts() {
		got = append(got, v.Test+" "+v.Outcome.String())
	}
	wantV := []string{"srv/baseline/search/lost fail", "srv/baseline/search/same pass", "srv/baseline/search/close inconclusive", "srv/baseline/search/none fail", "srv/baseline/search/paired fail"}
	if diff := cmp.Diff(wantV, got); diff != "" {
		t.Errorf("-baseline verdicts (-want +got):\n%s", diff)
	}
	if !strings.Contains(buf.String(), "client limit 12 req/s") {
		t.Errorf("the client limit is not shown")
	}
}

// TestCapacityCost: when both runs are priced, the capacity lines add the
// cost at both answers: 2 GPUs × $3.50 an hour ÷ 1,200 output tok/s =
// $1.62 per million now, ÷ 1,800 = $1.08 in the baseline (+50.0%); an
// unpriced pair adds nothing.
func TestCapacityCost(t *testing.T) {
	price := 3.5
	withProbe := func(r *result.Results, tps float64) {
		s := &r.Search[0]
		s.Probes = []result.SearchProbe{{Rate: s.Rate, Passed: true, Decision: result.DecisionMet,
			Traffic: &result.TrafficCell{Traffic: "chat", Rate: s.Rate, Status: vocab.StatusValid, Completed: 10, Stats: map[string]float64{"output_tps": tps}}}}
		r.GPUTime = &result.GPUTime{GPUs: 2}
	}
	tests := []struct {
		name  string
		price *float64
		want  []string
	}{
		{name: "priced", price: &price, want: []string{`search "lost" cost: $1.62 per million output tokens at the answer, $1.08 in the baseline (+50.0%)`}},
		{name: "unpriced"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, b := capacityRuns()
			a.Search, b.Search = a.Search[:1], b.Search[:1]
			withProbe(a, 1800)
			withProbe(b, 1200)
			a.Server.PricePerGPUHour, b.Server.PricePerGPUHour = tc.price, tc.price
			lines := CapacityLines(compare.Build(a, b, compare.Policy{Tolerance: 0.05}))
			var got []string
			for _, l := range lines {
				if strings.Contains(l, " cost: ") {
					got = append(got, l)
				}
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") || len(lines) != 1+len(tc.want) {
				t.Errorf("lines %q, want the capacity line and %q", lines, tc.want)
			}
		})
	}
}
