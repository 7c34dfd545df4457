package compare

import (
	"math"
	"slices"
	"strconv"

	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/stats"
	"github.com/slogate/slogate/internal/vocab"
)

// Blocks is the decision of an interleaved comparison of two builds
// (docs/method.md#interleaved): each block is one boot of A and one of B,
// measured back to back in a random order, and a cell's metric is decided
// on the paired differences of the same block, log b − log a of each
// boot's value (the median of its repeats). The block is the unit, so
// whatever a boot fixes (and whatever the machine did during the block)
// is in the differences' spread once, and a change of the machine between
// blocks cancels inside each. The interval is the one-sample
// Hodges–Lehmann estimate of the median difference, the median of the
// Walsh averages (dᵢ + dⱼ) ÷ 2, i ≤ j, with distribution-free bounds read
// from the exact null distribution of Wilcoxon's signed-rank statistic
// (Hodges & Lehmann 1963; Lehmann, Nonparametrics, 1975, ch. 4): exact
// when the differences are symmetric about the true shift, as they are
// when the two boots of a block are exchangeable (the order is drawn).
//
// With Max > Min the design is sequential, as Sequential's: the
// comparison is looked at after Min blocks and, when a cell is not yet
// decided, once more after Max; both looks are at Pocock's level for two
// looks whose statistics correlate √(Min ÷ Max) (Level), so that each
// wrong call errs at most Alpha over both.
type Blocks struct {
	// Min is the blocks of the first look; Max the most blocks (Max ≤
	// Min: a fixed number, one look at Alpha).
	Min, Max int
	// Alpha is the one-sided error level of each wrong call; 0 means
	// DefaultAlpha. Tolerance is the relative change allowed; 0 means
	// DefaultTolerance.
	Alpha, Tolerance float64
	// Inconclusive is what a metric left undecided does to the gate
	// (-inconclusive): fail (an Inconclusive outcome), or pass unless its
	// estimate is beyond the tolerance, as a -baseline cell's.
	Inconclusive InconclusivePolicy
}

// BlockTest is one cell's metric decided on paired blocks.
type BlockTest struct {
	// Shift holds the estimate B ÷ A, its one-sided bounds, the level
	// attained and the Alpha asked; NA and NB are both the blocks, Noise
	// the standard deviation of the differences.
	Shift
	// Blocks are the pairs decided on.
	Blocks int
	// Change is the decision (Shift.Decide): Regressed, Unchanged,
	// Improved, or Inconclusive; Inconclusive too when the blocks cannot
	// attain the level (ok false from Decide: Lower, Upper and Level are
	// then 0).
	Change Change
	// Needed is, for an inconclusive cell, the blocks with which the
	// differences' spread would decide it with power 0.9, were the change
	// what is estimated; 0 when more than MaxRepeatsEstimate.
	Needed int
}

// Level is the one-sided level each look decides at: Alpha with one
// look; with two, Pocock's for their correlation √(Min ÷ Max). 0.0304 for
// 6 and 12 blocks at α = 0.05, 0.0289 for 6 and 16.
func (s Blocks) Level() float64 {
	alpha := s.Alpha
	if alpha == 0 {
		alpha = DefaultAlpha
	}
	if s.Max <= s.Min || s.Min < 1 {
		return alpha
	}
	type key struct {
		min, max int
		alpha    float64
	}
	k := key{s.Min, s.Max, alpha}
	if v, ok := levelCache.Load(k); ok {
		return v.(float64)
	}
	l := 1 - stats.NormalCDF(pocockBound(math.Sqrt(float64(s.Min)/float64(s.Max)), alpha))
	levelCache.Store(k, l)
	return l
}

