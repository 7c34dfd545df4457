package compare

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// measured is a side with a value and, when samples are given, as many
// repeats as samples.
func measured(v float64, samples ...float64) Side {
	s := Side{Present: true, Status: vocab.StatusValid, Value: v, HasValue: true, Repeats: 1}
	if len(samples) > 0 {
		s.Repeats, s.Samples = len(samples), samples
		s.Spread, s.HasSpread = [2]float64{slices.Min(samples), slices.Max(samples)}, true
	}
	return s
}

// TestDecideCell is the decision table of docs/method.md#comparing-runs,
// one row per rule. Rows that were "~ not significant" (noise, a pass)
// before the three outcomes are now inconclusive when an interval decides,
// or decided by the tolerance rule when the sizes cannot attain α.
func TestDecideCell(t *testing.T) {
	tps := metric.Must(vocab.PhaseDecode, "total_tps")
	tbt := metric.Must(vocab.PhaseDecode, "tbt_ms")
	ref := vocab.CellRef{Phase: vocab.PhaseDecode, Matrix: "decode", Context: 8192, Concurrency: 64}
	overCap := Side{Present: true, Status: vocab.StatusOverCapacity, Reason: "64 × (8192 + 256) = 540672 tokens > KV cache 500000 tokens", Repeats: 1}
	errored := Side{Present: true, Status: vocab.StatusError, Reason: "stream stalled", Repeats: 1}
	noMetric := Side{Present: true, Status: vocab.StatusValid, Repeats: 1}
	a5 := []float64{100, 101, 102, 103, 104}
	tests := []struct {
		name   string
		a, b   Side
		m      metric.Metric
		alpha  float64
		want   Change
		tested bool    // an interval decided
		level  float64 // the level it attained, when tested (±0.0001)
	}{
		{name: "interval entirely beyond the tolerance: regressed", a: measured(102, a5...), b: measured(91.8, 90, 91, 91.8, 92, 93), m: tps, want: Regressed, tested: true, level: 0.0476},
		{name: "a change shown inside the tolerance: unchanged", a: measured(102, a5...), b: measured(99, 98, 98.5, 99, 99.5, 99.9), m: tps, want: Unchanged, tested: true, level: 0.0476},
		{name: "shown better beyond the tolerance: improved", a: measured(102, a5...), b: measured(112, 110, 111, 112, 113, 114), m: tps, want: Improved, tested: true, level: 0.0476},
		{name: "latency up beyond the tolerance: regressed", a: measured(102, a5...), b: measured(112, 110, 111, 112, 113, 114), m: tbt, want: Regressed, tested: true, level: 0.0476},
		{name: "interleaved samples 8% apart: inconclusive (was not significant, a pass)", a: measured(100, 90, 100, 110, 120, 95), b: measured(92, 92, 85, 115, 88, 125), m: tps, want: Inconclusive, tested: true, level: 0.0476},
		{name: "5% lower with little noise: the bounds straddle the edge, inconclusive", a: measured(420, 418, 420, 425, 416, 421), b: measured(398, 398, 397, 400, 394, 399), m: tps, want: Inconclusive, tested: true, level: 0.0476},
		{name: "5 samples a side cannot attain α = 0.003: the tolerance decides", a: measured(102, a5...), b: measured(91.8, 90, 91, 91.8, 92, 93), m: tps, alpha: 0.003, want: Regressed, tested: false},
		{name: "three samples a side attain α = 0.05 at the extreme", a: measured(102, 100, 102, 104), b: measured(91, 90, 91, 92), m: tps, want: Regressed, tested: true, level: 0.05},
		{name: "three samples a side cannot attain α = 0.04: the tolerance decides", a: measured(102, 100, 102, 104), b: measured(91, 90, 91, 92), m: tps, alpha: 0.04, want: Regressed, tested: false},
		{name: "three noisy samples a side at α = 0.04: never inconclusive, the values decide", a: measured(100, 90, 100, 110), b: measured(97, 85, 97, 115), m: tps, alpha: 0.04, want: Unchanged, tested: false},
		{name: "five samples against one: the tolerance decides", a: measured(102, a5...), b: measured(91), m: tps, want: Regressed, tested: false},
		{name: "few repeats, overlapping spreads: the tolerance decides (was noise)", a: measured(100, 95, 105), b: measured(90, 88, 96), m: tps, want: Regressed, tested: false},
		{name: "single runs beyond the tolerance: regressed", a: measured(100), b: measured(94), m: tps, want: Regressed, tested: false},
		{name: "single runs within the tolerance: unchanged", a: measured(100), b: measured(96), m: tps, want: Unchanged, tested: false},
		{name: "a zero sample has no log: the tolerance decides", a: measured(102, a5...), b: measured(91.8, 90, 0, 91.8, 92, 93), m: tps, want: Regressed, tested: false},
		{name: "B over capacity: lost", a: measured(6018.4), b: overCap, m: tps, want: Lost},
		{name: "B without the cell: lost", a: measured(6018.4), b: Side{}, m: tps, want: Lost},
		{name: "B errored: errored, not lost", a: measured(6018.4), b: errored, m: tps, want: Errored},
		{name: "B measured without the metric: A only", a: measured(6018.4), b: noMetric, m: tps, want: OnlyA},
		{name: "only B measured: B only", a: overCap, b: measured(6018.4), m: tps, want: OnlyB},
		{name: "A absent, B measured: B only", a: Side{}, b: measured(6018.4), m: tps, want: OnlyB},
		{name: "over capacity on both sides: neither", a: overCap, b: overCap, m: tps, want: Neither},
		{name: "A errored, B over capacity: neither", a: errored, b: overCap, m: tps, want: Neither},
		{name: "B unmeasurable: not compared", a: measured(6018.4), b: Side{Present: true, Status: vocab.StatusUnmeasurable, Repeats: 1}, m: tps, want: Unmeasurable},
		{name: "A unmeasurable: not compared", a: Side{Present: true, Status: vocab.StatusUnmeasurable, Repeats: 1}, b: measured(6018.4), m: tps, want: Unmeasurable},
		{name: "A unmeasurable, B errored: errored, not hidden", a: Side{Present: true, Status: vocab.StatusUnmeasurable, Repeats: 1}, b: Side{Present: true, Status: vocab.StatusError}, m: tps, want: Errored},
		{name: "A unmeasurable, B over capacity: lost", a: Side{Present: true, Status: vocab.StatusUnmeasurable, Repeats: 1}, b: Side{Present: true, Status: vocab.StatusOverCapacity}, m: tps, want: Lost},
		{name: "both unmeasurable: not compared", a: Side{Present: true, Status: vocab.StatusUnmeasurable, Repeats: 1}, b: Side{Present: true, Status: vocab.StatusUnmeasurable, Repeats: 1}, m: tps, want: Unmeasurable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			alpha := tc.alpha
			if alpha == 0 {
				alpha = DefaultAlpha
			}
			c := decideCell(ref, tc.a, tc.b, tc.m, Policy{Tolerance: 0.05, Alpha: alpha}, nil)
			if c.Change != tc.want {
				t.Errorf("change %v, want %v (%+v)", c.Change, tc.want, c.Test)
			}
			if (c.Test != nil) != tc.tested {
				t.Fatalf("tested = %v (%+v), want %v", c.Test != nil, c.Test, tc.tested)
			}
			if c.Test == nil {
				return
			}
			if math.Abs(c.Test.Level-tc.level) > 0.0001 {
				t.Errorf("level %.4f, want %.4f", c.Test.Level, tc.level)
			}
			if c.Delta != c.Test.Change() {
				t.Errorf("Δ %v is not the estimate %v", c.Delta, c.Test.Change())
			}
			// Needed is only for an inconclusive cell, and more than it has
			// (0: more than 100).
			if c.Change != Inconclusive && c.Test.Needed != 0 || c.Change == Inconclusive && c.Test.Needed != 0 && c.Test.Needed <= c.Test.NA {
				t.Errorf("repeats needed %d for a cell %v of %d+%d", c.Test.Needed, c.Change, c.Test.NA, c.Test.NB)
			}
		})
	}
}

