package planview

import (
	"testing"

	"github.com/slogate/slogate/internal/engine"
)

// TestLaunchNoteText: each rule of how -c was rendered, in full.
func TestLaunchNoteText(t *testing.T) {
	tests := []struct {
		name string
		note engine.LaunchNote
		want string
	}{
		{name: "from the model", note: engine.LaunchNote{Rule: engine.ContextFromModel},
			want: "-c not rendered (no max_model_len): llama-server sizes its context from the model (n_ctx_train) and splits it over its slots"},
		{name: "per slot", note: engine.LaunchNote{Rule: engine.ContextPerSlot, Context: 4096, MaxModelLen: 2048, Parallel: 2},
			want: "-c 4096 = max_model_len 2048 × --parallel 2: llama-server splits -c over its slots, so each request's context (a slot's) is max_model_len"},
		{name: "unified", note: engine.LaunchNote{Rule: engine.ContextUnified, Context: 2048, MaxModelLen: 2048},
			want: "-c 2048 = max_model_len (no --parallel: llama-server picks the slots and shares one unified KV pool of -c among them)"},
		{name: "an unknown rule", note: engine.LaunchNote{Rule: "context_later"}, want: "context_later"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := LaunchNoteText(tt.note); got != tt.want {
				t.Errorf("LaunchNoteText = %q\nwant %q", got, tt.want)
			}
		})
	}
}
