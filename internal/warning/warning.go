// Package warning holds slogate's typed warnings, after terraform's
// diagnostics: a warning is a value with a code naming its kind (a stable
// string a test or a tool matches), a summary, a detail, and the figures
// behind it (the slow-scrape warning's mean, maximum and count; the
// server-counter cross-check's two throughputs and their gap). The text a
// report shows is String(), made from the summary and the detail; a test
// matches the code and the figures, never the text (docs/method.md#polling
// says what the slow-scrape figures mean).
//
// A note is the same value, kept apart from the warnings (a decode cell's
// Notes, a correctness comparison's Notes): a fact to read a result with,
// not a problem, with a code of its own (GateTimedOut, RestartGaps, …)
// and the figures behind it. One type serves both because a note and a
// warning differ only in where they are kept and how a report heads them,
// and a note that turns out to be a problem moves from one list to the
// other unchanged: the list it is in is its severity. A name a warning is
// about (a metric dropped, a fact that disagrees) is its Subject, so a
// test matches code, subject and figures (Textless), and never the words:
// internal/layers' TestNoTestMatchesWarningText fails on a test that
// does.
//
// Package warning is a leaf: measure, runner and lifecycle create warnings
// and result stores them (results.json), without either importing the
// other.
package warning

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Code names one kind of warning. A code is stable once released: tests,
// resulttest and tools reading results.json match it. The empty Code is a
// warning of no known kind (a results.json written before warnings had
// codes, whose warnings were plain strings).
type Code string

// The codes of the warnings a decode cell carries, with the figures each
// holds.
const (
	// SlowScrape: GET /metrics took longer than 5 ms on average while
	// the cell was measured, so polling may perturb the server. Figures:
	// FigMeanMs, FigMaxMs, FigScrapes, FigIntervalMs (the polling period).
	SlowScrape Code = "slow_scrape"
	// ServerTPSGap: the server's own counter, server_total_tps, differs
	// from the client's total_tps by more than 2 %. Figures:
	// FigServerTotalTPS, FigTotalTPS, FigGap (server − client over client,
	// as a fraction: −0.125 is −12.5 %).
	ServerTPSGap Code = "server_tps_gap"
	// ServerRequestTPSGap: the server's own per-request rate
	// (server_per_request_tps, from each request's timings) differs from
	// the client's per_request_tps by more than 10 %. Subject: where the
	// server's rate was read (result.ServerRateTimings,
	// ServerRateHistogram). Figures: FigServerPerRequestTPS,
	// FigPerRequestTPS, FigGap (server − client over client).
	ServerRequestTPSGap Code = "server_request_tps_gap"
	// ServerCounterGap: the server's finished-tokens counter moved, between
	// the two scrapes around the window, by other than the tokens its
	// requests that finished between them say they predicted. Figures:
	// FigCounterTokens (the counter's change), FigFinishedTokens (the
	// requests' sum), FigUncertainTokens (of requests that finished too
	// near a scrape to place).
	ServerCounterGap Code = "server_counter_gap"
	// RejectionsGap: the server's counter of the requests it refused at
	// admission moved, over the cell, by other than the refusals the
	// client saw, beyond those its requests closed before any answer may
	// hide (docs/method.md#rejections). Figures: FigServerRejected (the
	// counter's change), FigClientRejected, FigUnanswered.
	RejectionsGap Code = "rejections_gap"
	// NoMetrics: /metrics could not be read around the window, so
	// server_total_tps was not measured. No figures.
	NoMetrics Code = "no_metrics"
	// SpeculativeIdle: the server block asks for speculative decoding but
	// the server's counters show none ran in the cell. No figures.
	SpeculativeIdle Code = "speculative_idle"
	// KVCapacity: the KV cross-check found the capacity the run assumes
	// suspect (docs/method.md#kv-capacity). Subject: the capacity's
	// source (spec, metrics-estimate, …). Figures: FigImpliedTokens
	// (what the server's usage implies), FigCapacityTokens (the capacity
	// in use), FigRatio (the second over the first).
	KVCapacity Code = "kv_capacity"
	// PromptShort: no cut of the article's document renders to exactly
	// the tokens asked through the chat template; the closest count below
	// is used. Figures: FigAskedTokens, FigTokens.
	PromptShort Code = "prompt_short"
	// DocumentContinued: the user's document is shorter than the prompt
	// needs and is continued (its paragraphs re-ordered). Figures:
	// FigDocumentBytes, FigNeededBytes.
	DocumentContinued Code = "document_continued"
)