// TestCellOutcome: what a decided cell does to the gate under each
// -inconclusive policy. The three cells are 5 + 5 samples, B about 5.2%
// (inconclusive, estimate beyond), 4.6% (inconclusive, estimate inside)
// and 12% (regressed) below A.
func TestCellOutcome(t *testing.T) {
	tps := metric.Must(vocab.PhaseDecode, "total_tps")
	ref := vocab.CellRef{Phase: vocab.PhaseDecode, Matrix: "decode", Context: 8192, Concurrency: 64}
	a := measured(420, 418, 420, 425, 416, 421)
	beyond := measured(398, 398, 397, 400, 394, 399)
	inside := measured(401, 401, 397, 404, 394, 402)
	regressed := measured(370, 368, 370, 372, 369, 371)
	tests := []struct {
		name   string
		b      Side
		policy InconclusivePolicy
		change Change
		want   vocab.Outcome
	}{
		{"inconclusive fails as inconclusive by default", inside, InconclusiveFail, Inconclusive, vocab.Inconclusive},
		{"inconclusive with the estimate beyond, by default: inconclusive", beyond, InconclusiveFail, Inconclusive, vocab.Inconclusive},
		{"-inconclusive pass accepts an estimate inside the tolerance", inside, InconclusivePass, Inconclusive, vocab.Pass},
		{"-inconclusive pass: an estimate beyond the tolerance still fails", beyond, InconclusivePass, Inconclusive, vocab.Fail},
		{"regressed fails under either policy", regressed, InconclusivePass, Regressed, vocab.Fail},
		{"errored is an error under either policy", Side{Present: true, Status: vocab.StatusError, Repeats: 1}, InconclusivePass, Errored, vocab.Error},
		{"lost fails", Side{}, InconclusivePass, Lost, vocab.Fail},
		{"unmeasurable is inconclusive under either policy, never a pass", Side{Present: true, Status: vocab.StatusUnmeasurable, Repeats: 1}, InconclusivePass, Unmeasurable, vocab.Inconclusive},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := decideCell(ref, a, tc.b, tps, Policy{Tolerance: 0.05, Alpha: 0.05, Inconclusive: tc.policy}, nil)
			if c.Change != tc.change || c.Outcome != tc.want {
				t.Errorf("%v (Δ %.4f), outcome %v; want %v, %v", c.Change, c.Delta, c.Outcome, tc.change, tc.want)
			}
		})
	}
}

