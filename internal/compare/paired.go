package compare

import (
	"math"
	"math/rand/v2"
	"slices"
)

// The statistics of a traffic comparison (docs/method.md#comparing-traffic):
// a bootstrap of the window's requests, paired when both runs sent the same
// schedule (each resample draws requests, and a drawn request brings both
// sides' outcomes of it), two independent samples otherwise.

// DefaultResamples is how many bootstrap resamples decide a traffic cell.
const DefaultResamples = 2000

// MinRequests is the fewest requests a statistic is bootstrapped over; with
// fewer, the tolerance rule decides on the values alone.
const MinRequests = 20

// reqFigures is one request's outcome, as the comparison reads it.
type reqFigures struct {
	// ttft, tbt and e2e are its latencies (ms), each meaningful when its
	// flag is set: hasTTFT when a first chunk came, done when it finished
	// (e2e), hasTBT when it finished with two output tokens or more.
	ttft, tbt, e2e        float64
	hasTTFT, done, hasTBT bool
	// ttfo is its time to the first answer token (ms), meaningful when
	// hasTTFO: an answer came (docs/method.md#reasoning).
	ttfo    float64
	hasTTFO bool
	// met: it finished meeting every limit of the SLO.
	met bool
}

// statKind is what a traffic statistic reads of the requests.
type statKind int

const (
	statTTFT statKind = iota
	statTBT
	statE2E
	statMet // the share (or rate) of requests meeting the SLO
	statTTFO
)

// value is r's figure of kind k, and whether r has it.
func (r reqFigures) value(k statKind) (float64, bool) {
	switch k {
	case statTTFT:
		return r.ttft, r.hasTTFT
	case statTBT:
		return r.tbt, r.hasTBT
	case statE2E:
		return r.e2e, r.done
	case statTTFO:
		return r.ttfo, r.hasTTFO
	}
	if r.met {
		return 1, true
	}
	return 0, true
}

// trafficStat is one statistic compared: a quantile (P in (0, 1)) of a
// latency, or the share meeting the SLO (Kind statMet, P unused).
type trafficStat struct {
	Kind statKind
	P    float64
}

// column is one side's values of a statistic, sorted, each with the unit
// (request or pair) it belongs to, so that a resample's counts weigh it.
type column struct {
	values []float64
	units  []int
}

// newColumn sorts the values of kind k of the units keep admits.
func newColumn(rs []reqFigures, k statKind, keep func(i int) bool) column {
	var idx []int
	for i := range rs {
		if _, ok := rs[i].value(k); ok && keep(i) {
			idx = append(idx, i)
		}
	}
	slices.SortStableFunc(idx, func(x, y int) int {
		vx, _ := rs[x].value(k)
		vy, _ := rs[y].value(k)
		switch {
		case vx < vy:
			return -1
		case vx > vy:
			return 1
		}
		return 0
	})
	c := column{values: make([]float64, len(idx)), units: idx}
	for j, i := range idx {
		c.values[j], _ = rs[i].value(k)
	}
	return c
}

// quantile is the p-quantile of the column with each value counted as
// often as its unit's weight (nil: once), interpolated between order
// statistics as the measured percentiles are (measure's percentile:
// position p·(N − 1)); ok is false when the weights leave no value.
func (c column) quantile(p float64, w []int) (float64, bool) {
	total := 0
	for _, u := range c.units {
		total += weight(w, u)
	}
	if total == 0 {
		return 0, false
	}
	pos := p * float64(total-1)
	lo, hi := int(math.Floor(pos)), int(math.Ceil(pos))
	var vlo, vhi float64
	seen := 0
	found := false
	for j, u := range c.units {
		n := weight(w, u)
		if n == 0 {
			continue
		}
		if !found && lo < seen+n {
			vlo, found = c.values[j], true
		}
		if hi < seen+n {
			vhi = c.values[j]
			break
		}
		seen += n
	}
	return vlo + (vhi-vlo)*(pos-float64(lo)), true
}

// mean is the weighted mean of the column (the share meeting the SLO when
// its values are 0 and 1).
func (c column) mean(w []int) (float64, bool) {
	sum, total := 0.0, 0
	for j, u := range c.units {
		n := weight(w, u)
		sum += float64(n) * c.values[j]
		total += n
	}
	if total == 0 {
		return 0, false
	}
	return sum / float64(total), true
}

