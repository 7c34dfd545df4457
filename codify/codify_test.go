package codify_test

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slogate/slogate/assert"
	"github.com/slogate/slogate/codify"
	"github.com/slogate/slogate/result"
	"github.com/slogate/slogate/spec"
)

// Regenerate the golden file with: go test ./codify -update
var update = flag.Bool("update", false, "rewrite testdata/codify.golden")

// minimalSpec declares the same matrix and prefill contexts as run().
const minimalSpec = `server "qwen" {
  model = "Qwen/Qwen3.5-4B"
}

prefill {
  contexts = ["8K", "16K"]
}

matrix "decode" {
  contexts    = ["8K", "16K"]
  concurrency = [1, 2, 64]
}
`

func run() *result.Results {
	cell := func(ctx, conc int, st result.Status, tps, ttft float64) result.DecodeCell {
		return result.DecodeCell{Matrix: "decode", Context: ctx, Concurrency: conc, Status: st, TotalTPS: tps, TTFTMs: ttft, TBTMs: 2.5}
	}
	return &result.Results{
		Schema:  result.Schema,
		Server:  result.Server{Name: "qwen", Model: "Qwen/Qwen3.5-4B", Version: "0.11.0"},
		Started: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC),
		Prefill: []result.PrefillCell{
			{Context: 8192, Status: result.StatusValid, TPS: 40123.456, TTFTMs: 204.17},
			{Context: 16384, Status: result.StatusValid, TPS: 38001.06, TTFTMs: 431.14},
		},
		Decode: []result.DecodeCell{
			cell(8192, 1, result.StatusValid, 408.26, 49.93),
			cell(8192, 2, result.StatusValid, 779.94, 51.2),
			cell(8192, 64, result.StatusValid, 6018.47, 300.4),
			cell(16384, 1, result.StatusValid, 401.15, 80.02),
			cell(16384, 2, result.StatusQueued, 760.33, 95),
			cell(16384, 64, result.StatusOverCapacity, 0, 0),
		},
	}
}

func TestGenerateGolden(t *testing.T) {
	got, err := codify.Generate(run(), codify.Options{Margin: 0.1, Source: "slogate-out/qwen/results.json"})
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "codify.golden")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./codify -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("output differs from %s (-want +got); if intended, run go test ./codify -update:\n%s", golden, diff)
	}
}

// TestRoundTrip: the output appended to a spec with the same matrix loads
// without diagnostics, and the very run it came from passes every test; a run
// 20% slower fails some, so the blocks are not vacuous.
func TestRoundTrip(t *testing.T) {
	tests := []struct {
		name     string
		margin   float64
		slowdown float64 // multiplies every throughput and divides latencies
		want     result.Outcome
	}{
		{"same run, 10% margin", 0.1, 1, result.Pass},
		{"same run, zero margin", 0, 1, result.Pass},
		{"slower run, 10% margin", 0.1, 0.8, result.Fail},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := run()
			out, err := codify.Generate(res, codify.Options{Margin: tc.margin})
			if err != nil {
				t.Fatal(err)
			}
			src := minimalSpec + "\n" + string(out)
			sp, diags := spec.LoadSource("codified.hcl", []byte(src), spec.LoadOptions{})
			if len(diags) > 0 {
				t.Fatalf("spec.LoadSource: %v\n%s", diags, src)
			}
			for i := range res.Decode {
				res.Decode[i].TotalTPS *= tc.slowdown
				res.Decode[i].TTFTMs /= tc.slowdown
			}
			for i := range res.Prefill {
				res.Prefill[i].TPS *= tc.slowdown
			}
			verdicts := assert.Evaluate(sp, sp.Servers[0], res)
			if want := 5 + 2 + 3; len(verdicts) != want {
				t.Errorf("%d verdicts, want %d (5 measured decode cells, 2 prefill rows, 3 asserts)", len(verdicts), want)
			}
			worst := result.Pass
			for _, v := range verdicts {
				worst = result.Worst(worst, v.Outcome)
				if tc.want == result.Pass && v.Outcome != result.Pass {
					t.Errorf("%s: %v %s %v", v.Test, v.Outcome, v.Message, v.Details)
				}
			}
			if worst != tc.want {
				t.Errorf("worst outcome %v, want %v\n%s", worst, tc.want, src)
			}
		})
	}
}

func TestGenerateNothingMeasured(t *testing.T) {
	res := &result.Results{Server: result.Server{Name: "qwen"}, Decode: []result.DecodeCell{
		{Matrix: "decode", Context: 8192, Concurrency: 64, Status: result.StatusOverCapacity},
	}}
	if _, err := codify.Generate(res, codify.Options{Margin: 0.1}); err != codify.ErrNothingMeasured {
		t.Errorf("error %v, want ErrNothingMeasured", err)
	}
}
