// Package codifyview is the codify view (a view, so under internal/views):
// the HCL that `slogate codify` prints, the header comment, the expect and
// assert blocks and their error messages, and codify's noise advice and
// refusal lines. Package codify decides the blocks, thresholds and figures
// and fills the values below (they are declared here because codify, a
// command, sits above the views); this package words them and decides
// nothing.
package codifyview

import (
	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// Model is what codify decided for one run, in the order it is printed:
// the header, the expect blocks, then the assert blocks.
type Model struct {
	Header  Header
	Expects []Expect
	Asserts []Assert
}

// Header is what the comment above the blocks reports.
type Header struct {
	// Source is the results file codified ("": the view says "a slogate
	// run").
	Source string
	// Run is the run codified, which the header describes (server, model,
	// engine, date).
	Run *result.Results
	// Margin is the fraction the tolerance and thresholds allow.
	Margin float64
	// Noise is what the run's repeats say of the margin.
	Noise Noise
	// Unfinished says how the run ended early (it was codified with
	// -force); "" when it finished.
	Unfinished string
	// LeftOut are the cells without numbers, which get no value.
	LeftOut []LeftOut
	// FewSamples are the percentiles left out for resting on fewer than
	// MinSamples samples.
	FewSamples []Tail
	// MinSamples is the fewest samples a codified percentile rests on
	// (metric.MinPercentileSamples).
	MinSamples int
}

// LeftOut is a cell of the run without numbers, which codify leaves out.
type LeftOut struct {
	Cell vocab.CellRef
	// Status is vocab.StatusOverCapacity or vocab.StatusError.
	Status vocab.Status
	// Reason is the runner's reason for an errored cell ("error" when it
	// recorded none); "" for a cell over capacity.
	Reason string
}

// Tail is a percentile of a cell that codify leaves out for resting on too
// few samples.
type Tail struct {
	Cell vocab.CellRef
	// Metric is the percentile's name ("ttft_ms_p99").
	Metric string
	// Samples is the number of requests behind it, -1 when the results do
	// not say.
	Samples int
}

// Expect is an expect block over one matrix: a value per measured cell,
// each to be kept within Tolerance.
type Expect struct {
	// Matrix is the matrix label: "decode" (the default matrix, whose
	// block names none), another decode matrix's label, or "prefill".
	Matrix    string
	Metric    metric.Metric
	Tolerance float64
	// Concurrency are a decode matrix's columns; nil for prefill, whose
	// rows hold one value each.
	Concurrency []int
	// Rows are the contexts, smallest first.
	Rows []Row
}

// Row is one context of an expect block.
type Row struct {
	Context int
	// Values has one value per column (NaN: not measured), or prefill's
	// one value.
	Values []float64
}

// AssertKind is which assert codify wrote, a stable code that names the
// block and picks its message.
type AssertKind string

// The asserts codify writes.
const (
	// AssertPeak: the decode cell with the highest total_tps (steady-state
	// cells first) keeps (1 − margin) of it.
	AssertPeak AssertKind = "peak"
	// AssertTTFT: the time to first token at the lowest measured
	// concurrency of the smallest context stays within (1 + margin).
	AssertTTFT AssertKind = "ttft"
	// AssertTTFTTail: the TTFT p99 at the lowest and the highest measured
	// concurrency of the smallest context, when it rests on enough
	// samples, stays within (1 + margin).
	AssertTTFTTail AssertKind = "ttft_p99"
	// AssertPrefill: prefill throughput at the largest measured context
	// keeps (1 − margin) of it.
	AssertPrefill AssertKind = "prefill"
)

// Assert is an assert block on one cell's metric: at least (AtLeast) or
// at most Limit.
type Assert struct {
	Kind AssertKind
	// Matrix is the decode matrix's label; "prefill" for AssertPrefill.
	Matrix      string
	Context     int
	Concurrency int // 0 for AssertPrefill
	Metric      metric.Metric
	// AtLeast is the condition metric >= Limit (higher is better); it is
	// metric <= Limit otherwise.
	AtLeast bool
	Limit   float64
	// Measured is the value the run measured.
	Measured float64
	// Samples is the number of requests behind an AssertTTFTTail's p99.
	Samples int
}

// Noise is what a run's repeats say about the repeats and tolerances a gate
// on this server can use (docs/method.md#noise): the largest measured noise
// over the repeated cells' gated metrics, where it was measured, and what
// it supports. codify.MeasuredNoise decides it.
type Noise struct {
	// Measured is false when no cell was repeated: no noise to size from.
	Measured bool
	// Noise is the largest noise (compare.LogNoise) over the cells' gated
	// metrics; Cell and Metric say where.
	Noise  float64
	Cell   vocab.CellRef
	Metric string
	// Repeats is the run's repeats a cell (its smallest over those cells).
	Repeats int
	// Supported is the smallest change Repeats a side would catch at α
	// with power 0.9: the tightest tolerance the noise supports with as
	// many repeats; NaN when Repeats cannot attain α.
	Supported float64
	// Tightest is Supported rounded up to a whole percent: the margin to
	// suggest instead of one below Supported; NaN with Supported.
	Tightest float64
	// RepeatFor is the repeats a side the margin needs at this noise (0:
	// more than MaxRepeats).
	RepeatFor int
	// Repeat is the repeat to copy into the spec's measure block:
	// RepeatFor, at least the fewest repeats a noise is sized from; that
	// fewest when no noise was measured; 0 with RepeatFor.
	Repeat int
	// MaxRepeats is the most repeats a side the estimates consider
	// (compare.MaxRepeatsEstimate).
	MaxRepeats int
}
