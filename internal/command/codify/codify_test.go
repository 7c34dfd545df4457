package codify_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slogate/slogate/internal/assert"
	"github.com/slogate/slogate/internal/command/codify"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/views"
	"github.com/slogate/slogate/internal/vocab"
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
	cell := func(ctx, conc int, st vocab.Status, tps, ttft float64) result.DecodeCell {
		return result.DecodeCell{Matrix: "decode", Context: ctx, Concurrency: conc, Status: st, TotalTPS: tps, TTFTMs: ttft, TBTMs: 2.5}
	}
	// The TTFT p99 of 8K × 1 rests on one request (left out and listed);
	// that of 8K × 64 on 640 (asserted).
	c1, c64 := cell(8192, 1, vocab.StatusValid, 408.26, 49.93), cell(8192, 64, vocab.StatusValid, 6018.47, 300.4)
	c1.TTFTMsP90, c1.TTFTMsP99 = 49.93, 49.93
	c1.Stats = map[string]float64{"ttft_ms_count": 1}
	c64.TTFTMsP90, c64.TTFTMsP99 = 420, 512.3
	c64.Stats = map[string]float64{"ttft_ms_count": 640}
	return &result.Results{
		Schema:   result.Schema,
		Server:   result.Server{Name: "qwen", Model: "Qwen/Qwen3.5-4B", Version: "0.11.0"},
		Started:  time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC),
		Finished: time.Date(2026, 11, 30, 8, 20, 0, 0, time.UTC),
		Prefill: []result.PrefillCell{
			{Context: 8192, Status: vocab.StatusValid, TPS: 40123.456, TTFTMs: 204.17},
			{Context: 16384, Status: vocab.StatusValid, TPS: 38001.06, TTFTMs: 431.14},
		},
		Decode: []result.DecodeCell{
			c1,
			cell(8192, 2, vocab.StatusValid, 779.94, 51.2),
			c64,
			cell(16384, 1, vocab.StatusValid, 401.15, 80.02),
			cell(16384, 2, vocab.StatusQueued, 760.33, 95),
			cell(16384, 64, vocab.StatusOverCapacity, 0, 0),
		},
	}
}

// repeatedRun is run() with five repeats of the 8K × 64 cell, at about 2 %
// noise in total_tps.
func repeatedRun() *result.Results {
	res := run()
	c := &res.Decode[2]
	c.Repeats = 5
	c.Samples = map[string][]float64{"total_tps": {6018.47, 5850.2, 6201.9, 5960.0, 6120.3}, "ttft_ms": {300.4, 301, 299.9, 300.2, 300.8}, "tbt_ms": {2.5, 2.5, 2.51, 2.49, 2.5}}
	return res
}

// TestMeasuredNoise: codify sizes repeat from the largest measured noise
// and warns when -margin is below the smallest change the run's repeats
// can tell from it; a run without repeats says so. By hand: the sd of the
// log samples is 0.0227; 5 + 5 attain α′ = 0.0476, so the smallest change
// is exp((z(0.9524) + z(0.9)) × 0.0227 × √(2/5 × π/3)) − 1 = 4.4 %; a 2 %
// tolerance (compare sizes it for log(0.98 × 1.04) = 0.0190, the nearer
// of no change and twice the tolerance) needs n = 26 a side, 10 % needs 3.
func TestMeasuredNoise(t *testing.T) {
	tests := []struct {
		name        string
		res         *result.Results
		margin      float64
		wantComment []string
		wantWarning string // "" none
	}{
		{name: "no repeats", res: run(), margin: 0.1,
			wantComment: []string{"No cell was repeated, so no noise was measured"}},
		{name: "a margin the noise supports", res: repeatedRun(), margin: 0.1,
			wantComment: []string{"Measured noise (the largest CV over the repeated cells): 2.27% (decode/ctx=8K/conc=64 total_tps).",
				"A 10% tolerance needs 3 repeats a side at that noise", "#   repeat = 4",
				"With 5 repeats a side the smallest change a gate can tell from this noise is 4.4%."}},
		{name: "a margin below the noise", res: repeatedRun(), margin: 0.02,
			wantComment: []string{"A 2% tolerance needs 26 repeats a side", "#   repeat = 26"},
			wantWarning: "-margin 2% is below what the measured noise allows: at 2.27% noise (decode/ctx=8K/conc=64 total_tps) 5 repeats a side tell a change from noise only from 4.4%; use -margin 5% or more, or measure with repeat = 26"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := codify.MeasuredNoise(tc.res, tc.margin, 0)
			c := n.Comment(tc.margin)
			for _, w := range tc.wantComment {
				if !strings.Contains(c, w) {
					t.Errorf("comment:\n%s\nwant it to hold %q", c, w)
				}
			}
			if got := n.Warning(tc.margin); got != tc.wantWarning {
				t.Errorf("warning:\n%s\nwant:\n%s", got, tc.wantWarning)
			}
		})
	}
}

