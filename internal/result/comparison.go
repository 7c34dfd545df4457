package result

import (
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/warning"
)

// Comparison is the record of a -baseline comparison in results.json
// (compare.Comparison.Record): per cell and metric the baseline's value and
// this run's, the change with its bounds, the decision and the outcome,
// which the reports' comparison table and charts show. Nil without a
// baseline.
type Comparison struct {
	// Baseline names the baseline run: server, model, engine and version,
	// start (Results.Describe).
	Baseline string `json:"baseline"`
	// Tolerance (a fraction) and Alpha (each bound's one-sided level) are
	// the policy's.
	Tolerance float64 `json:"tolerance"`
	Alpha     float64 `json:"alpha"`
	// InformsOnly: the engines differ, so the comparison never gates
	// (docs/method.md#comparing-engines).
	InformsOnly bool `json:"informs_only,omitempty"`
	// Outcome is the comparison's, the worst of its cells'.
	Outcome vocab.Outcome `json:"outcome"`
	// Warnings are the comparison's own: the machines differ
	// (warning.MachineDiffers, docs/method.md#machine-against-the-baseline).
	Warnings []warning.Warning `json:"warnings,omitempty"`
	// Rows are the cells either run recorded, each metric compared, in
	// order: prefill first, then each decode matrix row by row.
	Rows []ComparisonRow `json:"rows"`
	// Correctness are the run's correctness blocks compared with the
	// baseline's (docs/method.md#correctness), in the spec's order.
	Correctness []CorrectnessComparison `json:"correctness,omitempty"`
	// Traffic are the traffic cells compared (docs/method.md#comparing-traffic),
	// a row per cell and decided metric as Rows are, the bounds those of
	// the bootstrap of its requests (none when the tolerance rule decided
	// on the values).
	Traffic []ComparisonRow `json:"traffic,omitempty"`
	// Capacity are the rate searches of both runs compared: capacity lost
	// (docs/method.md#capacity-lost), in the run's order of searches.
	Capacity []CapacityComparison `json:"capacity,omitempty"`
	// Searches are the baseline's searches of the names this run also
	// searched, probes included, with what prices them, so that the
	// reports chart both runs' probes and price both answers
	// (docs/method.md#cost); nil when the runs share no search.
	Searches []BaselineSearch `json:"searches,omitempty"`
}

// CapacityComparison is one rate search's answer compared with the
// baseline's search of the same name.
type CapacityComparison struct {
	Search string `json:"search"`
	// Baseline and Now are each run's answer with its bounds.
	Baseline CapacityAnswer `json:"baseline"`
	Now      CapacityAnswer `json:"now"`
	// Tolerance is the relative capacity that may be lost (the policy's).
	Tolerance float64 `json:"tolerance"`
	// Decision is "regressed", "within" (tolerance), "inconclusive" or
	// "skipped" (nothing to compare); Outcome what it does to the gate
	// (a Fail or Inconclusive passes when the engines differ).
	Decision string        `json:"decision"`
	Outcome  vocab.Outcome `json:"outcome"`
	// Rule names the rule that decided (ratesearch.CapacityRule, compare's
	// rules: search_stopped, baseline_stopped, searches_differ), and
	// NoPairedCheck why the bounds decided though a run has check windows
	// (compare.NoPairedCheck); the words are made from them and the
	// figures below in views (docs/method.md#capacity-lost).
	Rule          string `json:"rule,omitempty"`
	NoPairedCheck string `json:"no_paired_check,omitempty"`
	// Line is the bounds rules' tolerance line in req/s; DecidingPrecision
	// the precision that would decide an inconclusive one, SearchPrecision
	// the searches' (0: longer windows would decide it, not a finer search).
	Line              float64 `json:"line,omitempty"`
	DecidingPrecision float64 `json:"deciding_precision,omitempty"`
	SearchPrecision   float64 `json:"search_precision,omitempty"`
	// CheckRate and CheckBaselineRate are the paired check's rates (the
	// candidate's windows at the baseline's answer less the tolerance,
	// the baseline's at its answer); WorseMetric the metric worse with
	// confidence (rule paired_worse); NeedWindows the windows a side that
	// would decide an undecided check at its spread (0: unknown).
	CheckRate         float64 `json:"check_rate,omitempty"`
	CheckBaselineRate float64 `json:"check_baseline_rate,omitempty"`
	WorseMetric       string  `json:"worse_metric,omitempty"`
	NeedWindows       int     `json:"need_windows,omitempty"`
	// Reason is the sentence results.json files written before Rule held;
	// empty in newer ones.
	Reason string `json:"reason,omitempty"`
	// Method is "paired" when the paired check decided
	// (docs/method.md#paired-capacity-check), "bounds" when the two
	// searches' bounds did, "" when nothing was decided.
	Method string `json:"method,omitempty"`
	// Paired are the paired check's metrics with their bounds.
	Paired []PairedCheckMetric `json:"paired,omitempty"`
}

