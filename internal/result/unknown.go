package result

import "github.com/slogate/slogate/internal/vocab"

// UnknownRead is why a figure an assert's condition reads has no value
// (docs/method.md#undecided-searches, docs/method.md#correctness): a
// search with no answer to give, a correctness block not measured, not
// scored or not compared, as a rule and the figures it read. assert marks
// the figure with it and decides what the test is; views word it
// (assert.Words). It is comparable, as a mark must be.
type UnknownRead struct {
	Rule UnknownRule
	// Name is the search's or the correctness block's; Field the
	// correctness figure read.
	Name, Field string
	// Text is a stopped search's error (SearchNoAnswer), or why the
	// correctness blocks were not compared (CorrectnessNotCompared), as
	// their own words say it.
	Text string
	// Lo and Hi are the search's range, in concurrencies or req/s.
	Lo, Hi float64
	// Decision is the recorded decision of the rate search's probe at lo
	// (SearchLoUndecided).
	Decision string
	// Undecided of Probes were not decided with confidence
	// (SearchNoneFailed, SearchUndecidedHolds).
	Undecided, Probes int
	// Lower and Upper are the rate search's confident bounds (0: none)
	// and Confidence their level (SearchUndecidedHolds).
	Lower, Upper, Confidence float64
}

// UnknownRule names why a figure an assert reads has no value.
type UnknownRule string

// The rules of UnknownRead.
const (
	// SearchNotRun: the search was not run.
	SearchNotRun UnknownRule = "search_not_run"
	// SearchNoAnswer: the search stopped on an error (Text).
	SearchNoAnswer UnknownRule = "search_no_answer"
	// SearchNoConcurrency: no concurrency in [Lo, Hi] met the objective,
	// so the search has no cell.
	SearchNoConcurrency UnknownRule = "search_no_concurrency"
	// SearchNoRate: no rate in [Lo, Hi] met the objective, so the search
	// has no cell.
	SearchNoRate UnknownRule = "search_no_rate"
	// SearchLoUndecided: the probe at lo (Lo) was not decided with
	// confidence (Decision), so whether any rate meets the objective is not
	// known.
	SearchLoUndecided UnknownRule = "search_lo_undecided"
	// SearchTopMet: the search met the objective at the top of its range
	// (Hi), so its capacity has no upper bound.
	SearchTopMet UnknownRule = "search_top_met"
	// SearchNoneFailed: no probe was decided failed with confidence
	// (Undecided of Probes undecided), so the capacity's upper bound is not
	// known.
	SearchNoneFailed UnknownRule = "search_none_failed"
	// SearchUndecidedHolds: the condition is false as measured, but holds
	// at a capacity the rate search's confident decisions leave possible
	// (Lower, Upper at Confidence; Undecided of Probes undecided): longer
	// windows would decide it.
	SearchUndecidedHolds UnknownRule = "search_undecided_holds"
	// CorrectnessNotMeasured: the correctness block was not measured.
	CorrectnessNotMeasured UnknownRule = "correctness_not_measured"
	// CorrectnessUnscored: the block scored no output (it has no scorer).
	CorrectnessUnscored UnknownRule = "correctness_unscored"
	// CorrectnessBaselineUnscored: the baseline's block scored no output.
	CorrectnessBaselineUnscored UnknownRule = "correctness_baseline_unscored"
	// CorrectnessNoBaseline: the figure is measured against the baseline's
	// block, and no baseline was given.
	CorrectnessNoBaseline UnknownRule = "correctness_no_baseline"
	// CorrectnessBaselineMissing: the baseline has no block of the name.
	CorrectnessBaselineMissing UnknownRule = "correctness_baseline_missing"
	// CorrectnessNotCompared: the blocks were not compared (Text says why).
	CorrectnessNotCompared UnknownRule = "correctness_not_compared"
)

// ExpectWhy is why an expect test is not a pass (docs/spec.md#expect), as
// a rule and the figures it read. The judge decides the outcome from the
// finding assert hands it (judge.Decide); views word it (assert.Words).
type ExpectWhy struct {
	Rule ExpectRule
	// Block is the expect block's name, Metric the metric it expects,
	// Phase the metric's phase and Matrix the matrix it lines up with.
	Block, Metric, Phase, Matrix string
	// Context is a row's context, Values its values and Levels the
	// matrix's concurrency levels (ExpectRowTooLong).
	Context, Values, Levels int
	// Cell is the cell checked, Expected its expected value and Tolerance
	// the change allowed; Above says the metric rose above it (a latency),
	// not fell below (ExpectMissed).
	Cell      vocab.CellRef
	Expected  float64
	Tolerance float64
	Above     bool
}

// ExpectRule names why an expect test is not a pass.
type ExpectRule string

// The rules of ExpectWhy.
const (
	// ExpectUnknownMetric: Metric is not a metric of Phase.
	ExpectUnknownMetric ExpectRule = "unknown_metric"
	// ExpectNoMatrix: the spec has no matrix Matrix to line the values up
	// with.
	ExpectNoMatrix ExpectRule = "no_matrix"
	// ExpectRowTooLong: a row has more values than the matrix has
	// concurrency levels.
	ExpectRowTooLong ExpectRule = "row_too_long"
	// ExpectNotReported: the server did not report Metric for the cell.
	ExpectNotReported ExpectRule = "not_reported"
	// ExpectMissed: Metric at Cell is beyond Expected by more than
	// Tolerance.
	ExpectMissed ExpectRule = "missed"
)