// The codes of the notes a decode cell carries (result.DecodeCell.Notes):
// facts to read the cell with, not problems.
const (
	// GateTimedOut: the steady-state gate timed out with no sign of the
	// server making requests wait, and the cell was measured anyway
	// (docs/method.md#steady-state-gate). Figures: FigTimeoutS,
	// FigDecoding (streams past their first token), FigConcurrency; with
	// the request gauges FigRunning and FigWaiting (the last poll's),
	// and FigHeldS of FigObservedS (how long requests waited, or fewer
	// than the concurrency ran, of the time the gauges were observed).
	GateTimedOut Code = "gate_timed_out"
	// RestartGaps: active_avg is below 95 % of the concurrency because
	// of the client's restart gaps, not server queueing. Figures:
	// FigActiveAvg (as the cell records it, to 2 decimals),
	// FigConcurrency.
	RestartGaps Code = "restart_gaps"
	// Deferred: requests were deferred during the window where the
	// engine's deferred requests do not wait for capacity. Subject: the
	// engine's name for them (engine.Status.Deferred). Figures:
	// FigDeferred (the most seen in one poll).
	Deferred Code = "deferred"
	// MetricDropped: a metric only some of a cell's repeats reported is
	// dropped from the cell. Subject: the metric. Figures: FigReported
	// (the repeats that reported it), FigRepeats.
	MetricDropped Code = "metric_dropped"
)

// The codes of the notes a correctness block's comparison with the
// baseline's carries (compare.CorrectnessResult.Notes, results.json's
// comparison.correctness[].notes).
const (
	// CorrectnessConcurrency: the two blocks sent their requests at
	// different concurrencies, which can change the greedy tokens.
	// Figures: FigBaselineConcurrency, FigConcurrency (this run's).
	CorrectnessConcurrency Code = "correctness_concurrency"
	// CorrectnessNoLogprobs: a side has no top-k logprobs (none asked, or
	// the server refused them), so no near tie can be told. Figures:
	// FigBaselineLogprobs, FigLogprobs (the top-k each side asked; 0:
	// none).
	CorrectnessNoLogprobs Code = "correctness_no_logprobs"
	// EnginesDiffer: the baseline measured another engine; the
	// comparison informs and does not gate
	// (docs/method.md#comparing-engines). No figures.
	EnginesDiffer Code = "engines_differ"
	// MachineDiffers: this run's machine ran the fixed CPU calibration
	// beyond hostenv.CalibrationBound either way from the baseline's
	// (docs/method.md#machine-against-the-baseline): the comparison
	// confounds the build with the machine. Figures:
	// FigBaselineCalibrationMs, FigCalibrationMs (the fastest each run
	// recorded), FigBound.
	MachineDiffers Code = "machine_differs"
)

