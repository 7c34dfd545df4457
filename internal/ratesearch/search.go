package ratesearch

import (
	"errors"
	"fmt"
	"math"
)

// Defaults of a search's settings (docs/method.md#rate-search).
const (
	// DefaultPrecision is the relative width the bisection stops at: 2.5 %,
	// half the gate's default tolerance of 5 %.
	DefaultPrecision = 0.025
	// DefaultConfidence is the confidence of the capacity's bounds.
	DefaultConfidence = 0.95
	// DefaultMaxWindows is the most windows one probe measures before it
	// is decided at its point estimate.
	DefaultMaxWindows = 4
)

// Outcome is what the runner measured of one probe: the pooled data of its
// windows so far, or why it could not be measured.
type Outcome struct {
	// Data are the metrics the objective reads, pooled over the probe's
	// windows (the requests of every window).
	Data []Data
	// Objective evaluates the search's objective over values of Data's
	// metrics.
	Objective Objective
	// Unmeasurable, when not "", says why the probe could not be measured
	// (the client lagged behind its schedule: a slow client, not a slow
	// server); the search then answers below this rate.
	Unmeasurable string
	// Saturated, when not "", says why the probe's window stopped early
	// past the server's capacity (docs/method.md#saturation): the probe
	// fails, whatever its data.
	Saturated string
}

// ProbeFunc measures a probe at rate (requests per second) through its
// windows-th window (1 for the first, 2 when the first did not decide, …)
// and returns the data of all its windows so far.
type ProbeFunc func(rate float64, windows int) (Outcome, error)

// Probe is one rate the search measured and its decision.
type Probe struct {
	Rate float64
	// Decision is Met, Failed, Undecided (at the cap of windows; Point
	// says which way the search went) or Unmeasurable.
	Decision Decision
	// Point is the objective at the point estimates of the last window:
	// Met or Failed ("" when unmeasurable).
	Point Decision
	// Windows is the number of windows measured.
	Windows int
	// Intervals are the metrics of the last look with their bounds, each
	// one-sided at Alpha.
	Intervals []Interval
	Alpha     float64
	// Reason says why an unmeasurable probe was, or why a saturated one
	// failed.
	Reason string
	// Saturated marks a probe failed because its window stopped early
	// past the server's capacity (Outcome.Saturated).
	Saturated bool
	// ToDecide, for a probe Undecided at MaxWindows, is about how many
	// windows in all would have decided it at the values and spread its
	// windows showed (Settings.WindowsToDecide; MaxToDecide: that many or
	// more); 0 otherwise.
	ToDecide int
}

// MaxToDecide caps Probe.ToDecide: "that many or more".
const MaxToDecide = 10000

