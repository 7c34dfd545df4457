package assert

import (
	"regexp"
	"testing"

	"github.com/slogate/slogate/internal/plan"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/views"
	"github.com/slogate/slogate/internal/vocab"
)

// TestRunSelectsEachVerdictByName checks that `-run` and verdicts spell test
// names alike: `-run '^<verdict name>$'` must keep the block that produced
// the verdict, for an assert and for every cell of an expect block (decode
// and prefill), or `-run` would silently select nothing.
func TestRunSelectsEachVerdictByName(t *testing.T) {
	sp, res := fixture()
	withAssert(t, sp, "decode_8k", `decode["8K"][64].total_tps >= 5000`, "too slow")
	sp.Expects = []*spec.Expect{
		{Name: "tps", Metric: "total_tps", Tolerance: 0.05, Rows: []spec.ExpectRow{rowAt(8192, 10, ptr(400), ptr(6018.4), nil)}},
		{Name: "prefill_tps", Matrix: "prefill", Metric: "tps", Tolerance: 0.05, Rows: []spec.ExpectRow{rowAt(8192, 30, ptr(44000))}},
	}
	srv := &spec.Server{Name: res.Server.Name}
	verdicts := Evaluate(sp, srv, res, views.AssertWords{})
	if len(verdicts) != 4 {
		t.Fatalf("got %d verdicts, want 4 (1 assert + 3 expect cells): %+v", len(verdicts), verdicts)
	}
	for _, v := range verdicts {
		t.Run(v.Test, func(t *testing.T) {
			p := plan.New(sp, srv, regexp.MustCompile("^"+regexp.QuoteMeta(v.Test)+"$"))
			var kept []string
			for _, a := range p.Asserts {
				kept = append(kept, vocab.TestID{Server: srv.Name, Kind: vocab.KindAssert, Block: a.Name}.Name())
			}
			for _, e := range p.Expects {
				kept = append(kept, vocab.TestID{Server: srv.Name, Kind: vocab.KindExpect, Block: e.Name}.Name())
			}
			if len(kept) != 1 {
				t.Fatalf("-run %q kept blocks %v, want exactly the one of the verdict", v.Test, kept)
			}
			if want := v.Test[:len(kept[0])]; kept[0] != want {
				t.Errorf("-run %q kept %s", v.Test, kept[0])
			}
		})
	}
}