// The codes of the warnings a traffic cell carries besides SlowScrape,
// PromptShort and DocumentContinued, with the figures each holds.
const (
	// DatasetCounts: what the named workload's schedule did with its
	// dataset (docs/spec.md#named-workloads). Figures: FigExamined,
	// FigKept, FigDropped, and the drops by reason FigTooFewTurns,
	// FigPromptTooShort, FigOutputTooShort, FigPromptTooLong,
	// FigTotalTooLong.
	DatasetCounts Code = "dataset_counts"
	// DatasetReused: the dataset has fewer usable entries than the cell's
	// requests, which reuse them in order. Figures: FigKept (the usable
	// entries, or turns), FigRequests, FigDropped, FigReused.
	DatasetReused Code = "dataset_reused"
	// TraceCounts: what a trace workload's replay left out of its slice
	// (docs/spec.md#traces). Figures: FigExamined (the slice's
	// requests), FigKept (those sent), FigZeroLength (the trace's lines
	// without tokens, left out while reading), FigOverLength (dropped by
	// drop_over_length).
	TraceCounts Code = "trace_counts"
	// PrefixHitOffDial: the server's measured prefix-cache hit rate is
	// more than FigBound from the rate the workload dialled (a block
	// other than the engine's, prefix caching off, evictions). Figures:
	// FigDialled, FigMeasured, FigBound (shares, 0..1).
	PrefixHitOffDial Code = "prefix_hit_off_dial"
	// PrefixBlockMismatch: the workload dials its hit rate in blocks that
	// are not whole blocks of the server's KV cache, so the server serves
	// fewer of the shared tokens than dialled. Figures: FigBlock (the
	// workload's), FigServerBlock (the server's stated block size).
	PrefixBlockMismatch Code = "prefix_block_mismatch"
	// NoCompletion: no request completed in the window, so the cell's
	// latencies are unmeasured. Figures: FigLaunched, FigWindowS.
	NoCompletion Code = "no_completion"
	// Unfinished: requests of the window were still running after the
	// drain; they count as not meeting the SLO. Figures: FigUnfinished,
	// FigDrainS.
	Unfinished Code = "unfinished"
	// NoAnswer: requests of the window finished having streamed reasoning
	// and never an answer (content) token within their max output, so
	// their TTFO is unmeasured, not 0; ttfo_ms is over the others
	// (docs/method.md#reasoning). Figures: FigUnanswered (such requests),
	// FigCompleted (the window's completed requests), FigTokens (the most
	// output tokens one of them had).
	NoAnswer Code = "no_answer"
	// ClientLag: the client fell behind its traffic schedule beyond the
	// bound of docs/method.md#client-lag (the cell is an Error: slogate
	// could not drive the rate from this machine). Figures: FigLagP50Ms,
	// FigLagP99Ms, FigLagMaxMs, FigLagBoundMs (the median's bound),
	// FigMeanGapMs (the schedule's mean gap), FigArrivals (the arrivals
	// the lag is over).
	ClientLag Code = "client_lag"
	// EnvironmentMoved: the machine moved during a run of the cell beyond
	// a bound of docs/method.md#environment (with repeat = "auto" the run
	// is replaced). Subject: what moved (calibration, steal,
	// cpu_pressure). Figures: FigBefore, FigAfter (calibration in ms,
	// pressure in %; steal: the share stolen, in %, as FigAfter),
	// FigBound.
	EnvironmentMoved Code = "environment_moved"
)

// The codes of a run's own warnings (results.json's top-level warnings).
const (
	// KVUnknown: the server's KV cache capacity is unknown (no spec
	// value, nothing the engine states). No figures.
	KVUnknown Code = "kv_unknown"
	// KVDoubtful: the engine stated a KV capacity the run doubts (vLLM
	// #40691's log line of a hybrid model). No figures.
	KVDoubtful Code = "kv_doubtful"
	// FactDisagrees: a fact the spec asked (kv_cache_dtype, prefix
	// caching, max_model_len, the speculative method) is not what the
	// server states (docs/method.md#server-facts). Subject: the fact.
	// Figures, for a count (max_model_len, max_num_seqs): FigAsked,
	// FigStated.
	FactDisagrees Code = "fact_disagrees"
	// LeftoverContainers: the container runtime lists containers an
	// earlier slogate run left. Subject: the runtime (docker, podman).
	// Figures: FigContainers.
	LeftoverContainers Code = "leftover_containers"
	// PortInUse: the port still accepts connections after the server's
	// process group ended. Subject: the address. No figures.
	PortInUse Code = "port_in_use"
	// RequestsLog: requests.jsonl could not be written. No figures.
	RequestsLog Code = "requests_log"
	// SearchNoAnswer: a search stopped without an answer. Subject: the
	// search. No figures.
	SearchNoAnswer Code = "search_no_answer"
	// SearchNotMonotone: a search's objective is not monotone in
	// concurrency. Figures: FigAnswer.
	SearchNotMonotone Code = "search_not_monotone"
	// StreamsNotClosed: a cell's streams did not close within their
	// timeout; its subject is the cell. Figures: FigTimeoutS, and
	// FigTrafficCell 1 when the cell is a traffic cell (its streams are
	// requests).
	StreamsNotClosed Code = "streams_not_closed"
	// WarmUpFailed: a cache warm-up request failed, or was not sent.
	// Figures: FigContext (its context in tokens), FigStream (the stream
	// it warmed, counted from 1; absent for the cell's one request),
	// FigNotSent 1 when it was not sent.
	WarmUpFailed Code = "warmup_failed"
	// CorrectnessUnavailable: a correctness block could not do part of its
	// check (a server that refuses logprobs). No figures.
	CorrectnessUnavailable Code = "correctness_unavailable"
	// CorrectnessErrors: requests of a correctness block failed. Subject:
	// the block. Figures: FigRequests (sent), FigFailed.
	CorrectnessErrors Code = "correctness_errors"
)

