package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/slogate/slogate/internal/event"
	"github.com/slogate/slogate/internal/measure"
	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/ratesearch"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/warning"
)

// TrafficObjective judges rate search s's objective over traffic cell c,
// as Objective does a decode probe's (docs/method.md#rate-search): the
// runner calls it with c's metrics set to the pessimistic, the optimistic
// and the point ends of their intervals. the run command builds it from package
// assert.
type TrafficObjective func(s *spec.Search, c *result.TrafficCell) (met bool, lines []string, err error)

// rateSearch runs rate search s (docs/method.md#rate-search): package
// ratesearch chooses the rates and decides each probe from the pooled data
// of its windows; each window is a cell of s's traffic block at the
// probe's rate (a new seed for each window after the first), measured by
// the traffic method. bodies are the context's request bodies (nil when
// the block sends a named workload).
func (r *run) rateSearch(ctx context.Context, s *spec.Search, bodies [][]byte) error {
	start := time.Now()
	settings := ratesearch.Settings{Lo: s.RateLo, Hi: s.RateHi, Precision: s.Precision, MaxWindows: s.MaxWindows}
	r.results.Search = append(r.results.Search, result.Search{Name: s.Name, Traffic: s.Traffic, RateRange: [2]float64{s.RateLo, s.RateHi},
		Objective: r.cfg.ObjectiveText(s), Precision: s.Precision, Confidence: ratesearch.DefaultConfidence, Monotone: true,
		Probes: []result.SearchProbe{}})
	idx := len(r.results.Search) - 1
	t := r.cfg.Spec.TrafficBlock(s.Traffic)
	p := &rateProber{run: r, ctx: ctx, search: s, block: t, bodies: bodies, settings: settings}
	settings.Judged = p.judged
	ans, err := settings.Search(p.probe)
	if err == nil {
		err = p.flush(idx, ans.Probes)
	}
	res := &r.results.Search[idx]
	res.ElapsedS = measure.Round(time.Since(start).Seconds(), 2)
	var stopped errSearchStopped
	switch {
	case errors.As(err, &stopped):
		// The probe that stopped the search is recorded as measured,
		// without a decision, with why (an objective that could not be
		// evaluated says so only in the error).
		if p.cur != nil && p.cur.reason == "" && p.cur.judgement == nil {
			p.cur.reason = err.Error()
		}
		p.recordStopped()
		res.Error = stopped.Error()
		r.warn(r.worded(warning.New(warning.SearchNoAnswer, "", res.Error, nil).About(s.Name)))
	case err != nil:
		res.Error = "the run ended during the search: " + err.Error()
		r.observeSearch(*res)
		return err
	default:
		res.Found, res.Rate, res.RateLower, res.RateUpper = ans.Found, ans.Rate, ans.Lower, ans.Upper
		res.ClientLimit, res.Precision, res.Confidence = ans.ClientLimit, ans.Precision, ans.Confidence
		res.Monotone = rateMonotone(res.Probes)
		if !res.Monotone {
			r.warn(warning.New(warning.SearchNotMonotone, "search "+s.Name,
				fmt.Sprintf("the objective is not monotone in request rate (%s): the answer %s req/s is the highest rate with every probe at or below it meeting it", rateProbeList(res.Probes), vocab.FormatRate(ans.Rate)),
				map[string]float64{warning.FigAnswer: ans.Rate}))
		}
	}
	r.observeSearch(*res)
	if err := r.writeResults(); err != nil {
		return err
	}
	if err := p.checks(idx); err != nil {
		return err
	}
	return r.writeResults()
}

// Suffixes of a search's name in its check windows' cells: "capacity/check"
// and "capacity/replay", so that their tests and records are told from the
// probes' (docs/method.md#paired-capacity-check).
const (
	checkSuffix  = "/check"
	replaySuffix = "/replay"
)

