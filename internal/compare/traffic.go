package compare

import (
	"fmt"
	"hash/fnv"
	"math"
	"strconv"
	"strings"

	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/ratesearch"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/vocab"
)

// trafficMetric is a metric a traffic comparison sets side by side, and
// the statistic of the requests that decides it (decided false: shown,
// never a verdict).
type trafficMetric struct {
	name    string
	stat    trafficStat
	decided bool
}

// trafficMetrics are what a traffic comparison sets side by side: the rate
// the server kept up (shown: an open loop's is its schedule's), the
// requests it refused at admission (shown, where either side has some:
// goodput counts what they cost), and what
// decides the cell: the rate and share of requests meeting the SLO, and
// the median and p99 of the latencies a team's SLO is written in.
var trafficMetrics = []trafficMetric{
	{name: metric.AchievedRPS},
	{name: metric.Rejected}, // where either side refused some (docs/method.md#rejections)
	{name: metric.GoodputRPS, stat: trafficStat{Kind: statMet}, decided: true},
	{name: metric.GoodputShare, stat: trafficStat{Kind: statMet}, decided: true},
	{name: metric.TTFTMs, stat: trafficStat{Kind: statTTFT, P: 0.5}, decided: true},
	{name: metric.TTFTMsP99, stat: trafficStat{Kind: statTTFT, P: 0.99}, decided: true},
	{name: metric.TBTMs, stat: trafficStat{Kind: statTBT, P: 0.5}, decided: true},
	{name: metric.TBTMsP99, stat: trafficStat{Kind: statTBT, P: 0.99}, decided: true},
	{name: metric.E2EMs, stat: trafficStat{Kind: statE2E, P: 0.5}, decided: true},
	{name: metric.E2EMsP99, stat: trafficStat{Kind: statE2E, P: 0.99}, decided: true},
	// Where either cell streamed reasoning, the other's TTFO its TTFT
	// (docs/method.md#reasoning).
	{name: metric.TTFOMs, stat: trafficStat{Kind: statTTFO, P: 0.5}, decided: true},
	{name: metric.TTFOMsP99, stat: trafficStat{Kind: statTTFO, P: 0.99}, decided: true},
}

// TrafficMode is how a traffic pair's requests were compared
// (docs/method.md#comparing-traffic).
type TrafficMode int

// Modes.
const (
	// TrafficNone: nothing was compared (a side has no measured cell).
	TrafficNone TrafficMode = iota
	// TrafficPaired: both sides sent one schedule (the same
	// Schedule.Hash): each window request of the baseline is compared with
	// this run's request of the same index and turn, by a bootstrap of the
	// pairs.
	TrafficPaired
	// TrafficUnpaired: both sides have their requests, but not one
	// schedule to pair them by: a bootstrap of two independent samples.
	TrafficUnpaired
	// TrafficValues: a side has no per-request records: the tolerance
	// rule on the cells' values alone, not statistical.
	TrafficValues
)

var trafficModeNames = [...]string{"none", "paired", "unpaired", "values"}

// String is the mode as a word: "paired", "unpaired", "values", "none".
func (m TrafficMode) String() string {
	if m < 0 || int(m) >= len(trafficModeNames) {
		return fmt.Sprintf("mode(%d)", int(m))
	}
	return trafficModeNames[m]
}

// TrafficPair is one traffic key's cells compared: each metric's values,
// change and, for the decided ones, the decision (docs/method.md#comparing-traffic).
type TrafficPair struct {
	Ref vocab.CellRef
	// A and B are the cells; nil when that run has no such cell.
	A, B *result.TrafficCell
	// Values are the metrics compared, in trafficMetrics' order; the
	// latencies only when both sides completed a request (Latencies).
	Values    []TrafficValue
	Latencies bool
	// SentDiffers: the cells sent a different named workload or prompt
	// form.
	SentDiffers bool
	// Unlike names what differs between the two cells' schedules
	// (Schedule.Differences) when both recorded one: their requests are
	// not the same, so they are not paired, and without
	// -allow-settings-change the comparison is refused (Build).
	Unlike []string
	// SLO names the per-request limits that differ between the cells'
	// SLOs ("ttft_ms 300 → 500"): each side's goodput is judged by its own.
	SLO []string
	// Mode is how the requests were compared; Note why not paired, when
	// they were not ("" when paired).
	Mode TrafficMode
	Note string
	// Requests are the baseline's window requests compared (paired: each
	// with this run's of its index and turn); Missing, paired, those of
	// the baseline's window whose index and turn are not in this run's
	// window (a conversation's later turn sent after it closed), left out;
	// unpaired, RequestsB are this run's window requests.
	Requests, Missing, RequestsB int
	// Decided is the pair's outcome from the decisions alone: Skip when
	// the baseline did not measure it, Error when B errored, Fail when B
	// lost it, else the worst of its decided metrics'. Outcome is what it
	// does to the gate: Decided, but a Fail or Inconclusive passes when
	// the engines differ.
	Decided, Outcome vocab.Outcome
	// Confounded: the machines differ the way that could make Decided
	// (CellResult.Confounded), so Outcome is Inconclusive.
	Confounded bool
}

