package bisection

import (
	"github.com/slogate/slogate/internal/compare"
)

// Roles of a Record.
const (
	RoleGood      = "good"
	RoleBad       = "bad"
	RoleCandidate = "candidate"
)

// Record is one build measured, a line of bisect.jsonl: the endpoints
// included, each attempt of a candidate on its own line. A resumed
// bisection reads them back and measures none of them again.
type Record struct {
	Build string `json:"build"`
	// Index is the build's place in the ordered list of builds.
	Index int `json:"index"`
	// Role is RoleGood, RoleBad or RoleCandidate.
	Role string `json:"role"`
	// Attempt is 1, or 2 for the remeasure of the cells the first left
	// inconclusive.
	Attempt int `json:"attempt"`
	// Dir is the results folder, relative to the bisection's -out.
	Dir string `json:"dir,omitempty"`
	// Cells are the step's decisions, one per cell measured (none for an
	// endpoint).
	Cells []CellStep `json:"cells,omitempty"`
	// GPUSeconds is what the step cost (result.GPUTime: GPU seconds, or
	// the server's seconds on a CPU server).
	GPUSeconds float64 `json:"gpu_seconds"`
	// Error is why the build was skipped: it did not start or errored
	// (the whole message; the console shows its first line).
	Error string `json:"error,omitempty"`
}

// CellAnswer is one cell's answer: its first bad build and the evidence,
// or the builds it could still be.
type CellAnswer struct {
	Cell string `json:"cell"`
	// Metrics are those that regressed between the endpoints, Change
	// each one's change of bad against good.
	Metrics []string  `json:"metrics"`
	Change  []float64 `json:"change"`
	// Found: FirstBad is decided, LastGood the build before it.
	Found    bool   `json:"found"`
	FirstBad string `json:"first_bad,omitempty"`
	LastGood string `json:"last_good,omitempty"`
	// AtFirstBad and AtLastGood are the steps that decided them; nil for
	// an endpoint (its change against good is Change, or none).
	AtFirstBad *CellStep `json:"at_first_bad,omitempty"`
	AtLastGood *CellStep `json:"at_last_good,omitempty"`
	// Candidates are the builds the first bad may be when it is not
	// Found: skipped or inconclusive builds and the first known bad.
	Candidates []string `json:"candidates,omitempty"`
}

// Report is a bisection's outcome.
type Report struct {
	Good, Bad string
	Builds    []string
	// GoodVsBad is compare.Build(good, bad): the comparison that chose
	// the cells.
	GoodVsBad *compare.Comparison
	// NoRegression: good is not better than bad on any cell.
	NoRegression bool
	Steps        []Record
	Cells        []CellAnswer
	// GPUSeconds is the whole bisection's cost, endpoints included.
	GPUSeconds float64
	// BudgetOut: -max-gpu-time ran out before every cell was decided.
	BudgetOut bool
}

// Decided reports whether every cell's first bad was found.
func (r *Report) Decided() bool {
	if len(r.Cells) == 0 {
		return false
	}
	for _, c := range r.Cells {
		if !c.Found {
			return false
		}
	}
	return true
}