// PairedCheckMetric is one metric of a paired check of capacity lost: the
// mean improvement of the candidate at the baseline's answer less the
// tolerance over the baseline at its answer, on the same windows (positive:
// better), with its one-sided bounds at Alpha; with fewer than two
// windows the bounds are 0 (none).
type PairedCheckMetric struct {
	Metric  string  `json:"metric"`
	Mean    float64 `json:"mean"`
	Lower   float64 `json:"lower"`
	Upper   float64 `json:"upper"`
	Windows int     `json:"windows"`
	Alpha   float64 `json:"alpha"`
}

// CapacityAnswer is one side's rate search answer (Search's fields).
type CapacityAnswer struct {
	Found bool `json:"found"`
	// Rate is the answer (0 when none met); Lower and Upper its
	// confidence bounds (0: not bounded); Precision the search's.
	Rate      float64 `json:"rate"`
	Lower     float64 `json:"rate_lower"`
	Upper     float64 `json:"rate_upper"`
	Precision float64 `json:"precision"`
	// ClientLimit is the lowest rate the client could not drive (0: none).
	ClientLimit float64 `json:"client_limit,omitempty"`
}

// BaselineSearch is one of the baseline's searches as a comparison keeps
// it for the reports: the search and what its server cost.
type BaselineSearch struct {
	Search Search `json:"search"`
	// GPUs is the GPUs the baseline's plan counted (its gpu_time.gpus; 0
	// when it did not record them), CPU whether it ran without GPUs.
	GPUs int  `json:"gpus,omitempty"`
	CPU  bool `json:"cpu,omitempty"`
	// PricePerGPUHour is the baseline spec's server.price_per_gpu_hour;
	// nil when it set none.
	PricePerGPUHour *float64 `json:"price_per_gpu_hour,omitempty"`
}

// CorrectnessComparison is one correctness block compared with the
// baseline's block of the same name.
type CorrectnessComparison struct {
	Name    string        `json:"name"`
	Outcome vocab.Outcome `json:"outcome"`
	// Missing: the baseline has no such block (nothing compared).
	Missing bool `json:"missing,omitempty"`
	// Refusal is why the blocks were not compared, as a rule and the
	// figures it read; nil when they were (the reports word it).
	Refusal *CorrectnessRefusal `json:"refusal,omitempty"`
	// Refused is why the blocks were not compared, in words, as
	// results.json files written before Refusal held it; empty in newer
	// ones.
	Refused string `json:"refused,omitempty"`
	// Prompts compared, and how they agreed; Unpaired those a side has no
	// output for.
	Prompts    int `json:"prompts"`
	Exact      int `json:"exact"`
	NearTies   int `json:"near_ties"`
	Mismatches int `json:"mismatches"`
	Unpaired   int `json:"unpaired,omitempty"`
	// AgreementRate, NearTieRate and MismatchRate are shares of Prompts;
	// MaxMismatch the share allowed; Regressed whether the mismatches
	// were more.
	AgreementRate float64 `json:"agreement_rate"`
	NearTieRate   float64 `json:"near_tie_rate"`
	MismatchRate  float64 `json:"mismatch_rate"`
	MaxMismatch   float64 `json:"max_mismatch"`
	Regressed     bool    `json:"regressed,omitempty"`
	// Lossless: this run's server decoded speculatively and the
	// baseline's did not: the agreement is speculative decoding's
	// losslessness under greedy.
	Lossless bool `json:"lossless,omitempty"`
	// Notes are what to read the comparison with, typed
	// (warning.CorrectnessConcurrency, …); a v1 results.json's are plain
	// strings, read as notes of no code.
	Notes []warning.Warning `json:"notes,omitempty"`
	// Accuracy is the paired accuracy; nil without a scorer on both sides.
	Accuracy *AccuracyComparison `json:"accuracy,omitempty"`
	// Diverged are the prompts that did not agree exactly, in dataset
	// order.
	Diverged []Divergence `json:"diverged,omitempty"`
}

