package result

// CellReason is one rule that gave a cell its status, or left a run of it
// out, as a value: the rule's Code with the figures it read and the names
// it quotes (an engine's counter, a traffic block's label). A cell's
// Reasons hold them in order; report.CellReasonText words them, each in
// turn joined by "; ", into the sentence a cell's Reason keeps for the
// readers of older results.json, which hold the sentence alone.
type CellReason struct {
	// Code names the rule (the Reason* codes).
	Code ReasonCode `json:"code"`
	// Figures are the numbers the rule read, by the Fig* names its code
	// lists.
	Figures map[string]float64 `json:"figures,omitempty"`
	// Names are the words the rule quotes, by the Name* names its code
	// lists.
	Names map[string]string `json:"names,omitempty"`
}

// ReasonCode names the rule of a CellReason. A code is stable once
// released: tools reading results.json match it.
type ReasonCode string

// The codes of a cell's reasons, with the figures and names each holds
// (docs/method.md#statuses, docs/method.md#unmeasurable).
const (
	// ReasonStreamsNotStopped: a decode cell's streams did not stop
	// within the time given them (an error). Figures: FigTimeoutS.
	ReasonStreamsNotStopped ReasonCode = "streams_not_stopped"
	// ReasonRequestsNotStopped: a traffic cell's requests did not stop
	// within the time given them (an error). Figures: FigTimeoutS.
	ReasonRequestsNotStopped ReasonCode = "requests_not_stopped"
	// ReasonNoTrafficBlock: the spec has no traffic block of the cell's
	// label (an error). Names: NameBlock.
	ReasonNoTrafficBlock ReasonCode = "no_traffic_block"
	// ReasonContextTooLong: the cell's context and max_output exceed the
	// server's max_model_len (an error). Figures: FigContext,
	// FigMaxOutput, FigMaxModelLen.
	ReasonContextTooLong ReasonCode = "context_too_long"
	// ReasonAsleep: the server's engine sleeps (an error). Figures:
	// FigAsleep (the engines asleep), FigSleepLevel (0: not said). Names:
	// NameHow (how the engine says so).
	ReasonAsleep ReasonCode = "asleep"
	// ReasonRefusedWindow: the server refused requests of a decode
	// cell's window at admission (queued). Figures: FigRefused,
	// FigConcurrency.
	ReasonRefusedWindow ReasonCode = "refused_window"
	// ReasonRefusedGate: the server refused requests at admission
	// throughout the steady-state gate's hold (queued). Figures: FigHeldS,
	// FigRefused, FigConcurrency.
	ReasonRefusedGate ReasonCode = "refused_gate"
	// ReasonStableQueue: the steady-state gate saw a stable queue
	// (queued). Figures: FigRunning, FigConcurrency, FigWaiting.
	ReasonStableQueue ReasonCode = "stable_queue"
	// ReasonGateTimedOut: the steady-state gate timed out while the server
	// made requests wait (queued, measured anyway). Figures: FigTimeoutS,
	// FigDecoding, FigConcurrency, FigHeldS, FigObservedS, and
	// FigRunning and FigWaiting when the server's gauges were read.
	ReasonGateTimedOut ReasonCode = "gate_timed_out"
	// ReasonWaitingWindow: the server reported requests waiting for
	// capacity during the window (queued). No figures.
	ReasonWaitingWindow ReasonCode = "waiting_window"
	// ReasonWaitingHold: the server reported requests waiting for
	// capacity during the steady-state hold (queued). No figures.
	ReasonWaitingHold ReasonCode = "waiting_hold"
	// ReasonShortfall: the server ran fewer than C requests while C were
	// outstanding (queued). Figures: FigConcurrency, FigHeldS,
	// FigObservedS.
	ReasonShortfall ReasonCode = "shortfall"
	// ReasonPreempted: the server preempted requests during the window
	// (queued). Figures: FigPreempted. Names: NameCounter.
	ReasonPreempted ReasonCode = "preempted"
	// ReasonTrafficRefused: the server refused some of a traffic cell's
	// window at admission (queued). Figures: FigRefused, FigLaunched.
	ReasonTrafficRefused ReasonCode = "traffic_refused"
	// ReasonWaitedInARow: the server reported waiting requests in two
	// polls in a row during a traffic window (queued). No figures.
	ReasonWaitedInARow ReasonCode = "waited_in_a_row"
	// ReasonCapHits: arrivals found max_outstanding requests outstanding
	// and were launched late (queued). Figures: FigCapHits,
	// FigMaxOutstanding.
	ReasonCapHits ReasonCode = "cap_hits"
	// ReasonUnfinished: some of a traffic window's requests did not
	// finish (queued). Figures: FigUnfinished.
	ReasonUnfinished ReasonCode = "unfinished"
	// ReasonClientLagMedian: the client fell behind its schedule, its
	// median lag over the bound (unmeasurable). Figures: FigLagP50Ms,
	// FigLagBoundMs, FigLagFloorS, FigLagGapShare, FigMeanGapMs,
	// FigLagP99Ms, FigLagMaxMs, FigArrivals.
	ReasonClientLagMedian ReasonCode = "client_lag_median"
	// ReasonClientLagMax: the client fell behind its schedule, a lag over
	// the most allowed (unmeasurable). Figures: FigLagMaxMs, FigLagMostS,
	// FigLagP50Ms, FigLagP99Ms, FigArrivals.
	ReasonClientLagMax ReasonCode = "client_lag_max"
	// ReasonLateFirstToken: the client's ttft_ms of a prefill cell is
	// beyond its bound of the server's own prompt time (unmeasurable).
	// Figures: FigTTFTMs, FigServerMs, FigBound. Names: NameSource
	// (ServerPrefillTimings or ServerPrefillHistogram).
	ReasonLateFirstToken ReasonCode = "late_first_token"
	// ReasonFewTokens: the window held too few output tokens for its
	// throughput (unmeasurable). Figures: FigOutputTokens, FigMeasuredS,
	// FigMinTokens.
	ReasonFewTokens ReasonCode = "few_tokens"
	// ReasonRateGap: the client's per_request_tps is beyond its bound of
	// the server's own rate (unmeasurable). Figures: FigPerRequestTPS,
	// FigServerTPS, FigBound. Names: NameSource (a ServerRate* source).
	ReasonRateGap ReasonCode = "rate_gap"
	// ReasonStarved: the server's threads waited for a CPU beyond the
	// bound while the run was measured (unmeasurable). Figures:
	// FigWaitPct, FigBoundPct, FigCPUs.
	ReasonStarved ReasonCode = "starved"
	// ReasonRepeatFailed: a repeat of the cell could not be measured, the
	// runs measured before it kept (an error). Figures: FigRepeat, FigOf,
	// FigKept. Names: NameCause (why the repeat could not be measured).
	ReasonRepeatFailed ReasonCode = "repeat_failed"
	// ReasonRepeatFailedLeftOut: a repeat of the cell could not be
	// measured, every run before it left out (an error). Figures:
	// FigRepeat, FigOf, FigLeftOut. Names: NameCause, NameLastLeftOut
	// (why the last run before it was left out).
	ReasonRepeatFailedLeftOut ReasonCode = "repeat_failed_left_out"
	// ReasonNoneMeasured: none of the cell's runs counted (unmeasurable);
	// it words the first run left out, each ReasonRunLeftOut after it the
	// next. Figures: FigRuns, FigRepeat. Names: NameCause (why that run
	// was left out).
	ReasonNoneMeasured ReasonCode = "none_measured"
	// ReasonRunLeftOut: a run left out of a cell none of whose runs
	// counted, after its ReasonNoneMeasured. Figures: FigRepeat. Names:
	// NameCause.
	ReasonRunLeftOut ReasonCode = "run_left_out"
	// ReasonMachineMoved: the machine moved during a run of repeat =
	// "auto", which leaves the run out (an ExcludedRun's). Figures:
	// FigBefore, FigAfter, FigBound. Names: NameKind (how it moved: a
	// hostenv.Kind).
	ReasonMachineMoved ReasonCode = "machine_moved"
	// ReasonLogprobsRefused: the server refused a correctness block's
	// logprobs, so its outputs were asked without and no near tie can be
	// told (a Correctness's UnavailableReasons). Names: NameCause (how the
	// server refused).
	ReasonLogprobsRefused ReasonCode = "logprobs_refused"
	// ReasonSaturated: an open-loop traffic cell's queue grew steadily
	// for its saturation_after, and the cell stopped early (saturated;
	// docs/method.md#saturation). Figures: FigSlopePerS (the waiting
	// gauge's slope, requests per second; the outstanding requests' when
	// the server has no gauge), FigFit (its line's R²), FigWaitingStart
	// and FigWaitingEnd (absent without the gauge), FigOutstandingStart,
	// FigOutstandingEnd, FigObservedS (the span checked),
	// FigSaturationAfterS, FigWindowS, FigSavedS (the window not run),
	// FigRate.
	ReasonSaturated ReasonCode = "saturated"
)