func TestRepeatsNeeded(t *testing.T) {
	tests := []struct {
		name  string
		alpha float64
		want  int
	}{
		{"α = 0.05 needs 3 (3 + 3 attain it at the extreme; was 4 for the two-sided U test)", 0.05, 3},
		{"α = 0.02 needs 4 (4 + 4 attain 0.0143)", 0.02, 4},
		{"α = 0.01 needs 5", 0.01, 5},
		{"α = 0.2 is reached with 2", 0.2, 2},
		{"α = 0.5 with one run a side", 0.5, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := repeatsNeeded(tc.alpha); got != tc.want {
				t.Errorf("repeatsNeeded(%v) = %d, want %d", tc.alpha, got, tc.want)
			}
		})
	}
}

// TestFindings: the lost and errored cells, each once, with A's value of
// the first metric and B's own side (its status and reason: the capacity
// arithmetic); views.FindingText words them.
func TestFindings(t *testing.T) {
	a, b := runs()
	type row struct {
		cell   string
		change Change
		was    float64
		status vocab.Status
		reason string
	}
	var got []row
	for _, f := range Build(a, b, Policy{Tolerance: 0.05}).Lost {
		got = append(got, row{f.Ref.Name(), f.Change, f.Was, f.B.Status, f.B.Reason})
	}
	want := []row{
		{"decode/ctx=4K/conc=64", Lost, 6500, vocab.StatusOverCapacity, "64 × (4096 + 4096) = 524288 tokens > KV cache 500000 tokens"},
		{"decode/ctx=32K/conc=1", Errored, 380, vocab.StatusError, "stream stalled"},
		{"decode/ctx=64K/conc=1", Lost, 350, "", ""},
	}
	if d := cmp.Diff(want, got, cmp.AllowUnexported(row{})); d != "" {
		t.Errorf("findings (-want +got):\n%s", d)
	}
}

