package assert

import (
	"path/filepath"
	"testing"

	"github.com/slogate/slogate/result"
	"github.com/slogate/slogate/spec"
)

// measuredLike builds results that measure every cell of sp: total_tps is
// the spec's own expected value where it has one (so every expect cell sits
// exactly on its expectation), generous numbers elsewhere.
func measuredLike(sp *spec.Spec, srv *spec.Server) *result.Results {
	res := &result.Results{Server: result.Server{Name: srv.Name, Model: srv.Model, Version: "0.11.0", KVCacheTokens: 1 << 30}}
	expected := map[result.CellRef]float64{}
	for _, e := range sp.Expects {
		if e.Metric != "total_tps" || e.Matrix == "prefill" {
			continue
		}
		m := sp.Matrix(e.Matrix)
		for _, row := range e.Rows {
			for i, v := range row.Values {
				if v != nil {
					expected[result.CellRef{Phase: result.PhaseDecode, Matrix: m.Label, Context: row.Context, Concurrency: m.Concurrency[i]}] = *v
				}
			}
		}
	}
	for _, m := range sp.Matrices {
		for _, ctx := range m.Contexts {
			for _, conc := range m.Concurrency {
				ref := result.CellRef{Phase: result.PhaseDecode, Matrix: m.Label, Context: ctx, Concurrency: conc}
				tps, ok := expected[ref]
				if !ok {
					tps = 1e6
				}
				res.Decode = append(res.Decode, result.DecodeCell{Matrix: m.Label, Context: ctx, Concurrency: conc, Status: result.StatusValid,
					TotalTPS: tps, PerRequestTPS: 1e6, TTFTMs: 1, TBTMs: 1})
			}
		}
	}
	if sp.Prefill != nil {
		for _, ctx := range sp.Prefill.Contexts {
			res.Prefill = append(res.Prefill, result.PrefillCell{Context: ctx, Status: result.StatusValid, TPS: 1e6, TTFTMs: 1})
		}
	}
	return res
}

// TestShippedSpecs evaluates every spec in specs/ as the spec loader
// produces it: with every cell measured, no verdict is an Error (the
// conditions and expect rows fit the data model) and the expect cells pass;
// with the cell an assert reads over capacity, that assert is an
// infrastructure Error (exit 3), never a Pass.
func TestShippedSpecs(t *testing.T) {
	paths, _ := filepath.Glob("../specs/*.hcl")
	if len(paths) == 0 {
		t.Skip("no specs in ../specs")
	}
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			sp, diags := spec.Load(p, spec.LoadOptions{LookupEnv: func(string) (string, bool) { return "x", true }})
			if diags.HasErrors() {
				t.Fatalf("spec.Load: %v", diags)
			}
			srv := sp.Servers[0]
			res := measuredLike(sp, srv)
			verdicts := Evaluate(sp, srv, res)
			if len(verdicts) == 0 {
				t.Fatal("no verdicts")
			}
			for _, v := range verdicts {
				if v.Outcome == result.Error {
					t.Errorf("%s: error %s %v", v.Test, v.Message, v.Details)
				}
				if v.Kind == result.KindExpect && v.Outcome != result.Pass {
					t.Errorf("%s: %v, want pass (measured = expected)", v.Test, v.Outcome)
				}
			}
			for _, a := range sp.Asserts {
				if len(a.Cells) == 0 || a.Cells[0].Phase != result.PhaseDecode {
					continue
				}
				ref := a.Cells[0]
				c, _ := res.DecodeCell(ref.Matrix, ref.Context, ref.Concurrency)
				saved := *c
				c.Status = result.StatusOverCapacity
				for _, v := range Evaluate(sp, srv, res) {
					if v.Test == srv.Name+"/assert/"+a.Name && (v.Outcome != result.Error || !v.Infra) {
						t.Errorf("%s with %s over capacity: %v infra=%v, want an infrastructure error", v.Test, ref.Name(), v.Outcome, v.Infra)
					}
				}
				*c = saved
			}
		})
	}
}
