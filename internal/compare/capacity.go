package compare

import (
	"github.com/slogate/slogate/internal/ratesearch"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// CapacityResult is one rate search of both runs compared: whether the
// candidate lost capacity (docs/method.md#capacity-lost; ratesearch.Capacity).
type CapacityResult struct {
	Name string
	// A and B are the baseline's and the candidate's search.
	A, B *result.Search
	// Decided is ratesearch.Capacity's outcome: Fail (regressed), Pass
	// (within tolerance), Inconclusive, or Skip (the baseline has no
	// answer, the searches ask different things, or B's stopped on an
	// error: Error then). Outcome is what it does to the gate: Decided,
	// but a Fail or Inconclusive passes when the engines differ.
	Decided, Outcome vocab.Outcome
	// Reason says why, and for an inconclusive one what would decide it.
	Reason string
}

// InformsOnly reports whether the engine rule turned the search's Fail or
// Inconclusive into a Pass.
func (c *CapacityResult) InformsOnly() bool { return c.Outcome != c.Decided }

// Decision is results.json's word for the comparison: "regressed",
// "within", "inconclusive", "skipped" or "error".
func (c *CapacityResult) Decision() string {
	switch c.Decided {
	case vocab.Fail:
		return "regressed"
	case vocab.Pass:
		return "within"
	case vocab.Inconclusive:
		return "inconclusive"
	case vocab.Error:
		return "error"
	}
	return "skipped"
}

// Capacity compares the rate searches b ran with a's of the same name, in
// b's order; a search either run lacks is not compared. tolerance is the
// relative capacity that may be lost.
func Capacity(a, b *result.Results, tolerance float64, engineChanged bool) []CapacityResult {
	base := map[string]*result.Search{}
	for i := range a.Search {
		if s := &a.Search[i]; s.Traffic != "" {
			base[s.Name] = s
		}
	}
	var out []CapacityResult
	for i := range b.Search {
		sb := &b.Search[i]
		sa := base[sb.Name]
		if sb.Traffic == "" || sa == nil {
			continue
		}
		r := CapacityResult{Name: sb.Name, A: sa, B: sb}
		switch {
		case sb.Error != "":
			r.Decided, r.Reason = vocab.Error, "the candidate's search stopped: "+sb.Error
		case sa.Error != "":
			r.Decided, r.Reason = vocab.Skip, "the baseline's search stopped: "+sa.Error
		case sa.Objective != sb.Objective || sa.Traffic != sb.Traffic:
			r.Decided, r.Reason = vocab.Skip, "the searches differ (traffic block or objective): their answers are not comparable"
		default:
			r.Decided, r.Reason = ratesearch.Capacity(bounds(sa), bounds(sb), tolerance)
		}
		r.Outcome = r.Decided
		if engineChanged && (r.Decided == vocab.Fail || r.Decided == vocab.Inconclusive) {
			r.Outcome = vocab.Pass
		}
		out = append(out, r)
	}
	return out
}

func bounds(s *result.Search) ratesearch.Bounds {
	return ratesearch.Bounds{Found: s.Found, Rate: s.Rate, Lower: s.RateLower, Upper: s.RateUpper, Precision: s.Precision}
}

// capacityRecord is r as results.json's comparison keeps it.
func capacityRecord(r *CapacityResult, tolerance float64) result.CapacityComparison {
	side := func(s *result.Search) result.CapacityAnswer {
		return result.CapacityAnswer{Found: s.Found, Rate: s.Rate, Lower: s.RateLower, Upper: s.RateUpper, Precision: s.Precision, ClientLimit: s.ClientLimit}
	}
	return result.CapacityComparison{Search: r.Name, Baseline: side(r.A), Now: side(r.B), Tolerance: tolerance,
		Decision: r.Decision(), Outcome: r.Outcome, Reason: r.Reason}
}
