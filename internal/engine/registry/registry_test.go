package registry

import (
	"context"
	"strings"
	"testing"

	"github.com/slogate/slogate/internal/engine"
	"github.com/slogate/slogate/internal/result"
)

// TestTitle: an engine's title; "" is vLLM's (results written before
// engines were recorded); an unknown name is itself (moved from vocab).
func TestTitle(t *testing.T) {
	for name, want := range map[string]string{"": "vLLM", "vllm": "vLLM", "sglang": "SGLang", "trtllm": "trtllm"} {
		if got := Title(name); got != want {
			t.Errorf("Title(%q) = %q, want %q", name, got, want)
		}
	}
}

// TestFor: For falls back to the default engine for "" and an unknown
// name; Lookup says it does not know the latter.
func TestFor(t *testing.T) {
	tests := []struct {
		name, engine, want string
		known              bool
	}{
		{"vllm", "vllm", "vllm", true},
		{"sglang", "sglang", "sglang", true},
		{"llamacpp", "llamacpp", "llamacpp", true},
		{"unset", "", "vllm", false},
		{"unknown", "trtllm", "vllm", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := For(tc.engine).Name(); got != tc.want {
				t.Errorf("For(%q) = %q, want %q", tc.engine, got, tc.want)
			}
			if _, ok := Lookup(tc.engine); ok != tc.known {
				t.Errorf("Lookup(%q) ok = %v, want %v", tc.engine, ok, tc.known)
			}
		})
	}
	if got := strings.Join(Names(), " "); got != "llamacpp sglang vllm" {
		t.Errorf("Names() = %q, want [llamacpp sglang vllm]", got)
	}
}

// TestEnginesReadOnlyTheirOwnMetrics: each engine's ParseMetrics reads its
// own request gauges and none of another engine's (moved from promread's
// TestParseSGLang).
func TestEnginesReadOnlyTheirOwnMetrics(t *testing.T) {
	pages := map[string]string{
		"vllm":     "vllm:num_requests_running 3\nvllm:num_requests_waiting 1\n",
		"sglang":   "sglang:num_running_reqs 3\nsglang:num_queue_reqs 1\n",
		"llamacpp": "llamacpp:requests_processing 3\nllamacpp:requests_deferred 1\n",
	}
	for _, reader := range Names() {
		for _, writer := range Names() {
			t.Run(reader+" reads "+writer, func(t *testing.T) {
				s, err := For(reader).ParseMetrics(strings.NewReader(pages[writer]), "")
				if err != nil {
					t.Fatal(err)
				}
				if s.HasRequests != (reader == writer) {
					t.Errorf("HasRequests = %v reading %s's page as %s's (%+v)", s.HasRequests, writer, reader, s)
				}
			})
		}
	}
}

// TestOptionalHooks: llama.cpp's quirks are optional hooks (package
// engine's ChatPromptIDer, ExitHinter, Uncacheder, StreamCloser) that
// only it implements; vLLM and SGLang get the defaults without a stub in
// their packages. Only vLLM refuses requests at admission (Rejecter): a
// 503 of the others is an error.
func TestOptionalHooks(t *testing.T) {
	tests := []struct {
		name, engine string
		uncached     string
		closes       bool
		hint         bool
		rejects      bool
	}{
		{name: "llama.cpp", engine: "llamacpp", uncached: `"cache_prompt":false`, closes: true, hint: true},
		{name: "vLLM", engine: "vllm", rejects: true},
		{name: "SGLang", engine: "sglang"},
	}
	tail := []string{"llama_init_from_model: failed to initialize the context: LLAMA_SPLIT_MODE_TENSOR needs >= 1 devices"}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := For(tc.engine)
			if got := engine.UncachedField(e); got != tc.uncached {
				t.Errorf("UncachedField = %q, want %q", got, tc.uncached)
			}
			if got := engine.StreamClosesConnection(e); got != tc.closes {
				t.Errorf("StreamClosesConnection = %v, want %v", got, tc.closes)
			}
			if got := engine.Rejected(e, 503, 503, "busy"); got != tc.rejects {
				t.Errorf("Rejected(503) = %v, want %v", got, tc.rejects)
			}
			if got := engine.ExitHint(e, tail); (got != "") != tc.hint {
				t.Errorf("ExitHint = %q, want a hint: %v", got, tc.hint)
			}
			if _, is := e.(engine.ChatPromptIDer); is != (tc.engine == "llamacpp") {
				t.Errorf("%s implements ChatPromptIDer: %v", tc.engine, is)
			}
			if tc.engine != "llamacpp" { // llama.cpp's needs a server: TestChatPromptIDs
				if _, ok, err := engine.ChatPromptIDs(context.Background(), e, nil, nil, nil); ok || err != nil {
					t.Errorf("ChatPromptIDs answered for %s: %v, %v", tc.engine, ok, err)
				}
			}
		})
	}
}

// TestLegacyEngine: results written before engines were recorded are
// read as the engine a spec's server gets when it names none, vLLM: the
// two constants live apart (results.json's model imports no engine) and
// must stay one.
func TestLegacyEngine(t *testing.T) {
	if result.LegacyEngine != Default {
		t.Errorf("result.LegacyEngine = %q, registry.Default = %q: they must agree", result.LegacyEngine, Default)
	}
}
