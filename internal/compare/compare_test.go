package compare

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

func TestDecide(t *testing.T) {
	tests := []struct {
		name   string
		a, b   float64
		higher bool
		want   Change
	}{
		{"tps equal", 100, 100, true, Unchanged},
		{"tps -5% is at the edge", 100, 95, true, Unchanged},
		{"tps -4.9% within", 100, 95.1, true, Unchanged},
		{"tps -5.1% regressed", 100, 94.9, true, Regressed},
		{"tps +5.1% improved", 100, 105.1, true, Improved},
		{"latency +5.1% regressed", 100, 105.1, false, Regressed},
		{"latency -5.1% improved", 100, 94.9, false, Improved},
		{"latency +5% at the edge", 100, 105, false, Unchanged},
		{"zero to zero", 0, 0, true, Unchanged},
		{"zero to something better", 0, 1, true, Improved},
		{"latency -4.9% of A is within though 5.2% of B", 100, 95.1, false, Unchanged},
		{"infinite equals itself", math.Inf(1), math.Inf(1), true, Unchanged},
		{"finite to infinite latency regressed", 100, math.Inf(1), false, Regressed},
		{"infinite to finite throughput regressed", math.Inf(1), 100, true, Regressed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := decide(tc.a, tc.b, 0.05, tc.higher); got != tc.want {
				t.Errorf("decide(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
			}
		})
	}
}

// TestParseAlpha: a significance level as a fraction or a percentage,
// strictly between 0 and 1 (numfmt.ParsePercent reads it).
func TestParseAlpha(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want float64
		err  string
	}{
		{name: "fraction", in: "0.05", want: 0.05},
		{name: "percent", in: "1%", want: 0.01},
		{name: "zero", in: "0", err: `"0" is not a significance level: write it like 0.05 (above 0, below 1)`},
		{name: "one", in: "100%", err: `"100%" is not a significance level`},
		{name: "a bare 5 is 500 %", in: "5", err: `"5" is not a significance level`},
		{name: "words", in: "five", err: `"five" is not a share`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseAlpha(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("ParseAlpha(%q) = %v, %v; want an error saying %q", tc.in, got, err, tc.err)
				}
				return
			}
			if err != nil || !cmp.Equal(got, tc.want, cmpopts.EquateApprox(1e-12, 0)) {
				t.Errorf("ParseAlpha(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
			}
		})
	}
}

func decode(ctx, conc int, tps, ttft, tbt float64) result.DecodeCell {
	return result.DecodeCell{Matrix: "decode", Context: ctx, Concurrency: conc, Status: vocab.StatusValid, TotalTPS: tps, TTFTMs: ttft, TBTMs: tbt}
}