// Check is the pair's verdict against the baseline: its Outcome, the
// infrastructure's when this run's cell errored.
func (tp *TrafficPair) Check() Check {
	return Check{Outcome: tp.Outcome, Infra: tp.Decided == vocab.Error}
}

// Measured reports whether both sides have a measured cell (Values are set).
func (p *TrafficPair) Measured() bool {
	return p.A != nil && p.B != nil && p.A.Status.Measured() && p.B.Status.Measured()
}

// InformsOnly reports whether the engine rule turned the pair's Fail or
// Inconclusive into a Pass.
func (p *TrafficPair) InformsOnly() bool { return p.Outcome != p.Decided && !p.Confounded }

// TrafficValue is one metric of a traffic pair.
type TrafficValue struct {
	Metric metric.Metric
	// A and B are the metric on each side: the statistic over the
	// requests compared when Bounded, else the cells' values.
	A, B float64
	// Delta is (B − A) ÷ A (with Bounded, the estimated ratio − 1); NaN
	// when A is 0.
	Delta float64
	// Decided: the metric gates (every one but achieved_rps); Change and
	// Outcome are its decision.
	Decided bool
	Change  Change
	Outcome vocab.Outcome
	// Bounded: a bootstrap of Requests decided it, and Lower and Upper are
	// the one-sided (1 − α) bounds of B ÷ A; else the tolerance rule did.
	Bounded      bool
	Lower, Upper float64
	// Needed is, for an inconclusive Bounded metric, about how many
	// requests a side would decide it were the change what is estimated:
	// the interval narrows as 1/√n until it clears the tolerance's edge;
	// 0 when more than MaxRequestsEstimate times those compared.
	Needed int
	// From and Need: a percentile from fewer requests a side (From) than
	// its order statistics can bound at the comparison's α (Need,
	// ratesearch.QuantileSamples) is undecidable: Change is Inconclusive
	// whatever its bounds say, and it never fails
	// (docs/method.md#undecidable-percentiles). Both 0 otherwise.
	From, Need int
}

// Undecidable reports whether the metric is a percentile of too few
// requests to decide (From, Need).
func (v *TrafficValue) Undecidable() bool { return v.Need > 0 }

// MaxRequestsEstimate bounds TrafficValue.Needed, in multiples of the
// requests compared: beyond it the estimate says "far more".
const MaxRequestsEstimate = 100

// requestsToDecide is the requests a side with which an interval of
// bounds [lower, upper] of a ratio estimated at est over n requests would
// clear the edge, the width falling as 1/√n; 0 beyond
// MaxRequestsEstimate × n or with the estimate at the edge.
func requestsToDecide(n int, est, lower, upper, edge float64) int {
	half := (math.Log(upper) - math.Log(lower)) / 2
	d := math.Abs(math.Log(est) - math.Log(edge))
	if !(d > 0) || math.IsInf(half, 0) || math.IsNaN(half) {
		return 0
	}
	need := math.Ceil(float64(n) * (half / d) * (half / d))
	if need > MaxRequestsEstimate*float64(n) {
		return 0
	}
	return int(need)
}

// EstimateBeyond reports whether the estimated change is beyond the
// tolerance on the worse side (an inconclusive one fails even with
// -inconclusive pass).
func (v *TrafficValue) EstimateBeyond(tolerance float64) bool {
	if math.IsNaN(v.Delta) {
		return false
	}
	worse, _ := boundary(tolerance, v.Metric.HigherIsBetter)
	if v.Metric.HigherIsBetter {
		return 1+v.Delta < worse
	}
	return 1+v.Delta > worse
}

