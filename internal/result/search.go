package result

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// Search is the outcome of one `search "NAME"` block (docs/method.md#search).
// A concurrency search finds the largest concurrency in Range whose decode
// cell at Context meets the objective; a rate search (Traffic set) finds the
// highest request rate in RateRange whose traffic cell meets it, with
// confidence bounds (docs/method.md#rate-search). It is one element of
// results.json's "search" array.
type Search struct {
	Name string `json:"name"`
	// Context is a concurrency search's context; 0 in a rate search.
	Context int `json:"context,omitzero"`
	// Range is the [lo, hi] concurrency range searched; zero in a rate
	// search.
	Range [2]int `json:"range,omitzero"`
	// Traffic is a rate search's traffic block: the probes are its cells
	// at the probes' rates. "" in a concurrency search.
	Traffic string `json:"traffic,omitempty"`
	// RateRange is the [lo, hi] request rate range (requests per second)
	// a rate search searched.
	RateRange [2]float64 `json:"rate_range,omitzero"`
	// Rate is a rate search's answer: the highest rate judged to meet the
	// objective; 0 when none did (Found is false then).
	Rate float64 `json:"rate,omitempty"`
	// RateLower and RateUpper are the confidence bounds of the true
	// capacity (the rate where the objective stops holding) at Confidence;
	// RateUpper is 0 when not bounded (RateRange[1] met the objective).
	RateLower float64 `json:"rate_lower,omitempty"`
	RateUpper float64 `json:"rate_upper,omitempty"`
	// Precision is the relative width at which bisection stopped (e.g.
	// 0.025) and Confidence the level of the bounds (e.g. 0.95).
	Precision  float64 `json:"precision,omitempty"`
	Confidence float64 `json:"confidence,omitempty"`
	// ClientLimit is the lowest probe rate the client could not drive
	// (a probe unmeasurable for client lag); 0 when every probe was kept
	// to its schedule. The answer then lies below it.
	ClientLimit float64 `json:"client_limit,omitempty"`
	// Objective is the objective as written in the spec.
	Objective string `json:"objective"`
	// Concurrency is the answer: the largest c such that every probe at or
	// below c passed; 0 when even Range[0] failed (Found is false then).
	Concurrency int  `json:"concurrency"`
	Found       bool `json:"found"`
	// Monotone is false when a probe passed above a probe that failed; the
	// answer still is the largest c with every probe ≤ c passing.
	Monotone bool `json:"monotone"`
	// ConfirmedBy is the concurrency of the failing probe just above the
	// answer (answer + 1 once bisection ends); 0 when Range[1] passed, as
	// nothing above it was probed.
	ConfirmedBy int `json:"confirmed_by,omitempty"`
	// Error is why the search stopped without an answer (a probe could not
	// be measured, or the objective could not be evaluated); "" otherwise.
	Error string `json:"error,omitempty"`
	// ElapsedS is the wall time the search took.
	ElapsedS float64 `json:"elapsed_s,omitempty"`
	// Probes in the order they were measured.
	Probes []SearchProbe `json:"probes"`
	// Check are the windows a rate search with check_windows measured at
	// its answer, for a later run's paired check of capacity lost
	// (docs/method.md#paired-capacity-check); nil without.
	Check *SearchCheck `json:"check,omitempty"`
	// Replay are the windows a run with -baseline measured at the
	// baseline's answer less the tolerance, on the seeds of the baseline's
	// Check; nil when the baseline's search has no check.
	Replay *SearchCheck `json:"replay,omitempty"`
}

// SearchCheck are the windows of a paired check of capacity lost
// (docs/method.md#paired-capacity-check) measured at one rate.
type SearchCheck struct {
	// Rate is the rate the windows were measured at: the search's answer
	// (a Check), or BaselineRate × (1 − Tolerance) (a Replay).
	Rate float64 `json:"rate"`
	// BaselineRate and Tolerance are a Replay's: the baseline's answer it
	// replays and the gate's tolerance it took off.
	BaselineRate float64 `json:"baseline_rate,omitempty"`
	Tolerance    float64 `json:"tolerance,omitempty"`
	// Windows are the windows measured, in order of their seeds.
	Windows []CheckWindow `json:"windows"`
	// Stop, when not nil, is why the check stopped before its last
	// window (a window not measured); the windows before it are kept.
	Stop *CheckStop `json:"stop,omitempty"`
	// Error, when not "", is why the check stopped when the run ended
	// during it; in results written before Stop held, why it stopped
	// whatever the cause.
	Error string `json:"error,omitempty"`
}