// runs returns two runs that exercise every kind of cell: unchanged,
// regressed and improved (both directions) by the tolerance rule, repeats
// without samples decided by the tolerance rule, a regression, unchanged
// cells and an inconclusive one decided by the interval of 5 samples a
// side, over capacity on both sides, lost (over capacity in B, absent from
// B), errored in B, and a cell only B measured.
func runs() (a, b *result.Results) {
	a = &result.Results{Schema: result.Schema, Server: result.Server{Name: "qwen"},
		Prefill: []result.PrefillCell{
			{Context: 8192, Status: vocab.StatusValid, TPS: 40000, TTFTMs: 204.8},
			{Context: 16384, Status: vocab.StatusValid, TPS: 38000, TTFTMs: 431.2},
		},
		Decode: []result.DecodeCell{
			decode(8192, 1, 408.2, 50, 2.4),
			decode(8192, 64, 6018.4, 300, 10.5),
			decode(16384, 1, 400, 80, 2.5),
			{Matrix: "decode", Context: 16384, Concurrency: 64, Status: vocab.StatusOverCapacity},
			decode(32768, 1, 380, 120, 2.6),
			decode(4096, 1, 420, 40, 2.3),
			decode(4096, 64, 6500, 250, 9.8),
			decode(65536, 1, 350, 200, 2.8),
		},
	}
	b = &result.Results{Schema: result.Schema, Server: result.Server{Name: "qwen"},
		Prefill: []result.PrefillCell{
			{Context: 8192, Status: vocab.StatusValid, TPS: 39000, TTFTMs: 210},
			{Context: 16384, Status: vocab.StatusValid, TPS: 30000, TTFTMs: 546.1},
		},
		Decode: []result.DecodeCell{
			decode(8192, 1, 410, 49, 2.4),
			decode(8192, 64, 5421.3, 340, 11.8),
			decode(16384, 1, 440, 70, 2.3),
			{Matrix: "decode", Context: 16384, Concurrency: 64, Status: vocab.StatusOverCapacity},
			{Matrix: "decode", Context: 32768, Concurrency: 1, Status: vocab.StatusError, Reason: "stream stalled"},
			decode(32768, 64, 5000, 900, 12),
			decode(4096, 1, 398, 40.2, 2.31),
			{Matrix: "decode", Context: 4096, Concurrency: 64, Status: vocab.StatusOverCapacity,
				Reason: "64 × (4096 + 4096) = 524288 tokens > KV cache 500000 tokens"},
		},
	}
	// Repeated on both sides without samples recorded (an older
	// results.json): the tolerance rule decides on the values (+10%:
	// improved); overlapping spreads are no longer "noise".
	a.Decode[2].Repeats, a.Decode[2].Spread = 3, map[string][2]float64{"total_tps": {380, 425}}
	b.Decode[2].Repeats, b.Decode[2].Spread = 3, map[string][2]float64{"total_tps": {415, 450}}
	// 4K×1 repeated 5 times on both sides: total_tps 5.2% lower, entirely
	// below A's samples but too close to the tolerance's edge for the
	// bounds to tell (inconclusive; the U test called it a regression);
	// ttft_ms and tbt_ms move within each other's samples, and the
	// intervals show them within the tolerance (were "not significant").
	// Prefill 16K repeated 5 times: 21% lower, regressed by its interval.
	a.Decode[5].Repeats, a.Decode[5].Samples = 5, map[string][]float64{
		"total_tps": {418, 420, 425, 416, 421}, "ttft_ms": {39, 40, 41, 40, 42}, "tbt_ms": {2.2, 2.3, 2.35, 2.3, 2.25}}
	b.Decode[6].Repeats, b.Decode[6].Samples = 5, map[string][]float64{
		"total_tps": {398, 397, 400, 394, 399}, "ttft_ms": {40.2, 39, 41.5, 40.5, 38}, "tbt_ms": {2.31, 2.2, 2.4, 2.28, 2.35}}
	a.Prefill[1].Repeats, a.Prefill[1].Samples = 5, map[string][]float64{"tps": {37800, 38000, 38200, 37900, 38100}}
	b.Prefill[1].Repeats, b.Prefill[1].Samples = 5, map[string][]float64{"tps": {29800, 30000, 30200, 29900, 30100}}
	return a, b
}

