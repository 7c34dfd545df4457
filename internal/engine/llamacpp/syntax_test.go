package llamacpp

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/slogate/slogate/internal/engine"
)

func intp(v int) *int    { return &v }
func boolp(v bool) *bool { return &v }

// TestServeArgs checks how each typed attribute renders for llama-server,
// against `llama-server -h` of b11669 (docs/llamacpp.md#flags): -m, --alias,
// -c as max_model_len × --parallel, -ctk/-ctv, --no-cache-prompt, the
// speculative flags, host, port, the API key, --metrics always, args last.
func TestServeArgs(t *testing.T) {
	tests := []struct {
		name string
		l    engine.Launch
		key  string
		want string
	}{
		{name: "model only", l: engine.Launch{Model: "/m/tiny.gguf", Port: 8000},
			want: "-m /m/tiny.gguf --host 127.0.0.1 --port 8000 --metrics"},
		{name: "context per slot", l: engine.Launch{Model: "/m/tiny.gguf", ServedModelName: "tiny", MaxModelLen: intp(2048), MaxNumSeqs: intp(4), Port: 18600},
			want: "-m /m/tiny.gguf --alias tiny -c 8192 --parallel 4 --host 127.0.0.1 --port 18600 --metrics"},
		{name: "context without parallel", l: engine.Launch{Model: "m.gguf", MaxModelLen: intp(4096)},
			want: "-m m.gguf -c 4096 --host 127.0.0.1 --metrics"},
		{name: "parallel from args", l: engine.Launch{Model: "m.gguf", MaxModelLen: intp(1024), Args: []string{"-np", "3", "-t", "1"}},
			want: "-m m.gguf -c 3072 --host 127.0.0.1 --metrics -np 3 -t 1"},
		// The last one given is the one llama-server runs with: b11669
		// started with `-c 1024 -np 3 --parallel 2` reports total_slots 2
		// of 512 tokens at GET /props.
		{name: "the last parallel of args", l: engine.Launch{Model: "m.gguf", MaxModelLen: intp(1024), Args: []string{"-np", "3", "--parallel", "2"}},
			want: "-m m.gguf -c 2048 --host 127.0.0.1 --metrics -np 3 --parallel 2"},
		{name: "kv cache type on K and V", l: engine.Launch{Model: "m.gguf", KVCacheDtype: "q8_0"},
			want: "-m m.gguf -ctk q8_0 -ctv q8_0 --host 127.0.0.1 --metrics"},
		{name: "prefix caching off", l: engine.Launch{Model: "m.gguf", EnablePrefixCaching: boolp(false)},
			want: "-m m.gguf --no-cache-prompt --host 127.0.0.1 --metrics"},
		{name: "prefix caching on is the default", l: engine.Launch{Model: "m.gguf", EnablePrefixCaching: boolp(true)},
			want: "-m m.gguf --host 127.0.0.1 --metrics"},
		{name: "api key", l: engine.Launch{Model: "m.gguf"}, key: "sekret",
			want: "-m m.gguf --host 127.0.0.1 --api-key sekret --metrics"},
		{name: "self-draft", l: engine.Launch{Model: "m.gguf", Speculative: &engine.Speculative{Method: "draft", Model: "m.gguf", NumSpeculativeTokens: intp(4)}},
			want: "-m m.gguf --spec-type draft-simple -md m.gguf --spec-draft-n-max 4 --host 127.0.0.1 --metrics"},
		{name: "llama.cpp's names as written", l: engine.Launch{Model: "m.gguf", Speculative: &engine.Speculative{Method: "ngram-simple,draft-eagle3", Model: "e.gguf"}},
			want: "-m m.gguf --spec-type ngram-simple,draft-eagle3 -md e.gguf --host 127.0.0.1 --metrics"},
		{name: "ngram-mod's width", l: engine.Launch{Model: "m.gguf", Speculative: &engine.Speculative{Method: "ngram-mod", NumSpeculativeTokens: intp(16)}},
			want: "-m m.gguf --spec-type ngram-mod --spec-ngram-mod-n-max 16 --host 127.0.0.1 --metrics"},
		{name: "config keys as --spec-K", l: engine.Launch{Model: "m.gguf", Speculative: &engine.Speculative{Method: "mtp",
			Config: map[string]any{"draft_n_min": 2, "draft_sampling": "probabilistic", "draft_backend_sampling": false}}},
			want: "-m m.gguf --spec-type draft-mtp --no-spec-draft-backend-sampling --spec-draft-n-min 2 --spec-draft-sampling probabilistic --host 127.0.0.1 --metrics"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := strings.Join(serveArgs(tt.l, tt.key, "127.0.0.1"), " ")
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("serveArgs (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLaunchNotes: plan is told how -c was rendered, as a rule and its
// figures.
func TestLaunchNotes(t *testing.T) {
	tests := []struct {
		name string
		l    engine.Launch
		want engine.LaunchNote
	}{
		{name: "per slot", l: engine.Launch{MaxModelLen: intp(2048), MaxNumSeqs: intp(2)}, want: engine.LaunchNote{Rule: engine.ContextPerSlot, Context: 4096, MaxModelLen: 2048, Parallel: 2}},
		{name: "unified", l: engine.Launch{MaxModelLen: intp(2048)}, want: engine.LaunchNote{Rule: engine.ContextUnified, Context: 2048, MaxModelLen: 2048}},
		{name: "from the model", l: engine.Launch{}, want: engine.LaunchNote{Rule: engine.ContextFromModel}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if notes := launchNotes(tt.l); len(notes) != 1 || notes[0] != tt.want {
				t.Errorf("launchNotes = %+v, want %+v", notes, tt.want)
			}
		})
	}
}

// TestSpeculativeMethod: the --spec-type a block states.
func TestSpeculativeMethod(t *testing.T) {
	tests := []struct{ name, method, want string }{
		{"draft", "draft", "draft-simple"},
		{"vLLM's draft_model", "draft_model", "draft-simple"},
		{"eagle3", "EAGLE3", "draft-eagle3"},
		{"mtp", "mtp", "draft-mtp"},
		{"dflash", "dflash", "draft-dflash"},
		{"ngram", "ngram", "ngram-simple"},
		{"as written", "ngram-map-k4v", "ngram-map-k4v"},
		{"unknown stays", "suffix", "suffix"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := speculativeMethod(&engine.Speculative{Method: tt.method}); got != tt.want {
				t.Errorf("speculativeMethod(%q) = %q, want %q", tt.method, got, tt.want)
			}
		})
	}
}