// The names of a CellReason's figures.
const (
	FigTimeoutS       = "timeout_s"
	FigContext        = "context"
	FigMaxOutput      = "max_output"
	FigMaxModelLen    = "max_model_len"
	FigAsleep         = "asleep"
	FigSleepLevel     = "sleep_level"
	FigRefused        = "refused"
	FigConcurrency    = "concurrency"
	FigHeldS          = "held_s"
	FigObservedS      = "observed_s"
	FigRunning        = "running"
	FigWaiting        = "waiting"
	FigDecoding       = "decoding"
	FigPreempted      = "preempted"
	FigLaunched       = "launched"
	FigCapHits        = "cap_hits"
	FigMaxOutstanding = "max_outstanding"
	FigUnfinished     = "unfinished"
	FigLagP50Ms       = "lag_p50_ms"
	FigLagP99Ms       = "lag_p99_ms"
	FigLagMaxMs       = "lag_max_ms"
	FigLagBoundMs     = "lag_bound_ms"
	FigLagFloorS      = "lag_floor_s"
	FigLagGapShare    = "lag_gap_share"
	FigLagMostS       = "lag_most_s"
	FigMeanGapMs      = "mean_gap_ms"
	FigArrivals       = "arrivals"
	FigTTFTMs         = "ttft_ms"
	FigServerMs       = "server_ms"
	FigBound          = "bound"
	FigOutputTokens   = "output_tokens"
	FigMeasuredS      = "measured_s"
	FigMinTokens      = "min_tokens"
	FigPerRequestTPS  = "per_request_tps"
	FigServerTPS      = "server_tps"
	FigWaitPct        = "wait_pct"
	FigBoundPct       = "bound_pct"
	FigCPUs           = "cpus"
	FigRepeat         = "repeat"
	FigOf             = "of"
	FigKept           = "kept"
	FigLeftOut        = "left_out"
	FigRuns           = "runs"
	FigBefore         = "before"
	FigAfter          = "after"
	// The figures of ReasonSaturated.
	FigSlopePerS        = "slope_per_s"
	FigFit              = "fit"
	FigWaitingStart     = "waiting_start"
	FigWaitingEnd       = "waiting_end"
	FigOutstandingStart = "outstanding_start"
	FigOutstandingEnd   = "outstanding_end"
	FigSaturationAfterS = "saturation_after_s"
	FigWindowS          = "window_s"
	FigSavedS           = "saved_s"
	FigRate             = "rate"
)

// The names of a CellReason's names.
const (
	NameBlock   = "block"
	NameHow     = "how"
	NameCounter = "counter"
	NameSource  = "source"
	// NameCause is the sentence of what a reason wraps: a run's own
	// reason, or an error's message.
	NameCause       = "cause"
	NameLastLeftOut = "last_left_out"
	NameKind        = "kind"
)