// The codes of a -baseline's pre-run check (compare.BaselineWarnings),
// printed before the run starts.
const (
	// PowerShortfall: a metric's baseline cells, at their measured noise
	// and repeats, cannot be decided within the tolerance with power 0.9
	// against the repeats the run will measure
	// (docs/method.md#sequential-repeats). Subject: the metric. Figures:
	// FigShortCells of FigCells (the baseline cells with samples);
	// FigCandidateRepeats; of the noisiest cell short, its FigContext
	// and FigConcurrency (0 for a prefill cell), FigNoise over
	// FigBaselineRepeats, FigPower, FigNeedRepeats (the baseline repeats
	// that would do; 0: more than 100) and FigCapped (1 when no number of
	// candidate repeats would: the baseline caps the power); FigTolerance;
	// FigDistance, the change beyond the tolerance's edge the check
	// sizes for, and FigDetectable, the one these repeats decide with
	// power 0.9 (both relative; FigDetectable absent when the repeats
	// cannot reach the level at all).
	PowerShortfall Code = "power_shortfall"
	// SearchPrecisionCoarse: a rate search's precision is more than half
	// the comparison's tolerance, so a capacity change of the tolerance
	// cannot be told from the search's own precision
	// (docs/method.md#capacity-lost). Subject: the search. Figures:
	// FigPrecision, FigTolerance.
	SearchPrecisionCoarse Code = "search_precision_coarse"
	// TrafficTailUndecidable: a traffic block's window at its lowest
	// short rate holds fewer requests than a -baseline comparison decides
	// a p99 from, so every such cell's p99s will be inconclusive
	// (docs/method.md#undecidable-percentiles). Subject: the block.
	// Figures: FigRate (the lowest rate short), FigWindowS, FigRequests
	// (what the window holds at it), FigNeedRequests.
	TrafficTailUndecidable Code = "traffic_tail_undecidable"
)

// Figure names, the keys of Warning.Figures.
const (
	FigMeanMs                = "mean_ms"
	FigMaxMs                 = "max_ms"
	FigScrapes               = "scrapes"
	FigIntervalMs            = "interval_ms"
	FigServerTotalTPS        = "server_total_tps"
	FigServerPerRequestTPS   = "server_per_request_tps"
	FigPerRequestTPS         = "per_request_tps"
	FigCounterTokens         = "counter_tokens"
	FigFinishedTokens        = "finished_tokens"
	FigUncertainTokens       = "uncertain_tokens"
	FigTotalTPS              = "total_tps"
	FigGap                   = "gap"
	FigImpliedTokens         = "implied_tokens"
	FigCapacityTokens        = "capacity_tokens"
	FigRatio                 = "ratio"
	FigExamined              = "examined"
	FigKept                  = "kept"
	FigDialled               = "dialled"
	FigMeasured              = "measured"
	FigBlock                 = "block"
	FigServerBlock           = "server_block"
	FigDropped               = "dropped"
	FigTooFewTurns           = "too_few_turns"
	FigPromptTooShort        = "prompt_too_short"
	FigOutputTooShort        = "output_too_short"
	FigPromptTooLong         = "prompt_too_long"
	FigTotalTooLong          = "total_too_long"
	FigZeroLength            = "zero_length"
	FigOverLength            = "over_length"
	FigRequests              = "requests"
	FigReused                = "reused"
	FigLaunched              = "launched"
	FigWindowS               = "window_s"
	FigUnfinished            = "unfinished"
	FigDrainS                = "drain_s"
	FigContainers            = "containers"
	FigAnswer                = "answer"
	FigTimeoutS              = "timeout_s"
	FigAskedTokens           = "asked_tokens"
	FigTokens                = "tokens"
	FigDocumentBytes         = "document_bytes"
	FigNeededBytes           = "needed_bytes"
	FigFailed                = "failed"
	FigAsked                 = "asked"
	FigStated                = "stated"
	FigContext               = "context"
	FigStream                = "stream"
	FigNotSent               = "not_sent"
	FigTrafficCell           = "traffic_cell"
	FigShortCells            = "short_cells"
	FigCells                 = "cells"
	FigCandidateRepeats      = "candidate_repeats"
	FigBaselineRepeats       = "baseline_repeats"
	FigNoise                 = "noise"
	FigNeedRepeats           = "need_repeats"
	FigCapped                = "capped"
	FigTolerance             = "tolerance"
	FigBaselineCalibrationMs = "baseline_calibration_ms"
	FigCalibrationMs         = "calibration_ms"
	FigNeedRequests          = "need_requests"
	FigRate                  = "rate"
	FigPrecision             = "precision"
	FigPower                 = "power"
	FigDistance              = "distance"
	FigDetectable            = "detectable"
	FigBaselineConcurrency   = "baseline_concurrency"
	FigBaselineLogprobs      = "baseline_logprobs"
	FigLogprobs              = "logprobs"
	FigDecoding              = "decoding"
	FigConcurrency           = "concurrency"
	FigRunning               = "running"
	FigWaiting               = "waiting"
	FigHeldS                 = "held_s"
	FigObservedS             = "observed_s"
	FigActiveAvg             = "active_avg"
	FigDeferred              = "deferred"
	FigReported              = "reported"
	FigRepeats               = "repeats"
	FigLagP50Ms              = "lag_ms_p50"
	FigLagP99Ms              = "lag_ms_p99"
	FigLagMaxMs              = "lag_ms_max"
	FigLagBoundMs            = "lag_bound_ms"
	FigMeanGapMs             = "mean_gap_ms"
	FigArrivals              = "arrivals"
	FigBefore                = "before"
	FigAfter                 = "after"
	FigBound                 = "bound"
	FigServerRejected        = "server_rejected"
	FigClientRejected        = "client_rejected"
	FigUnanswered            = "unanswered"
	FigCompleted             = "completed"
)