// Traffic compares the traffic cells of a and b by their key (the traffic
// label, the context when the block has one, and the rate or concurrency:
// vocab.CellRef) under p, one pair per key either run recorded, in a's
// order, then b's new ones; engineChanged turns a pair's Fail or
// Inconclusive into a Pass (docs/method.md#comparing-engines).
func Traffic(a, b *result.Results, p Policy, engineChanged bool) []TrafficPair {
	p = p.Resolved()
	var order []vocab.CellRef
	seen := map[vocab.CellRef]bool{}
	for _, r := range []*result.Results{a, b} {
		for i := range r.Traffic {
			if ref := r.Traffic[i].Ref(); !seen[ref] {
				seen[ref] = true
				order = append(order, ref)
			}
		}
	}
	var out []TrafficPair
	for _, ref := range order {
		ca, _ := a.TrafficCell(ref)
		cb, _ := b.TrafficCell(ref)
		tp := trafficPair(ref, ca, cb, sides{a.RequestsRead, b.RequestsRead}, p)
		tp.Outcome = tp.Decided
		if engineChanged && (tp.Decided == vocab.Fail || tp.Decided == vocab.Inconclusive) {
			tp.Outcome = vocab.Pass
		}
		out = append(out, tp)
	}
	return out
}

// sides says of each run whether its requests.jsonl was read.
type sides [2]bool

// trafficPair compares one key's cells.
func trafficPair(ref vocab.CellRef, a, b *result.TrafficCell, read sides, p Policy) TrafficPair {
	tp := TrafficPair{Ref: ref, A: a, B: b}
	if decided, uncompared := trafficUncompared(a, b); uncompared {
		tp.Decided = decided
		return tp
	}
	tp.SentDiffers = a.Workload != b.Workload || a.Prompts != b.Prompts
	tp.SLO = sloDifferences(a.SLO, b.SLO)
	if a.Schedule != nil && b.Schedule != nil {
		tp.Unlike = a.Schedule.Differences(b.Schedule)
	}
	// A side that completed nothing has no latencies (its zeros are not
	// fast requests): only the rates are compared then.
	tp.Latencies = a.Completed > 0 && b.Completed > 0
	ua, ub, mode, note, missing := trafficUnits(a, b, read, tp.Unlike)
	tp.Mode, tp.Note, tp.Missing = mode, note, missing
	var boot []bootRatio
	var ok []bool
	if mode != TrafficValues {
		tp.Requests = len(ua)
		if mode == TrafficUnpaired {
			tp.RequestsB = len(ub)
		}
		stats := make([]trafficStat, len(trafficMetrics))
		for i, tm := range trafficMetrics {
			stats[i] = tm.stat
		}
		fa, fb := figures(ua), figures(ub)
		if !reasoningCells(a, b) {
			// No TTFO to decide: its column left empty costs no resamples.
			withoutTTFO(fa)
			withoutTTFO(fb)
		}
		boot, ok = bootstrapStats(fa, fb, mode == TrafficPaired, stats, DefaultResamples, p.Alpha, seedOf(ref))
	}
	for i, tm := range trafficMetrics {
		v, compared := trafficValue(tm, a, b, tp.Latencies)
		if !compared {
			continue
		}
		if tm.decided {
			bounded := boot != nil && ok[i]
			var br bootRatio
			if bounded {
				br = boot[i]
			}
			decideTrafficValue(&v, tm, br, bounded, a, b, p)
			tp.Decided = vocab.Worst(tp.Decided, v.Outcome)
		}
		tp.Values = append(tp.Values, v)
	}
	return tp
}

// trafficUncompared is the outcome of a pair whose cells are not
// compared, and true: a baseline that did not run the cell, a cell this
// run lost or failed, or an unmeasurable side; false when both can be
// compared.
func trafficUncompared(a, b *result.TrafficCell) (vocab.Outcome, bool) {
	aRan := a != nil && (a.Status.Measured() || a.Status == vocab.StatusUnmeasurable)
	switch {
	case !aRan:
		return vocab.Skip, true
	case b != nil && b.Status == vocab.StatusError:
		return vocab.Error, true
	case b == nil || !b.Status.Measured() && b.Status != vocab.StatusUnmeasurable:
		// Lost: the baseline kept this traffic, this run did not.
		return vocab.Fail, true
	case a.Status == vocab.StatusUnmeasurable || b.Status == vocab.StatusUnmeasurable:
		// Not compared (docs/method.md#unmeasurable).
		return vocab.Inconclusive, true
	}
	return 0, false
}

