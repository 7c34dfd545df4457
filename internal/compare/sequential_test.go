package compare

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/warning"
)

// TestPocockBound: the two-look bound of Pocock (1977) for equally spaced
// looks (correlation √½) at one-sided α = 0.05 is 1.875 (Jennison &
// Turnbull 2000, Table 2.1, two-sided 0.10); one look (correlation 1) is
// the plain 1.645, independent looks the Šidák 1.955.
func TestPocockBound(t *testing.T) {
	tests := []struct {
		name string
		rho  float64
		want float64
	}{
		{"equally spaced looks", math.Sqrt(0.5), 1.875},
		{"nearly one look", 0.99999, 1.645},
		{"independent looks", 0, 1.955},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := pocockBound(tc.rho, 0.05); math.Abs(got-tc.want) > 0.003 {
				t.Errorf("pocockBound(%v, 0.05) = %.4f, want %.3f", tc.rho, got, tc.want)
			}
		})
	}
}

// TestSequentialLevel: the level of each look lies between one look's α
// and the Šidák level, falls as the baseline grows (looks less
// correlated), and is attainable at the first look from a baseline of 4.
func TestSequentialLevel(t *testing.T) {
	s := Sequential{}
	prev := 1.0
	for _, n := range []int{4, 5, 10, 20, 100} {
		l := s.Level(n)
		if l >= 0.05 || l <= 1-math.Sqrt(0.95) {
			t.Errorf("baseline %d: level %v outside (Šidák 0.0253, 0.05)", n, l)
		}
		if l > prev {
			t.Errorf("baseline %d: level %v above that of a smaller baseline (%v)", n, l, prev)
		}
		prev = l
		if _, _, ok := attainable(n, DefaultMinRepeat, l); !ok {
			t.Errorf("baseline %d: the first look (%d repeats) cannot attain the level %v", n, DefaultMinRepeat, l)
		}
	}
}

func TestSequentialLook(t *testing.T) {
	spread := func(center, noise float64, n int) []float64 {
		// n values evenly spread in ±noise·√3 around center (a uniform of
		// standard deviation ≈ noise): deterministic samples.
		out := make([]float64, n)
		for i := range out {
			f := -1 + 2*float64(i)/float64(max(n-1, 1))
			out[i] = center * math.Exp(f*noise*math.Sqrt(3))
		}
		// Interleave, so that prefixes are spread too.
		for i := 1; i < n; i += 2 {
			j := n - i
			if j > i {
				out[i], out[j] = out[j], out[i]
			}
		}
		return out
	}
	s := Sequential{Tolerance: 0.05}
	tests := []struct {
		name      string
		baseline  []float64
		candidate []float64
		higher    bool
		stop      bool
		rule      LookRule
		change    Change // at a look that decided
		sized     int    // the repeats whose noise sized the cell (0: not sized)
	}{
		{"fewer than Min repeats", spread(100, 0.01, 5), spread(100, 0.01, 3), true, false, BelowMin, 0, 0},
		{"quiet and unchanged: within at the first look", spread(100, 0.005, 5), spread(100, 0.005, 4), true, true, FirstLook, Unchanged, 0},
		{"quiet and 20% slower: regressed at the first look", spread(100, 0.005, 5), spread(80, 0.005, 4), true, true, FirstLook, Regressed, 0},
		{"latency 20% up: regressed at the first look", spread(10, 0.005, 5), spread(12, 0.005, 4), false, true, FirstLook, Regressed, 0},
		{"noisy at the first look: the second stage", spread(100, 0.03, 10), spread(97, 0.03, 4), true, false, SecondStage, 0, 4},
		{"noisy, one repeat into the second stage: no look", spread(100, 0.03, 10), append(spread(97, 0.03, 4), 97), true, false, SecondStage, 0, 4},
		{"noisy at Max: the last look", spread(100, 0.03, 10), spread(95, 0.03, 20), true, true, SecondLookInconclusive, 0, 4},
		{"a baseline of one repeat can decide nothing", []float64{100}, spread(100, 0.01, 4), true, true, Undecidable, 0, 0},
		{"no baseline: quiet is precise enough at Min", nil, spread(100, 0.005, 4), true, true, AlonePrecise, 0, 4},
		{"no baseline: noisy needs more", nil, spread(100, 0.04, 4), true, false, AloneRepeating, 0, 4},
		{"no baseline: Max stops", nil, spread(100, 0.08, 20), true, true, AloneMax, 0, 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := s.Look(tc.baseline, tc.candidate, tc.higher)
			if l.Stop != tc.stop || l.Rule != tc.rule || l.Change != tc.change || l.Sized != tc.sized {
				t.Errorf("Look = %+v; want stop %v by %s (%v), sized from %d", l, tc.stop, tc.rule, tc.change, tc.sized)
			}
			if l.Repeats != len(tc.candidate) || l.Min != 4 || l.Max != 20 || l.BaselineRepeats != len(tc.baseline) || l.Tolerance != 0.05 {
				t.Errorf("Look's figures %+v: want %d repeats of 4 to 20 against %d, tolerance 0.05", l, len(tc.candidate), len(tc.baseline))
			}
			if l.Sized > 0 && (l.Noise <= 0 || l.Target < l.Min) {
				t.Errorf("Look sized from %d repeats at noise %v to %d: want a noise and a target", l.Sized, l.Noise, l.Target)
			}
		})
	}
}