// checks measures rate search idx's windows for the paired check of
// capacity lost (docs/method.md#paired-capacity-check): with check_windows,
// that many windows at its answer (seeds the block's and on); with a
// baseline whose search of the same name has a check, the baseline's
// windows again at its answer less the tolerance, seed for seed. A window
// not measured stops its check, recorded with why; only the run's end
// (its context) is an error.
func (p *rateProber) checks(idx int) error {
	r := p.run
	res := &r.results.Search[idx]
	if n := p.search.CheckWindows; n > 0 && res.Found && res.Error == "" {
		seeds := make([]int64, n)
		for i := range seeds {
			seeds[i] = p.block.Seed + int64(i)
		}
		c, err := p.checkWindows(checkSuffix, res.Rate, seeds)
		res = &r.results.Search[idx]
		res.Check = c
		if err != nil {
			return err
		}
	}
	base := baselineCheck(r.cfg.Baseline, p.search.Name)
	if base == nil {
		return nil
	}
	tol := r.tolerance()
	seeds := make([]int64, len(base.Windows))
	for i, w := range base.Windows {
		seeds[i] = w.Seed
	}
	c, err := p.checkWindows(replaySuffix, base.Rate*(1-tol), seeds)
	c.BaselineRate, c.Tolerance = base.Rate, tol
	r.results.Search[idx].Replay = c
	return err
}

// baselineCheck is the check of the baseline's rate search called name,
// or nil (no baseline, no such search, or no check windows).
func baselineCheck(base *result.Results, name string) *result.SearchCheck {
	if base == nil {
		return nil
	}
	for i := range base.Search {
		if s := &base.Search[i]; s.Name == name && s.IsRate() && s.Check != nil && len(s.Check.Windows) > 0 {
			return s.Check
		}
	}
	return nil
}

// checkWindows measures a window at rate for each seed, as cells of the
// search named with suffix, and keeps each window's objective metrics.
func (p *rateProber) checkWindows(suffix string, rate float64, seeds []int64) (*result.SearchCheck, error) {
	r := p.run
	c := &result.SearchCheck{Rate: rate, Windows: []result.CheckWindow{}}
	ref := vocab.RateProbeRef(p.search.Name+suffix, p.search.Traffic, p.search.Context, rate)
	start := time.Now()
	for i, seed := range seeds {
		cell, _, err := p.windowSeeded(ref, seed, i+1)
		if err != nil {
			c.Error = err.Error()
			return c, err
		}
		if err := r.persist(result.CellRecord{Server: r.cfg.Server.Name, Phase: vocab.PhaseTraffic, Traffic: &cell}); err != nil {
			return c, err
		}
		if !cell.Status.Measured() {
			c.Stop = &result.CheckStop{Rule: result.CheckWindowUnmeasured, Seed: seed, CellReason: cell.Reason}
			r.note(event.CheckWindowDone{Search: p.search.Name, Replay: suffix == replaySuffix, Rate: rate, Window: i + 1, Windows: len(seeds), Stop: c.Stop})
			break
		}
		w := result.CheckWindow{Seed: seed, Values: map[string]float64{}, Launched: cell.Launched}
		for _, name := range p.search.ObjectiveMetrics {
			m, ok := metric.Lookup(vocab.PhaseTraffic, name)
			if !ok {
				continue
			}
			if v, ok := cell.Value(m); ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
				w.Values[name] = v
			}
		}
		c.Windows = append(c.Windows, w)
		r.note(event.CheckWindowDone{Search: p.search.Name, Replay: suffix == replaySuffix, Rate: rate, Window: i + 1, Windows: len(seeds), Values: w.Values, Elapsed: time.Since(start)})
	}
	return c, nil
}

// rateProber measures the probes of one rate search for package
// ratesearch: window after window of one rate, pooling their requests, and
// records each probe once decided.
type rateProber struct {
	run      *run
	ctx      context.Context
	search   *spec.Search
	block    *spec.Traffic
	bodies   [][]byte
	settings ratesearch.Settings

	// cur is the probe being measured: its rate, pooled data, last
	// window's cell and elapsed time; nil between probes.
	cur *rateProbe
	// done are the probes recorded so far (in results.json, told to the
	// observer), in the order measured.
	done int
}