// trafficValue is metric tm of both cells side by side, and whether it is
// compared: not when a side lacks it (a TTFO is read as the TTFT on a
// side without reasoning: cellValue), when it is a latency and a side
// completed nothing (latencies false), or when it is quiet and zero on
// both sides.
func trafficValue(tm trafficMetric, a, b *result.TrafficCell, latencies bool) (TrafficValue, bool) {
	m := metric.Must(vocab.PhaseTraffic, tm.name)
	if m.Unit == "ms" && !latencies {
		return TrafficValue{}, false
	}
	va, okA := cellValue(a, b, m)
	vb, okB := cellValue(b, a, m)
	if !okA || !okB || m.Quiet() && va == 0 && vb == 0 {
		return TrafficValue{}, false
	}
	v := TrafficValue{Metric: m, A: va, B: vb, Delta: math.NaN(), Decided: tm.decided}
	if va != 0 {
		v.Delta = (vb - va) / va
	}
	return v, true
}

// decideTrafficValue decides the change of decided metric v (tm) and what
// it does to the gate: by its bootstrap bounds br when bounded, else by
// its two values; a percentile with too few requests behind it is
// inconclusive.
func decideTrafficValue(v *TrafficValue, tm trafficMetric, br bootRatio, bounded bool, a, b *result.TrafficCell, p Policy) {
	m := v.Metric
	if bounded {
		boundTrafficValue(v, tm, br, a, b, p)
	} else {
		v.Change = decide(v.A, v.B, p.Tolerance, m.HigherIsBetter)
	}
	n := min(a.Completed, b.Completed)
	if bounded {
		n = min(br.NA, br.NB)
	}
	if _, q, isQ := ratesearch.MetricQuantile(m.Name); isQ {
		if need := ratesearch.QuantileSamples(q, p.Alpha); n < need {
			v.Change, v.From, v.Need, v.Needed = Inconclusive, n, need, 0
		}
	}
	v.Outcome = trafficOutcome(v, p)
}

// boundTrafficValue sets metric v (tm) from its bootstrap ratio br: the
// statistic on each side, the ratio's bounds and the change they decide,
// and when inconclusive the requests a decision would need.
func boundTrafficValue(v *TrafficValue, tm trafficMetric, br bootRatio, a, b *result.TrafficCell, p Policy) {
	m := v.Metric
	scale := 1.0
	if tm.name == metric.GoodputRPS {
		// The rate meeting the SLO is the share times the
		// requests a second each side compared.
		ra, rb := float64(br.NA)/a.MeasuredS, float64(br.NB)/b.MeasuredS
		scale = rb / ra
		br.A, br.B = br.A*ra, br.B*rb
	}
	v.A, v.B, v.Bounded = br.A, br.B, true
	v.Delta, v.Lower, v.Upper = br.Ratio*scale-1, br.Lower*scale, br.Upper*scale
	v.Change = Shift{Lower: v.Lower, Upper: v.Upper}.Decide(p.Tolerance, m.HigherIsBetter)
	if v.Change == Inconclusive {
		worse, _ := boundary(p.Tolerance, m.HigherIsBetter)
		v.Needed = requestsToDecide(min(br.NA, br.NB), 1+v.Delta, v.Lower, v.Upper, worse)
	}
}

// trafficOutcome is what a decided metric does to the gate: Fail when
// regressed, Inconclusive when inconclusive (a Pass with -inconclusive
// pass, unless its estimate is beyond the tolerance: a Fail), else Pass.
func trafficOutcome(v *TrafficValue, p Policy) vocab.Outcome {
	switch v.Change {
	case Regressed:
		return vocab.Fail
	case Inconclusive:
		switch {
		case p.Inconclusive == InconclusiveFail:
			return vocab.Inconclusive
		case v.Undecidable():
			// Too few requests for the percentile: never a failure.
			return vocab.Pass
		case v.EstimateBeyond(p.Tolerance):
			return vocab.Fail
		}
	}
	return vocab.Pass
}

// unit is one request compared: its record on one side, and the SLO it is
// judged by.
type unit struct {
	rec *result.RequestRecord
	slo *result.TrafficSLO
}

