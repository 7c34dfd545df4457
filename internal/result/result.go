// Package result is slogate's measured data model: the Results of one server's
// run, its prefill and decode cells, metric names, cell statuses, verdict
// outcomes and the results.json / cells.jsonl formats. The runner produces it;
// assert and report consume it. It contains no logic that needs a server.
package result

import (
	"strings"
	"time"

	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/warning"
	"github.com/slogate/slogate/internal/workload"
)

// Schema is the value of the "schema" key of every results.json slogate
// writes. Version 2 holds every warning and note as an object (code,
// summary, detail, figures: internal/warning); version 1's (SchemaV1)
// may be plain strings.
const Schema = "slogate/results/v2"

// SchemaV1 is the schema of a results.json written before warnings and
// notes were typed objects. Decode still reads it: a plain-string warning
// or note is one of no code with that text, and the results read are the
// current schema's (a file written again says Schema).
const SchemaV1 = "slogate/results/v1"

// Results is everything measured for one server of one spec.
type Results struct {
	Schema  string  `json:"schema"`
	Spec    string  `json:"spec"`           // path of the spec file as given on the command line
	Tool    string  `json:"tool,omitempty"` // slogate version that measured
	Server  Server  `json:"server"`
	Measure Measure `json:"measure"`
	// Workload is what the requests sent (docs/method.md#workload): the
	// prompt kind, distinct or shared, the sampling fields and
	// chat_template_kwargs as sent, the document's and instruction's
	// SHA-256 or the random seed. Nil in results.json files written before
	// slogate recorded it.
	Workload *workload.Record `json:"workload,omitempty"`
	// Flags are the flags of `slogate run` that decided what the run
	// measured, as given; -resume measures the rest with the same ones.
	// Nil in results.json files written before slogate recorded them.
	Flags    *RunFlags `json:"flags,omitempty"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	// Prefill cells in measurement order.
	Prefill []PrefillCell `json:"prefill"`
	// Decode cells in measurement order.
	Decode []DecodeCell `json:"decode"`
	// Traffic cells (open-loop arrivals) in measurement order.
	Traffic []TrafficCell `json:"traffic,omitempty"`
	// Search holds the outcome of each search block (docs/method.md#search).
	Search []Search `json:"search,omitempty"`
	// Correctness holds each correctness block's settings and figures; its
	// outputs are in correctness.jsonl beside results.json
	// (docs/method.md#correctness).
	Correctness []Correctness `json:"correctness,omitempty"`
	// Verdicts of the spec's assert/expect blocks and baseline comparisons.
	Verdicts []Verdict `json:"verdicts"`
	// Comparison is the -baseline comparison per cell and metric (nil
	// without a baseline), which the reports tabulate and chart.
	Comparison *Comparison `json:"comparison,omitempty"`
	// Error is the infrastructure error that ended the run early, if any.
	Error string `json:"error,omitempty"`
	// Interrupted is set when the run was stopped by a signal.
	Interrupted bool `json:"interrupted,omitempty"`
	// Warnings are the run's own warnings (for example KV capacity
	// unknown), typed as the cells' are; an old results.json's plain
	// strings read as warnings of no kind.
	Warnings []warning.Warning `json:"warnings,omitempty"`
	// GPUTime is what the run cost in server time and GPU time
	// (docs/method.md#gpu-time); nil in results.json files written before
	// slogate recorded it.
	GPUTime *GPUTime `json:"gpu_time,omitempty"`
	// RequestsRead says requests.jsonl was found beside results.json and
	// its traffic requests read into the cells (ReadRequests); not in
	// results.json.
	RequestsRead bool `json:"-"`
}

// RunFlags are the flags of `slogate run` that select what a run measures
// and how, as given on its command line; each is empty when not given. A
// resumed run (-resume) takes them from the run it continues, so that it
// measures exactly the rest of what that run was asked.
type RunFlags struct {
	// Run is -run, the test-name filter of cells and assertions.
	Run string `json:"run,omitempty"`
	// Server is -server, the one server measured of the specs.
	Server string `json:"server,omitempty"`
	// Duration is -duration, the window that replaced measure.duration.
	Duration string `json:"duration,omitempty"`
	// StreamTimeout is -stream-timeout.
	StreamTimeout string `json:"stream_timeout,omitempty"`
	// Vars are the -var settings, NAME → VALUE; a secret's value (the
	// server's api_key, a credential's environment variable, a name that
	// says it holds one) is shellcmd.Redacted, and a resumed run needs it
	// given again.
	Vars map[string]string `json:"vars,omitempty"`
}

// GPUTime is a run's cost: the time its server was up for it and that
// time × the GPUs it occupies (docs/method.md#gpu-time).
type GPUTime struct {
	// GPUs is the GPUs the plan counts for the server (tp × pp × dp, or
	// labels.gpu_count when larger; `slogate plan -format matrix`).
	GPUs int `json:"gpus"`
	// ServerS is the time the server was up for the run: from each launch
	// to its stop, over every boot (for -endpoint, from the readiness
	// check to the end).
	ServerS float64 `json:"server_s"`
	// GPUSeconds is ServerS × GPUs.
	GPUSeconds float64 `json:"gpu_seconds"`
	// CellsS is the part of ServerS spent measuring cells: the sum of the
	// cells' elapsed_s.
	CellsS float64 `json:"cells_s"`
	// CPU says the server ran without GPUs (a CPU build by its spec,
	// device = "cpu", or an engine with CPU builds, llama.cpp, where
	// nvidia-smi found none): GPUs and GPUSeconds are 0, and ServerS is
	// the run's cost.
	CPU bool `json:"cpu,omitempty"`
	// CPUBuild says the spec named it a CPU build (device = "cpu"), not
	// discovery.
	CPUBuild bool `json:"cpu_build,omitempty"`
	// Boots is how many times the server was started (measure.boots; 0
	// for -endpoint); StartupS the time each took to become ready.
	Boots    int       `json:"boots,omitempty"`
	StartupS []float64 `json:"startup_s,omitempty"`
}

// LegacyEngine is the engine of results written before engines were
// recorded: every server then was vLLM. (registry.Default, the engine of
// a spec's server that names none, is the same; TestLegacyEngine holds
// them together.)
const LegacyEngine = "vllm"

// EngineName is the server's engine, LegacyEngine for results that
// predate the field.
func (s *Server) EngineName() string {
	if s.Engine == "" {
		return LegacyEngine
	}
	return s.Engine
}

// GPUHours is GPUSeconds in hours.
func (g *GPUTime) GPUHours() float64 { return g.GPUSeconds / 3600 }

// Server describes the server that was measured.
type Server struct {
	Name string `json:"name"`
	// Engine is the inference engine ("vllm", "sglang"); "" in results
	// written before engines were recorded, which were all vLLM.
	Engine string `json:"engine,omitempty"`
	// Device is the spec's device, "cpu" for a CPU build (device =
	// "cpu"), "" for the default.
	Device      string            `json:"device,omitempty"`
	Model       string            `json:"model"`
	ServedModel string            `json:"served_model"`
	Argv        []string          `json:"argv,omitempty"` // API key redacted
	Env         map[string]string `json:"env,omitempty"`
	Endpoint    string            `json:"endpoint"` // base URL measured, e.g. http://127.0.0.1:8000
	Version     string            `json:"version,omitempty"`
	MaxModelLen int               `json:"max_model_len,omitempty"`
	// KVCacheTokens is the KV cache capacity in tokens; 0 when unknown.
	KVCacheTokens int64 `json:"kv_cache_tokens,omitempty"`
	// KVCacheSource says where KVCacheTokens came from: one of the
	// vocab.KVSource* constants ("spec", "metrics", "log", "metrics-estimate");
	// "" when unknown (docs/method.md#kv-capacity).
	KVCacheSource string `json:"kv_cache_source,omitempty"`
	// KVCacheEngines is the number of data-parallel engines KVCacheTokens
	// is split over: a request lives in one engine's pool
	// (docs/method.md#over-capacity); 0 or 1 means one.
	KVCacheEngines int `json:"kv_cache_engines,omitempty"`
	// KVCacheSlots is the number of slots KVCacheTokens is split into, a
	// request in one slot's KV (llama-server's --parallel slots:
	// docs/llamacpp.md#kv-capacity); 0 when requests share the pool.
	KVCacheSlots int `json:"kv_cache_slots,omitempty"`
	// MaxNumSeqs is the server's cap on running requests per engine when
	// known: what the server states (SGLang's resolved
	// effective_max_running_requests_per_dp) when it does, else the
	// spec's; Stated says which.
	MaxNumSeqs int `json:"max_num_seqs,omitempty"`
	// TensorParallelSize as launched (0 when not set).
	TensorParallelSize int `json:"tensor_parallel_size,omitempty"`
	// KVCacheDtype is the KV cache dtype: what the server states
	// (vLLM's cache config metric, SGLang's /server_info) when it does, else the spec's
	// ("" when neither says); Stated says which, and conditions read only
	// a stated one.
	KVCacheDtype string `json:"kv_cache_dtype,omitempty"`
	// Speculative is the speculative decoding method ("" when off): what
	// the server's startup log states when it was read, else the spec's;
	// Stated says which, and conditions read only a stated one.
	Speculative string `json:"speculative,omitempty"`
	// BlockSize is the block size the server states (vLLM: on hybrid models
	// an aligned size, not a token unit); 0 when the server does not say.
	BlockSize int64 `json:"block_size,omitempty"`
	// PrefixCaching is the server's enable_prefix_caching
	// (as its engine states it); nil when it does not say.
	PrefixCaching *bool `json:"enable_prefix_caching,omitempty"`
	// Stated names each fact above that the server stated itself, and
	// where ("kv_cache_dtype": the engine's source of it, "version": "GET
	// /version", …); a fact not named here is the spec's
	// (docs/method.md#server-facts).
	Stated map[string]string `json:"stated,omitempty"`
	// Asked is what the spec asked for the facts a server states; nil
	// for results written before it was recorded.
	Asked *ServerAsked `json:"asked,omitempty"`
	// GPUs as listed by nvidia-smi; empty when it is not present.
	GPUs []GPU `json:"gpus,omitempty"`
	// Labels are free-form facts from the spec shown in reports
	// (e.g. quantization, gpu, build).
	Labels map[string]string `json:"labels,omitempty"`
	// Simulated is true when the server was slogate's built-in simulator.
	Simulated bool `json:"simulated,omitempty"`
	// PricePerGPUHour is the spec's server.price_per_gpu_hour: what one
	// of its GPUs costs an hour; nil when the spec sets none. The reports
	// price a search's answer with it (docs/method.md#cost).
	PricePerGPUHour *float64 `json:"price_per_gpu_hour,omitempty"`
}

// ServerAsked is what the spec's server block asked for the facts the
// server states about itself (docs/method.md#server-facts): each is empty
// when the spec left it to the server's default.
type ServerAsked struct {
	KVCacheDtype  string `json:"kv_cache_dtype,omitempty"`
	Speculative   string `json:"speculative,omitempty"` // the speculative block's method
	PrefixCaching *bool  `json:"enable_prefix_caching,omitempty"`
	MaxModelLen   int    `json:"max_model_len,omitempty"`
	// MaxNumSeqs is the running limit the launch sets (the attribute,
	// args' flag, or the engine's fixed value such as SGLang's 48 under
	// speculative decoding); 0 when the engine sizes it.
	MaxNumSeqs int `json:"max_num_seqs,omitempty"`
}

// GPU is one device as reported by nvidia-smi.
type GPU struct {
	Index     int    `json:"index"`
	Name      string `json:"name"`
	MemoryMiB int    `json:"memory_mib"`
}

// Measure records the measurement settings in force.
type Measure struct {
	Duration  string  `json:"duration"`   // as written, e.g. "30s"
	DurationS float64 `json:"duration_s"` // the same in seconds
	MaxOutput int     `json:"max_output"`
	Endpoint  string  `json:"endpoint"` // "completions" or "chat"
	// Repeat is how many times each cell was measured; with RepeatAuto
	// the minimum, MaxRepeat the most (docs/method.md#repeat-auto).
	Repeat     int  `json:"repeat"`
	RepeatAuto bool `json:"repeat_auto,omitempty"`
	MaxRepeat  int  `json:"max_repeat,omitempty"`
	// MaxGPUTimeS is max_gpu_time in seconds; 0 is no bound.
	MaxGPUTimeS float64 `json:"max_gpu_time_s,omitempty"`
	// Boots is how many times the server was started, the repeats split
	// over the boots (docs/method.md#boots); 0 or 1 is one.
	Boots int `json:"boots,omitempty"`
	// Percentiles are measure.percentiles; empty means DefaultPercentiles
	// (results written before the setting, or a spec that left it out).
	Percentiles []float64 `json:"percentiles,omitempty"`
}

// PrefillCell is one cold prefill measurement at a context length.
type PrefillCell struct {
	Context int          `json:"context"`
	Status  vocab.Status `json:"status"`
	Reason  string       `json:"reason,omitempty"`
	// Reasons are Reason as values (result.CellReason), in order; nil
	// in results.json written before them, which hold Reason alone.
	Reasons []CellReason `json:"reasons,omitempty"`
	TPS     float64      `json:"tps"`     // context ÷ TTFT
	TTFTMs  float64      `json:"ttft_ms"` // time to the first chunk of a cold request
	// ServerPrefillMs is the server's own time for the prompt of the
	// (last) run, the cross-check of TTFTMs (docs/method.md#unmeasurable),
	// from ServerPrefillSource: ServerPrefillTimings or
	// ServerPrefillHistogram; nil where the server gives neither.
	ServerPrefillMs     *float64 `json:"server_prefill_ms,omitempty"`
	ServerPrefillSource string   `json:"server_prefill_source,omitempty"`
	// Excluded are the runs of a repeated cell left out of its figures,
	// and Environment the machine around each of its runs, as a decode
	// cell's (docs/method.md#unmeasurable, docs/method.md#environment).
	Excluded    []ExcludedRun `json:"excluded,omitempty"`
	Environment []Environment `json:"environment,omitempty"`
	// ElapsedS is the time the server was busy for the cell: the sum of
	// its repeats (docs/method.md#gpu-time).
	ElapsedS float64 `json:"elapsed_s,omitempty"`
	// GPUSeconds is ElapsedS × the GPUs the plan counts.
	GPUSeconds float64 `json:"gpu_seconds,omitempty"`
	// Repeats, Spread and Samples are set when measure.repeat > 1: the
	// reported value is the median, Spread holds [min, max] per metric and
	// Samples every run's value per metric, in the order measured.
	Repeats int                   `json:"repeats,omitempty"`
	Spread  map[string][2]float64 `json:"spread,omitempty"`
	Samples map[string][]float64  `json:"samples,omitempty"`
	// Design is how the repeats were taken: their boots, and why
	// repeat = "auto" stopped; nil for a single run.
	Design *RepeatDesign `json:"design,omitempty"`
}

// RepeatDesign is how a cell's repeats were taken (docs/method.md#repeats).
type RepeatDesign struct {
	// Boots is the server boot (1, 2, …) of each sample, in the order of
	// Samples; nil when the server was booted once.
	Boots []int `json:"boots,omitempty"`
	// Stop says why repeat = "auto" stopped repeating the cell, as a rule
	// and its figures (nil with a fixed repeat); views word it.
	Stop *RepeatStop `json:"stop,omitempty"`
	// StopReason is the sentence results.json files written before Stop
	// held; empty in newer ones.
	StopReason string `json:"stop_reason,omitempty"`
	// Levels are the boot-level and repeat-level variance components per
	// metric, with two boots or more (docs/method.md#boots).
	Levels map[string]Levels `json:"levels,omitempty"`
}

// RepeatStop is why repeat = "auto" stopped repeating a cell
// (docs/method.md#sequential-repeats): Rule, with the figures it read.
type RepeatStop struct {
	// Rule is one of the Stop* codes.
	Rule string `json:"rule"`
	// MaxRepeat is the max_repeat reached (StopMaxRepeat,
	// StopNoRunMeasurable).
	MaxRepeat int `json:"max_repeat,omitempty"`
	// BudgetS is max_gpu_time and SpentS the time spent when it was
	// reached, in seconds (StopBudget); CPU says a CPU server's server
	// time was counted, no GPU having been found.
	BudgetS float64 `json:"budget_s,omitempty"`
	SpentS  float64 `json:"spent_s,omitempty"`
	CPU     bool    `json:"cpu,omitempty"`
	// Looks are the sequential design's last look at each gated metric
	// (StopLooks), in the order of the gated metrics.
	Looks []MetricLook `json:"looks,omitempty"`
}

// The rules a RepeatStop names.
const (
	// StopLooks: the sequential design stopped every gated metric (Looks).
	StopLooks = "looks"
	// StopMaxRepeat: max_repeat was reached.
	StopMaxRepeat = "max_repeat"
	// StopNoRunMeasurable: max_repeat was reached with no run measurable.
	StopNoRunMeasurable = "no_run_measurable"
	// StopBudget: the run's max_gpu_time was spent.
	StopBudget = "max_gpu_time"
	// StopNoGatedMetric: the cell has no gated metric to look at.
	StopNoGatedMetric = "no_gated_metric"
)

// MetricLook is one look of the sequential design at a gated metric
// (compare.Look): its rule and the figures behind it.
type MetricLook struct {
	Metric string `json:"metric"`
	// Rule is compare.LookRule's code.
	Rule string `json:"rule"`
	// Repeats is the candidate's repeats looked at; Min and Max the
	// design's; BaselineRepeats the baseline's.
	Repeats         int `json:"repeats"`
	Min             int `json:"min,omitempty"`
	Max             int `json:"max,omitempty"`
	BaselineRepeats int `json:"baseline_repeats,omitempty"`
	// Target is the repeats the cell was sized to, Sized the repeats whose
	// noise (Noise, the spread of the logs) sized it, Tolerance the change
	// the size must decide.
	Target    int     `json:"target,omitempty"`
	Sized     int     `json:"sized,omitempty"`
	Noise     float64 `json:"noise,omitempty"`
	Tolerance float64 `json:"tolerance,omitempty"`
	// Change is the comparison's decision at a look that decided
	// ("unchanged", "improved", "regressed").
	Change string `json:"change,omitempty"`
}

// Levels are the variance components of one metric of a cell measured
// over several boots, after Kalibera and Jones (docs/method.md#boots): on
// log values, so that each is a squared relative spread.
type Levels struct {
	// Within is S₁², the mean over boots of the variance between the
	// repeats of one boot.
	Within float64 `json:"within"`
	// Between is T₂² = S₂² − S₁² ÷ n, the variance boots add beyond what
	// their repeats' noise explains (S₂² the variance of the boots' means,
	// n the repeats a boot); 0 when none is seen.
	Between float64 `json:"between"`
	// RepeatsPerBoot is the optimal repeats a boot, ⌈√(c₂ ÷ c₁ ×
	// S₁² ÷ T₂²)⌉ with c₂ a boot's cost and c₁ a repeat's; 0 when Between
	// is 0 (one boot with all the repeats is then as good).
	RepeatsPerBoot int `json:"repeats_per_boot"`
	// BootsFor is the boots of RepeatsPerBoot repeats that a change of the
	// tolerance needs (one-sided α, power 0.9, per-boot means as the unit).
	BootsFor int `json:"boots_for,omitempty"`
}

// DecodeCell is one sustained-decode measurement at context × concurrency.
type DecodeCell struct {
	Matrix string `json:"matrix"` // the matrix label, usually "decode"; "" for a search probe
	// Search is the search block a probe cell belongs to; "" otherwise.
	Search      string       `json:"search,omitempty"`
	Context     int          `json:"context"`
	Concurrency int          `json:"concurrency"`
	Status      vocab.Status `json:"status"`
	Reason      string       `json:"reason,omitempty"`
	// Reasons are Reason as values (result.CellReason), in order; nil
	// in results.json written before them, which hold Reason alone.
	Reasons       []CellReason `json:"reasons,omitempty"`
	TotalTPS      float64      `json:"total_tps"`
	PerRequestTPS float64      `json:"per_request_tps"`
	TTFTMs        float64      `json:"ttft_ms"`
	TTFTMsP90     float64      `json:"ttft_ms_p90"`
	TTFTMsP99     float64      `json:"ttft_ms_p99"`
	TBTMs         float64      `json:"tbt_ms"`
	TBTMsP90      float64      `json:"tbt_ms_p90"`
	TBTMsP99      float64      `json:"tbt_ms_p99"`
	ActiveAvg     float64      `json:"active_avg"`
	Completed     int          `json:"completed"`
	OutputTokens  int64        `json:"output_tokens"`
	MeasuredS     float64      `json:"measured_s"`
	// ServerTotalTPS is Δ of the server's generated-tokens counter ÷ window; nil when /metrics has no such counter.
	ServerTotalTPS        *float64 `json:"server_total_tps,omitempty"`
	SpeculativeAcceptRate *float64 `json:"spec_accept_rate,omitempty"`
	SpeculativeAcceptLen  *float64 `json:"spec_accept_len,omitempty"`
	// ServerPerRequestTPS is the server's own per-request decode rate
	// over the window, the cross-check of PerRequestTPS
	// (docs/method.md#unmeasurable): the median of llama-server's
	// timings.predicted_per_second over the requests that finished in it
	// (docs/llamacpp.md#server-timings), else the tokens vLLM's or
	// SGLang's inter-token histogram counted over the waits it summed;
	// nil where the server gives neither.
	ServerPerRequestTPS *float64 `json:"server_per_request_tps,omitempty"`
	// ServerRateSource is where ServerPerRequestTPS comes from:
	// ServerRateTimings or ServerRateHistogram ("" when it is nil).
	ServerRateSource string `json:"server_rate_source,omitempty"`
	// ServerTTFTMsMean, ServerITLMsMean and ServerE2EMsMean are the means
	// of the server's own request histograms over the window (Δsum ÷
	// Δcount, in ms), beside the client's stats.ttft_ms_mean,
	// stats.itl_ms_mean and e2e (docs/method.md#server-latency); nil where
	// the server has no such histogram or observed nothing in the window.
	ServerTTFTMsMean *float64 `json:"server_ttft_ms_mean,omitempty"`
	ServerITLMsMean  *float64 `json:"server_itl_ms_mean,omitempty"`
	ServerE2EMsMean  *float64 `json:"server_e2e_ms_mean,omitempty"`
	// Stats holds the latency statistics that are not fields, by metric
	// name (docs/method.md#metric-names): "ttft_ms_p95", "itl_ms",
	// "ttft_ms_count", ….
	Stats map[string]float64 `json:"stats,omitempty"`
	// TokenSource is how the output tokens were counted: usage (per-chunk
	// usage deltas), final_usage or chunks.
	TokenSource TokenSource `json:"token_source,omitempty"`
	// Preemptions is Δ of the server's preemption counter over the window; nil when
	// /metrics has no such counter. More than 0 makes the cell queued
	// (docs/method.md#statuses).
	Preemptions *int64 `json:"preemptions,omitempty"`
	// KVUsageCheck is the KV capacity cross-check, taken in the first
	// concurrency-1 cell of each context (docs/method.md#kv-capacity).
	KVUsageCheck *KVUsageCheck `json:"kv_usage_check,omitempty"`
	// ElapsedS is the time the server was busy for the cell, warm-up
	// included: the sum of its repeats (docs/method.md#gpu-time).
	ElapsedS float64 `json:"elapsed_s,omitempty"`
	// SettleS is how long the cell waited, before its first request, for
	// the server to finish the requests an earlier cell had closed (an
	// engine that notices a closed request late; docs/method.md#settle).
	SettleS float64 `json:"settle_s,omitempty"`
	// GPUSeconds is ElapsedS × the GPUs the plan counts.
	GPUSeconds float64               `json:"gpu_seconds,omitempty"`
	Repeats    int                   `json:"repeats,omitempty"`
	Spread     map[string][2]float64 `json:"spread,omitempty"`
	// Samples holds every repeated run's value per metric, in the order
	// measured (measure.repeat > 1); `slogate diff` tests them for a
	// significant change (docs/method.md#comparing-runs).
	Samples map[string][]float64 `json:"samples,omitempty"`
	// Design is how the repeats were taken (boots, repeat = "auto"'s
	// stop); nil for a single run.
	Design *RepeatDesign `json:"design,omitempty"`
	// Excluded are the runs of a repeated cell left out of its figures,
	// Samples and Repeats: runs the client could not measure, and with
	// repeat = "auto" runs whose machine moved (docs/method.md#unmeasurable).
	Excluded []ExcludedRun `json:"excluded,omitempty"`
	// Environment is the machine around each of the cell's runs, excluded
	// ones too, in the order measured (docs/method.md#environment).
	Environment []Environment `json:"environment,omitempty"`
	// Warnings are the cell's typed warnings (code, text, figures); a
	// results.json written before they had codes holds plain strings,
	// read as warnings of no kind with the same text.
	Warnings []warning.Warning `json:"warnings,omitempty"`
	// Notes are facts about the cell that are not problems, such as the
	// client's restart gaps lowering active_avg: typed as warnings are
	// (internal/warning's note codes); a v1 results.json's are plain
	// strings, read as notes of no code with the same text.
	Notes []warning.Warning `json:"notes,omitempty"`
	// Polling is how long the cell's /metrics scrapes took; nil when it
	// took none.
	Polling *Polling `json:"polling,omitempty"`
	// Rejected is the requests the server refused at admission whose
	// refusal came inside the window (docs/method.md#rejections); 0 in
	// results written before rejections were counted.
	Rejected int `json:"rejected,omitempty"`
	// Rejections are the cell's refused requests as the client and the
	// server counted them over the whole cell (docs/method.md#rejections);
	// nil when neither counted any.
	Rejections *Rejections `json:"rejections,omitempty"`
}

// Polling is how long a cell's /metrics scrapes took: the status rules poll
// every 50 ms (docs/method.md#polling), and a scrape that takes long is
// work the server does beside the measured requests.
type Polling struct {
	Scrapes int     `json:"scrapes"`
	MeanMs  float64 `json:"scrape_ms_mean"`
	MaxMs   float64 `json:"scrape_ms_max"`
}

// KVUsageCheck compares the KV usage the server reports with one stream
// resident against the capacity in use (docs/method.md#kv-capacity). The
// numbers are those of the median sample (by implied capacity).
type KVUsageCheck struct {
	// UsagePerc is the server's KV cache usage gauge (0..1, as vLLM writes it) of
	// the engine holding the stream.
	UsagePerc float64 `json:"usage_perc"`
	// ExpectedPerc is ResidentTokens ÷ (CapacityTokens ÷ Engines): what the
	// usage should be if the capacity is right; 0 when it is unknown.
	ExpectedPerc float64 `json:"expected_perc,omitempty"`
	// ResidentTokens is the stream's context + the tokens generated so far.
	ResidentTokens int64 `json:"resident_tokens"`
	// FootprintTokens is UsagePerc × (CapacityTokens ÷ Engines): the
	// tokens the request occupies by the server's account, if the capacity
	// is right; 0 when it is unknown.
	FootprintTokens int64 `json:"footprint_tokens,omitempty"`
	// ImpliedCapacityTokens is ResidentTokens ÷ UsagePerc × Engines: the
	// capacity the usage implies.
	ImpliedCapacityTokens int64 `json:"implied_capacity_tokens"`
	// CapacityTokens and CapacitySource are the capacity in use
	// (server.kv_cache_tokens and server.kv_cache_source).
	CapacityTokens int64  `json:"capacity_tokens,omitempty"`
	CapacitySource string `json:"capacity_source,omitempty"`
	// Engines is the number of engines reporting kv_cache_usage_perc.
	Engines int `json:"engines"`
	// Samples is how many /metrics polls had the one stream resident.
	Samples int `json:"samples"`
}

// Ref returns the reference that names this cell.
func (c *PrefillCell) Ref() vocab.CellRef {
	return vocab.CellRef{Phase: vocab.PhasePrefill, Context: c.Context}
}

// Ref returns the reference that names this cell.
func (c *DecodeCell) Ref() vocab.CellRef {
	return vocab.CellRef{Phase: vocab.PhaseDecode, Matrix: c.Matrix, Search: c.Search, Context: c.Context, Concurrency: c.Concurrency}
}

// Outcome returns the worst verdict outcome, Pass when there are none.
func (r *Results) Outcome() vocab.Outcome {
	o := vocab.Pass
	for _, v := range r.Verdicts {
		o = vocab.Worst(o, v.Outcome)
	}
	return o
}

// Describe names the run in one line for headers: "server qwen, Qwen/Qwen3.5-4B,
// vLLM 0.26.1, simulated, <start>", the engine by title (registry.Title:
// results.json's model knows no engine), the start formatted with
// dateLayout and every part left out when unknown.
func (r *Results) Describe(dateLayout string, title func(engine string) string) string {
	parts := []string{"server " + r.Server.Name}
	if r.Server.Model != "" {
		parts = append(parts, r.Server.Model)
	}
	if r.Server.Version != "" {
		parts = append(parts, title(r.Server.Engine)+" "+r.Server.Version)
	}
	if r.Server.Simulated {
		parts = append(parts, "simulated")
	}
	if !r.Started.IsZero() {
		parts = append(parts, r.Started.UTC().Format(dateLayout))
	}
	return strings.Join(parts, ", ")
}
