package compare

import (
	"maps"
	"slices"

	"github.com/slogate/slogate/internal/metric"
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
	// Reason is the rule that decided, with the figures it read:
	// ratesearch's rules, or compare's own before them (SearchStopped,
	// BaselineStopped, SearchesDiffer). Views word it.
	Reason ratesearch.CapacityDecision
	// NoPaired says why the bounds decided although the baseline's search
	// has check windows or this run replayed some ("" when neither run
	// has any: the bounds decide, as they always did).
	NoPaired NoPairedCheck
	// Method is "paired" when the decision came from the paired check
	// (docs/method.md#paired-capacity-check), "bounds" when from the two
	// searches' bounds, "" when not decided.
	Method string
	// Paired are the paired check's metrics with their bounds (Method
	// "paired").
	Paired []ratesearch.PairedInterval
}

// compare's rules of a capacity comparison, decided before the searches'
// answers are read (the others are ratesearch's).
const (
	// SearchStopped: the candidate's search stopped on an error (Error;
	// B.Error says what).
	SearchStopped ratesearch.CapacityRule = "search_stopped"
	// BaselineStopped: the baseline's search stopped on an error (Skip;
	// A.Error says what).
	BaselineStopped ratesearch.CapacityRule = "baseline_stopped"
	// SearchesDiffer: the searches differ in traffic block or objective,
	// so their answers are not comparable (Skip).
	SearchesDiffer ratesearch.CapacityRule = "searches_differ"
)

// NoPairedCheck names why no paired check decided a capacity comparison
// (docs/method.md#paired-capacity-check): a stable code results.json
// keeps; the figures are the searches' (A.Check, B.Replay) and the
// policy's tolerance.
type NoPairedCheck string

// The reasons there is no paired check.
const (
	// NoBaselineCheck: the candidate replayed windows, but the baseline's
	// search has no check windows.
	NoBaselineCheck NoPairedCheck = "no_baseline_check"
	// NotReplayed: the baseline's search has check windows, but this run
	// replayed none (was it run with -baseline?).
	NotReplayed NoPairedCheck = "not_replayed"
	// ReplayedOtherAnswer: this run replayed another baseline answer
	// (B.Replay.BaselineRate) than this baseline's (A.Check.Rate).
	ReplayedOtherAnswer NoPairedCheck = "replayed_other_answer"
	// ReplayedOtherTolerance: this run replayed the check at another
	// tolerance (B.Replay.Tolerance) than the one asked now.
	ReplayedOtherTolerance NoPairedCheck = "replayed_other_tolerance"
	// NoObjectiveMetric: the check windows hold no metric of the
	// objective.
	NoObjectiveMetric NoPairedCheck = "no_objective_metric"
)

// InformsOnly reports whether the engine rule turned the search's Fail or
// Inconclusive into a Pass.
func (c *CapacityResult) InformsOnly() bool { return c.Outcome != c.Decided }

// Check is the search's verdict against the baseline: its Outcome, the
// infrastructure's when the candidate's search errored.
func (c *CapacityResult) Check() Check {
	return Check{Outcome: c.Outcome, Infra: c.Decided == vocab.Error}
}

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
// relative capacity that may be lost, alpha the paired check's one-sided
// level. Where a's search has check windows and b replayed them at the
// same tolerance, the paired check decides (ratesearch.PairedCapacity);
// otherwise the two searches' bounds (ratesearch.Capacity), saying why
// no paired check.
func Capacity(a, b *result.Results, tolerance, alpha float64, engineChanged bool) []CapacityResult {
	replayTol := tolerance // resolved by Build (Policy.Resolved), as the runner's replay was
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
			r.Reason = ratesearch.CapacityDecision{Outcome: vocab.Error, Rule: SearchStopped}
		case sa.Error != "":
			r.Reason = ratesearch.CapacityDecision{Outcome: vocab.Skip, Rule: BaselineStopped}
		case sa.Objective != sb.Objective || sa.Traffic != sb.Traffic:
			r.Reason = ratesearch.CapacityDecision{Outcome: vocab.Skip, Rule: SearchesDiffer}
		default:
			pm, why := pairedMetrics(sa, sb, replayTol)
			if pm != nil {
				r.Method = "paired"
				r.Reason, r.Paired = ratesearch.PairedCapacity(pm, alpha, sb.Replay.Rate, sa.Check.Rate)
				break
			}
			r.Method = "bounds"
			r.Reason, r.NoPaired = ratesearch.Capacity(bounds(sa), bounds(sb), tolerance), why
		}
		r.Decided = r.Reason.Outcome
		r.Outcome = r.Decided
		if engineChanged && (r.Decided == vocab.Fail || r.Decided == vocab.Inconclusive) {
			r.Outcome = vocab.Pass
		}
		out = append(out, r)
	}
	return out
}

