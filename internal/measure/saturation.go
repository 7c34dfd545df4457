package measure

import (
	"math"
	"time"

	"github.com/slogate/slogate/internal/result"
)

// This file is the over-saturation rule of an open-loop traffic cell
// (docs/method.md#saturation): a queue seen growing steadily from the
// cell's first poll, over at least the traffic block's saturation_after,
// stops the cell early as saturated, the rest of its window saved.

// The thresholds of the saturation rule. A server past its capacity μ
// takes arrivals at λ and finishes them at μ: its queue grows at λ − μ,
// a share 1 − μ/λ of the arrivals. A server below capacity has a queue
// that comes and goes around a mean; its slope over a few seconds is
// noise, on either side of zero. The simulations of saturation_test.go
// measure both error rates of these values: a cell at 3× capacity stops
// at its first check, one at 0.8× in fewer than 1 % of cells.
const (
	// saturationGrowthShare is the least share of the arrivals that must
	// pile up (the queue's slope over the rate) for the queue to be
	// growing: a load of 1 / (1 − 0.25) ≈ 1.33× capacity or more.
	saturationGrowthShare = 0.25
	// saturationMinRise is the least growth, in requests, over the span
	// checked: at a low rate a quarter of the arrivals is a request or
	// two, which a stable queue's noise makes, and over the short spans
	// of short windows a Poisson burst at a mild overload rose by 8 on
	// llama.cpp (a CI rehearsal: 3 req/s against about 2.3, a 2 s probe)
	// where 4 was the bar. A queue past capacity that a probe should
	// stop rises by tens (60 req/s against 20: 38 in 1 s).
	saturationMinRise = 10
	// saturationZ is how many standard deviations of the span's arrival
	// count (√(rate × span), Poisson) the rise must reach: a stable
	// queue's swings are made of its arrivals' and its departures'.
	saturationZ = 3
	// saturationMinFit is the least share of the waiting gauge's variance
	// over the span that its line must explain (R²): a queue that grows,
	// not one burst that happens to end the span high.
	saturationMinFit = 0.5
	// saturationMinPolls is the fewest polls a span must hold to be
	// checked.
	saturationMinPolls = 10
	// DefaultSaturationAfter is how long a queue must grow before a cell
	// stops as saturated when its traffic block sets no saturation_after
	// (capped at a fifth of the window, at least minSaturationAfter).
	DefaultSaturationAfter = 5 * time.Second
	// minSaturationAfter is the shortest default span: fewer seconds hold
	// too few arrivals to tell a growing queue from a burst.
	minSaturationAfter = time.Second
)

// SaturationAfter is the span over which a traffic cell's queue is checked
// for growth given the block's saturation_after (0: not set) over a window
// of duration: the setting, else DefaultSaturationAfter capped at a fifth
// of the window, at least minSaturationAfter.
func SaturationAfter(set, window time.Duration) time.Duration {
	if set > 0 {
		return set
	}
	return max(minSaturationAfter, min(DefaultSaturationAfter, window/5))
}

// queueSample is one poll's queue: the server's requests waiting for
// capacity (gauges: read) and the client's requests outstanding.
type queueSample struct {
	at          time.Duration
	gauges      bool
	waiting     float64
	outstanding float64
}

// saturationRule checks a cell's queue for growth over all its polls,
// once they span at least span, at an arrival rate (requests per second).
type saturationRule struct {
	span time.Duration
	rate float64
}

// saturationEvidence is what the rule read over the span it checked: the
// slopes (requests per second) of the server's waiting gauge (when every
// poll read it; else of the outstanding requests again) and of the
// client's outstanding requests, each at the span's first and last poll,
// the fit (R²) of the waiting line and the span's length.
type saturationEvidence struct {
	gauges                           bool
	slope, fit                       float64
	waitingStart, waitingEnd         float64
	outstandingSlope                 float64
	outstandingStart, outstandingEnd float64
	observed                         time.Duration
}

// queueTrend is a cell's queue samples so far, kept as running sums so
// that the rule checks each poll in constant time: refitted from every
// sample, a cell polled every 50 ms costs the square of its polls (a
// 40 s cell's 800 polls, 320,000 steps each line).
type queueTrend struct {
	n           int
	first, last queueSample
	gauges      bool    // a sample read the server's waiting gauge
	lastWaiting float64 // the gauge's last reading
	// sx and sxx are the sums of the samples' times (s, from the first)
	// and of their squares; waiting and outstanding each line's sums.
	sx, sxx              float64
	waiting, outstanding lineSums
}

// lineSums are the sums a least-squares line of y over time needs.
type lineSums struct{ sy, sxy, syy float64 }