// Decide decides one metric of a cell on paired values, a[i] and b[i]
// measured in block i, at the design's Level. ok is false when a value is
// not a positive finite number (no log) or the pairs cannot attain the
// level (fewer than 5 at 0.05): the BlockTest is then Inconclusive, with
// the estimate when there is one.
func (s Blocks) Decide(a, b []float64, higherIsBetter bool) (t BlockTest, ok bool) {
	tol := s.Tolerance
	if tol == 0 {
		tol = DefaultTolerance
	}
	level := s.Level()
	t.Change, t.Blocks = Inconclusive, min(len(a), len(b))
	if t.Blocks == 0 || !positive(a[:t.Blocks]) || !positive(b[:t.Blocks]) {
		return t, false
	}
	d := make([]float64, t.Blocks)
	for i := range d {
		d[i] = math.Log(b[i]) - math.Log(a[i])
	}
	w := walsh(d)
	n := len(w)
	med := w[n/2]
	if n%2 == 0 {
		med = (w[n/2-1] + w[n/2]) / 2
	}
	t.Shift = Shift{Ratio: math.Exp(med), Alpha: level, NA: t.Blocks, NB: t.Blocks, Noise: pooledSD(d, nil)}
	if math.IsNaN(t.Noise) {
		t.Noise = 0 // one block: no spread (results' JSON has no NaN)
	}
	k, attained, attains := signedRankOrder(t.Blocks, level)
	if !attains {
		return t, false // Lower, Upper and Level 0: no interval
	}
	t.Lower, t.Upper, t.Level = math.Exp(w[k-1]), math.Exp(w[n-k]), attained
	t.Change = t.Shift.Decide(tol, higherIsBetter)
	if t.Change == Inconclusive && t.Noise > 0 {
		worse, _ := boundary(tol, higherIsBetter)
		t.Needed = blocksToDecide(t.Noise, math.Abs(math.Log(t.Ratio)-math.Log(worse)), level)
	}
	return t, true
}

// walsh are the Walsh averages (dᵢ + dⱼ) ÷ 2, i ≤ j, sorted.
func walsh(d []float64) []float64 {
	out := make([]float64, 0, len(d)*(len(d)+1)/2)
	for i := range d {
		for j := i; j < len(d); j++ {
			out = append(out, (d[i]+d[j])/2)
		}
	}
	slices.Sort(out)
	return out
}

// signedRankOrder is, for n pairs, the order k (1-based) of the Walsh
// average that bounds the shift one-sidedly at the largest level at or
// below alpha that the exact distribution of Wilcoxon's signed-rank
// statistic W attains: P(W ≤ k−1) = level ≤ alpha. ok is false when even
// k = 1 (level 2⁻ⁿ) is above alpha: fewer than 5 pairs at 0.05.
func signedRankOrder(n int, alpha float64) (k int, level float64, ok bool) {
	if n < 1 || n > 1000 {
		return 0, 0, false
	}
	// counts[w] is the number of subsets of the ranks 1…n summing to w.
	total := n * (n + 1) / 2
	counts := make([]float64, total+1)
	counts[0] = 1
	for r := 1; r <= n; r++ {
		for w := total; w >= r; w-- {
			counts[w] += counts[w-r]
		}
	}
	all := math.Pow(2, float64(n))
	lim := alpha * (1 + 1e-9)
	cdf := 0.0
	for w := 0; w <= total; w++ {
		next := cdf + counts[w]/all
		if next > lim {
			if w == 0 {
				return 0, 0, false
			}
			return w, cdf, true
		}
		cdf = next
	}
	return total, cdf, true
}

// blocksToDecide is the fewest blocks whose differences, of standard
// deviation sd, put the one-sided bound at level within distance of the
// estimate with power 0.9: the normal approximation of the one-sample
// Hodges–Lehmann estimate, of standard error sd × √(π/3 ÷ n). 0 when more
// than MaxRepeatsEstimate.
func blocksToDecide(sd, distance, level float64) int {
	z := stats.NormalQuantile(1-level) + stats.NormalQuantile(DecisionPower)
	for n := 5; n <= MaxRepeatsEstimate; n++ {
		if z*sd*math.Sqrt(math.Pi/3/float64(n)) <= distance {
			return n
		}
	}
	return 0
}