func TestGenerateGolden(t *testing.T) {
	got, err := codify.Generate(repeatedRun(), codify.Options{Margin: 0.1, Source: "slogate-out/qwen/results.json"})
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
		want     vocab.Outcome
	}{
		{"same run, 10% margin", 0.1, 1, vocab.Pass},
		{"same run, zero margin", 0, 1, vocab.Pass},
		{"slower run, 10% margin", 0.1, 0.8, vocab.Fail},
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
				res.Decode[i].TTFTMsP99 /= tc.slowdown
			}
			for i := range res.Prefill {
				res.Prefill[i].TPS *= tc.slowdown
			}
			verdicts := assert.Evaluate(sp, sp.Servers[0], res, views.AssertWords{})
			if want := 5 + 2 + 4; len(verdicts) != want {
				t.Errorf("%d verdicts, want %d (5 measured decode cells, 2 prefill rows, 4 asserts: the 8K x 1 TTFT p99 rests on 1 request)", len(verdicts), want)
			}
			worst := vocab.Pass
			for _, v := range verdicts {
				worst = vocab.Worst(worst, v.Outcome)
				if tc.want == vocab.Pass && v.Outcome != vocab.Pass {
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
	res := &result.Results{Server: result.Server{Name: "qwen"}, Finished: time.Now(), Decode: []result.DecodeCell{
		{Matrix: "decode", Context: 8192, Concurrency: 64, Status: vocab.StatusOverCapacity},
	}}
	if _, err := codify.Generate(res, codify.Options{Margin: 0.1}); err != codify.ErrNothingMeasured {
		t.Errorf("error %v, want ErrNothingMeasured", err)
	}
}

// TestCheck: a run that did not finish, or has cells that could not be
// measured, is refused with every reason and cell named; a complete run,
// over-capacity cells included, is not.
func TestCheck(t *testing.T) {
	errored := func(r *result.Results) {
		r.Decode[1].Status, r.Decode[1].Reason = vocab.StatusError, "HTTP 500 from /v1/completions"
		r.Prefill[1].Status, r.Prefill[1].Reason = vocab.StatusError, "the stream ended without a token"
	}
	tests := []struct {
		name   string
		change func(*result.Results)
		want   *codify.UnfitError // nil: accepted
	}{
		{name: "complete run with an over-capacity cell", change: func(*result.Results) {}},
		{
			name:   "interrupted by a signal",
			change: func(r *result.Results) { r.Interrupted, r.Error = true, "interrupted by SIGINT" },
			want:   &codify.UnfitError{Unfinished: "it was interrupted (interrupted by SIGINT)"},
		},
		{
			name:   "ended early by -timeout",
			change: func(r *result.Results) { r.Error = "the run took longer than -timeout 5s and was stopped" },
			want:   &codify.UnfitError{Unfinished: "it ended early: the run took longer than -timeout 5s and was stopped"},
		},
		{
			name:   "killed before it could finish",
			change: func(r *result.Results) { r.Finished = time.Time{} },
			want:   &codify.UnfitError{Unfinished: "results.json has no finish time (slogate was stopped before it could finish the run, or the run is still going)"},
		},
		{
			name:   "errored cells",
			change: errored,
			want: &codify.UnfitError{Errored: []string{
				"prefill/ctx=16K: the stream ended without a token",
				"decode/ctx=8K/conc=2: HTTP 500 from /v1/completions",
			}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := run()
			tc.change(res)
			err := codify.Check(res)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("Check: %v, want nil", err)
				}
				return
			}
			got, ok := err.(*codify.UnfitError)
			if !ok {
				t.Fatalf("Check: %v, want an *UnfitError", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("UnfitError (-want +got):\n%s", diff)
			}
			if _, gerr := codify.Generate(res, codify.Options{Margin: 0.1}); gerr == nil || gerr.Error() != err.Error() {
				t.Errorf("Generate without Force: %v, want the refusal", gerr)
			}
		})
	}
}

// TestGenerateForced: with Force, an unfinished run with errored cells is
// codified from its measured cells only; the header says the run did not
// finish and lists every cell left out, and no errored cell gets a value.
func TestGenerateForced(t *testing.T) {
	res := run()
	res.Error = "the run took longer than -timeout 5s and was stopped"
	res.Decode[2].Status, res.Decode[2].Reason = vocab.StatusError, "HTTP 500 from /v1/completions" // 8K × 64, the peak
	out, err := codify.Generate(res, codify.Options{Margin: 0.1, Force: true})
	if err != nil {
		t.Fatal(err)
	}
	got := string(out)
	for _, want := range []string{
		"# Codified with -force although the run did not finish: it ended early: the run took longer than -timeout 5s and was stopped.\n",
		"# Left out, no numbers to take:\n#   decode/ctx=8K/conc=64: HTTP 500 from /v1/completions\n#   decode/ctx=16K/conc=64: over capacity\n",
		`"8K"  = [408.2, 779.9, null]`,
		`decode["8K"][2].total_tps >= 701`, // the peak of the measured cells, not of the errored one
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "6018") || strings.Contains(got, "5410") {
		t.Errorf("output takes a value from the errored cell:\n%s", got)
	}
}
