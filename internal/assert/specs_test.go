package assert

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/views"
	"github.com/slogate/slogate/internal/vocab"
)

// shippedSpecs are the specs the repository ships in specs/: one per seed
// report (testdata/seeds) and the demo. Each must be found, so moving or
// emptying specs/ fails the test instead of passing it with nothing checked.
var shippedSpecs = []string{
	"demo.hcl",
	"glm-5.3-flash-nvfp4-h200x2.hcl",
	"ling-3.0-flash-int4-h200x2.hcl",
	"qwen3.5-4b-h200-dflash.hcl",
}

// loadShipped loads every spec of ../specs, failing on a Glob error, on an
// empty folder and when one of shippedSpecs is missing.
func loadShipped(t *testing.T) map[string]*spec.Spec {
	t.Helper()
	paths, err := filepath.Glob("../../specs/*.hcl")
	if err != nil {
		t.Fatalf("glob ../specs/*.hcl: %v", err)
	}
	if len(paths) == 0 {
		t.Fatal("no spec in ../specs: the shipped specs moved or were deleted")
	}
	specs := map[string]*spec.Spec{}
	for _, p := range paths {
		sp, diags := spec.Load(p, spec.LoadOptions{LookupEnv: func(string) (string, bool) { return "x", true }})
		if diags.HasErrors() {
			t.Fatalf("spec.Load(%s): %v", p, diags)
		}
		specs[filepath.Base(p)] = sp
	}
	for _, name := range shippedSpecs {
		if specs[name] == nil {
			t.Errorf("../../specs/%s is missing", name)
		}
	}
	return specs
}

// good and bad are metric values far on either side of any threshold a
// shipped spec sets: throughputs and counts high (low), latencies low (high).
func good(m metric.Metric) float64 {
	if m.HigherIsBetter {
		return 1e6
	}
	return 1e-3
}

func bad(m metric.Metric) float64 {
	if m.HigherIsBetter {
		return 1
	}
	return 1e9
}

// resultsWith measures every cell of sp's matrices and prefill block, each
// metric set by value.
func resultsWith(sp *spec.Spec, srv *spec.Server, value func(vocab.CellRef, metric.Metric) float64) *result.Results {
	res := &result.Results{Server: result.Server{Name: srv.Name, Model: srv.Model, Version: "0.11.0", KVCacheTokens: 1 << 30}}
	for _, mx := range sp.Matrices {
		for _, ctx := range mx.Contexts {
			for _, conc := range mx.Concurrency {
				c := result.DecodeCell{Matrix: mx.Label, Context: ctx, Concurrency: conc, Status: vocab.StatusValid}
				for _, m := range metric.Table {
					c.SetValue(m, value(c.Ref(), m))
				}
				res.Decode = append(res.Decode, c)
			}
		}
	}
	if sp.Prefill != nil {
		for _, ctx := range sp.Prefill.Contexts {
			c := result.PrefillCell{Context: ctx, Status: vocab.StatusValid}
			for _, m := range metric.Table {
				c.SetValue(m, value(c.Ref(), m))
			}
			res.Prefill = append(res.Prefill, c)
		}
	}
	return res
}

// expectCase is one expect cell measured at a controlled distance from its
// expected value.
type expectCase struct {
	block string
	ref   vocab.CellRef
	want  float64 // the expectation written in the spec
	got   float64 // the value measured
	pass  bool    // the verdict the expectation's tolerance calls for
	how   string
}

// plantExpects chooses, for every expect cell of sp in turn, a measured
// value inside the tolerance on the bad side (pass), beyond it (fail) or
// better than expected (pass), away from the limit so rounding cannot
// decide.
func plantExpects(t *testing.T, sp *spec.Spec) map[string]expectCase {
	t.Helper()
	cases := map[string]expectCase{}
	n := 0
	for _, e := range sp.Expects {
		phase, mx := vocab.PhaseDecode, sp.Matrix(e.Matrix)
		if e.Matrix == "prefill" {
			phase = vocab.PhasePrefill
		}
		m, ok := metric.Lookup(phase, e.Metric)
		if !ok {
			t.Fatalf("expect %s: unknown metric %s", e.Name, e.Metric)
		}
		worse, better := -1.0, 1.0 // the sign of a change for the worse / better
		if !m.HigherIsBetter {
			worse, better = 1, -1
		}
		for _, row := range e.Rows {
			for i, want := range row.Values {
				if want == nil {
					continue
				}
				ref := vocab.CellRef{Phase: phase, Context: row.Context}
				if phase == vocab.PhaseDecode {
					ref.Matrix, ref.Concurrency = mx.Label, mx.Concurrency[i]
				}
				c := expectCase{block: e.Name, ref: ref, want: *want}
				switch n % 3 {
				case 0:
					c.got, c.pass, c.how = *want*(1+worse*e.Tolerance/2), true, "worse, within the tolerance"
				case 1:
					c.got, c.pass, c.how = *want*(1+worse*(e.Tolerance+0.02)), false, "worse, beyond the tolerance"
				case 2:
					c.got, c.pass, c.how = *want*(1+better*0.3), true, "better than expected"
				}
				n++
				key := m.Name + " " + ref.Name()
				if prev, dup := cases[key]; dup {
					t.Fatalf("expects %s and %s both set %s: this test cannot control both", prev.block, e.Name, key)
				}
				cases[key] = c
			}
		}
	}
	return cases
}

