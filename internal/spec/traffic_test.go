package spec

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"

	"github.com/slogate/slogate/internal/vocab"
)

func TestTrafficDecodes(t *testing.T) {
	src := `
server "qwen" { model = "Qwen/Qwen3.5-4B" }
measure { duration = "20s" }
traffic "steady" {
  context    = "8K"
  rate       = [0.5, 1, 4]
  arrivals   = "gamma"
  burstiness = 0.5
  warmup     = "2s"
  seed       = 7
  slo        = { ttft_ms = 2000, tbt_ms = 50 }
}
traffic "flat" {
  context  = 1024
  rate     = 3
  arrivals = "constant"
  duration = "5s"
  max_outstanding = 64
  saturation_after = "3s"
}
traffic "cold" {
  context = 1024
  rate    = 1
  warmup  = "0s"
  saturation_after = "0s"
}
assert "holds" {
  condition = steady["8K"]["0.5"].goodput_rps >= 0.4 && steady["8K"][4].ttft_ms_p99 < 2000 && flat[1024][3].status == "valid"
}
`
	sp, diags := LoadSource("t.hcl", []byte(src), LoadOptions{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	ttft, tbt := 2000.0, 50.0
	want := []*Traffic{
		{Label: "steady", Context: 8192, Rates: []float64{0.5, 1, 4}, Arrivals: "gamma", Burstiness: 0.5,
			Duration: 20 * time.Second, DurationText: "20s", WarmUp: 2 * time.Second, Seed: 7,
			MaxOutstanding: vocab.DefaultMaxOutstanding, SLO: TrafficSLO{TTFTMs: &ttft, TBTMs: &tbt}},
		{Label: "flat", Context: 1024, Rates: []float64{3}, Arrivals: "constant",
			Duration: 5 * time.Second, DurationText: "5s", WarmUp: DefaultTrafficWarmUp, MaxOutstanding: 64, SaturationAfter: 3 * time.Second},
		// warmup = "0s" is no warm-up, not the default's 10 s;
		// saturation_after = "0s" never stops the cell as saturated.
		{Label: "cold", Context: 1024, Rates: []float64{1}, Arrivals: "poisson",
			Duration: 20 * time.Second, DurationText: "20s", WarmUp: 0, MaxOutstanding: vocab.DefaultMaxOutstanding, SaturationOff: true},
	}
	if d := cmp.Diff(want, sp.Traffic, cmp.FilterPath(func(p cmp.Path) bool {
		f := p.Last().String()
		return f == ".DeclRange" || f == ".ContextRange" || f == ".LoopRange"
	}, cmp.Ignore())); d != "" {
		t.Errorf("traffic blocks (-want +got):\n%s", d)
	}
	wantCells := []vocab.CellRef{
		{Phase: vocab.PhaseTraffic, Matrix: "steady", Context: 8192, Rate: 0.5},
		{Phase: vocab.PhaseTraffic, Matrix: "steady", Context: 8192, Rate: 4},
		{Phase: vocab.PhaseTraffic, Matrix: "flat", Context: 1024, Rate: 3},
	}
	if d := cmp.Diff(wantCells, sp.Asserts[0].Cells); d != "" {
		t.Errorf("cells the assert reads (-want +got):\n%s", d)
	}
}

func TestTrafficDiagnosticDetails(t *testing.T) {
	tests := []struct {
		name, block string
		want        []string // phrases of the one diagnostic's detail
	}{
		{name: "arrivals suggestion", block: `arrivals = "poison"`, want: []string{`"poisson", "constant", "gamma" or "trace"`, `Did you mean "poisson"?`}},
		{name: "slo suggestion", block: `slo = { ttft_msec = 1 }`, want: []string{"ttft_ms, tbt_ms, e2e_ms", `Did you mean "ttft_ms"?`}},
		{name: "rate not positive", block: `rate = [0]`, want: []string{"more than 0 requests per second; got 0"}},
		{name: "negative warmup", block: `warmup = "-2s"`, want: []string{`warmup must be a duration such as "0s" (none)`, `got "-2s"`}},
		{name: "negative saturation_after", block: `saturation_after = "-1s"`, want: []string{`saturation_after must be a duration such as "0s" (none)`}},
		{name: "saturation_after in a closed loop", block: "concurrency = [4]\nsaturation_after = \"5s\"", want: []string{"saturation_after stops an open loop", "use rate"}},
		{name: "burstiness without gamma", block: "burstiness = 2", want: []string{`arrivals = "poisson"`, `Set arrivals = "gamma"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := tt.block
			if !strings.HasPrefix(body, "rate") && !strings.HasPrefix(body, "concurrency") {
				body = "rate = [1]\n" + body
			}
			src := "server \"q\" { model = \"m\" }\ntraffic \"t\" {\ncontext = \"1K\"\n" + body + "\n}\n"
			_, diags := LoadSource("t.hcl", []byte(src), LoadOptions{})
			errs := diags.Errs()
			if len(errs) != 1 {
				t.Fatalf("want one diagnostic, got %v", diags)
			}
			d := errs[0].(*hcl.Diagnostic)
			for _, w := range tt.want {
				if !strings.Contains(d.Detail, w) {
					t.Errorf("detail %q lacks %q", d.Detail, w)
				}
			}
			if d.Subject == nil || d.Subject.Start.Line < 3 {
				t.Errorf("subject %v is not in the traffic block", d.Subject)
			}
		})
	}
}