// rateProbe is one probe's windows so far.
type rateProbe struct {
	rate     float64
	pool     probePool
	last     result.TrafficCell
	windows  int
	elapsed  time.Duration
	decision ratesearch.Decision
	point    ratesearch.Decision
	// judgement is how its last look judged it; reason why it has none.
	judgement *result.ProbeJudgement
	reason    string
	recorded  bool
}

// probe is the ratesearch.ProbeFunc: it measures window windows of rate
// and returns the pooled data of all of them. A window that could not be
// measured for client lag makes the probe unmeasurable; any other error
// cell stops the search (errSearchStopped): errors, not guesses.
func (p *rateProber) probe(rate float64, windows int) (ratesearch.Outcome, error) {
	if windows == 1 || p.cur == nil || p.cur.rate != rate {
		p.recordCurrent()
		p.cur = &rateProbe{rate: rate}
	}
	cur := p.cur
	cur.judgement, cur.reason = nil, "" // this window's judgement, or why it has none
	ref := vocab.RateProbeRef(p.search.Name, p.search.Traffic, p.search.Context, rate)
	cell, recs, err := p.window(ref, windows)
	cur.windows, cur.last = windows, cell
	cur.elapsed += time.Duration(cell.ElapsedS * float64(time.Second))
	if err != nil {
		return ratesearch.Outcome{}, err
	}
	if err := p.run.persist(result.CellRecord{Server: p.run.cfg.Server.Name, Phase: vocab.PhaseTraffic, Traffic: &cell}); err != nil {
		return ratesearch.Outcome{}, err
	}
	if lag, ok := clientLag(&cell); ok {
		cur.decision, cur.reason = ratesearch.Unmeasurable, lag
		p.recordCurrent()
		return ratesearch.Outcome{Unmeasurable: lag}, nil
	}
	if cell.Status == vocab.StatusSaturated {
		// Past the server's capacity: a failed probe, not a stopped search;
		// its window, the part run, pooled as any other (output_tps).
		cur.pool.add(&cell, recs)
		return ratesearch.Outcome{Saturated: cell.Reason}, nil
	}
	if !cell.Status.Measured() {
		cur.reason = cell.Reason
		return ratesearch.Outcome{}, errSearchStopped{fmt.Errorf("the probe at %s req/s could not be measured: %s", vocab.FormatRate(rate), cell.Reason)}
	}
	cur.pool.add(&cell, recs)
	return ratesearch.Outcome{Data: cur.pool.data(p.search.ObjectiveMetrics), Objective: p.objective(&cell)}, nil
}

// judged is the search's Settings.Judged: the probe being measured takes
// the search's judgement of its windows so far, and is recorded, and
// shown, the moment the search is done with it.
func (p *rateProber) judged(pr ratesearch.Probe, final bool) {
	cur := p.cur
	if cur == nil || cur.rate != pr.Rate {
		return // not measured here: nothing to record
	}
	cur.decision, cur.point = pr.Decision, pr.Point
	cur.judgement = probeJudgement(pr)
	if pr.Saturated {
		cur.reason = pr.Reason
	}
	if final {
		p.recordCurrent()
	}
}

// window measures one window of the probe at ref (the windows-th): the
// traffic block's cell at the probe's rate, its seed moved on by one for
// each window after the first so that the windows' arrivals are drawn
// anew; and the records of its in-window requests.
func (p *rateProber) window(ref vocab.CellRef, windows int) (result.TrafficCell, []result.RequestRecord, error) {
	if windows == 1 {
		p.run.observer.CellStart(ref) // the later windows continue its test
	}
	return p.windowSeeded(ref, p.block.Seed+int64(windows-1), windows)
}