// TestMethodOf counts how the cells measured on both sides were decided:
// with an interval (the lowest confidence and the sizes that attained it)
// or by the tolerance alone (the fewest runs a side); views.MethodNote
// words it.
func TestMethodOf(t *testing.T) {
	ref := vocab.CellRef{Phase: vocab.PhaseDecode, Context: 8192, Concurrency: 1}
	cell := func(test bool, ra, rb int) Cell {
		c := Cell{Ref: ref, A: measured(1), B: measured(1)}
		c.A.Repeats, c.B.Repeats = ra, rb
		if test {
			_, level, _ := attainable(ra, rb, 0.05)
			c.Test = &Test{Shift: Shift{Ratio: 1, Lower: 0.9, Upper: 1.1, Level: level, Alpha: 0.05, NA: ra, NB: rb}}
		}
		return c
	}
	_, level55, _ := attainable(5, 5, 0.05)
	tests := []struct {
		name  string
		cells []Cell
		want  Method
	}{
		{"all tested", []Cell{cell(true, 5, 5), cell(true, 4, 4)}, Method{Tested: 2, Confidence: 1 - level55, SizeA: 5, SizeB: 5, Alpha: 0.05, RepeatsNeeded: 3}},
		{"none tested", []Cell{cell(false, 1, 2)}, Method{Untested: 1, RepeatsA: 1, RepeatsB: 2, Alpha: 0.05, RepeatsNeeded: 3}},
		{"some tested", []Cell{cell(true, 5, 5), cell(false, 5, 2)}, Method{Tested: 1, Untested: 1, RepeatsA: 5, RepeatsB: 2, Confidence: 1 - level55, SizeA: 5, SizeB: 5, Alpha: 0.05, RepeatsNeeded: 3}},
		{"nothing on both sides", []Cell{{Ref: ref, A: measured(1)}}, Method{Alpha: 0.05, RepeatsNeeded: 3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := methodOf([]Table{{Cells: tc.cells}}, 0.05)
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("method (-want +got):\n%s", d)
			}
			if got.Statistical() != (tc.want.Untested == 0) {
				t.Errorf("Statistical() = %v", got.Statistical())
			}
		})
	}
}

// A row of the error-rate simulation: cells whose A and B draw repeats
// from a lognormal around 100 tok/s with the given noise (the standard
// deviation of the log, ≈ the measured per-repeat CV), B's median at ratio
// × A's. Fixed designs take n repeats a side; "auto" designs measure A with
// measure { repeat = "auto" } alone (Sequential.Look without a baseline)
// and then B against it, decided at the design's level, as the gate does.
type noiseRow struct {
	name string
	n    int // repeats a side of a fixed design; 0 for repeat = "auto"
	max  int // max_repeat of an auto design
	// baseline is A's repeats when A is measured with a fixed repeat and
	// B with "auto"; 0 measures A with "auto" too.
	baseline int
	noise    float64
	ratio    float64
}

// noiseRates are the fractions of cells decided each way, and the mean
// repeats of each side.
type noiseRates struct {
	regressed, within, inconclusive float64
	repeatsA, repeatsB              float64
}

// decided is the fraction of cells that reached a decision.
func (r noiseRates) decided() float64 { return r.regressed + r.within }

func simulateNoise(row noiseRow, cells int, seed uint64) noiseRates {
	rng := rand.New(rand.NewPCG(seed, uint64(row.n*1000+row.max)))
	m := metric.Must(vocab.PhaseDecode, "total_tps")
	ref := vocab.CellRef{Phase: vocab.PhaseDecode, Context: 8192, Concurrency: 64}
	draw := func(median float64) float64 { return median * math.Exp(row.noise*rng.NormFloat64()) }
	side := func(xs []float64) Side { return measured(metric.Median.Of(xs), xs...) }
	var r noiseRates
	var nA, nB int
	for range cells {
		var a, b []float64
		opt := Policy{Tolerance: 0.05, Alpha: 0.05}
		if row.n > 0 {
			for range row.n {
				a, b = append(a, draw(100)), append(b, draw(100*row.ratio))
			}
		} else {
			s := Sequential{Max: row.max, Tolerance: 0.05, Alpha: 0.05}
			for range row.baseline {
				a = append(a, draw(100))
			}
			for stop := row.baseline > 0; !stop; {
				a = append(a, draw(100))
				stop = s.Look(nil, a, true).Stop
			}
			for stop := false; !stop; {
				b = append(b, draw(100*row.ratio))
				stop = s.Look(a, b, true).Stop
			}
			opt.Alpha = s.Level(len(a))
		}
		nA, nB = nA+len(a), nB+len(b)
		switch decideCell(ref, side(a), side(b), m, opt, nil).Change {
		case Regressed:
			r.regressed++
		case Unchanged, Improved:
			r.within++
		case Inconclusive:
			r.inconclusive++
		}
	}
	n := float64(cells)
	return noiseRates{r.regressed / n, r.within / n, r.inconclusive / n, float64(nA) / n, float64(nB) / n}
}