// Warning is one warning, or one note: what kind (Code), what it says
// (Summary and Detail, which String joins as the reports show it), the
// name it is about when a name says it (Subject: a metric, a fact), and
// the figures it quotes, by name (nil when it quotes none).
type Warning struct {
	Code    Code               `json:"code,omitempty"`
	Summary string             `json:"summary"`
	Detail  string             `json:"detail,omitempty"`
	Subject string             `json:"subject,omitempty"`
	Figures map[string]float64 `json:"figures,omitempty"`
	// Repeats are the repeats of a cell (numbered from 1, of Of) that
	// carried the warning when not all of them did (OfRepeats): its
	// figures are those repeats' own, not the cell's, which are the
	// repeats' median (docs/method.md#repeats). Empty otherwise.
	Repeats []int `json:"repeats,omitempty"`
	Of      int   `json:"of,omitempty"`
}

// New is the warning of code with its summary, detail and figures.
func New(code Code, summary, detail string, figures map[string]float64) Warning {
	return Warning{Code: code, Summary: summary, Detail: detail, Figures: figures}
}

// About is w about subject (Warning.Subject).
func (w Warning) About(subject string) Warning {
	w.Subject = subject
	return w
}

// untyped is a warning of no known kind whose text is s: every
// plain-string warning or note of a v1 results.json. Nothing creates one
// otherwise: every warning slogate makes has its code (New).
func untyped(s string) Warning { return Warning{Summary: s} }

// String is the warning as every report shows it: the summary, then ": "
// and the detail when there is one; first, for a warning only some of a
// cell's repeats carried, which ones, and that the figures are theirs
// ("in repeat 2 of 3 (its own figures, not the median): …").
func (w Warning) String() string {
	s := w.Summary
	if w.Detail != "" {
		s += ": " + w.Detail
	}
	if len(w.Repeats) == 0 {
		return s
	}
	return w.repeatsText() + ": " + s
}

// repeatsText names the repeats a warning came from: "in repeat 2 of 3",
// "in repeats 1 and 3 of 4", with "(its own figures, not the median)"
// when it quotes figures.
func (w Warning) repeatsText() string {
	nums := make([]string, len(w.Repeats))
	for i, r := range w.Repeats {
		nums[i] = strconv.Itoa(r)
	}
	s, own := "in repeat "+nums[0], "its"
	if n := len(nums); n > 1 {
		s, own = "in repeats "+strings.Join(nums[:n-1], ", ")+" and "+nums[n-1], "their"
	}
	s += " of " + strconv.Itoa(w.Of)
	if len(w.Figures) > 0 {
		s += " (" + own + " own figures, not the median)"
	}
	return s
}

