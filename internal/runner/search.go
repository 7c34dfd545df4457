package runner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/slogate/slogate/internal/event"
	"github.com/slogate/slogate/internal/measure"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/warning"
)

// Objective judges search s's probe cell c (docs/method.md#search):
// whether c met the objective, the values it read, one comparison per line
// (as assert details write them), and an error when it cannot say (a metric
// the cell lacks, a value that is not a bool). the run command builds it from package
// assert, so that the runner evaluates no condition itself.
type Objective func(s *spec.Search, c *result.DecodeCell) (met bool, lines []string, err error)

// probeVerdict is what a probe tells the search.
type probeVerdict struct {
	passed bool
	// overCapacity is set on a probe skipped as over capacity: it fails the
	// objective, and every higher concurrency would be over capacity too.
	overCapacity bool
}

// searchAnswer is the outcome of searchConcurrency.
type searchAnswer struct {
	answer      int // the largest c with every probe ≤ c passing; 0 when none
	found       bool
	monotone    bool
	confirmedBy int // the lowest failing probe above answer; 0 when none
}

// errSearchStopped wraps a probe's error that ends the search without an
// answer (the probe could not be measured, or its objective not
// evaluated); the run goes on.
type errSearchStopped struct{ err error }

func (e errSearchStopped) Error() string { return e.err.Error() }

// searchConcurrency finds the largest concurrency in [lo, hi] that passes
// probe, as docs/method.md#search describes: an exponential phase (lo, 2lo,
// 4lo, … capped at hi) until a probe fails; one probe past that failure
// (2F capped at hi, unless F is hi or over capacity), whose pass would show
// the objective is not monotone; then bisection on the integers between the
// last pass and the first failure, which ends with answer + 1 probed and
// failing. The answer is the largest c such that every probe at or below c
// passed; monotone is false when some probe passed above one that failed.
// probe's error ends the search and is returned as is.
func searchConcurrency(lo, hi int, probe func(c int) (probeVerdict, error)) (searchAnswer, error) {
	passed := map[int]bool{}
	do := func(c int) (probeVerdict, error) {
		v, err := probe(c)
		if err == nil {
			passed[c] = v.passed
		}
		return v, err
	}
	lastPass, firstFail := 0, 0
	for c := lo; ; c = min(2*c, hi) {
		v, err := do(c)
		if err != nil {
			return searchAnswer{}, err
		}
		if !v.passed {
			firstFail = c
			if next := min(2*c, hi); next > c && !v.overCapacity {
				if _, err := do(next); err != nil {
					return searchAnswer{}, err
				}
			}
			break
		}
		lastPass = c
		if c == hi {
			break
		}
	}
	for lastPass > 0 && firstFail > 0 && firstFail-lastPass > 1 {
		mid := lastPass + (firstFail-lastPass)/2
		v, err := do(mid)
		if err != nil {
			return searchAnswer{}, err
		}
		if v.passed {
			lastPass = mid
		} else {
			firstFail = mid
		}
	}
	return answerOf(passed), nil
}

// answerOf reads the answer off the probes: the largest c such that every
// probe at or below c passed, the failing probe just above it, and whether
// any probe passed above a failure.
func answerOf(passed map[int]bool) searchAnswer {
	cs := make([]int, 0, len(passed))
	for c := range passed {
		cs = append(cs, c)
	}
	slices.Sort(cs)
	a := searchAnswer{monotone: true}
	failedBelow := false
	for _, c := range cs {
		switch {
		case passed[c] && failedBelow:
			a.monotone = false
		case passed[c]:
			a.answer, a.found = c, true
		case !failedBelow:
			failedBelow = true
			a.confirmedBy = c
		}
	}
	return a
}