// TestSequentialSecondStageSize: stage two grows with the noise of stage
// one, and stops at Max when the baseline caps the power.
func TestSequentialSecondStageSize(t *testing.T) {
	s := Sequential{}.withDefaults()
	base := func(noise float64, n int) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = 100 * math.Exp(noise*float64(2*(i%2)-1))
		}
		return out
	}
	prev := 0
	for _, noise := range []float64{0.01, 0.02, 0.03, 0.04} {
		got, _ := s.secondStage(base(noise, 20), base(noise, 4), true, s.Level(20))
		if got < prev || got <= s.Min || got > s.Max {
			t.Errorf("noise %v: second stage %d (previous noise %d; Min %d, Max %d)", noise, got, prev, s.Min, s.Max)
		}
		prev = got
	}
	if got, _ := s.secondStage(base(0.05, 5), base(0.05, 4), true, s.Level(5)); got != s.Max {
		t.Errorf("a baseline of 5 at noise 5%%: second stage %d, want Max %d (the baseline caps the power)", got, s.Max)
	}
}

// TestEstimates: the repeats a tolerance needs catch the tolerance and
// decide a change of twice it with power 0.9, and the baseline's power
// caps what a candidate's repeats can decide.
func TestEstimates(t *testing.T) {
	for _, noise := range []float64{0.005, 0.02, 0.05} {
		n := RepeatsFor(noise, 0.05, 0.05)
		if n == 0 {
			t.Fatalf("noise %v: no repeats decide 5%%", noise)
		}
		if c := SmallestChange(noise, n, 0.05); !(c <= 0.05) {
			t.Errorf("noise %v: RepeatsFor = %d, but %d a side catch only %.3f", noise, n, n, c)
		}
		// The fewest: one repeat less misses the power at twice the
		// tolerance (×1/1.1 against an edge of ×0.95).
		d := math.Log(0.95 * 1.1)
		if p := powerToDecide(n, n, noise, d, 0.05); p < DecisionPower {
			t.Errorf("noise %v: RepeatsFor = %d, but its power at ×1/1.1 is only %.3f", noise, n, p)
		}
		if p := powerToDecide(n-1, n-1, noise, d, 0.05); n > 1 && p >= DecisionPower {
			t.Errorf("noise %v: RepeatsFor = %d, but %d a side already have power %.3f", noise, n, n-1, p)
		}
	}
	if n := RepeatsFor(0.05, 0.05, 0.05); n < 15 || n > 25 {
		t.Errorf("noise 5%%, tolerance 5%%: RepeatsFor = %d, want about 20", n)
	}
	if c := SmallestChange(0.02, 2, 0.05); !math.IsNaN(c) {
		t.Errorf("2 a side cannot attain 0.05, yet catch %v", c)
	}
	// "A baseline of 5 at noise 0.05 cannot reach a decision however many
	// repeats the candidate adds."
	s := Sequential{}
	for _, m := range []int{20, 100} {
		p := PowerOfBaseline(5, 0.05, 0.05, s.Level(5), m)
		if p.Enough || p.Need <= 5 {
			t.Errorf("baseline 5 at noise 5%% against %d candidate repeats: %+v, want not enough and a need above 5", m, p)
		}
	}
	if p := PowerOfBaseline(5, 0.01, 0.05, s.Level(5), 20); !p.Enough || p.Need > 5 {
		t.Errorf("baseline 5 at noise 1%%: %+v, want enough", p)
	}
}

