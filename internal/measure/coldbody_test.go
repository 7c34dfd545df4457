package measure

import (
	"encoding/json"
	"testing"

	"github.com/slogate/slogate/internal/requests"
)

// TestColdBody: a measured prefill request carries the engine's member
// that keeps the server from reusing a cached prefix (llama-server's
// "cache_prompt":false, docs/llamacpp.md#prompt-cache), and is the plain
// body where the engine has none (a fresh cache_salt suffices).
func TestColdBody(t *testing.T) {
	p := requests.Prompt{Tokens: []int{302, 312, 304}}
	tests := []struct {
		name     string
		uncached string
		want     map[string]any
	}{
		{name: "llama.cpp", uncached: `"cache_prompt":false`, want: map[string]any{"cache_prompt": false, "cache_salt": "s-cold0", "max_tokens": 1.0}},
		{name: "vLLM", uncached: "", want: map[string]any{"cache_salt": "s-cold0", "max_tokens": 1.0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := requestFields{model: "tiny", uncached: tt.uncached}
			b := f.coldBody(p, "s-cold0")
			var got map[string]any
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatalf("%s: %v", b, err)
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("%s = %v, want %v (%s)", k, got[k], v, b)
				}
			}
			if _, has := got["cache_prompt"]; has != (tt.uncached != "") {
				t.Errorf("cache_prompt present %v in %s", has, b)
			}
			if tt.uncached == "" && string(b) != string(f.body(p, 1, 0, "s-cold0")) {
				t.Errorf("coldBody %s differs from body without an uncached member", b)
			}
		})
	}
}