// AccuracyComparison is the paired accuracy of a correctness block.
type AccuracyComparison struct {
	// Items are the items scored on both sides; Baseline and Now the
	// accuracies, each with its Wilson interval (95%).
	Items      int        `json:"items"`
	Baseline   float64    `json:"baseline"`
	Now        float64    `json:"now"`
	BaselineCI [2]float64 `json:"baseline_ci"`
	NowCI      [2]float64 `json:"now_ci"`
	// Worse and Better are the discordant pairs; Change the accuracy's
	// change with its bounds; PValue the exact McNemar p-value of "no
	// drop"; Margin the non-inferiority margin.
	Worse  int        `json:"worse"`
	Better int        `json:"better"`
	Change float64    `json:"change"`
	Bounds [2]float64 `json:"bounds"`
	PValue float64    `json:"p_value"`
	Margin float64    `json:"margin"`
	// Decision is "within" (tolerance), "improved", "regressed" or
	// "inconclusive"; Need the items that would decide an inconclusive
	// one; ItemsFor3 the items that catch a 3-point drop at power 0.8 from
	// the baseline's accuracy.
	Decision  string `json:"decision"`
	Need      int    `json:"need,omitempty"`
	ItemsFor3 int    `json:"items_for_3_points,omitempty"`
}

// WasRefused reports whether the blocks were not compared: a Refusal, or
// in results written before it, a Refused sentence.
func (c *CorrectnessComparison) WasRefused() bool { return c.Refusal != nil || c.Refused != "" }

// CorrectnessRefusal is why a correctness block was not compared with the
// baseline's block of its name (docs/method.md#correctness): Rule, with
// the figures it read.
type CorrectnessRefusal struct {
	Rule RefusalRule `json:"rule"`
	// BaselineMaxOutput and MaxOutput are each side's max_output
	// (RefusedMaxOutput).
	BaselineMaxOutput int `json:"baseline_max_output,omitempty"`
	MaxOutput         int `json:"max_output,omitempty"`
	// BaselineEndpoint and Endpoint are each side's endpoint
	// (RefusedEndpoint).
	BaselineEndpoint string `json:"baseline_endpoint,omitempty"`
	Endpoint         string `json:"endpoint,omitempty"`
	// Line is the first dataset line of this run whose prompt is not the
	// baseline's (RefusedPrompts).
	Line int `json:"line,omitempty"`
}

// RefusalRule names why two correctness blocks were not compared
// (CorrectnessRefusal): a stable code results.json keeps.
type RefusalRule string

// The rules a CorrectnessRefusal names.
const (
	// RefusedNoOutputs: the baseline has no outputs of the block
	// (CorrectnessFile missing beside its results.json).
	RefusedNoOutputs RefusalRule = "no_baseline_outputs"
	// RefusedMaxOutput: the blocks asked for other max_output
	// (BaselineMaxOutput, MaxOutput).
	RefusedMaxOutput RefusalRule = "max_output_differs"
	// RefusedEndpoint: the blocks sent their requests to other endpoints
	// (BaselineEndpoint, Endpoint).
	RefusedEndpoint RefusalRule = "endpoint_differs"
	// RefusedPrompts: a dataset line's prompt is not the baseline's
	// (Line).
	RefusedPrompts RefusalRule = "prompts_differ"
)

// Divergence is one prompt whose output differs from the baseline's.
type Divergence struct {
	// Line is the dataset line; Kind "near tie" or "mismatch"; Position
	// the first token (or, ByText, character) that differs.
	Line     int    `json:"line"`
	Prompt   string `json:"prompt"`
	Kind     string `json:"kind"`
	Position int    `json:"position"`
	ByText   bool   `json:"by_text,omitempty"`
	// Cause is the rule that made the divergence a near tie or a
	// mismatch, with the figures it read (the reports word it); nil in
	// results written before it.
	Cause *DivergenceCause `json:"cause,omitempty"`
	// Why is the same in words, as results.json files written before
	// Cause held it; empty in newer ones.
	Why string `json:"why,omitempty"`
	// Before is the text both outputs share just before the divergence;
	// Baseline and Now each side's text from it (a few tokens).
	Before   string `json:"before"`
	Baseline string `json:"baseline"`
	Now      string `json:"now"`
	// BaselineTop and NowTop are each side's top-k at the position.
	BaselineTop []TopToken `json:"baseline_top,omitempty"`
	NowTop      []TopToken `json:"now_top,omitempty"`
}

