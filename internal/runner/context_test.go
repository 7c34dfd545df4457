package runner

import (
	"testing"

	"github.com/slogate/slogate/internal/engine"
	"github.com/slogate/slogate/internal/engine/registry"
	"github.com/slogate/slogate/internal/report"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// TestBeyondContext: a cell whose context + max_output exceeds
// max_model_len is an error on vLLM and SGLang (the server refuses its
// requests), over capacity where max_model_len is one slot's context
// (engine.Status.ContextIsSlot); within it, or with max_model_len
// unknown, the cell runs.
func TestBeyondContext(t *testing.T) {
	slot := &engine.Status{ContextIsSlot: true}
	ref := vocab.CellRef{Phase: vocab.PhaseDecode, Context: 4096, Concurrency: 1}
	tests := []struct {
		name        string
		maxModelLen int
		maxOutput   int
		status      *engine.Status
		want        vocab.Status
		runs        bool
	}{
		{name: "vLLM: beyond is an error", maxModelLen: 4608, maxOutput: 1024, status: registry.For("vllm").Status(), want: vocab.StatusError},
		{name: "SGLang: beyond is an error", maxModelLen: 4608, maxOutput: 1024, status: registry.For("sglang").Status(), want: vocab.StatusError},
		{name: "a slot's context: beyond is over capacity", maxModelLen: 4608, maxOutput: 1024, status: slot, want: vocab.StatusOverCapacity},
		{name: "within", maxModelLen: 4096 + 512, maxOutput: 512, status: slot, runs: true},
		{name: "unknown", maxModelLen: 0, maxOutput: 1024, status: slot, runs: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, why, ok := beyondContext(ref, tc.maxOutput, tc.maxModelLen, tc.status)
			reason := report.CellReasonText([]result.CellReason{why}, "")
			if ok == tc.runs || got != tc.want {
				t.Fatalf("beyondContext = %q, %q, %v; want %q, runs %v", got, reason, ok, tc.want, tc.runs)
			}
			if ok && reason != "context 4096 + max_output 1024 exceeds max_model_len 4608" {
				t.Errorf("reason %q", reason)
			}
		})
	}
}