// BlocksNeeded is the fewest blocks that can attain alpha (5 at 0.05, 6
// at Pocock's 0.029 of 6 and 16 blocks); 0 beyond 1000.
func BlocksNeeded(alpha float64) int {
	for n := 1; n <= 1000; n++ {
		if _, _, ok := signedRankOrder(n, alpha); ok {
			return n
		}
	}
	return 0
}

// Samples decides two independent samples as a stored baseline is
// compared with a run (Build's Hodges–Lehmann interval at alpha): for
// setting the interleaved design beside it (its simulation, the docs'
// table). ok is false when the sizes cannot attain alpha.
func Samples(a, b []float64, higherIsBetter bool, tolerance, alpha float64) (Test, Change, bool) {
	return testCell(a, b, higherIsBetter, tolerance, alpha)
}

// PlannedSettings are the settings in which two builds about to be
// measured differ (window, max_output, endpoint, repeat, simulated or
// real, engine): Settings' check before any server starts, for an
// interleaved comparison, which refuses every difference but the build.
func PlannedSettings(a, b Planned) []Difference {
	out := settingsDiff(plannedSettings(a), plannedSettings(b))
	return append(out, changed("repeat", repeatText(a), repeatText(b))...)
}

// plannedSettings are p's settings with the repeat left to
// PlannedSettings (settingsDiff compares no counts when a side is
// "auto").
func plannedSettings(p Planned) settings {
	m := result.Measure{Duration: p.Window.String(), DurationS: p.Window.Seconds(), MaxOutput: p.MaxOutput,
		Endpoint: p.Endpoint, RepeatAuto: true}
	return settings{measure: m, simulated: p.Simulated, engine: (&result.Server{Engine: p.Engine}).EngineName()}
}

// repeatText is measure.repeat as written: "3", or "auto (max 20)".
func repeatText(p Planned) string {
	if p.RepeatAuto {
		return "auto (max " + strconv.Itoa(p.MaxRepeat) + ")"
	}
	return strconv.Itoa(max(p.Repeat, 1))
}

// Changed is the one difference of a setting from a to b, or none when
// they are equal: for the differences a caller finds itself (the cells
// of two plans).
func Changed(setting, a, b string) []Difference { return changed(setting, a, b) }

// LeftBlock is a block left out of a cell's pairs
// (docs/method.md#interleaved): the block, the side whose boot gave no
// value to pair, and why, as a rule with the figures it read.
type LeftBlock struct {
	Block int      `json:"block"`
	Side  string   `json:"side"`
	Rule  LeftRule `json:"rule"`
	// Status and Reason are the cell's in that boot (LeftNotMeasured).
	Status vocab.Status `json:"status,omitempty"`
	Reason string       `json:"reason,omitempty"`
	// Rate is the rate the client could not drive (LeftClientLimit) or the
	// lowest rate decided failed (LeftNoRate), in req/s.
	Rate float64 `json:"rate,omitempty"`
}

// LeftRule names why a block was left out of a cell's pairs.
type LeftRule string

// The rules of LeftBlock.
const (
	// LeftNotMeasured: the boot measured the cell without numbers (over
	// capacity, unmeasurable): Status and Reason say how.
	LeftNotMeasured LeftRule = "not_measured"
	// LeftClientLimit: the client could not drive Rate, within the search
	// answer's bounds.
	LeftClientLimit LeftRule = "client_limit"
	// LeftNoRate: the search met its objective at no rate, Rate the lowest
	// decided failed.
	LeftNoRate LeftRule = "no_rate"
	// LeftUndecided: no probe of the search was decided to meet the
	// objective with confidence.
	LeftUndecided LeftRule = "undecided"
)

// BlockCell is one cell of an interleaved comparison, or one rate
// search's answer: each gated metric decided on its paired blocks.
type BlockCell struct {
	Ref vocab.CellRef
	// Search names the rate search whose capacity answer the cell is
	// (its one metric the answer's rate); "" for a cell.
	Search  string
	Metrics []BlockMetric
	// Error is why a boot errored on the cell ("" when none did): the
	// cell is then an Error, never decided.
	Error string
	// Left are the blocks left out of the pairs, each with why: a boot
	// measured the cell without numbers (over capacity, unmeasurable), or
	// its search's answer was not one to pair.
	Left []LeftBlock
	// Lost says where B ran over capacity a cell A measured ("" when it
	// did not): lost capacity, the cell a Fail, as a -baseline comparison
	// calls it.
	Lost string
	// Outcome is the worst of its metrics' (Error when Error is set).
	Outcome vocab.Outcome
}