// DivergenceCause is why a prompt's greedy outputs count as the near tie
// or the mismatch they are (docs/method.md#correctness): Rule, with the
// figures it read.
type DivergenceCause struct {
	Rule DivergenceRule `json:"rule"`
	// Side is the side the rule names, SideBaseline or SideNow: the one
	// whose output ends (DivergedEnds; after Divergence.Position tokens)
	// or whose token is not in the other's top-k (DivergedNotInTop).
	Side string `json:"side,omitempty"`
	// Token is that side's token's text and TopK the size of the other
	// side's top-k (DivergedNotInTop).
	Token string `json:"token,omitempty"`
	TopK  int    `json:"top_k,omitempty"`
	// LogprobGap is the wider of the two sides' logprob gaps between the
	// two tokens, in nats (DivergedNearTie, DivergedGapWide), and
	// NearTieGap the gap a near tie allows (DivergedGapWide).
	LogprobGap float64 `json:"logprob_gap,omitempty"`
	NearTieGap float64 `json:"near_tie_gap,omitempty"`
}

// DivergenceRule names why two greedy outputs diverged as they did
// (DivergenceCause): a stable code results.json keeps.
type DivergenceRule string

// The rules a DivergenceCause names.
const (
	// DivergedNearTie: each side's token is in the other's top-k, and
	// their logprobs are LogprobGap apart, within the near-tie gap.
	DivergedNearTie DivergenceRule = "near_tie"
	// DivergedGapWide: each side's token is in the other's top-k, but
	// their logprobs are LogprobGap apart, more than NearTieGap (a
	// mismatch).
	DivergedGapWide DivergenceRule = "gap_too_wide"
	// DivergedNotInTop: Side's token, Token, is not in the other side's
	// top TopK (a mismatch).
	DivergedNotInTop DivergenceRule = "not_in_top"
	// DivergedNoLogprobs: a side has no top-k logprobs at the position,
	// so no near tie can be told (a mismatch).
	DivergedNoLogprobs DivergenceRule = "no_logprobs"
	// DivergedEnds: Side's output ends after Position tokens, where the
	// other goes on (a mismatch).
	DivergedEnds DivergenceRule = "ends_early"
	// DivergedTexts: the outputs have no tokens to compare and their
	// texts differ (a mismatch).
	DivergedTexts DivergenceRule = "texts_differ"
	// DivergedRequestFailed: a side's request failed, so the prompt is
	// not compared (unpaired; never recorded as a divergence).
	DivergedRequestFailed DivergenceRule = "request_failed"
)

// The sides a DivergenceCause names.
const (
	// SideBaseline is the baseline's output.
	SideBaseline = "baseline"
	// SideNow is this run's output, the candidate's.
	SideNow = "now"
)

// ComparisonRow is one cell and metric of a Comparison.
type ComparisonRow struct {
	// Cell names it ("decode/ctx=8K/conc=64"); Phase, Matrix, Context and
	// Concurrency are its key.
	Cell        string      `json:"cell"`
	Phase       vocab.Phase `json:"phase"`
	Matrix      string      `json:"matrix,omitempty"`
	Context     int         `json:"context"`
	Concurrency int         `json:"concurrency,omitempty"`
	// Metric is the metric's name, Unit its unit, HigherIsBetter its
	// direction.
	Metric         string `json:"metric"`
	Unit           string `json:"unit,omitempty"`
	HigherIsBetter bool   `json:"higher_is_better"`
	// Baseline and Now are the values; null when that run has none (see
	// the status: absent "", over_capacity, error, …).
	Baseline       *float64     `json:"baseline"`
	Now            *float64     `json:"now"`
	BaselineStatus vocab.Status `json:"baseline_status,omitempty"`
	NowStatus      vocab.Status `json:"now_status,omitempty"`
	// BaselineRepeats and NowRepeats are the runs behind each value.
	BaselineRepeats int `json:"baseline_repeats,omitempty"`
	NowRepeats      int `json:"now_repeats,omitempty"`
	// Change is the relative change of Now from Baseline (a fraction: the
	// Hodges–Lehmann estimate when an interval decided it); Lower and
	// Upper its bounds, each one-sided at Confidence; null when not known.
	Change     *float64 `json:"change"`
	Lower      *float64 `json:"lower"`
	Upper      *float64 `json:"upper"`
	Confidence *float64 `json:"confidence,omitempty"`
	// Decision is how the cell moved: unchanged, improved, regressed,
	// inconclusive, baseline_only, now_only, neither, lost, errored.
	Decision string `json:"decision"`
	// Outcome is what the cell and metric does to the gate.
	Outcome vocab.Outcome `json:"outcome"`
}