// TestBaselineWarnings: a baseline of 5 repeats at noise 5% cannot be
// decided against any candidate, and the warning says how many baseline
// repeats would; a quiet baseline gives no warning.
func TestBaselineWarnings(t *testing.T) {
	spread := func(noise float64) []float64 {
		// Five values of log standard deviation noise: 0, ±a, ±2a with
		// a = noise / √2.5.
		a := noise / math.Sqrt(2.5)
		var out []float64
		for _, k := range []float64{0, 1, -1, 2, -2} {
			out = append(out, 6000*math.Exp(k*a))
		}
		return out
	}
	base := func(noise float64) *result.Results {
		return &result.Results{Decode: []result.DecodeCell{{Matrix: "decode", Context: 8192, Concurrency: 64, Status: vocab.StatusValid,
			TotalTPS: 6000, Repeats: 5, Samples: map[string][]float64{"total_tps": spread(noise)}}}}
	}
	got := BaselineWarnings(base(0.05), 5, 0.05, 0.05)
	if len(got) != 1 {
		t.Fatalf("warnings %+v, want one", got)
	}
	if s := got[0]; s.Phase != vocab.PhaseDecode || s.Metric != "total_tps" || s.Noisiest.Name() != "decode/ctx=8K/conc=64" {
		t.Errorf("shortfall %+v, want decode total_tps, the noisiest decode/ctx=8K/conc=64", s)
	}
	w := got[0].Warning("", "")
	fig := func(name string) float64 {
		v, ok := w.Figure(name)
		if !ok {
			t.Errorf("no figure %s in %v", name, w.Figures)
		}
		return v
	}
	// One of one cells short, the noisiest 8K×64 at noise 5% over 5
	// repeats; capped (no number of candidate repeats would do).
	want := map[string]float64{warning.FigShortCells: 1, warning.FigCells: 1, warning.FigCandidateRepeats: 5, warning.FigBaselineRepeats: 5,
		warning.FigContext: 8192, warning.FigConcurrency: 64, warning.FigCapped: 1, warning.FigTolerance: 0.05,
		warning.FigDistance: math.Expm1(decisionDistance(0.05))}
	for name, v := range want {
		if got := fig(name); got != v {
			t.Errorf("figure %s = %v, want %v", name, got, v)
		}
	}
	if w.Code != warning.PowerShortfall || w.Subject != "total_tps" || math.Abs(fig(warning.FigNoise)-0.05) > 1e-9 || fig(warning.FigNeedRepeats) == 1 {
		t.Errorf("warning %+v, want a power_shortfall of total_tps at noise 5%%, needing more than one baseline repeat", w)
	}
	// The figures agree with each other: the noisiest cell's power is
	// short of 0.9, so the change these repeats decide with power 0.9
	// lies beyond the one the check sizes for; with the repeats needed
	// the power is reached.
	p := PowerOfBaseline(5, fig(warning.FigNoise), 0.05, 0.05, 5)
	if pw := fig(warning.FigPower); pw != p.Power || pw >= DecisionPower || fig(warning.FigDetectable) <= fig(warning.FigDistance) {
		t.Errorf("power %v (want %v, under 0.9), detectable %v, distance %v: want detectable beyond the distance", pw, p.Power, fig(warning.FigDetectable), fig(warning.FigDistance))
	}
	if d := math.Log1p(fig(warning.FigDetectable)); math.Abs(powerToDecide(5, 5, fig(warning.FigNoise), d, 0.05)-DecisionPower) > 1e-9 {
		t.Errorf("power at the detectable change = %v, want 0.9", powerToDecide(5, 5, fig(warning.FigNoise), d, 0.05))
	}
	if got := BaselineWarnings(base(0.005), 5, 0.05, 0.05); len(got) != 0 {
		t.Errorf("a quiet baseline warns: %+v", got)
	}
}