// OfRepeats combines the warnings (or notes) of a cell's repeats,
// runs[i] those of repeat i+1, in the order first seen: one every repeat
// carried (its code and text) is kept once, as it is; one only some
// carried is kept once, marked with the repeats that carried it (Repeats,
// Of), because its figures are theirs while the cell's are the repeats'
// median. Two warnings of one text whose figures differ in digits the
// text rounds away are one, the first (AppendNew).
func OfRepeats(runs [][]Warning) []Warning {
	if len(runs) == 1 {
		return runs[0]
	}
	var out []Warning
	for i, ws := range runs {
		for _, w := range ws {
			j := slices.IndexFunc(out, func(x Warning) bool { return x.Code == w.Code && x.Summary == w.Summary && x.Detail == w.Detail })
			if j < 0 {
				w.Repeats, w.Of = nil, len(runs)
				out, j = append(out, w), len(out)
			}
			if k := len(out[j].Repeats); k == 0 || out[j].Repeats[k-1] != i+1 {
				out[j].Repeats = append(out[j].Repeats, i+1)
			}
		}
	}
	for i := range out {
		if len(out[i].Repeats) == len(runs) {
			out[i].Repeats, out[i].Of = nil, 0 // every repeat's: the cell's
		}
	}
	return out
}

// Textless is w without its words (Summary and Detail): its code, subject
// and figures, what a test compares, so that rewording a warning never
// breaks a test and a wrong figure always does.
func (w Warning) Textless() Warning {
	w.Summary, w.Detail = "", ""
	return w
}

// Textless is each of ws without its words (Warning.Textless), in order.
func Textless(ws []Warning) []Warning {
	if ws == nil {
		return nil
	}
	out := make([]Warning, len(ws))
	for i, w := range ws {
		out[i] = w.Textless()
	}
	return out
}

// Figure is the figure named name, and whether the warning holds it.
func (w Warning) Figure(name string) (float64, bool) {
	v, ok := w.Figures[name]
	return v, ok
}

// Equal reports whether w and o are the same warning: code, text,
// subject, figures and the repeats it came from.
func (w Warning) Equal(o Warning) bool {
	if w.Code != o.Code || w.Summary != o.Summary || w.Detail != o.Detail || w.Subject != o.Subject || len(w.Figures) != len(o.Figures) ||
		!slices.Equal(w.Repeats, o.Repeats) || w.Of != o.Of {
		return false
	}
	for k, v := range w.Figures {
		if ov, ok := o.Figures[k]; !ok || ov != v {
			return false
		}
	}
	return true
}

// UnmarshalJSON reads a warning as results.json holds it: an object with
// its code, summary, detail and figures, or, in a file written before
// warnings had codes, a plain string (a warning of no known kind).
func (w *Warning) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*w = untyped(s)
		return nil
	}
	type plain Warning // without this method
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return fmt.Errorf("a warning is a string or an object with a summary: %w", err)
	}
	*w = Warning(p)
	return nil
}

// Strings are the warnings' texts (String), in order: what the reports
// and the console print.
func Strings(ws []Warning) []string {
	if ws == nil {
		return nil
	}
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.String()
	}
	return out
}

// AppendNew appends to ws each of more whose code and text ws does not
// hold yet, keeping the order: the warnings of repeated runs, each kept
// once. Two warnings of one text whose figures differ (in digits the text
// rounds away) are one warning, the first, as the reports print one line.
func AppendNew(ws []Warning, more ...Warning) []Warning {
	for _, m := range more {
		if !Holds(ws, m) {
			ws = append(ws, m)
		}
	}
	return ws
}

// Holds reports whether ws holds a warning of w's code and text.
func Holds(ws []Warning, w Warning) bool {
	for _, x := range ws {
		if x.Code == w.Code && x.String() == w.String() {
			return true
		}
	}
	return false
}

// Has reports whether ws holds a warning of code.
func Has(ws []Warning, code Code) bool {
	for _, w := range ws {
		if w.Code == code {
			return true
		}
	}
	return false
}