// figures are the units' outcomes as the statistics read them.
func figures(us []unit) []reqFigures {
	out := make([]reqFigures, len(us))
	for i, u := range us {
		r := u.rec
		f := reqFigures{done: r.Status == result.RequestFinished, e2e: r.E2EMs, met: u.slo.Met(r)}
		if r.TTFTMs != nil {
			f.ttft, f.hasTTFT = *r.TTFTMs, true
		}
		if f.done && r.TPOTMs != nil {
			f.tbt, f.hasTBT = *r.TPOTMs, true
		}
		switch {
		case r.TTFOMs != nil:
			f.ttfo, f.hasTTFO = *r.TTFOMs, true
		case r.ReasoningTokens == nil && r.TTFTMs != nil:
			// No reasoning: the first token was the answer's.
			f.ttfo, f.hasTTFO = *r.TTFTMs, true
		}
		out[i] = f
	}
	return out
}

// reasoningCells reports whether either cell measured a TTFO: its stream
// carried reasoning (docs/method.md#reasoning). The other's requests then
// have their TTFT as TTFO (figures), its cell its TTFT (ttfoStandIn).
func reasoningCells(a, b *result.TrafficCell) bool {
	return hasTTFO(a) || hasTTFO(b)
}

// hasTTFO reports whether cell c measured a TTFO.
func hasTTFO(c *result.TrafficCell) bool {
	_, ok := c.Value(metric.Must(vocab.PhaseTraffic, metric.TTFOMs))
	return ok
}

// ttfoStandIn is, for a TTFO metric, the TTFT metric a cell without
// reasoning stands in with: its first token was its answer's.
var ttfoStandIn = map[string]string{metric.TTFOMs: metric.TTFTMs, metric.TTFOMsP99: metric.TTFTMsP99}

// cellValue is metric m of cell c, a TTFO read as the TTFT where c
// streamed no reasoning and other did.
func cellValue(c, other *result.TrafficCell, m metric.Metric) (float64, bool) {
	if v, ok := c.Value(m); ok {
		return v, true
	}
	if name, ok := ttfoStandIn[m.Name]; ok && hasTTFO(other) {
		return c.Value(metric.Must(vocab.PhaseTraffic, name))
	}
	return 0, false
}

// withoutTTFO drops the requests' TTFOs.
func withoutTTFO(rs []reqFigures) {
	for i := range rs {
		rs[i].hasTTFO = false
	}
}

// key is a traffic request's place in its schedule.
type key struct{ index, turn int }

// trafficUnits chooses how a and b are compared and returns the units:
// paired when both recorded one open-loop schedule and every window
// request of both has its index (ua[i] and ub[i] are the same request: the
// window requests of one index and turn on both sides, missing the
// baseline's others), unpaired when both
// have window requests but cannot be paired, values only when a side has
// none (note says why). Each side's requests meet its own cell's SLO.
func trafficUnits(a, b *result.TrafficCell, read sides, unlike []string) (ua, ub []unit, mode TrafficMode, note string, missing int) {
	wa, ia := windowRequests(a)
	wb, ib := windowRequests(b)
	side := func(us []*result.RequestRecord, slo *result.TrafficSLO) []unit {
		out := make([]unit, len(us))
		for i, r := range us {
			out[i] = unit{rec: r, slo: slo}
		}
		return out
	}
	switch {
	case len(wa) == 0 || len(wb) == 0:
		which, was := "the baseline", read[0]
		if len(wa) > 0 {
			which, was = "this run", read[1]
		}
		why := "has no per-request records (no requests.jsonl beside its results.json)"
		if was {
			why = "has none of this cell's window requests in its requests.jsonl"
		}
		return nil, nil, TrafficValues, which + " " + why, 0
	case len(unlike) > 0:
		note = "the schedules differ (" + strings.Join(unlike, "; ") + ")"
	case a.Schedule == nil || b.Schedule == nil:
		which := "the baseline"
		if a.Schedule != nil {
			which = "this run"
		}
		note = which + " recorded no schedule (a run before slogate recorded one)"
	case !ia || !ib:
		which := "the baseline's"
		if ia {
			which = "this run's"
		}
		note = which + " requests have no schedule index"
	case a.Concurrency > 0:
		note = "a closed loop sends a request when a slot frees, not at a planned time, so each window holds other requests"
	}
	if note != "" {
		return side(wa, a.SLO), side(wb, b.SLO), TrafficUnpaired, note, 0
	}
	at := map[key]*result.RequestRecord{}
	for _, r := range wb {
		at[key{*r.Index, r.Turn}] = r
	}
	for _, r := range wa {
		if rb, ok := at[key{*r.Index, r.Turn}]; ok {
			ua, ub = append(ua, unit{rec: r, slo: a.SLO}), append(ub, unit{rec: rb, slo: b.SLO})
		} else {
			missing++
		}
	}
	return ua, ub, TrafficPaired, "", missing
}

