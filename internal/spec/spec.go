// Package spec turns slogate's HCL spec files into a validated Spec: the
// servers to launch, the measurement settings, the prefill contexts, the decode
// matrices, and the assert/expect blocks. Every problem is an hcl.Diagnostic
// with a source range; every decoded struct keeps its own range.
package spec

import (
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/slogate/slogate/internal/vocab"
)

// Spec is one parsed and validated spec file.
type Spec struct {
	// Filename is the path of the spec as given by the user.
	Filename string
	// Files holds the parsed sources (for diagnostics with snippets).
	Files map[string]*hcl.File

	Servers   []*Server
	Measure   *Measure    // never nil after Load: defaults applied
	Prefill   *Prefill    // nil when the spec has no prefill block
	Workload  *Workload   // the unnamed workload block; never nil after Load: defaults applied
	Workloads []*Workload // the named workload blocks, in the order written
	Matrices  []*Matrix
	Traffic   []*Traffic // traffic blocks, in the order written
	Asserts   []*Assert
	Expects   []*Expect
	Searches  []*Search
	// Correctness are the correctness blocks, in the order written.
	Correctness []*Correctness
	Variables   []*Variable

	// EvalContext holds the functions (env, file, cty stdlib) and the "var"
	// object. assert evaluates conditions in a child of it.
	EvalContext *hcl.EvalContext
}

// Server is one `server "NAME"` block: how to launch an inference server.
type Server struct {
	Name string
	// Engine is the inference engine launched: EngineVLLM (default) or
	// EngineSGLang (docs/spec.md#engines). It decides the flags the typed
	// attributes render to and the values they take.
	Engine string
	// Device is engine.DeviceCPU for a CPU build (device = "cpu"), ""
	// when unset: the engine's GPU build (docs/spec.md#device).
	Device               string
	Command              string // default: the engine's executable ("vllm", "sglang")
	Model                string
	ServedModelName      string // "" when unset; ServedName falls back to Model
	TensorParallelSize   *int
	PipelineParallelSize *int
	DataParallelSize     *int
	EnableExpertParallel *bool
	MaxModelLen          *int
	GPUMemoryUtilization *float64
	MaxNumBatchedTokens  *int
	MaxNumSeqs           *int
	AttentionBackend     string
	KVCacheDtype         string
	EnablePrefixCaching  *bool
	// KVCacheTokens overrides the KV capacity when neither /metrics nor the
	// server log tells it.
	KVCacheTokens *int64
	Speculative   *Speculative
	Args          []string
	Env           map[string]string
	APIKey        string // never printed: see RedactedArgv
	Host          string // default "0.0.0.0"
	Port          int    // default 8000
	ReadyTimeout  time.Duration
	// Labels are free-form facts shown in reports (quantization, gpu, build…).
	Labels map[string]string
	// PricePerGPUHour is what one of the server's GPUs costs an hour (in
	// the user's currency, reported as $); nil when unset. The reports
	// price a search's answer with it (docs/method.md#cost).
	PricePerGPUHour *float64
	// Container, when set, runs the server from an image (nil: as a bare
	// command).
	Container *Container

	DeclRange hcl.Range
}

// Measure is the `measure` block.
type Measure struct {
	Duration     time.Duration // default 30s
	DurationText string        // as written, e.g. "30s"
	MaxOutput    int           // default 4096
	Endpoint     string        // "completions" (default) or "chat"
	// Repeat is how many times each cell is measured (default 1); with
	// RepeatAuto it is the minimum a side, MinAutoRepeat.
	Repeat int
	// RepeatAuto is repeat = "auto": a gated cell is repeated past the
	// minimum until its decision is reached, at most MaxRepeat times and
	// within MaxGPUTime (docs/method.md#repeat-auto).
	RepeatAuto bool
	// MaxRepeat bounds repeat = "auto" (default DefaultMaxRepeat); 0 with
	// a fixed repeat.
	MaxRepeat int
	// MaxGPUTime bounds the GPU time (busy time × GPUs) repeat = "auto"
	// spends on one server's run; 0 is no bound. MaxGPUTimeText is as
	// written.
	MaxGPUTime     time.Duration
	MaxGPUTimeText string
	// Boots is how many times the server is started; the repeats are split
	// over them (docs/method.md#boots). Default 1.
	Boots int

	// RepeatRange, MaxGPUTimeRange and BootsRange are where those were set
	// (the declaration's range when unset), for checks made after the load
	// (plan.CheckBudget).
	RepeatRange, MaxGPUTimeRange, BootsRange hcl.Range
	// Percentiles are the latency percentiles measured besides the median
	// (docs/method.md#metric-names), in the order written; nil means
	// metric.DefaultPercentiles.
	Percentiles []float64

	DeclRange hcl.Range
}

// Prefill is the `prefill` block.
type Prefill struct {
	Contexts []int // in tokens, in the order written

	DeclRange hcl.Range
}

// Matrix is a `matrix "LABEL"` block: sustained decode over contexts × concurrency.
type Matrix struct {
	Label       string // the name used in expressions: decode["8K"][64]
	Contexts    []int
	Concurrency []int
	// ConcurrencyRanges[i] is where Concurrency[i] is written (a
	// diagnostic's subject); nil for a matrix not read from a file.
	ConcurrencyRanges []hcl.Range

	DeclRange hcl.Range
}

// Assert is an `assert "NAME"` block.
type Assert struct {
	Name         string
	Condition    hcl.Expression
	ErrorMessage string
	// Cells are the cells the condition reads, found statically from its
	// traversals, in order of first appearance.
	Cells []vocab.CellRef
	// ReadsServer is true when the condition reads the `server` object.
	ReadsServer bool
	// Searches are the names of the search blocks the condition reads
	// (search["NAME"]), in order of first appearance.
	Searches []string
	// Metrics are the prefill and decode metrics the condition reads by
	// name (decode["8K"][1].per_request_tps), by phase, in order of first
	// appearance: a baseline comparison compares them by default
	// (AssertedMetrics).
	Metrics map[vocab.Phase][]string

	DeclRange hcl.Range
}

// Expect is an `expect "NAME"` block: a whole expected matrix for one metric.
type Expect struct {
	Name      string
	Matrix    string // matrix label, default "decode"; "prefill" for a prefill row
	Metric    string
	Tolerance float64 // fraction, default 0.05
	Rows      []ExpectRow

	DeclRange hcl.Range
	// MetricRange is where metric is written (for diagnostics about it).
	MetricRange hcl.Range
}

// ExpectRow is one context's row of an expect block. For a decode matrix the
// values line up with the matrix's concurrency list; a null value means "no
// expectation" (e.g. an over-capacity cell). For prefill there is one value.
type ExpectRow struct {
	Context int
	Values  []*float64

	Range hcl.Range
}

// Variable is a `variable "NAME"` block.
type Variable struct {
	Name        string
	Description string
	Type        string // "string", "number", "bool" or "" (any)
	// TypeConstraint is the declared type (cty.DynamicPseudoType when none).
	TypeConstraint cty.Type
	// Default is the default value; cty.NilVal when the variable has none.
	Default cty.Value
	// Value is the value in force: the -var value converted to the declared
	// type, else Default. It is what `var.NAME` reads.
	Value cty.Value

	DeclRange hcl.Range
}

// Name is the spec's file name without folder and extension
// ("specs/qwen3.5-4b-h200-dflash.hcl" → "qwen3.5-4b-h200-dflash",
// vocab.SpecName): what default results folders, CI matrix jobs and
// merged test names call it.
func (s *Spec) Name() string { return vocab.SpecName(s.Filename) }