// search runs one search block at the step's context: each probe is a
// decode cell measured by the method (decode), then judged by the
// objective (Config.Objective). bodies are the context's decode request bodies (one per
// stream of the largest probe when the workload is distinct), cp its
// prompts (nil when every probe is over capacity).
func (r *run) search(ctx context.Context, s *spec.Search, bodies [][]byte, cp *measure.ContextPrompts) error {
	start := time.Now()
	r.results.Search = append(r.results.Search, result.Search{Name: s.Name, Context: s.Context, Range: [2]int{s.Lo, s.Hi},
		Objective: r.cfg.ObjectiveText(s), Monotone: true, Probes: []result.SearchProbe{}})
	idx := len(r.results.Search) - 1
	ans, err := searchConcurrency(s.Lo, s.Hi, func(c int) (probeVerdict, error) {
		cell, err := r.decode(ctx, vocab.ProbeRef(s.Name, s.Context, c), bodies)
		if err != nil {
			return probeVerdict{}, err
		}
		if cp != nil && cell.Status.Measured() {
			cell.Warnings = append(cell.Warnings, cp.Warnings...)
		}
		cell.Matrix, cell.Search = "", s.Name
		p := result.SearchProbe{Concurrency: c, Cell: cell}
		var v probeVerdict
		var stop error
		switch {
		case cell.Status == vocab.StatusOverCapacity:
			v.overCapacity = true
			p.Reason = "over capacity: " + cell.Reason
		case !cell.Status.Measured():
			stop = fmt.Errorf("the probe at concurrency %d could not be measured: %s", c, cell.Reason)
			p.Reason = cell.Reason
		default:
			ok, lines, oerr := r.cfg.Objective(s, &cell)
			switch {
			case oerr != nil:
				stop = fmt.Errorf("the probe at concurrency %d: %v", c, oerr)
				p.Reason = oerr.Error()
			case ok:
				v.passed, p.Passed = true, true
			default:
				var failed []string
				for _, l := range lines {
					if strings.Contains(l, ", want ") && !strings.HasSuffix(l, ": ok") {
						failed = append(failed, l)
					}
				}
				if len(failed) == 0 {
					failed = lines
				}
				p.Reason = strings.Join(failed, "; ")
			}
		}
		if err := r.recordProbe(idx, p); err != nil {
			return v, err
		}
		if stop != nil {
			return v, errSearchStopped{stop}
		}
		return v, nil
	})
	res := &r.results.Search[idx]
	res.ElapsedS = measure.Round(time.Since(start).Seconds(), 2)
	var stopped errSearchStopped
	switch {
	case errors.As(err, &stopped):
		res.Error = stopped.Error()
		res.Monotone = answerOf(probesPassed(res.Probes)).monotone
		r.warn(r.worded(warning.New(warning.SearchNoAnswer, "", res.Error, nil).About(s.Name)))
	case err != nil:
		res.Error = "the run ended during the search: " + err.Error()
		r.observeSearch(*res)
		return err
	default:
		res.Concurrency, res.Found, res.Monotone, res.ConfirmedBy = ans.answer, ans.found, ans.monotone, ans.confirmedBy
		if !ans.monotone {
			r.warn(warning.New(warning.SearchNotMonotone, "search "+s.Name,
				fmt.Sprintf("the objective is not monotone in concurrency (%s): the answer %d is the largest concurrency with every probe at or below it passing", probeList(res.Probes), ans.answer),
				map[string]float64{warning.FigAnswer: float64(ans.answer)}))
		}
	}
	r.observeSearch(*res)
	return r.writeResults()
}

// largestProbe is the largest concurrency search s may measure: hi, or
// less when the KV capacity is known and hi would be over capacity (0 when
// even lo is).
func (r *run) largestProbe(s *spec.Search) int {
	for c := s.Hi; c >= s.Lo; c-- {
		if !r.kvPool.OverCapacity(c, s.Context, r.measure().MaxOutput) {
			return c
		}
		if r.kvPool.Tokens > 0 {
			// Jump to the capacity's bound instead of counting down: the
			// largest C that fits is (one engine's requests) × engines.
			perEngine := r.kvPool.PerEngine() / int64(s.Context+r.measure().MaxOutput)
			c = min(c, int(perEngine)*max(r.kvPool.Engines, 1)+1)
		}
	}
	return 0
}

// probesPassed maps each probe's concurrency to whether it passed.
func probesPassed(ps []result.SearchProbe) map[int]bool {
	m := map[int]bool{}
	for _, p := range ps {
		m[p.Concurrency] = p.Passed
	}
	return m
}

// probeList renders probes in concurrency order: "1 pass, 2 fail, 4 pass".
func probeList(ps []result.SearchProbe) string {
	sorted := slices.Clone(ps)
	slices.SortFunc(sorted, func(a, b result.SearchProbe) int { return a.Concurrency - b.Concurrency })
	parts := make([]string, len(sorted))
	for i, p := range sorted {
		word := "fail"
		if p.Passed {
			word = "pass"
		}
		parts[i] = fmt.Sprintf("%d %s", p.Concurrency, word)
	}
	return strings.Join(parts, ", ")
}

// recordProbe adds probe p to search idx, tells the observer and appends
// the probe's cell to cells.jsonl (a resumed run re-runs the whole search:
// runner/resume.go drops probe records).
func (r *run) recordProbe(idx int, p result.SearchProbe) error {
	r.results.Search[idx].Probes = append(r.results.Search[idx].Probes, p)
	elapsed := time.Duration(p.Cell.ElapsedS * float64(time.Second))
	if so, ok := r.observer.(event.SearchObserver); ok {
		so.ProbeDone(p, elapsed)
	} else {
		r.observer.DecodeDone(p.Cell, elapsed)
	}
	c := p.Cell
	return r.persist(result.CellRecord{Server: r.cfg.Server.Name, Phase: vocab.PhaseDecode, Decode: &c})
}

// observeSearch tells a SearchObserver that search s is done.
func (r *run) observeSearch(s result.Search) {
	if so, ok := r.observer.(event.SearchObserver); ok {
		so.SearchDone(s)
	}
}
