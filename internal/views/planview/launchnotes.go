package planview

import (
	"fmt"

	"github.com/slogate/slogate/internal/engine"
)

// LaunchNoteText words how the engine rendered a flag (engine.LaunchNote):
// "-c 4096 = max_model_len 2048 × --parallel 2: llama-server splits -c
// over its slots, so each request's context (a slot's) is max_model_len";
// an unknown rule is its code.
func LaunchNoteText(n engine.LaunchNote) string {
	switch n.Rule {
	case engine.ContextFromModel:
		return "-c not rendered (no max_model_len): llama-server sizes its context from the model (n_ctx_train) and splits it over its slots"
	case engine.ContextPerSlot:
		return fmt.Sprintf("-c %d = max_model_len %d × --parallel %d: llama-server splits -c over its slots, so each request's context (a slot's) is max_model_len", n.Context, n.MaxModelLen, n.Parallel)
	case engine.ContextUnified:
		return fmt.Sprintf("-c %d = max_model_len (no --parallel: llama-server picks the slots and shares one unified KV pool of -c among them)", n.Context)
	}
	return string(n.Rule)
}

// launchNotesText words each of notes (LaunchNoteText), nil for none.
func launchNotesText(notes []engine.LaunchNote) []string {
	var out []string
	for _, n := range notes {
		out = append(out, LaunchNoteText(n))
	}
	return out
}
