package lifecycle

import (
	"context"
	"io"

	"github.com/slogate/slogate/internal/promread"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/spec"
)

// Engine is what lifecycle knows of one inference engine beyond what all
// OpenAI-compatible servers share (readiness by GET /health and GET
// /v1/models, streaming, the process-group stop): how the simulator is
// asked to imitate it, how its /metrics names the values measure reads,
// and where it states its version, KV capacity and settings. Each engine
// is one file (engine_vllm.go, engine_sglang.go): a third one (trtllm-serve,
// llama.cpp's server) is one more, with its spec/engine_NAME.go.
type Engine interface {
	// SimFlags are the `slogate sim` flags, before "serve", that make the
	// simulator imitate the engine (-sim).
	SimFlags() []string
	// ParseMetrics reads a /metrics page into the snapshot measure reads;
	// model filters by the served name.
	ParseMetrics(r io.Reader, model string) (promread.Snapshot, error)
	// Version is the server's version and where it was read ("GET
	// /version"); "" when it does not say.
	Version(ctx context.Context, c *Client) (version, from string)
	// KVCapacity is the KV cache capacity in tokens the server states (the
	// spec's kv_cache_tokens is applied before), from source
	// (result.KVSource*), with a warning when the figure is doubtful or
	// missing and a detail of how a log was read; logPath is the launched
	// server's log ("" for an endpoint); dp is the spec's
	// data_parallel_size (1 when unset).
	KVCapacity(ctx context.Context, c *Client, logPath string, dp int) (tokens int64, source, warning, detail string)
	// StatedFacts records in facts, and names in stated with where it was
	// read, each setting the server states of the ones the spec asked
	// (docs/method.md#server-facts): kv_cache_dtype, block_size,
	// enable_prefix_caching, speculative.
	StatedFacts(ctx context.Context, c *Client, logPath string, facts *result.Server, stated map[string]string)
	// TokenizeStatesContext reports whether POST /tokenize's max_model_len
	// is the server's context length (vLLM) rather than the tokenizer's
	// model_max_length (SGLang).
	TokenizeStatesContext() bool
	// ChatPromptTokens is the rendered length of a chat prompt (with the
	// generation prompt) where POST /tokenize has no messages form, by
	// another request; ok is false when the engine has no such way.
	ChatPromptTokens(ctx context.Context, c *Client, messages any, chatTemplateKwargs map[string]any) (n int, ok bool, err error)
	// SpeculativeIdle is the warning of a decode cell whose server has a
	// speculative block but whose /metrics show no drafting in the window,
	// naming the engine's own metric and launch flag.
	SpeculativeIdle() string
}

// engineFor is the server's engine; vLLM when it names none (spec.Load has
// refused an unknown one).
func engineFor(srv *spec.Server) Engine {
	if srv != nil && srv.Engine == spec.EngineSGLang {
		return sglangEngine{}
	}
	return vllmEngine{}
}
