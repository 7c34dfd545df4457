package plan

import (
	"math/bits"
	"slices"

	"github.com/slogate/slogate/internal/ratesearch"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/vocab"
)

// keptSearches returns the searches of sp that the run measures: those
// whose test name "<server>/search/<name>" matches, and those a kept
// assertion reads (search["NAME"]), in spec order.
func keptSearches(sp *spec.Spec, server string, asserts []*spec.Assert, match func(string) bool) []*spec.Search {
	need := map[string]bool{}
	for _, a := range asserts {
		for _, n := range a.Searches {
			need[n] = true
		}
	}
	var out []*spec.Search
	for _, s := range sp.Searches {
		if need[s.Name] || match(vocab.TestID{Server: server, Kind: vocab.KindSearch, Block: s.Name}.Name()) {
			out = append(out, s)
		}
	}
	return out
}

// MaxProbes bounds the probes of a search over [lo, hi]
// (docs/method.md#search): the exponential phase (lo, 2lo, … up to hi),
// one probe past the first failure, and the bisection of at most hi/2
// integers.
func MaxProbes(lo, hi int) int {
	if lo < 1 || hi <= lo {
		return 1
	}
	exp := 1
	for c := lo; c < hi; c *= 2 {
		exp++
	}
	return exp + 1 + bits.Len(uint(hi/2))
}

// MaxRateWindows is the most windows one probe of rate search s
// measures: its max_windows, else ratesearch.DefaultMaxWindows.
func MaxRateWindows(s *spec.Search) int {
	if s.MaxWindows > 0 {
		return s.MaxWindows
	}
	return ratesearch.DefaultMaxWindows
}

// MaxRateProbes bounds the probes of rate search s
// (docs/method.md#rate-search): lo, hi and the geometric bisection's steps
// down to its precision.
func MaxRateProbes(s *spec.Search) int {
	return ratesearch.Settings{Lo: s.RateLo, Hi: s.RateHi, Precision: s.Precision}.MaxProbes()
}

// addSearchSteps puts each search on the step of its context (creating it)
// and records the plan's searches.
func (p *Plan) addSearchSteps(searches []*spec.Search) {
	p.Searches = searches
	for _, s := range searches {
		i := slices.IndexFunc(p.Steps, func(st Step) bool { return st.Context == s.Context })
		if i < 0 {
			p.Steps = append(p.Steps, Step{Context: s.Context})
			i = len(p.Steps) - 1
		}
		p.Steps[i].Searches = append(p.Steps[i].Searches, s)
	}
	slices.SortFunc(p.Steps, func(a, b Step) int { return a.Context - b.Context })
}