// windowSeeded measures one window of the traffic block at ref's rate
// with the given seed, its requests recorded as the repeat-th (from 1;
// requests.jsonl shows no repeat for the first); the cell is named as ref
// names it (its Search ref's).
func (p *rateProber) windowSeeded(ref vocab.CellRef, seed int64, repeat int) (result.TrafficCell, []result.RequestRecord, error) {
	r := p.run
	t := *p.block
	t.Seed = seed
	m := r.meter()
	var mu sync.Mutex
	var recs []result.RequestRecord
	record := m.Record
	m.Record = func(rec *result.RequestRecord) {
		if repeat > 1 {
			rec.Repeat = repeat
		}
		if rec.InWindow && rec.Purpose == "" {
			mu.Lock()
			recs = append(recs, *rec)
			mu.Unlock()
		}
		if record != nil {
			record(rec)
		}
	}
	var cell result.TrafficCell
	var err error
	if t.Workload != "" {
		cell, err = m.WorkloadTraffic(p.ctx, ref, &t, r.cfg.Spec.NamedWorkload(t.Workload))
	} else {
		cell, err = m.Traffic(p.ctx, ref, &t, p.bodies)
	}
	cell.Traffic, cell.Search = p.search.Traffic, ref.Search
	mu.Lock()
	defer mu.Unlock()
	return cell, slices.Clone(recs), err
}

// objective is the probe's objective for package ratesearch: last's
// metrics set to the values given, evaluated by Config.TrafficObjective.
func (p *rateProber) objective(last *result.TrafficCell) ratesearch.Objective {
	return func(values map[string]float64) (bool, error) {
		c := objectiveCell(last, values)
		ok, _, err := p.run.cfg.TrafficObjective(p.search, &c)
		if err != nil {
			return false, errSearchStopped{fmt.Errorf("the probe at %s req/s: %v", vocab.FormatRate(last.Rate), err)}
		}
		return ok, nil
	}
}

// objectiveCell is a copy of c with each metric of values set to its
// value: a value that is not a number (a statistic of no samples) is the
// metric's worst, and the cell counts a request launched and completed so
// that the values are read as measured.
func objectiveCell(c *result.TrafficCell, values map[string]float64) result.TrafficCell {
	out := *c
	out.Stats = map[string]float64{}
	for k, v := range c.Stats {
		out.Stats[k] = v
	}
	out.Launched, out.Completed = max(out.Launched, 1), max(out.Completed, 1)
	for name, v := range values {
		m, ok := metric.Lookup(vocab.PhaseTraffic, name)
		if !ok {
			continue
		}
		if math.IsNaN(v) {
			v = math.Inf(1)
			if m.HigherIsBetter {
				v = math.Inf(-1)
			}
		}
		out.SetValue(m, v)
	}
	return out
}

// recordCurrent records the probe being measured, once: in results.json's
// search entry and to the observer.
func (p *rateProber) recordCurrent() {
	cur := p.cur
	if cur == nil || cur.recorded || cur.windows == 0 {
		return
	}
	cur.recorded = true
	r := p.run
	idx := len(r.results.Search) - 1
	last := cur.last
	sp := result.SearchProbe{Rate: cur.rate, Traffic: &last, Decision: string(cur.decision), Windows: cur.windows,
		Passed:    cur.decision == ratesearch.Met || (cur.decision == ratesearch.Undecided && cur.point == ratesearch.Met),
		OutputTPS: cur.pool.outputTPS()}
	sp.Reason, sp.Judgement = cur.reason, cur.judgement
	r.results.Search[idx].Probes = append(r.results.Search[idx].Probes, sp)
	p.done++
	if so, ok := r.observer.(event.SearchObserver); ok {
		so.ProbeDone(sp, cur.elapsed)
	} else if o, ok := r.observer.(event.TrafficObserver); ok {
		o.TrafficDone(last, cur.elapsed)
	}
}

// flush records a probe not yet recorded, then checks the recorded
// probes against the search's (each is recorded from the search's own
// judgement, Settings.Judged, so they agree; a disagreement is a bug worth
// stopping on).
func (p *rateProber) flush(idx int, probes []ratesearch.Probe) error {
	p.recordCurrent()
	got := p.run.results.Search[idx].Probes
	if len(got) != len(probes) {
		return fmt.Errorf("rate search %s: %d probes recorded, the search made %d", p.search.Name, len(got), len(probes))
	}
	for i, pr := range probes {
		if got[i].Rate != pr.Rate || got[i].Decision != string(pr.Decision) || got[i].Windows != pr.Windows {
			return fmt.Errorf("rate search %s: probe %d recorded as %s req/s %s in %d windows, the search has %s req/s %s in %d",
				p.search.Name, i+1, vocab.FormatRate(got[i].Rate), got[i].Decision, got[i].Windows, vocab.FormatRate(pr.Rate), pr.Decision, pr.Windows)
		}
	}
	return nil
}

