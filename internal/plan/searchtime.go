package plan

import (
	"math"
	"time"

	"github.com/slogate/slogate/internal/engine/registry"
	"github.com/slogate/slogate/internal/spec"
)

// SearchTime is the measuring time a rate search is estimated to spend
// (docs/method.md#rate-search-time): its expected value and its range,
// each with the windows it counts.
type SearchTime struct {
	// Name is the search's.
	Name string
	// Low is the search ending after its first probe, decided in two
	// windows: the range's bottom fails the objective (no answer, so no
	// check windows either; a top that meets it ends after two probes);
	// Expected is every probe at the midpoint of two and
	// max_windows windows, with the top of the range past a capacity at
	// the range's geometric midpoint (each of its windows draining the
	// queue that builds) and a settle wait after each probe past it; High is every probe at max_windows, those past the
	// capacity each window draining the queue a capacity as low as lo
	// would build (at most the drain's cap) and settling after it.
	Low, Expected, High time.Duration
	// Windows are the windows Low, Expected and High count, check
	// windows included.
	Windows [3]int
}

// Assumptions of a rate search's time (SearchTime).
const (
	// drainCap is the longest the runner waits for a window's requests to
	// finish when the window is shorter (measure's trafficDrainMin).
	drainCap = 60 * time.Second
	// settleAborts is the settle wait after a window past the capacity,
	// in the engine's abort latencies: llama-server, 1 s, waited 1.2 and
	// 2.7 s (docs/method.md#settle); none where the engine aborts at once.
	settleAborts = 2
)

// EstimateSearch is rate search s's measuring time on server srv
// (docs/method.md#rate-search-time): each window costs the traffic
// block's warm-up, window and drain (estimateDrain), the probes at most
// MaxRateProbes; the windows a probe, the probes past the capacity and
// the settle waits between them make its range. Nothing for a
// concurrency search or one without its traffic block. Backoffs after a
// refused request fall inside a window's fixed length: they add nothing.
func EstimateSearch(sp *spec.Spec, srv *spec.Server, s *spec.Search) SearchTime {
	out := SearchTime{Name: s.Name}
	t := sp.TrafficBlock(s.Traffic)
	if !s.IsRate() || t == nil {
		return out
	}
	window := t.WarmUp + t.Duration + estimateDrain(sp, t)
	probes, most := MaxRateProbes(s), MaxRateWindows(s)
	mid := min(most, (minProbeWindows+most+1)/2)
	// Past the capacity: the top of the range and, of the bisection's
	// probes, about half.
	past := 1 + (probes-2+1)/2
	var settle time.Duration
	if srv != nil {
		if st := registry.For(srv.Engine).Status(); st != nil {
			settle = settleAborts * st.AbortLatency
		}
	}
	built := t.WarmUp + t.Duration
	// overdrainAt is how much longer a window at rate r takes to drain
	// than one below the capacity c: the queue it builds over its warm-up
	// and window, (r ÷ c − 1) × their length, at most the runner's cap.
	overdrainAt := func(r, c float64) time.Duration {
		return min(max(drainCap, t.Duration), time.Duration(max(0, r/c-1)*float64(built)))
	}
	// overdrain is the most: the capacity as low as lo.
	overdrain := func(r float64) time.Duration { return overdrainAt(r, s.RateLo) }
	check := s.CheckWindows
	out.Windows = [3]int{minProbeWindows, probes*mid + check, probes*most + check}
	out.Low = time.Duration(out.Windows[0]) * window
	// The top of the range, past a capacity at the range's geometric
	// midpoint, each of its windows draining the queue that builds.
	mid3 := math.Sqrt(s.RateLo * s.RateHi)
	out.Expected = time.Duration(out.Windows[1])*window + time.Duration(mid)*overdrainAt(s.RateHi, mid3) + time.Duration(past)*settle
	out.High = time.Duration(out.Windows[2])*window + time.Duration(most)*overdrain(s.RateHi) +
		time.Duration((past-1)*most)*overdrain(math.Sqrt(s.RateLo*s.RateHi)) + time.Duration(past*most)*settle
	return out
}