// CheckStop is why a paired check stopped before its last window: Rule,
// with the figures it read.
type CheckStop struct {
	// Rule is CheckWindowUnmeasured.
	Rule string `json:"rule"`
	// Seed is the seed of the window that stopped the check, and
	// CellReason its cell's reason.
	Seed       int64  `json:"seed"`
	CellReason string `json:"cell_reason,omitempty"`
}

// CheckWindowUnmeasured: a window of the check could not be measured
// (CheckStop).
const CheckWindowUnmeasured = "window_unmeasured"

// CheckWindow is one window of a paired check: its seed and the metrics
// the search's objective reads, as measured over its requests.
type CheckWindow struct {
	Seed int64 `json:"seed"`
	// Values are the objective's metrics; a metric of no samples (no
	// request completed) is absent.
	Values map[string]float64 `json:"values"`
	// Launched is the number of requests launched in the window.
	Launched int `json:"launched"`
}

// SearchProbe is one probe of a search: a decode cell at one concurrency
// (a concurrency search) or a traffic cell at one rate (a rate search),
// and whether it met the objective.
type SearchProbe struct {
	// Concurrency is a concurrency search's probe; 0 in a rate search.
	Concurrency int  `json:"concurrency"`
	Passed      bool `json:"passed"`
	// Reason says why a probe failed: the objective's comparisons that did
	// not hold, or "over capacity: …"; for a rate probe, why it was not
	// judged (unmeasurable, or the probe a stopped search was measuring).
	// A rate probe's Reason in results written before Judgement held
	// says how it was judged (the metrics' bounds), whatever its decision.
	Reason string `json:"reason,omitempty"`
	// Judgement is how a rate probe was judged: the rule and the metrics'
	// intervals behind its Decision; nil for a probe not judged and in
	// results written before it (docs/method.md#rate-search). The
	// reports and the console word it.
	Judgement *ProbeJudgement `json:"judgement,omitempty"`
	// Cell is a concurrency search's decode cell; zero in a rate search.
	Cell DecodeCell `json:"cell,omitzero"`
	// Rate is a rate search's probe rate (requests per second).
	Rate float64 `json:"rate,omitempty"`
	// Traffic is a rate search's probe cell: the traffic block's cell at
	// Rate (its last window when the probe was lengthened).
	Traffic *TrafficCell `json:"traffic_cell,omitempty"`
	// Decision is a rate probe's decision: DecisionMet, DecisionFailed,
	// DecisionUndecided or DecisionUnmeasurable.
	Decision string `json:"decision,omitempty"`
	// Windows is how many windows a rate probe measured (more than one
	// when an undecided probe was lengthened or repeated).
	Windows int `json:"windows,omitempty"`
	// OutputTPS is a rate probe's output tokens per second over all its
	// measured windows: their output tokens ÷ their measured seconds
	// (Traffic's output_tps is its last window's alone); 0 when none was
	// measured, or in results written before it.
	OutputTPS float64 `json:"output_tps,omitempty"`
}

// A rate probe's decisions (SearchProbe.Decision).
const (
	// DecisionMet: the objective holds even at the pessimistic end of
	// each metric's confidence interval.
	DecisionMet = "met"
	// DecisionFailed: the objective fails even at the optimistic end.
	DecisionFailed = "failed"
	// DecisionUndecided: the intervals straddle the objective after the
	// most windows the search allows.
	DecisionUndecided = "undecided"
	// DecisionUnmeasurable: the client could not keep the probe's
	// schedule (client lag), so the probe says nothing about the server.
	DecisionUnmeasurable = "unmeasurable"
)

// ProbeJudgement is how a rate probe was judged
// (docs/method.md#rate-search): Rule, with the figures it read.
type ProbeJudgement struct {
	// Rule is one of the Probe* rules.
	Rule ProbeRule `json:"rule"`
	// Point is the objective at the point estimates, DecisionMet or
	// DecisionFailed: the way the search took an undecided probe.
	Point string `json:"point,omitempty"`
	// Intervals are the objective's metrics at the probe's last look,
	// each with its bounds.
	Intervals []ProbeInterval `json:"intervals"`
	// ToDecide is about how many windows in all would have decided an
	// undecided probe at the values and spread its windows showed
	// (ProbeUndecidedWindows, ProbeUndecidedBeyond; ProbeUndecidedEdge:
	// that many or more).
	ToDecide int `json:"to_decide,omitempty"`
	// MaxWindowsAllowed is the most windows max_windows allows
	// (ProbeUndecidedBeyond).
	MaxWindowsAllowed int `json:"max_windows_allowed,omitempty"`
}