func weight(w []int, u int) int {
	if w == nil {
		return 1
	}
	return w[u]
}

// of is the statistic of the column under weights w.
func (s trafficStat) of(c column, w []int) (float64, bool) {
	if s.Kind == statMet {
		return c.mean(w)
	}
	return c.quantile(s.P, w)
}

// bootRatio is one statistic's comparison of B with A by the bootstrap.
type bootRatio struct {
	// A and B are the statistic over each side's requests (with Paired,
	// over the pairs that have it on both sides); Ratio is B ÷ A.
	A, B, Ratio float64
	// Lower and Upper are the α and 1 − α quantiles of the resampled
	// ratios: one-sided (1 − α) bounds of the true B ÷ A.
	Lower, Upper float64
	// NA and NB are the requests the statistic is over on each side.
	NA, NB int
}

// resampler draws the bootstrap's resamples: for paired data one count
// per pair, for independent samples one per request of each side.
type resampler struct {
	rng    *rand.Rand
	paired bool
}

// draw fills wa and wb with one resample's counts (n draws with
// replacement out of n units, a side at a time; wb is wa when paired).
func (r *resampler) draw(wa, wb []int) {
	fill := func(w []int) {
		clear(w)
		for range w {
			w[r.rng.IntN(len(w))]++
		}
	}
	fill(wa)
	if !r.paired {
		fill(wb)
	}
}

// bootstrapStats compares each statistic of b with a's: paired (len(a) ==
// len(b), request i of a is request i of b, and a latency is read over the
// pairs that have it on both sides) or as two independent samples, with
// resamples bootstrap resamples at one-sided level alpha. A statistic
// with fewer than MinRequests requests on a side, or a side without it,
// has ok false.
func bootstrapStats(a, b []reqFigures, paired bool, stats []trafficStat, resamples int, alpha float64, seed uint64) (out []bootRatio, ok []bool) {
	cols := make([][2]column, len(stats))
	for i, s := range stats {
		keepA, keepB := func(int) bool { return true }, func(int) bool { return true }
		if paired {
			// A latency is compared over the requests that have it on
			// both sides; the share over every pair.
			both := func(j int) bool {
				_, x := a[j].value(s.Kind)
				_, y := b[j].value(s.Kind)
				return x && y
			}
			keepA, keepB = both, both
		}
		cols[i] = [2]column{newColumn(a, s.Kind, keepA), newColumn(b, s.Kind, keepB)}
	}
	out, ok = make([]bootRatio, len(stats)), make([]bool, len(stats))
	ratios := make([][]float64, len(stats))
	for i, s := range stats {
		ca, cb := cols[i][0], cols[i][1]
		va, okA := s.of(ca, nil)
		vb, okB := s.of(cb, nil)
		if !okA || !okB || len(ca.units) < MinRequests || len(cb.units) < MinRequests {
			continue
		}
		out[i] = bootRatio{A: va, B: vb, Ratio: ratio(vb, va), NA: len(ca.units), NB: len(cb.units)}
		ok[i] = true
		ratios[i] = make([]float64, 0, resamples)
	}
	rs := resampler{rng: rand.New(rand.NewPCG(seed, 0x5107a7e)), paired: paired}
	wa := make([]int, len(a))
	wb := wa
	if !paired {
		wb = make([]int, len(b))
	}
	for range resamples {
		rs.draw(wa, wb)
		for i, s := range stats {
			if !ok[i] {
				continue
			}
			va, okA := s.of(cols[i][0], wa)
			vb, okB := s.of(cols[i][1], wb)
			if okA && okB {
				ratios[i] = append(ratios[i], ratio(vb, va))
			}
		}
	}
	for i := range stats {
		if !ok[i] {
			continue
		}
		rr := ratios[i]
		slices.Sort(rr)
		n := len(rr)
		lo := int(math.Floor(alpha * float64(n)))
		hi := int(math.Ceil((1-alpha)*float64(n))) - 1
		out[i].Lower, out[i].Upper = rr[min(lo, n-1)], rr[max(hi, 0)]
	}
	return out, ok
}

// ratio is b ÷ a: 1 when both are 0, +Inf when only a is.
func ratio(b, a float64) float64 {
	switch {
	case a == b:
		return 1
	case a == 0:
		return math.Inf(1)
	}
	return b / a
}