// TestNoiseRates measures the error rates of the decisions by Monte Carlo
// over the decision code (decideCell, and Sequential for repeat = "auto"),
// tolerance 5%, α = 0.05, and checks them against the targets with margins
// that the default 500 cells a row cannot miss by chance (the draws are
// seeded too): identical servers are called regressed rarely and, at noise
// 2% with 5 repeats, within the tolerance mostly; at the tolerance's edge
// (exactly −5%) each wrong call stays near α; a server 10% slower (×1/1.1)
// almost never passes, and is caught mostly at noise 2% with 5 repeats and
// with repeat = "auto" at 5%; "auto" costs few repeats on quiet cells.
// SLOGATE_NOISE_CELLS=20000 measures the table precisely
// (go test ./compare -run NoiseRates -v); docs/ci.md#sizing-repeats-and-tolerance
// quotes it.
func TestNoiseRates(t *testing.T) {
	cells := 500
	if s := os.Getenv("SLOGATE_NOISE_CELLS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatal(err)
		}
		cells = n
	}
	const slower = 1 / 1.1
	type bound struct {
		what  string
		get   func(noiseRates) float64
		le    bool // the rate must be at most limit (else at least)
		limit float64
	}
	atMost := func(what string, get func(noiseRates) float64, limit float64) bound {
		return bound{what, get, true, limit}
	}
	atLeast := func(what string, get func(noiseRates) float64, limit float64) bound {
		return bound{what, get, false, limit}
	}
	reg := func(r noiseRates) float64 { return r.regressed }
	within := func(r noiseRates) float64 { return r.within }
	inc := func(r noiseRates) float64 { return r.inconclusive }
	repB := func(r noiseRates) float64 { return r.repeatsB }
	rows := []struct {
		row    noiseRow
		bounds []bound
	}{
		{noiseRow{name: "identical", n: 5, noise: 0.005, ratio: 1}, []bound{atMost("✗", reg, 0.02)}},
		{noiseRow{name: "identical", n: 5, noise: 0.02, ratio: 1}, []bound{atMost("✗", reg, 0.05), atLeast("✓", within, 0.85)}},
		{noiseRow{name: "identical", n: 5, noise: 0.05, ratio: 1}, []bound{atMost("✗", reg, 0.05), atLeast("? (migration: about 59%)", inc, 0.4), atMost("?", inc, 0.75)}},
		{noiseRow{name: "identical", n: 10, noise: 0.05, ratio: 1}, []bound{atMost("✗", reg, 0.05)}},
		{noiseRow{name: "identical", max: 20, noise: 0.005, ratio: 1}, []bound{atMost("✗", reg, 0.05), atMost("mean repeats", repB, 6)}},
		{noiseRow{name: "identical", max: 20, noise: 0.02, ratio: 1}, []bound{atMost("✗", reg, 0.05), atMost("mean repeats", repB, 7)}},
		{noiseRow{name: "identical", max: 20, noise: 0.05, ratio: 1}, []bound{atMost("✗", reg, 0.05)}},
		{noiseRow{name: "edge −5%", n: 5, noise: 0.02, ratio: 0.95}, []bound{atMost("✓", within, 0.075), atMost("✗", reg, 0.075)}},
		{noiseRow{name: "edge −5%", n: 10, noise: 0.05, ratio: 0.95}, []bound{atMost("✓", within, 0.075), atMost("✗", reg, 0.075)}},
		{noiseRow{name: "edge −5%", max: 20, noise: 0.02, ratio: 0.95}, []bound{atMost("✓", within, 0.075), atMost("✗", reg, 0.075)}},
		{noiseRow{name: "edge −5%", max: 20, noise: 0.05, ratio: 0.95}, []bound{atMost("✓", within, 0.075), atMost("✗", reg, 0.075)}},
		{noiseRow{name: "10% slower", n: 5, noise: 0.02, ratio: slower}, []bound{atMost("✓", within, 0.05), atLeast("✗", reg, 0.8)}},
		{noiseRow{name: "10% slower", n: 5, noise: 0.05, ratio: slower}, []bound{atMost("✓", within, 0.05)}},
		{noiseRow{name: "10% slower", n: 10, noise: 0.05, ratio: slower}, []bound{atMost("✓", within, 0.05)}},
		{noiseRow{name: "10% slower", n: 10, noise: 0.02, ratio: slower}, []bound{atMost("✓", within, 0.05)}},
		{noiseRow{name: "identical", n: 10, noise: 0.02, ratio: 1}, []bound{atMost("✗", reg, 0.05)}},
		{noiseRow{name: "10% slower", max: 20, noise: 0.02, ratio: slower}, []bound{atMost("✓", within, 0.05), atMost("mean repeats", repB, 7)}},
		{noiseRow{name: "10% slower", max: 20, noise: 0.05, ratio: slower}, []bound{atMost("✓", within, 0.05), atLeast("✗", reg, 0.62)}},
		{noiseRow{name: "10% slower", max: 30, noise: 0.05, ratio: slower}, []bound{atMost("✓", within, 0.05), atLeast("✗", reg, 0.75)}},
		{noiseRow{name: "10% slower", max: 20, baseline: 20, noise: 0.05, ratio: slower}, []bound{atMost("✓", within, 0.05), atLeast("✗", reg, 0.7)}},
		{noiseRow{name: "10% slower", max: 30, baseline: 30, noise: 0.05, ratio: slower}, []bound{atMost("✓", within, 0.05), atLeast("✗", reg, 0.8)}},
		{noiseRow{name: "edge −5%", max: 30, baseline: 30, noise: 0.05, ratio: 0.95}, []bound{atMost("✓", within, 0.075), atMost("✗", reg, 0.075)}},
	}
	t.Logf("tolerance 5%%, α = 0.05, %d cells a row; repeats per decision = (A + B repeats) ÷ decided", cells)
	t.Logf("| servers | noise | design | ✗ regressed | ✓ within | ? inconclusive | repeats A | repeats B | repeats per decision |")
	t.Logf("|---|---|---|---|---|---|---|---|---|")
	for i, tc := range rows {
		r := simulateNoise(tc.row, cells, uint64(i+1))
		design := fmt.Sprintf("repeat = %d", tc.row.n)
		switch {
		case tc.row.baseline > 0:
			design = fmt.Sprintf("A repeat = %d, B auto, max %d", tc.row.baseline, tc.row.max)
		case tc.row.n == 0:
			design = fmt.Sprintf("auto, max %d", tc.row.max)
		}
		perDecision := "—"
		if r.decided() > 0 {
			perDecision = fmt.Sprintf("%.1f", (r.repeatsA+r.repeatsB)/r.decided())
		}
		t.Logf("| %s | %.1f%% | %s | %.1f%% | %.1f%% | %.1f%% | %.1f | %.1f | %s |", tc.row.name, tc.row.noise*100, design,
			r.regressed*100, r.within*100, r.inconclusive*100, r.repeatsA, r.repeatsB, perDecision)
		for _, b := range tc.bounds {
			got := b.get(r)
			if b.le && got > b.limit || !b.le && got < b.limit {
				rel := "at least"
				if b.le {
					rel = "at most"
				}
				t.Errorf("%s, noise %.1f%%, %s: %s = %.3f, want %s %.3f", tc.row.name, tc.row.noise*100, design, b.what, got, rel, b.limit)
			}
		}
	}
}