func TestCompare(t *testing.T) {
	a, b := runs()
	tables := Build(a, b, Policy{Tolerance: 0.05}).Tables
	type key struct {
		table string
		ctx   int
		conc  int
	}
	got := map[key]Change{}
	for _, tb := range tables {
		for _, c := range tb.Cells {
			got[key{tb.Title(), c.Ref.Context, c.Ref.Concurrency}] = c.Change
		}
	}
	want := map[key]Change{
		{"prefill tps", 8192, 0}:        Unchanged,
		{"prefill tps", 16384, 0}:       Regressed,
		{"decode total_tps", 8192, 1}:   Unchanged,
		{"decode total_tps", 8192, 64}:  Regressed,
		{"decode total_tps", 16384, 1}:  Improved,
		{"decode total_tps", 16384, 64}: Neither,
		{"decode total_tps", 32768, 1}:  Errored,
		{"decode total_tps", 32768, 64}: OnlyB,
		{"decode ttft_ms", 8192, 1}:     Unchanged,
		{"decode ttft_ms", 8192, 64}:    Regressed,
		{"decode ttft_ms", 16384, 1}:    Improved,
		{"decode ttft_ms", 16384, 64}:   Neither,
		{"decode ttft_ms", 32768, 1}:    Errored,
		{"decode ttft_ms", 32768, 64}:   OnlyB,
		{"decode tbt_ms", 8192, 1}:      Unchanged,
		{"decode tbt_ms", 8192, 64}:     Regressed,
		{"decode tbt_ms", 16384, 1}:     Improved,
		{"decode tbt_ms", 16384, 64}:    Neither,
		{"decode tbt_ms", 32768, 1}:     Errored,
		{"decode tbt_ms", 32768, 64}:    OnlyB,
		{"decode total_tps", 4096, 1}:   Inconclusive,
		{"decode ttft_ms", 4096, 1}:     Unchanged,
		{"decode tbt_ms", 4096, 1}:      Unchanged,
		{"decode total_tps", 4096, 64}:  Lost,
		{"decode ttft_ms", 4096, 64}:    Lost,
		{"decode tbt_ms", 4096, 64}:     Lost,
		{"decode total_tps", 65536, 1}:  Lost,
		{"decode ttft_ms", 65536, 1}:    Lost,
		{"decode tbt_ms", 65536, 1}:     Lost,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	if !AnyRegressed(tables) {
		t.Error("AnyRegressed = false, want true")
	}
	if got := Outcome(tables); got != vocab.Error {
		t.Errorf("Outcome = %v, want error (32K×1 errored in B)", got)
	}
	c, _ := tables[1].Lookup(8192, 64)
	if want := (5421.3 - 6018.4) / 6018.4; math.Abs(c.Delta-want) > 1e-12 {
		t.Errorf("delta %v, want %v", c.Delta, want)
	}
}

// shifted returns a copy of r in which every measured metric of every cell
// moved for the worse by the fraction f: throughputs down, latencies up.
// Repeats and spreads are dropped so the tolerance alone decides.
func shifted(t *testing.T, r *result.Results, f float64) *result.Results {
	t.Helper()
	raw, err := r.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	c, err := result.Decode("copy", raw)
	if err != nil {
		t.Fatal(err)
	}
	worse := func(m metric.Metric, v float64) float64 {
		if m.HigherIsBetter {
			return v * (1 - f)
		}
		return v * (1 + f)
	}
	for i := range c.Decode {
		d := &c.Decode[i]
		d.Repeats, d.Spread = 0, nil
		for _, m := range metric.Table {
			if v, ok := d.Value(m); ok && d.Status.Measured() && !m.Integer() {
				d.SetValue(m, worse(m, v))
			}
		}
	}
	for i := range c.Prefill {
		p := &c.Prefill[i]
		p.Repeats, p.Samples = 0, nil
		for _, m := range metric.Table {
			if v, ok := p.Value(m); ok && p.Status.Measured() {
				p.SetValue(m, worse(m, v))
			}
		}
	}
	return c
}

// TestCompareKnownDeltas compares two different runs whose every change is
// known: B is A with each measured metric 4 % worse. Every Δ must be that
// 4 % in the metric's bad direction; at tolerance 5 % no cell regresses,
// at 3 % every cell measured on both sides does, and cells without numbers
// on a side keep their own decision.
func TestCompareKnownDeltas(t *testing.T) {
	a, _ := runs()
	a.Decode[2].Repeats, a.Decode[2].Spread = 0, nil
	b := shifted(t, a, 0.04)
	for _, tc := range []struct {
		name      string
		tolerance float64
		want      Change // for cells measured on both sides
	}{
		{"within a 5% tolerance", 0.05, Unchanged},
		{"beyond a 3% tolerance", 0.03, Regressed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tables := Build(a, b, Policy{Tolerance: tc.tolerance}).Tables
			both := 0
			for _, tb := range tables {
				for _, c := range tb.Cells {
					if !c.A.HasValue || !c.B.HasValue {
						if c.Change == tc.want && tc.want == Regressed {
							t.Errorf("%s %s: %v with a side unmeasured", tb.Title(), c.Ref.Name(), c.Change)
						}
						continue
					}
					both++
					wantDelta := -0.04
					if !tb.Metric.HigherIsBetter {
						wantDelta = 0.04
					}
					if math.Abs(c.Delta-wantDelta) > 1e-9 {
						t.Errorf("%s %s: Δ %v, want %v", tb.Title(), c.Ref.Name(), c.Delta, wantDelta)
					}
					if c.Change != tc.want {
						t.Errorf("%s %s: %v, want %v", tb.Title(), c.Ref.Name(), c.Change, tc.want)
					}
				}
			}
			if both < 10 {
				t.Errorf("only %d cells compared on both sides; the runs should share more", both)
			}
			if got := AnyRegressed(tables); got != (tc.want == Regressed) {
				t.Errorf("AnyRegressed = %v", got)
			}
		})
	}
}