// recordStopped records the probe being measured when the search stopped:
// its window could not be measured or judged, so it has no decision, only
// the reason.
func (p *rateProber) recordStopped() {
	if p.cur != nil && !p.cur.recorded {
		p.cur.decision = ""
	}
	p.recordCurrent()
}

// clientLag says whether cell could not be measured because the client
// fell behind its schedule (warning.ClientLag on an unmeasurable cell),
// with the reason.
func clientLag(c *result.TrafficCell) (string, bool) {
	if c.Status != vocab.StatusUnmeasurable {
		return "", false
	}
	for _, w := range c.Warnings {
		if w.Code == warning.ClientLag {
			return c.Reason, true
		}
	}
	return "", false
}

// probeJudgement is how a probe was judged: the metrics' intervals, and
// for a probe not met with confidence, which way it went; for one
// undecided at its last window, about how many windows would decide it
// (its ToDecide; 0 leaves it out) and whether max_windows could allow
// them.
func probeJudgement(pr ratesearch.Probe) *result.ProbeJudgement {
	j := &result.ProbeJudgement{Intervals: make([]result.ProbeInterval, len(pr.Intervals))}
	for i, iv := range pr.Intervals {
		j.Intervals[i] = result.ProbeInterval{Metric: iv.Metric, Point: result.Figure(iv.Point), Lower: result.Figure(iv.Lower),
			Upper: result.Figure(iv.Upper), DesignEffect: result.Figure(iv.DesignEffect)}
	}
	switch pr.Decision {
	case ratesearch.Undecided:
		j.Point, j.ToDecide = string(pr.Point), pr.ToDecide
		switch {
		case pr.ToDecide >= ratesearch.MaxToDecide:
			j.Rule = result.ProbeUndecidedEdge
		case pr.ToDecide > spec.MaxProbeWindows:
			j.Rule, j.MaxWindowsAllowed = result.ProbeUndecidedBeyond, spec.MaxProbeWindows
		case pr.ToDecide > 0:
			j.Rule = result.ProbeUndecidedWindows
		default:
			j.Rule, j.ToDecide = result.ProbeUndecided, 0
		}
	case ratesearch.Failed:
		j.Rule = result.ProbeFailed
		if pr.Saturated {
			j.Rule = result.ProbeSaturated
		}
	default:
		j.Rule = result.ProbeMet
	}
	return j
}

// rateMonotone is false when a probe decided met lies above one decided
// failed: the objective is then not monotone in rate.
func rateMonotone(ps []result.SearchProbe) bool {
	lowestFail := math.Inf(1)
	for _, p := range ps {
		if p.Decision == result.DecisionFailed {
			lowestFail = min(lowestFail, p.Rate)
		}
	}
	for _, p := range ps {
		if p.Decision == result.DecisionMet && p.Rate > lowestFail {
			return false
		}
	}
	return true
}

// rateProbeList renders rate probes in rate order: "0.5 met, 4 failed".
func rateProbeList(ps []result.SearchProbe) string {
	sorted := slices.Clone(ps)
	slices.SortFunc(sorted, func(a, b result.SearchProbe) int { return cmp.Compare(a.Rate, b.Rate) })
	parts := make([]string, len(sorted))
	for i, p := range sorted {
		parts[i] = vocab.FormatRate(p.Rate) + " " + p.Decision
	}
	return strings.Join(parts, ", ")
}

// probePool is a probe's data pooled over its windows: each window's
// cell and the records of its in-window requests, window by window.
type probePool struct {
	cells []result.TrafficCell
	recs  [][]result.RequestRecord
}

// add pools one window: its cell and the records of its in-window
// requests.
func (pp *probePool) add(c *result.TrafficCell, recs []result.RequestRecord) {
	pp.cells = append(pp.cells, *c)
	pp.recs = append(pp.recs, recs)
}