// WindowsToDecide is about how many windows in all would decide a probe
// undecided after windows windows of data (Probe.ToDecide), were its
// values and their windows' spread to stay as seen: the fewest W′ at
// which the decision code (Decide), with every metric's bounds counting
// W′ ÷ windows times the requests, its design effect's t factor that of
// W′ windows and the search's error spent over W′ looks a probe rather
// than MaxWindows (LookAlpha: W′ is what max_windows would have to be),
// decides obj. The values will move as windows are added, so it is a
// guide to the order of windows, not a promise
// (docs/method.md#rate-search-precision). 0 when the data decide obj;
// MaxToDecide (that many or more) when not even MaxToDecide windows
// would, the point estimates on the objective's edge, or a metric's spread
// cannot be told (one window).
func (s Settings) WindowsToDecide(data []Data, windows int, obj Objective) int {
	s = s.withDefaults()
	j, err := Decide(data, s.LookAlpha(), obj)
	if err != nil || j.Decision != Undecided {
		return 0
	}
	if windows < 2 {
		return MaxToDecide
	}
	type spreadAt struct {
		sp   spread
		dhat float64
	}
	spreads := make([]spreadAt, len(data))
	for i, d := range data {
		if d.Kind == Exact || d.DesignEffect > 0 {
			continue
		}
		sp, dhat := spreadOf(d)
		if sp == spreadOne {
			return MaxToDecide
		}
		spreads[i] = spreadAt{sp, dhat}
	}
	decides := func(w int) bool {
		at := s
		at.MaxWindows = max(w, s.MaxWindows)
		f := float64(w) / float64(windows)
		deff := func(i int, alpha float64) float64 {
			if d := data[i]; d.DesignEffect > 0 {
				return max(1, d.DesignEffect) / f
			}
			return designEffectAt(spreads[i].sp, spreads[i].dhat, w, alpha) / f
		}
		j, err := decide(data, at.LookAlpha(), obj, deff)
		return err == nil && j.Decision != Undecided
	}
	if !decides(MaxToDecide) {
		return MaxToDecide
	}
	lo, hi := windows, MaxToDecide // undecided at lo, decided at hi
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if decides(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// went is the way the search went at p: Met or Failed (Unmeasurable
// counts as failed: the rate is out of reach).
func (p Probe) went() Decision {
	switch p.Decision {
	case Met, Failed:
		return p.Decision
	case Undecided:
		return p.Point
	}
	return Failed
}

// Answer is a search's result.
type Answer struct {
	// Found is false when even Lo does not meet the objective ("none meets
	// it at lo") or could not be measured; Rate is then 0.
	Found bool
	// Rate is the highest rate judged to meet the objective, every lower
	// probe judged to meet it too.
	Rate float64
	// Lower is the highest rate decided Met with confidence (0 when none):
	// the true capacity is at least Lower, and at most Upper, the lowest
	// rate decided Failed (0 when none: not bounded), both together with
	// probability at least Confidence.
	Lower, Upper float64
	// ClientLimit is the lowest rate the client could not drive (0 when
	// every probe was measurable): the search answers below it.
	ClientLimit float64
	Precision   float64
	Confidence  float64
	// Windows is the number of windows measured over every probe.
	Windows int
	Probes  []Probe
}

// Settings are a search's range and levels; zero fields take the defaults.
type Settings struct {
	Lo, Hi     float64
	Precision  float64
	Confidence float64
	MaxWindows int
	// Judged, when set, is told each look at a probe: the probe as judged
	// so far (its windows, decision, point and intervals; ToDecide on
	// its last look), and whether that look ended it (decided, or
	// undecided at MaxWindows). The runner records a probe from it the
	// moment it is decided, by the search's own judgement.
	Judged func(p Probe, final bool)
}

func (s Settings) withDefaults() Settings {
	if s.Precision == 0 {
		s.Precision = DefaultPrecision
	}
	if s.Confidence == 0 {
		s.Confidence = DefaultConfidence
	}
	if s.MaxWindows == 0 {
		s.MaxWindows = DefaultMaxWindows
	}
	return s
}

// MaxProbes is the most probes a search over s measures: lo, hi and the
// bisection's steps down to the precision.
func (s Settings) MaxProbes() int {
	s = s.withDefaults()
	if s.Hi <= s.Lo*(1+s.Precision) {
		return 2
	}
	steps := math.Ceil(math.Log2(math.Log(s.Hi/s.Lo) / math.Log1p(s.Precision)))
	return 2 + int(steps)
}

// LookAlpha is the one-sided level each look of each probe spends: the
// error 1 − Confidence split evenly (Bonferroni) over the most probes and
// the most windows of each, so that every decision of the search is right
// together with probability at least Confidence, however it stops.
func (s Settings) LookAlpha() float64 {
	s = s.withDefaults()
	return (1 - s.Confidence) / float64(s.MaxProbes()*s.MaxWindows)
}

// Search is the rate search over [lo, hi] to the relative precision with
// the default confidence and windows (Settings.Search).
func Search(lo, hi, precision float64, probe ProbeFunc) (Answer, error) {
	return Settings{Lo: lo, Hi: hi, Precision: precision}.Search(probe)
}

// Search finds the highest rate in [Lo, Hi] meeting the objective
// (docs/method.md#rate-search): Lo first (failing, the search ends: none
// meets it), then Hi (met, the answer is Hi, unbounded above), then the
// geometric midpoint of the bracket (rounded to 3 significant digits, or
// as many as keep it inside) until its ends are within Precision of each
// other. Each probe is measured window after window until decided
// (Decide at LookAlpha), Met or Failed, or MaxWindows reached, when it goes
// by its point estimate, marked Undecided. An unmeasurable probe bounds the
// bracket from above. An error of the probe function ends the search with
// it, the probes so far in the answer.
func (s Settings) Search(probe ProbeFunc) (Answer, error) {
	s = s.withDefaults()
	ans := Answer{Precision: s.Precision, Confidence: s.Confidence}
	if !(s.Lo > 0) || !(s.Hi > s.Lo) {
		return ans, fmt.Errorf("rate range [%g, %g]: want 0 < lo < hi", s.Lo, s.Hi)
	}
	if !(s.Precision > 0 && s.Precision < 1) || !(s.Confidence > 0 && s.Confidence < 1) || s.MaxWindows < 1 {
		return ans, errors.New("precision and confidence must be in (0, 1), windows at least 1")
	}
	alpha := s.LookAlpha()
	measure := func(rate float64) (Probe, error) {
		p := Probe{Rate: rate, Alpha: alpha}
		for w := 1; w <= s.MaxWindows; w++ {
			out, err := probe(rate, w)
			p.Windows = w
			if err != nil {
				return p, err
			}
			if out.Unmeasurable != "" {
				p.Decision, p.Point, p.Reason, p.Intervals = Unmeasurable, "", out.Unmeasurable, nil
				return p, nil
			}
			if out.Saturated != "" {
				// Past the server's capacity: failed, with no interval to
				// look at.
				p.Decision, p.Point, p.Reason, p.Intervals, p.Saturated = Failed, Failed, out.Saturated, nil, true
				if s.Judged != nil {
					s.Judged(p, true)
				}
				return p, nil
			}
			j, err := Decide(out.Data, alpha, out.Objective)
			if err != nil {
				return p, err
			}
			p.Decision, p.Point, p.Intervals, p.Alpha = j.Decision, j.Point, j.Intervals, j.Alpha
			final := j.Decision != Undecided || w == s.MaxWindows
			if j.Decision == Undecided && final {
				p.ToDecide = s.WindowsToDecide(out.Data, w, out.Objective)
			}
			if s.Judged != nil {
				s.Judged(p, final)
			}
			if final {
				return p, nil
			}
		}
		return p, nil
	}
	add := func(p Probe) Decision {
		ans.Probes = append(ans.Probes, p)
		ans.Windows += p.Windows
		if p.Decision == Unmeasurable && (ans.ClientLimit == 0 || p.Rate < ans.ClientLimit) {
			ans.ClientLimit = p.Rate
		}
		return p.went()
	}
	p, err := measure(s.Lo)
	if err != nil {
		add(p)
		return ans, err
	}
	if add(p) != Met {
		ans.bound()
		return ans, nil
	}
	a, b := s.Lo, s.Hi
	p, err = measure(s.Hi)
	if err != nil {
		add(p)
		return ans, err
	}
	if add(p) == Met {
		a = s.Hi
	}
	for a < b && b > a*(1+s.Precision) {
		mid := between(a, b)
		p, err := measure(mid)
		if err != nil {
			add(p)
			return ans, err
		}
		if add(p) == Met {
			a = mid
		} else {
			b = mid
		}
	}
	ans.Found, ans.Rate = true, a
	ans.bound()
	return ans, nil
}

// bound sets Lower and Upper from the probes decided with confidence.
func (a *Answer) bound() {
	for _, p := range a.Probes {
		switch p.Decision {
		case Met:
			if p.Rate > a.Lower && (!a.Found || p.Rate <= a.Rate) {
				a.Lower = p.Rate
			}
		case Failed:
			if a.Upper == 0 || p.Rate < a.Upper {
				a.Upper = p.Rate
			}
		}
	}
}

// between is the geometric midpoint of a and b rounded to the fewest
// significant digits (3 at least) that keep it strictly between them: a
// probe's rate, and so its test's name, reads 21.3, not 21.331668862329266.
func between(a, b float64) float64 {
	mid := math.Sqrt(a * b)
	for digits := 3; digits <= 15; digits++ {
		scale := math.Pow(10, float64(digits)-math.Ceil(math.Log10(mid)))
		r := math.Round(mid*scale) / scale
		if r > a && r < b {
			return r
		}
	}
	return mid
}
