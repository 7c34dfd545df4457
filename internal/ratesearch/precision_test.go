package ratesearch

import (
	"math"
	"os"
	"testing"
)

// The Monte Carlo of the answer's precision (docs/method.md#rate-search-precision):
// how often the search's answer is within its precision of the true
// capacity, on the synthetic server of montecarlo_test.go, as windows a
// probe (max_windows) and the window's length grow; and what a fixed
// sweep at the same window needs for the same.

// precisionFigures are one configuration's counts over its runs.
type precisionFigures struct {
	runs, within, lowerBelow int
	windows                  float64 // windows a search (or a sweep), on average
	mean, sd                 float64 // of the answer ÷ the truth
}

func (f precisionFigures) share(n int) float64 { return float64(n) / float64(f.runs) }

// searchPrecision runs runs searches of s over mcSettings with at most
// maxWindows windows a probe, seeds from seed.
func searchPrecision(t *testing.T, s mcServer, maxWindows, runs int, seed uint64) precisionFigures {
	t.Helper()
	truth := s.capacity(0.95)
	st := mcSettings
	st.MaxWindows = maxWindows
	f := precisionFigures{runs: runs}
	var rel []float64
	for i := range runs {
		ans, err := st.Search(newRun(s, seed+uint64(i)).probe(0.95))
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(ans.Rate-truth) <= st.withDefaults().Precision*truth {
			f.within++
		}
		if ans.Lower <= truth {
			f.lowerBelow++
		}
		f.windows += float64(ans.Windows)
		rel = append(rel, ans.Rate/truth)
	}
	f.windows /= float64(runs)
	f.mean, f.sd = meanSD(rel)
	return f
}

// sweepPrecision runs runs fixed sweeps of s over mcSettings's range at
// its precision's steps (lo, lo·1.025, … up to hi: the grid a bisection to
// 2.5 % could land on), k windows at each rate, each rate judged by its
// pooled share's point estimate; the answer is the highest rate that and
// every rate below it met (the search's rule), lo when none did.
func sweepPrecision(s mcServer, k, runs int, seed uint64) precisionFigures {
	truth := s.capacity(0.95)
	st := mcSettings.withDefaults()
	var grid []float64
	for r := st.Lo; r <= st.Hi*(1+1e-9); r *= 1 + st.Precision {
		grid = append(grid, r)
	}
	f := precisionFigures{runs: runs}
	var rel []float64
	for i := range runs {
		run := newRun(s, seed+uint64(i))
		answer := st.Lo
		for _, rate := range grid {
			good, n := 0, 0
			for range k {
				g, l := run.window(rate)
				good, n = good+g, n+l
			}
			f.windows += float64(k)
			if n == 0 || float64(good) < 0.95*float64(n) {
				break // the rates above go unmeasured: a sweep that stops at its first failure
			}
			answer = rate
		}
		if math.Abs(answer-truth) <= st.Precision*truth {
			f.within++
		}
		rel = append(rel, answer/truth)
	}
	f.windows /= float64(runs)
	f.mean, f.sd = meanSD(rel)
	return f
}

// TestAnswerPrecision: with windows enough at the probes near the
// capacity the answer is within the search's precision (2.5 %) of the
// true capacity in ≥ 95 % of runs, the lower bound still below the truth
// in ≥ 95 %: on the queue at 600 s windows, max_windows = 16 (short: 60
// runs; SLOGATE_RATESEARCH_MC=1: 2,000). At the default 4 windows a probe
// the same server's answer is within it in fewer runs (the test asserts
// it is fewer, so that it fails if max_windows stops reaching the search).
// SLOGATE_RATESEARCH_MC=1 go test -run TestAnswerPrecision -v
// ./internal/ratesearch also logs the table of
// docs/method.md#rate-search-precision: 60 s and 600 s windows at 4, 16
// and 64 windows a probe, and fixed sweeps at the same windows.
func TestAnswerPrecision(t *testing.T) {
	long := os.Getenv("SLOGATE_RATESEARCH_MC") == "1"
	runs := 60
	if long {
		runs = 2000
	}
	s := simServer()
	s.windowS = 600
	at16 := searchPrecision(t, s, 16, runs, 7000)
	at4 := searchPrecision(t, s, DefaultMaxWindows, runs, 7000)
	t.Logf("queue, 600 s windows, %d runs: max_windows 16: within 2.5 %% in %.1f %%, lower ≤ truth %.1f %%, %.1f windows; max_windows 4: within %.1f %%, %.1f windows",
		runs, 100*at16.share(at16.within), 100*at16.share(at16.lowerBelow), at16.windows, 100*at4.share(at4.within), at4.windows)
	if at16.share(at16.within) < 0.95 || at16.share(at16.lowerBelow) < 0.95 {
		t.Errorf("max_windows 16 at 600 s windows: answer within 2.5 %% of the truth in %.3f of runs, lower bound below it in %.3f; want ≥ 0.95 each",
			at16.share(at16.within), at16.share(at16.lowerBelow))
	}
	if at4.share(at4.within) >= at16.share(at16.within) {
		t.Errorf("max_windows 4 within 2.5 %% in %.3f of runs, no fewer than max_windows 16's %.3f: the windows a probe do not reach the search",
			at4.share(at4.within), at16.share(at16.within))
	}
	if !long {
		return
	}
	for _, window := range []float64{60, 600} {
		s := simServer()
		s.windowS = window
		n := 500
		for _, mw := range []int{4, 16, 64} {
			f := searchPrecision(t, s, mw, n, 9000)
			t.Logf("search, %g s windows, max_windows %d (%d runs): within 2.5 %% %.1f %%, lower ≤ truth %.1f %%, answer ÷ truth %.3f ± %.3f, %.1f windows",
				window, mw, n, 100*f.share(f.within), 100*f.share(f.lowerBelow), f.mean, f.sd, f.windows)
		}
		for _, k := range []int{1, 4, 16} {
			f := sweepPrecision(s, k, 200, 11000)
			t.Logf("sweep, %g s windows, %d a rate (200 runs): within 2.5 %% %.1f %%, answer ÷ truth %.3f ± %.3f, %.1f windows",
				window, k, 100*f.share(f.within), f.mean, f.sd, f.windows)
		}
	}
}