func TestCompareMetricsOption(t *testing.T) {
	a, b := runs()
	tests := []struct {
		name    string
		metrics []string
		titles  []string
		wantErr bool
	}{
		{"ttft in both phases", []string{"ttft_ms"}, []string{"prefill ttft_ms", "decode ttft_ms"}, false},
		{"decode only", []string{"per_request_tps"}, []string{"decode per_request_tps"}, false},
		{"unknown metric", []string{"tokens_per_second"}, nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := CheckMetrics(tc.metrics); (err != nil) != tc.wantErr {
				t.Fatalf("error = %v, wantErr %v", err, tc.wantErr)
			}
			var titles []string
			for _, tb := range Build(a, b, Policy{Tolerance: 0.05, Metrics: tc.metrics}).Tables {
				titles = append(titles, tb.Title())
			}
			if diff := cmp.Diff(tc.titles, titles); diff != "" {
				t.Errorf("tables (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDefaultMetricsAreInTheTable guards metricsFor, which drops names the
// table does not have: a misspelt default would silently compare nothing.
func TestDefaultMetricsAreInTheTable(t *testing.T) {
	for phase, names := range defaultMetrics {
		if len(metricsFor(phase, nil, nil)) != len(names) {
			t.Errorf("%s defaults %v: only %d are metrics of the phase", phase, names, len(metricsFor(phase, nil, nil)))
		}
	}
}

// TestAssertedMetricsCompared: by default a comparison also compares every
// metric an assert or expect of either run read, after the headline ones;
// -metric still picks exactly its list, and neither a baseline verdict's
// words nor a word that is no metric of the cell's phase adds a table.
func TestAssertedMetricsCompared(t *testing.T) {
	at := func(phase vocab.Phase) []vocab.CellRef {
		if phase == vocab.PhasePrefill {
			return []vocab.CellRef{{Phase: phase, Context: 8192}}
		}
		return []vocab.CellRef{{Phase: phase, Matrix: "decode", Context: 8192, Concurrency: 1}}
	}
	headline := []string{"prefill tps", "decode total_tps", "decode ttft_ms", "decode tbt_ms"}
	tests := []struct {
		name     string
		verdicts []result.Verdict // of A; B has none
		metrics  []string
		asserted map[vocab.Phase][]string // B's spec's (Policy.Asserted)
		titles   []string
	}{
		{"no verdicts: the headline metrics", nil, nil, nil, headline},
		{"an assert on per_request_tps and a p99", []result.Verdict{
			{Kind: vocab.KindAssert, Rule: `decode["8K"][1].per_request_tps >= 304 && decode["8K"][1].ttft_ms_p99 <= 500`, Cells: at(vocab.PhaseDecode)},
		}, nil, nil, append(slices.Clone(headline), "decode per_request_tps", "decode ttft_ms_p99")},
		{"an expect's metric", []result.Verdict{
			{Kind: vocab.KindExpect, Rule: "per_request_tps >= 304.4 (405.9 - 25%)", Cells: at(vocab.PhaseDecode)},
		}, nil, nil, append(slices.Clone(headline), "decode per_request_tps")},
		{"a prefill assert's ttft_ms is a prefill table", []result.Verdict{
			{Kind: vocab.KindAssert, Rule: `prefill["8K"].ttft_ms <= 300`, Cells: at(vocab.PhasePrefill)},
		}, nil, nil, []string{"prefill tps", "prefill ttft_ms", "decode total_tps", "decode ttft_ms", "decode tbt_ms"}},
		{"a baseline verdict adds nothing", []result.Verdict{
			{Kind: vocab.KindBaseline, Rule: "per_request_tps within 5%", Cells: at(vocab.PhaseDecode)},
		}, nil, nil, headline},
		{"-metric picks its list alone", []result.Verdict{
			{Kind: vocab.KindAssert, Rule: `decode["8K"][1].per_request_tps >= 304`, Cells: at(vocab.PhaseDecode)},
		}, []string{"total_tps"}, map[vocab.Phase][]string{vocab.PhaseDecode: {"ttft_ms_p99"}}, []string{"decode total_tps"}},
		{"B's spec's asserts, before B has verdicts", nil, nil,
			map[vocab.Phase][]string{vocab.PhaseDecode: {"ttft_ms_p99"}, vocab.PhasePrefill: {"ttft_ms"}},
			[]string{"prefill tps", "prefill ttft_ms", "decode total_tps", "decode ttft_ms", "decode tbt_ms", "decode ttft_ms_p99"}},
		{"B's spec's and A's verdicts, each once", []result.Verdict{
			{Kind: vocab.KindAssert, Rule: `decode["8K"][1].per_request_tps >= 304`, Cells: at(vocab.PhaseDecode)},
		}, nil, map[vocab.Phase][]string{vocab.PhaseDecode: {"per_request_tps", "ttft_ms_p99"}},
			append(slices.Clone(headline), "decode per_request_tps", "decode ttft_ms_p99")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, b := runs()
			a.Verdicts = tc.verdicts
			var titles []string
			for _, tb := range Build(a, b, Policy{Tolerance: 0.05, Metrics: tc.metrics, Asserted: tc.asserted}).Tables {
				titles = append(titles, tb.Title())
			}
			if diff := cmp.Diff(tc.titles, titles); diff != "" {
				t.Errorf("tables (-want +got):\n%s", diff)
			}
		})
	}
}