// pairedMetrics are the paired check's metrics of baseline search a's
// check windows and candidate search b's replay of them, paired by seed:
// each metric the baseline's windows hold, the candidate's value less the
// baseline's in each window both measured it. Without a check to pair it
// returns nil and why ("" when neither run has check windows: the bounds
// decide, as they always did).
func pairedMetrics(a, b *result.Search, tolerance float64) ([]ratesearch.PairedMetric, NoPairedCheck) {
	switch {
	case a.Check == nil && b.Replay == nil:
		return nil, ""
	case a.Check == nil:
		return nil, NoBaselineCheck
	case b.Replay == nil:
		return nil, NotReplayed
	case b.Replay.BaselineRate != a.Check.Rate:
		return nil, ReplayedOtherAnswer
	case b.Replay.Tolerance != tolerance:
		return nil, ReplayedOtherTolerance
	}
	base := map[int64]result.CheckWindow{}
	names := map[string]bool{}
	for _, w := range a.Check.Windows {
		base[w.Seed] = w
		for n := range w.Values {
			names[n] = true
		}
	}
	var out []ratesearch.PairedMetric
	for _, name := range slices.Sorted(maps.Keys(names)) {
		m, ok := metric.Lookup(vocab.PhaseTraffic, name)
		if !ok {
			continue
		}
		pm := ratesearch.PairedMetric{Metric: name, HigherIsBetter: m.HigherIsBetter}
		for _, w := range b.Replay.Windows {
			bw, ok := base[w.Seed]
			if !ok {
				continue
			}
			va, okA := bw.Values[name]
			vb, okB := w.Values[name]
			if okA && okB {
				pm.Diffs = append(pm.Diffs, vb-va)
			}
		}
		out = append(out, pm)
	}
	if len(out) == 0 {
		return nil, NoObjectiveMetric
	}
	return out, ""
}

func bounds(s *result.Search) ratesearch.Bounds {
	return ratesearch.Bounds{Found: s.Found, Rate: s.Rate, Lower: s.RateLower, Upper: s.RateUpper, Precision: s.Precision}
}

// capacityRecord is r as results.json's comparison keeps it.
func capacityRecord(r *CapacityResult, tolerance float64) result.CapacityComparison {
	side := func(s *result.Search) result.CapacityAnswer {
		return result.CapacityAnswer{Found: s.Found, Rate: s.Rate, Lower: s.RateLower, Upper: s.RateUpper, Precision: s.Precision, ClientLimit: s.ClientLimit}
	}
	rec := result.CapacityComparison{Search: r.Name, Baseline: side(r.A), Now: side(r.B), Tolerance: tolerance,
		Decision: r.Decision(), Outcome: r.Outcome, Method: r.Method,
		Rule: string(r.Reason.Rule), NoPairedCheck: string(r.NoPaired), Line: r.Reason.Line,
		DecidingPrecision: r.Reason.DecidingPrecision, SearchPrecision: r.Reason.SearchPrecision,
		CheckRate: r.Reason.Rate, CheckBaselineRate: r.Reason.BaselineRate, NeedWindows: r.Reason.NeedWindows}
	if r.Reason.Rule == ratesearch.PairedWorse {
		rec.WorseMetric = r.Paired[r.Reason.Worse].Metric
	}
	for _, iv := range r.Paired {
		pm := result.PairedCheckMetric{Metric: iv.Metric, Mean: iv.Mean, Windows: iv.Windows, Alpha: iv.Alpha}
		if iv.Windows >= 2 {
			pm.Lower, pm.Upper = iv.Lower, iv.Upper
		}
		rec.Paired = append(rec.Paired, pm)
	}
	return rec
}
