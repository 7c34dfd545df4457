// Package vocab is the vocabulary slogate's packages share, and nothing
// else: the phases of a cell, the references that name cells (CellRef), a
// cell's status, the outcomes of tests and how they merge (Pass < Skip <
// Inconclusive < Fail < Error, by the worst), the names of tests and runs
// (TestID, RunNames), and how token counts and rates are spelled in them.
// It holds no measured data and does no file IO, so that the spec language,
// the plan, the asserts, the reports and the comparisons name the same
// things without depending on results.json's package (result). The metric
// table is package metric.
package vocab

// Phase names the kinds of cells.
type Phase string

// Phases.
const (
	PhasePrefill Phase = "prefill"
	PhaseDecode  Phase = "decode"
	// PhaseTraffic: a traffic cell, requests arriving at a rate
	// (docs/method.md#traffic).
	PhaseTraffic Phase = "traffic"
	// PhaseCorrectness: the figures of a correctness block (no cell;
	// docs/method.md#correctness).
	PhaseCorrectness Phase = "correctness"
)
