package plan

import (
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/slogate/slogate/internal/spec"
)

// TestCheckBudget checks max_gpu_time against the minimum run: the plan's
// estimate at 4 repeats × the GPUs the server occupies.
func TestCheckBudget(t *testing.T) {
	two := 2
	// One decode cell at 8K × 4: 8192/20000 s of prefill + 0.283 s
	// warm-up + 3 s hold + 2 s window = 5.69 s a repeat, 22.8 s at 4.
	minimum := 4 * (time.Duration(8192.0/20000*float64(time.Second)) + estimateWarmUp(4, 8192, false) + SteadyHold + 2*time.Second)
	tests := []struct {
		name   string
		budget time.Duration
		tp     *int
		engine string
		device string
		want   string // "" no diagnostic
	}{
		{name: "no bound", budget: 0},
		{name: "room for the minimum", budget: minimum},
		{name: "just below the minimum", budget: minimum - time.Second,
			want: `cannot hold the minimum of server "q": its 1 cells at 4 repeats are estimated at 23s of measuring × 1 GPU(s) = 23s GPU time`},
		{name: "GPUs count: room for one GPU is short for two", budget: minimum, tp: &two,
			want: `× 2 GPU(s) = 46s GPU time (` + "`slogate plan`" + ` shows the estimate). Raise max_gpu_time to at least 1m0s`},
		{name: "a CPU build counts its server time", budget: minimum - time.Second, engine: "llamacpp",
			want: `= 23s GPU time (` + "`slogate plan`" + ` shows the estimate; on a CPU build, no GPU found at run time, max_gpu_time counts the server time, 23s). Raise`},
		{name: "a vLLM CPU build by its device", budget: minimum - time.Second, device: "cpu",
			want: `shows the estimate; on a CPU build (device = "cpu") max_gpu_time counts the server time, 23s). Raise`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			at := hcl.Range{Filename: "t.hcl", Start: hcl.Pos{Line: 7}}
			sp := &spec.Spec{
				Measure: &spec.Measure{Duration: 2 * time.Second, MaxOutput: 1024, Repeat: spec.MinAutoRepeat, RepeatAuto: true,
					MaxRepeat: 20, MaxGPUTime: tc.budget, MaxGPUTimeText: tc.budget.String(), MaxGPUTimeRange: at},
				Matrices: []*spec.Matrix{{Label: "decode", Contexts: []int{8192}, Concurrency: []int{4}}},
				Servers:  []*spec.Server{{Name: "q", Engine: tc.engine, Device: tc.device, TensorParallelSize: tc.tp}},
			}
			diags := CheckBudget(sp)
			if tc.want == "" {
				if len(diags) > 0 {
					t.Fatalf("unexpected diagnostics: %v", diags)
				}
				return
			}
			if len(diags) != 1 || diags[0].Summary != "max_gpu_time below the minimum" || diags[0].Subject.Start.Line != 7 {
				t.Fatalf("diagnostics = %v, want one at line 7", diags)
			}
			if !strings.Contains(diags[0].Detail, tc.want) {
				t.Errorf("detail:\n%s\nwant it to hold:\n%s", diags[0].Detail, tc.want)
			}
		})
	}
}