// TestCompareDecidesAsTheDesign: a run measured with repeat = "auto" is
// compared at the design's level, so that diff and -baseline give the
// decision the stopping rule reached (regressed, within, or inconclusive
// at the last look).
func TestCompareDecidesAsTheDesign(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	s := Sequential{Max: 20, Tolerance: 0.05, Alpha: 0.05}
	tps := metric.Must(vocab.PhaseDecode, "total_tps")
	seen := map[Change]bool{}
	for i := range 60 {
		ratio := []float64{1, 0.95, 1 / 1.1}[i%3]
		var a, b []float64
		for range 10 {
			a = append(a, 100*math.Exp(0.03*rng.NormFloat64()))
		}
		var look Look
		for !look.Stop {
			b = append(b, 100*ratio*math.Exp(0.03*rng.NormFloat64()))
			look = s.Look(a, b, true)
		}
		cell := func(xs []float64) result.DecodeCell {
			return result.DecodeCell{Matrix: "decode", Context: 8192, Concurrency: 64, Status: vocab.StatusValid,
				TotalTPS: metric.Median.Of(xs), Repeats: len(xs), Samples: map[string][]float64{"total_tps": xs}}
		}
		ra := &result.Results{Measure: result.Measure{Repeat: 10}, Decode: []result.DecodeCell{cell(a)}}
		rb := &result.Results{Measure: result.Measure{Repeat: 4, RepeatAuto: true, MaxRepeat: 20}, Decode: []result.DecodeCell{cell(b)}}
		c := Build(ra, rb, Policy{Tolerance: 0.05, Alpha: 0.05, Metrics: []string{tps.Name}}).Tables[0].Cells[0]
		if c.Test == nil || c.Test.Alpha != s.Level(10) {
			t.Fatalf("cell decided at %+v, want the design's level %v", c.Test, s.Level(10))
		}
		change := c.Change
		if change == Improved {
			change = Unchanged
		}
		seen[change] = true
		if decided := look.Rule == FirstLook || look.Rule == SecondLook; decided != (change != Inconclusive) || (decided && look.Change != change) {
			t.Errorf("%d repeats: the design stopped with %s (%v), the comparison says %v", len(b), look.Rule, look.Change, c.Change)
		}
	}
	if !seen[Regressed] || !seen[Unchanged] || !seen[Inconclusive] {
		t.Errorf("decisions seen %v: want each outcome at least once", seen)
	}
}

// TestLookRecordNoNaN: a look sized from repeats whose noise cannot be
// measured (a value ≤ 0 among them) records no noise rather than a NaN,
// which results.json cannot hold.
func TestLookRecordNoNaN(t *testing.T) {
	r := Look{Rule: AloneMax, Repeats: 20, Sized: 8, Noise: math.NaN()}.Record("total_tps")
	if r.Noise != 0 {
		t.Errorf("recorded noise %v, want 0 for a NaN", r.Noise)
	}
	if _, err := json.Marshal(r); err != nil {
		t.Errorf("the record does not marshal: %v", err)
	}
}
