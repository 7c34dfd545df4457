// Package workload holds what a spec's workload block says, as values
// (docs/method.md#workload): the prompt kinds, the options, the length
// distributions, the dataset filter and shared prefixes, a dataset's
// entries once read, and the record results.json keeps of what was sent.
// It does no IO: package requests reads datasets and builds the requests
// (spec and result import these values without either).
package workload

import (
	"encoding/json"
	"math"
)

// Prompt kinds (the values of workload.prompt in a spec).
const (
	Article = "article"
	Random  = "random"
	// DatasetPrompt sends the prompts of a dataset file
	// (Options.DatasetPath); only named workloads, which traffic blocks
	// use, take it.
	DatasetPrompt = "dataset"
)

// Options is what a spec's workload block says (docs/spec.md#workload):
// spec.Workload embeds it and adds the block's source range, so the block is
// defined here once and requests.NewBuilder takes it as the spec loaded it.
type Options struct {
	// Prompt is Article ("" means Article) or Random.
	Prompt string
	// Document is the article's reference text; "" means requests.Corpus().
	Document string
	// Instruction is what the article prompt asks for after the document;
	// "" means requests.DefaultInstruction.
	Instruction string
	// Distinct gives every concurrent stream its own prompt (no shared
	// prefix); false sends one prompt on every stream.
	Distinct bool
	// Sampling holds the sampling fields to send, exactly as written (the
	// numbers keep their written digits); a field left out takes the
	// server's default (the model's generation_config). Nil when unset. It
	// is recorded as sent: the caller puts it in the request.
	Sampling map[string]json.Number
	// LogitBias is sampling.logit_bias, token ID → bias as written; nil
	// when unset. Sent and recorded like Sampling.
	LogitBias map[string]json.Number
	// ChatTemplateKwargs is passed through to the chat template (the
	// /tokenize rendering of article prompts and the chat endpoint, where
	// the caller sends it), as JSON values. Nil when unset.
	ChatTemplateKwargs map[string]any
	// Seed seeds the random prompts, and in a named workload also the
	// dataset's shuffle, the length draws and the prefixes.
	Seed uint64

	// The attributes below belong to named workloads (docs/spec.md#named-workloads):
	// a traffic block's requests, scheduled by requests.NewScheduler.

	// DatasetPath is the dataset file (Prompt == DatasetPrompt), resolved
	// against the spec's folder; DatasetFormat is FormatShareGPT,
	// FormatJSONL, FormatMessages, a trace format (TraceFormats), or ""
	// to detect it.
	DatasetPath, DatasetFormat string
	// Filter drops dataset entries by token counts as vLLM's
	// is_valid_sequence does (ShareGPT only); DefaultFilter when unset.
	Filter Filter
	// InputTokens is the prompt length of Random and Article prompts
	// (without a shared prefix's tokens); unset: requests.ScheduleConfig.Context.
	InputTokens Length
	// OutputTokens is each request's output length (max_tokens, and
	// min_tokens when IgnoreEOS); unset: a dataset's own (ShareGPT's
	// reference output, a JSONL line's output_tokens, else
	// DefaultJSONLOutputTokens), for generated prompts requests.ScheduleConfig.MaxOutput.
	OutputTokens Length
	// IgnoreEOS asks the server to ignore EOS (with min_tokens), so that
	// output lengths are what was asked; false lets the model stop.
	IgnoreEOS bool
	// Prefix gives each request one of Prefix.Groups shared prefixes of
	// Prefix.Tokens tokens, or dials the share of its tokens that repeat
	// earlier requests' (Prefix.IsDial); the zero Prefix is none.
	Prefix Prefix
	// Turns is the number of user turns a generated conversation has (1:
	// single requests); a messages dataset's conversations bring their own.
	Turns int
	// Trace is how a trace dataset is replayed (speed, slice,
	// max_requests, drop_over_length); the zero Trace replays it whole.
	Trace Trace
}

// Filter drops dataset entries by token counts, as vLLM's
// is_valid_sequence (vllm/benchmarks/dataset_utils.py) does for its ShareGPT
// dataset: a prompt shorter than MinPromptTokens, an output shorter than
// MinOutputTokens (checked only when the output length is the reference's,
// not a fixed output_tokens), a prompt longer than MaxPromptTokens, or a
// prompt and output together longer than MaxTotalTokens.
type Filter struct {
	MinPromptTokens, MinOutputTokens, MaxPromptTokens, MaxTotalTokens int
}

// DefaultFilter is is_valid_sequence's defaults: min_len 4 (prompt and
// output), max_prompt_len 1024, max_total_len 2048.
var DefaultFilter = Filter{MinPromptTokens: 4, MinOutputTokens: 4, MaxPromptTokens: 1024, MaxTotalTokens: 2048}

// Prefix is a workload's shared prefixes, in one of two forms. Groups
// form: request i begins with prefix i mod Groups, Tokens tokens long.
// Dial form (Block > 0): HitRate of each request's prompt tokens, in whole
// blocks of Block tokens, repeat the tokens earlier requests began with
// (docs/spec.md#prefix-hit-rate). The zero Prefix is none.
type Prefix struct {
	Groups, Tokens int
	// HitRate is the dialled share (0 ≤ HitRate ≤ 1) of each prompt's
	// tokens that repeats earlier requests'; Block the engine's KV block
	// size in tokens, the unit the share is rounded to.
	HitRate float64
	Block   int
}

// DefaultPrefixBlock is the dial's block when the workload states none:
// vLLM's block size on GPU and the simulator's; a per-token cache
// (SGLang's radix cache, llama.cpp's slots) is served by any block.
const DefaultPrefixBlock = 16

// IsSet reports whether p asks for shared prefixes in the groups form.
func (p Prefix) IsSet() bool { return p.Groups > 0 }

// IsDial reports whether p dials a prefix-cache hit rate.
func (p Prefix) IsDial() bool { return p.Block > 0 }

// SharedTokens is how many leading tokens of a request's n-token prompt
// the dial repeats, after requests of total tokens in all, shared of them
// repeated: whole blocks, so that the schedule's share through this
// request is HitRate rounded to the nearest block (the rounding carried
// from request to request, so that blocks as long as a prompt's share
// still give the dial on average), at most the whole blocks before the
// prompt's last token (an engine always computes the last token, for its
// logits).
func (p Prefix) SharedTokens(total, shared, n int) int {
	if !p.IsDial() || n < 2 {
		return 0
	}
	want := int(math.Round(p.HitRate*float64(total+n)/float64(p.Block)))*p.Block - shared
	return max(0, min(want, (n-1)/p.Block*p.Block))
}

// DefaultJSONLOutputTokens is the output length of a JSONL prompt line
// without output_tokens when the workload sets none: vLLM's
// --custom-output-len default.
const DefaultJSONLOutputTokens = 256