// TestShippedSpecs evaluates every spec in specs/ against results that
// differ from its expectations and thresholds in controlled ways:
//   - expect cells measured worse within the tolerance pass, worse beyond
//     it fail (naming the expected value and the tolerance), better pass;
//   - with every cell good every assert passes; with the cells one assert
//     reads made bad, that assert fails with its error_message and the
//     values it read, and the asserts that read other cells still pass;
//   - with the cell an assert reads over capacity, that assert is a Fail
//     that says so (exit 1), never a Pass.
func TestShippedSpecs(t *testing.T) {
	for name, sp := range loadShipped(t) {
		t.Run(name, func(t *testing.T) {
			srv := sp.Servers[0]

			cases := plantExpects(t, sp)
			if len(cases) == 0 {
				t.Fatal("the spec has no expect cell to check")
			}
			res := resultsWith(sp, srv, func(ref vocab.CellRef, m metric.Metric) float64 {
				if c, ok := cases[m.Name+" "+ref.Name()]; ok {
					return c.got
				}
				return good(m)
			})
			seen, fails := 0, 0
			for _, v := range Evaluate(sp, srv, res, views.AssertWords{}) {
				if v.Kind != vocab.KindExpect {
					continue
				}
				var c expectCase
				found := false
				for _, x := range cases {
					if len(v.Cells) == 1 && v.Cells[0] == x.ref && strings.Contains(v.Test, "/expect/"+x.block+"/") {
						c, found = x, true
					}
				}
				if !found {
					t.Errorf("%s: a verdict for no planted cell (cells %v)", v.Test, v.Cells)
					continue
				}
				seen++
				want := vocab.Pass
				if !c.pass {
					want, fails = vocab.Fail, fails+1
				}
				if v.Outcome != want {
					t.Errorf("%s: measured %g against expected %g (%s): %v, want %v; %s %v", v.Test, c.got, c.want, c.how, v.Outcome, want, v.Message, v.Details)
				}
				if !c.pass && (!strings.Contains(v.Message, "the expected") || !strings.Contains(v.Message, "by more than")) {
					t.Errorf("%s: failure message %q does not say what was expected", v.Test, v.Message)
				}
			}
			if seen != len(cases) || fails == 0 {
				t.Errorf("%d expect verdicts for %d planted cells, %d failures; want one verdict per cell and some failures", seen, len(cases), fails)
			}

			allGood := resultsWith(sp, srv, func(_ vocab.CellRef, m metric.Metric) float64 { return good(m) })
			verdicts := Evaluate(sp, srv, allGood, views.AssertWords{})
			for _, a := range sp.Asserts {
				test := srv.Name + "/assert/" + a.Name
				if v := find(verdicts, test); v == nil || v.Outcome != vocab.Pass {
					t.Errorf("%s with every cell good: %+v, want pass", test, v)
				}
				if len(a.Cells) == 0 {
					continue
				}
				broken := resultsWith(sp, srv, func(ref vocab.CellRef, m metric.Metric) float64 {
					if slices.Contains(a.Cells, ref) {
						return bad(m)
					}
					return good(m)
				})
				after := Evaluate(sp, srv, broken, views.AssertWords{})
				v := find(after, test)
				switch {
				case v == nil:
					t.Errorf("%s: no verdict", test)
				case v.Outcome != vocab.Fail:
					t.Errorf("%s with %s bad: %v (%s), want fail", test, a.Cells[0].Name(), v.Outcome, v.Message)
				case v.Message != a.ErrorMessage:
					t.Errorf("%s: message %q, want the error_message %q", test, v.Message, a.ErrorMessage)
				case !strings.Contains(strings.Join(v.Details, "\n"), " = 1"):
					t.Errorf("%s: details %q do not show the value read", test, v.Details)
				}
				for _, other := range sp.Asserts {
					if other == a || slices.ContainsFunc(other.Cells, func(r vocab.CellRef) bool { return slices.Contains(a.Cells, r) }) {
						continue
					}
					if ov := find(after, srv.Name+"/assert/"+other.Name); ov == nil || ov.Outcome != vocab.Pass {
						t.Errorf("%s reads none of %s's cells, yet with them bad: %+v", other.Name, a.Name, ov)
					}
				}

				if a.Cells[0].Phase != vocab.PhaseDecode {
					continue
				}
				ref := a.Cells[0]
				c, _ := allGood.DecodeCell(ref.Matrix, ref.Context, ref.Concurrency)
				saved := *c
				c.Status = vocab.StatusOverCapacity
				if v := find(Evaluate(sp, srv, allGood, views.AssertWords{}), test); v == nil || v.Outcome != vocab.Fail || !strings.Contains(v.Message, "is over capacity") {
					t.Errorf("%s with %s over capacity: %+v, want a fail that says it is over capacity", test, ref.Name(), v)
				}
				*c = saved
			}
		})
	}
}

func find(vs []result.Verdict, test string) *result.Verdict {
	for i := range vs {
		if vs[i].Test == test {
			return &vs[i]
		}
	}
	return nil
}