// outputTPS is the pooled windows' output tokens per second: each
// window's output_tps × its measured seconds (its output tokens; none
// when no request completed) summed, ÷ their measured seconds; 0 when no
// window was pooled.
func (pp *probePool) outputTPS() float64 {
	var tokens, seconds float64
	for i := range pp.cells {
		c := &pp.cells[i]
		if v, ok := c.Metric(metric.OutputTPS); ok && !math.IsNaN(v) {
			tokens += v * c.MeasuredS
		}
		seconds += c.MeasuredS
	}
	if seconds <= 0 {
		return 0
	}
	return measure.Round(tokens/seconds, 3)
}

// data is the pooled data of each metric for package ratesearch
// (docs/method.md#rate-search): goodput_share and goodput_rps a share of
// the launched requests that met the SLO (the windows' own counts),
// a latency statistic a quantile of the requests' own latencies (a
// request without one, unfinished or failed, counts as slowest: +Inf),
// each with its counts window by window, from whose spread the bounds
// estimate how far the requests are from independent; every other
// metric exact, the mean of the windows' values.
func (pp *probePool) data(metrics []string) []ratesearch.Data {
	var good, launched int
	var measuredS float64
	var wins []ratesearch.Window
	for _, c := range pp.cells {
		g := int(math.Round(c.GoodputShare * float64(c.Launched)))
		wins = append(wins, ratesearch.Window{K: g, N: c.Launched})
		good += g
		launched += c.Launched
		measuredS += c.MeasuredS
	}
	var out []ratesearch.Data
	for _, name := range metrics {
		d := ratesearch.Data{Metric: name}
		switch base, q, ok := quantileOf(name); {
		case name == metric.GoodputShare:
			d.Kind, d.K, d.N, d.Windows = ratesearch.Share, good, launched, slices.Clone(wins)
		case name == metric.GoodputRPS && measuredS > 0:
			d.Kind, d.K, d.N, d.Scale, d.Windows = ratesearch.Share, good, launched, float64(launched)/measuredS, slices.Clone(wins)
		case ok:
			d.Kind, d.Q = ratesearch.Quantile, q
			for _, recs := range pp.recs {
				xs := samplesOf(recs, base)
				d.Samples = append(d.Samples, xs...)
				d.Windows = append(d.Windows, ratesearch.Window{N: len(xs)})
			}
		default:
			var sum float64
			var n int
			for i := range pp.cells {
				if v, ok := pp.cells[i].Metric(name); ok {
					sum, n = sum+v, n+1
				}
			}
			d.Value = math.NaN()
			if n > 0 {
				d.Value = sum / float64(n)
			}
		}
		out = append(out, d)
	}
	return out
}

// quantileOf says whether traffic metric name is a quantile of a
// per-request latency (ttft_ms, e2e_ms, tbt_ms, tpot_ms: the median; their
// _p90, _p99 and the naming rule's percentiles), with the distribution
// and the quantile (0.5, 0.99): ratesearch.MetricQuantile, which plan's
// check of the windows a percentile needs reads too.
func quantileOf(name string) (base string, q float64, ok bool) {
	return ratesearch.MetricQuantile(name)
}

// samplesOf are the requests' own values of latency base, as the traffic
// cell computes its statistics: TTFT of every request that gave a first
// token, e2e latency and time between tokens of every finished one (TBT
// of those with two tokens or more); a request that did not finish counts
// as slowest (+Inf).
func samplesOf(recs []result.RequestRecord, base string) []float64 {
	var xs []float64
	for _, rec := range recs {
		finished := rec.Status == result.RequestFinished
		switch base {
		case metric.TTFTMs:
			if rec.TTFTMs != nil {
				xs = append(xs, *rec.TTFTMs)
			} else {
				xs = append(xs, math.Inf(1))
			}
		case metric.E2EMs:
			if finished {
				xs = append(xs, rec.E2EMs)
			} else {
				xs = append(xs, math.Inf(1))
			}
		case metric.TBTMs, metric.TPOTMs:
			switch {
			case !finished:
				xs = append(xs, math.Inf(1))
			case rec.TPOTMs != nil:
				xs = append(xs, *rec.TPOTMs)
			}
		}
	}
	return xs
}