// add takes the next sample, in time order. A poll that did not read
// the server's waiting gauge (a scrape that failed or timed out) holds
// the last reading, so that one lost scrape does not blind the rule.
func (q *queueTrend) add(s queueSample) {
	switch {
	case s.gauges:
		q.gauges, q.lastWaiting = true, s.waiting
	case q.gauges:
		s.waiting = q.lastWaiting
	}
	if q.n == 0 {
		q.first = s
	}
	q.n++
	q.last = s
	x := (s.at - q.first.at).Seconds()
	q.sx += x
	q.sxx += x * x
	for _, l := range []struct {
		sums *lineSums
		y    float64
	}{{&q.waiting, s.waiting}, {&q.outstanding, s.outstanding}} {
		l.sums.sy += l.y
		l.sums.sxy += x * l.y
		l.sums.syy += l.y * l.y
	}
}

// check reports whether the queue (its samples in time order, from the
// cell's start: its warm-up's polls are evidence too) grew over them: at
// least the rule's span observed since the first sample, the server's
// waiting gauge rising at saturationGrowthShare of the rate or more, by
// saturationMinRise requests or more and by saturationZ standard
// deviations of the arrival count over that time, its line explaining
// saturationMinFit of its variance, and the client's requests
// outstanding rising as fast. Never without the server's gauge: the
// client's outstanding requests alone climb on any stable server until
// its first requests end (a queue of requests longer than the span
// reads as growing), so they only confirm. Fewer than
// saturationMinPolls polls are not checked.
func (r saturationRule) check(q *queueTrend) (saturationEvidence, bool) {
	var ev saturationEvidence
	if r.rate <= 0 || r.span <= 0 || q.n < saturationMinPolls || !q.gauges {
		return ev, false
	}
	ev.observed = q.last.at - q.first.at
	if ev.observed < r.span {
		return ev, false
	}
	ev.gauges = true
	ev.outstandingSlope, _ = q.line(q.outstanding)
	ev.outstandingStart, ev.outstandingEnd = q.first.outstanding, q.last.outstanding
	grows := func(slope, start, end float64) bool {
		rise, arrivals := slope*ev.observed.Seconds(), r.rate*ev.observed.Seconds()
		return slope >= saturationGrowthShare*r.rate && rise >= saturationMinRise && rise >= saturationZ*math.Sqrt(arrivals) && end > start
	}
	if !grows(ev.outstandingSlope, ev.outstandingStart, ev.outstandingEnd) {
		return ev, false
	}
	ev.slope, ev.fit = q.line(q.waiting)
	ev.waitingStart, ev.waitingEnd = q.first.waiting, q.last.waiting
	return ev, grows(ev.slope, ev.waitingStart, ev.waitingEnd) && ev.fit >= saturationMinFit
}

// line fits the line of l over the samples' times by least squares: its
// slope per second and R² (0 when y does not vary: a spread below
// float64's rounding of its sums is none).
func (q *queueTrend) line(l lineSums) (slope, fit float64) {
	n := float64(q.n)
	sxx := q.sxx - q.sx*q.sx/n
	sxy := l.sxy - q.sx*l.sy/n
	syy := l.syy - l.sy*l.sy/n
	if sxx <= 0 {
		return 0, 0
	}
	slope = sxy / sxx
	if syy > 1e-9*max(1, l.syy) {
		fit = min(1, sxy*sxy/(sxx*syy))
	}
	return slope, fit
}

// reason is the saturated cell's reason: the evidence's figures and the
// window it saved (the window's length less what it ran).
func (ev saturationEvidence) reason(span, window, ran time.Duration, rate float64) result.CellReason {
	figures := map[string]float64{
		result.FigSlopePerS:        Round(ev.slope, 3),
		result.FigFit:              Round(ev.fit, 3),
		result.FigOutstandingStart: Round(ev.outstandingStart, 1),
		result.FigOutstandingEnd:   Round(ev.outstandingEnd, 1),
		result.FigObservedS:        Round(ev.observed.Seconds(), 2),
		result.FigSaturationAfterS: Round(span.Seconds(), 2),
		result.FigWindowS:          Round(window.Seconds(), 2),
		result.FigSavedS:           Round(max(0, window-ran).Seconds(), 2),
		result.FigRate:             rate,
	}
	if ev.gauges {
		figures[result.FigWaitingStart], figures[result.FigWaitingEnd] = Round(ev.waitingStart, 1), Round(ev.waitingEnd, 1)
	}
	return result.CellReason{Code: result.ReasonSaturated, Figures: figures}
}