// ProbeRule names the rule that judged a rate probe (ProbeJudgement).
type ProbeRule string

// The rules a ProbeJudgement names.
const (
	// ProbeMet: the objective holds even at the pessimistic bounds.
	ProbeMet ProbeRule = "met_pessimistic"
	// ProbeFailed: the objective fails even at the optimistic bounds.
	ProbeFailed ProbeRule = "failed_optimistic"
	// ProbeUndecided: the bounds straddle the objective; the probe goes
	// by its point estimates (Point), with no estimate of the windows
	// that would decide it (a look before its last).
	ProbeUndecided ProbeRule = "undecided"
	// ProbeUndecidedWindows: undecided at its last window; about ToDecide
	// windows, within what max_windows allows, would decide it.
	ProbeUndecidedWindows ProbeRule = "undecided_windows"
	// ProbeUndecidedBeyond: undecided at its last window; about ToDecide
	// windows would decide it, more than max_windows allows
	// (MaxWindowsAllowed): longer windows would.
	ProbeUndecidedBeyond ProbeRule = "undecided_beyond_max_windows"
	// ProbeUndecidedEdge: undecided at its last window; ToDecide windows
	// or more would decide it, its values at or near the objective's
	// edge.
	ProbeUndecidedEdge ProbeRule = "undecided_edge"
	// ProbeSaturated: the probe's window stopped early past the server's
	// capacity (docs/method.md#saturation): failed, with no intervals;
	// the probe's Reason and its cell's reasons give the evidence.
	ProbeSaturated ProbeRule = "saturated"
)

// ProbeInterval is one metric of a rate probe's objective at its last
// look: its point value and bounds, each one-sided at the look's level.
type ProbeInterval struct {
	Metric string `json:"metric"`
	Point  Figure `json:"point"`
	Lower  Figure `json:"lower"`
	Upper  Figure `json:"upper"`
	// DesignEffect is the design effect the bounds used: 1 for
	// independent requests, +Inf when the windows are alike or too few
	// to tell their spread; 0 (absent) for a metric known exactly.
	DesignEffect Figure `json:"design_effect,omitempty"`
}

// Figure is a number that may be infinite or not a number (a bound of
// no samples, a percentile of unfinished requests): in JSON a number when
// finite, else the string "+Inf", "-Inf" or "NaN".
type Figure float64

// MarshalJSON writes f as a JSON number, or a string when not finite.
func (f Figure) MarshalJSON() ([]byte, error) {
	v := float64(f)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return json.Marshal(strconv.FormatFloat(v, 'g', -1, 64))
	}
	return json.Marshal(v)
}

// UnmarshalJSON reads a number, or "+Inf", "-Inf" or "NaN".
func (f *Figure) UnmarshalJSON(b []byte) error {
	var v float64
	if len(b) == 0 || b[0] != '"' {
		err := json.Unmarshal(b, &v)
		*f = Figure(v)
		return err
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("not a number: %q", s)
	}
	*f = Figure(v)
	return nil
}

// MarshalJSON writes s as its fields say, but for a rate search without
// the concurrency search's "concurrency" (0, meaningless there).
func (s Search) MarshalJSON() ([]byte, error) {
	type plain Search
	if !s.IsRate() {
		return json.Marshal(plain(s))
	}
	return json.Marshal(struct {
		plain
		Concurrency *int `json:"concurrency,omitempty"` // hides plain's
	}{plain: plain(s)})
}

// MarshalJSON writes p as its fields say, but for a rate probe without
// the concurrency probe's "concurrency" (0, meaningless there).
func (p SearchProbe) MarshalJSON() ([]byte, error) {
	type plain SearchProbe
	if p.Traffic == nil {
		return json.Marshal(plain(p))
	}
	return json.Marshal(struct {
		plain
		Concurrency *int `json:"concurrency,omitempty"` // hides plain's
	}{plain: plain(p)})
}

// IsRate reports whether s is a rate search (`search { traffic = … }`).
func (s *Search) IsRate() bool { return s.Traffic != "" }