// TestTrafficPairUnmeasurable: a traffic cell whose client could not drive
// it is not compared, unless the other side errored or lost the cell,
// which is said as such (docs/method.md#unmeasurable).
func TestTrafficPairUnmeasurable(t *testing.T) {
	cell := func(s vocab.Status) *result.TrafficCell {
		return &result.TrafficCell{Traffic: "chat", Context: 1024, Rate: 4, Status: s, Launched: 40, Completed: 40}
	}
	tests := []struct {
		name string
		a, b *result.TrafficCell
		want vocab.Outcome
	}{
		{name: "A unmeasurable, B valid: not compared", a: cell(vocab.StatusUnmeasurable), b: cell(vocab.StatusValid), want: vocab.Inconclusive},
		{name: "A valid, B unmeasurable: not compared", a: cell(vocab.StatusValid), b: cell(vocab.StatusUnmeasurable), want: vocab.Inconclusive},
		{name: "A unmeasurable, B errored: an error", a: cell(vocab.StatusUnmeasurable), b: cell(vocab.StatusError), want: vocab.Error},
		{name: "A unmeasurable, B missing: lost", a: cell(vocab.StatusUnmeasurable), b: nil, want: vocab.Fail},
		{name: "A missing: nothing to compare", a: nil, b: cell(vocab.StatusUnmeasurable), want: vocab.Skip},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := trafficPair(vocab.CellRef{Phase: vocab.PhaseTraffic}, tt.a, tt.b, sides{}, Policy{Tolerance: 0.05}).Decided; got != tt.want {
				t.Errorf("decided %v, want %v", got, tt.want)
			}
		})
	}
}