// Name is the cell's name below the server: its Ref's, or
// "search/NAME" for a search's answer.
func (c BlockCell) Name() string {
	if c.Search != "" {
		return vocab.KindSearch + "/" + c.Search
	}
	return c.Ref.Name()
}

// BlockMetric is one metric of a BlockCell.
type BlockMetric struct {
	Metric metric.Metric
	// A and B are each block's boot value (the median of its repeats),
	// block by block.
	A, B []float64
	// ValueA and ValueB are the medians of A and B: what the lines show
	// beside the estimate of the change.
	ValueA, ValueB float64
	Test           BlockTest
	// Outcome is Fail when regressed, Inconclusive when not decided, else
	// Pass.
	Outcome vocab.Outcome
}

// DecideCell decides every metric of a cell measured in each block (a[m]
// and b[m] the blocks' values of metric m), at the design's level.
func (s Blocks) DecideCell(ref vocab.CellRef, metrics []metric.Metric, a, b map[string][]float64) BlockCell {
	c := BlockCell{Ref: ref}
	for _, m := range metrics {
		t, _ := s.Decide(a[m.Name], b[m.Name], m.HigherIsBetter)
		bm := BlockMetric{Metric: m, A: a[m.Name], B: b[m.Name], ValueA: median(a[m.Name]), ValueB: median(b[m.Name]), Test: t, Outcome: vocab.Pass}
		switch t.Change {
		case Regressed:
			bm.Outcome = vocab.Fail
		case Inconclusive:
			bm.Outcome = s.inconclusive(t, m.HigherIsBetter)
		}
		c.Outcome = vocab.Worst(c.Outcome, bm.Outcome)
		c.Metrics = append(c.Metrics, bm)
	}
	return c
}

// inconclusive is the outcome of an undecided metric under the design's
// policy (cellOutcome's rule for a -baseline cell).
func (s Blocks) inconclusive(t BlockTest, higherIsBetter bool) vocab.Outcome {
	switch {
	case s.Inconclusive == InconclusiveFail, t.Blocks == 0 || t.Ratio == 0:
		// No block paired, no estimate: nothing measured the change, so
		// no policy passes it (an unmeasurable cell is never a Pass,
		// docs/method.md#unmeasurable).
		return vocab.Inconclusive
	case t.EstimateBeyond(s.Tolerance, higherIsBetter):
		return vocab.Fail
	}
	return vocab.Pass
}

// EstimateBeyond reports whether the estimated change is beyond the
// tolerance (0: DefaultTolerance) on the worse side; false when the
// blocks gave no estimate.
func (t BlockTest) EstimateBeyond(tolerance float64, higherIsBetter bool) bool {
	if t.Ratio == 0 {
		return false
	}
	if tolerance == 0 {
		tolerance = DefaultTolerance
	}
	worse, _ := boundary(tolerance, higherIsBetter)
	if higherIsBetter {
		return t.Ratio < worse
	}
	return t.Ratio > worse
}

// Decided reports whether the cell is done: a metric regressed (the cell
// fails whatever the others say), every metric decided whatever the
// policy makes of an undecided one, or the cell errored or lost capacity.
// An interleaved run adds no block for it.
func (c BlockCell) Decided() bool {
	if c.Error != "" || c.Lost != "" {
		return true
	}
	undecided := false
	for _, m := range c.Metrics {
		switch m.Test.Change {
		case Regressed:
			return true
		case Inconclusive:
			undecided = true
		}
	}
	return !undecided
}

// median is stats.Median of xs; 0 when empty, as results.json writes a
// value no block gave.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return stats.Median(xs)
}
