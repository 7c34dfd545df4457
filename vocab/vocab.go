// Package vocab is the vocabulary slogate's packages share and nothing
// else: the phases of a cell (this file), with no measured data and no file
// IO, so that the spec language, the plan, the asserts, the reports and the
// comparisons can name the same things without depending on results.json's
// package (result).
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
)