// windowRequests are the cell's requests launched in its window, and
// whether each has its schedule index.
func windowRequests(c *result.TrafficCell) (out []*result.RequestRecord, indexed bool) {
	indexed = true
	for i := range c.Requests {
		r := &c.Requests[i]
		if r.InWindow && r.Purpose == "" {
			out = append(out, r)
			indexed = indexed && r.Index != nil
		}
	}
	return out, indexed && len(out) > 0
}

// seedOf is the bootstrap's seed for a cell: its name's hash, so that one
// comparison gives the same bounds every time it is made.
func seedOf(ref vocab.CellRef) uint64 {
	h := fnv.New64a()
	h.Write([]byte(ref.Name()))
	return h.Sum64()
}

// trafficRows are a traffic pair's rows of Record: one per decided metric
// of a measured pair; one goodput_rps row saying lost, errored or not in
// the baseline of a pair without them.
func trafficRows(tp *TrafficPair, alpha float64) []result.ComparisonRow {
	ref := tp.Ref
	base := result.ComparisonRow{Cell: ref.Name(), Phase: ref.Phase, Matrix: ref.Matrix, Context: ref.Context, Concurrency: ref.Concurrency, Outcome: tp.Outcome}
	if tp.A != nil {
		base.BaselineStatus, base.BaselineRepeats = tp.A.Status, 1
	}
	if tp.B != nil {
		base.NowStatus, base.NowRepeats = tp.B.Status, 1
	}
	if !tp.Measured() {
		m := metric.Must(vocab.PhaseTraffic, metric.GoodputRPS)
		r := base
		r.Metric, r.Unit, r.HigherIsBetter = m.Name, m.Unit, m.HigherIsBetter
		switch tp.Decided {
		case vocab.Error:
			r.Decision = Errored.Key()
		case vocab.Inconclusive:
			r.Decision = Unmeasurable.Key()
		case vocab.Fail:
			r.Decision = Lost.Key()
		default:
			r.Decision = OnlyB.Key()
		}
		return []result.ComparisonRow{r}
	}
	var out []result.ComparisonRow
	for _, v := range tp.Values {
		if !v.Decided {
			continue
		}
		r := base
		r.Metric, r.Unit, r.HigherIsBetter = v.Metric.Name, v.Metric.Unit, v.Metric.HigherIsBetter
		r.Baseline, r.Now, r.Decision = ptr(v.A), ptr(v.B), v.Change.Key()
		if !math.IsNaN(v.Delta) {
			r.Change = ptr(v.Delta)
		}
		if v.Bounded {
			r.Lower, r.Upper, r.Confidence = ptr(v.Lower-1), ptr(v.Upper-1), ptr(1-alpha)
		}
		switch {
		case tp.InformsOnly() && (v.Outcome == vocab.Fail || v.Outcome == vocab.Inconclusive):
			r.Outcome = vocab.Pass
		case tp.Confounded && v.Outcome == tp.Decided:
			r.Outcome = vocab.Inconclusive
		default:
			r.Outcome = v.Outcome
		}
		out = append(out, r)
	}
	return out
}

// sloDifferences names the limits of two cells' SLOs that differ, in
// the order ttft_ms, tbt_ms, e2e_ms: "ttft_ms 300 → 500", "tbt_ms none →
// 50".
func sloDifferences(a, b *result.TrafficSLO) []string {
	limits := func(s *result.TrafficSLO) [3]*float64 {
		if s == nil {
			return [3]*float64{}
		}
		return [3]*float64{s.TTFTMs, s.TBTMs, s.E2EMs}
	}
	text := func(v *float64) string {
		if v == nil {
			return "none"
		}
		return strconv.FormatFloat(*v, 'g', -1, 64)
	}
	la, lb := limits(a), limits(b)
	var out []string
	for i, name := range []string{metric.TTFTMs, metric.TBTMs, metric.E2EMs} {
		if x, y := text(la[i]), text(lb[i]); x != y {
			out = append(out, name+" "+x+" → "+y)
		}
	}
	return out
}
