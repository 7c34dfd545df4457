package result

// Search is the outcome of one `search "NAME"` block: the largest
// concurrency in Range whose decode cell at Context meets the objective
// (docs/method.md#search). It is one element of results.json's "search"
// array.
type Search struct {
	Name    string `json:"name"`
	Context int    `json:"context"`
	// Range is the [lo, hi] concurrency range searched.
	Range [2]int `json:"range"`
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
}

// SearchProbe is one probe of a search: a decode cell at one concurrency
// and whether it met the objective.
type SearchProbe struct {
	Concurrency int  `json:"concurrency"`
	Passed      bool `json:"passed"`
	// Reason says why a probe failed: the objective's comparisons that did
	// not hold, or "over capacity: …".
	Reason string     `json:"reason,omitempty"`
	Cell   DecodeCell `json:"cell"`
}

// Probe returns the probe at concurrency c, if the search measured one.
func (s *Search) Probe(c int) (*SearchProbe, bool) {
	return find(s.Probes, func(p *SearchProbe) bool { return p.Concurrency == c })
}

// SearchByName returns the search called name, if r holds it.
func (r *Results) SearchByName(name string) (*Search, bool) {
	return find(r.Search, func(s *Search) bool { return s.Name == name })
}
