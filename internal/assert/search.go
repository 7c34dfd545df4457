package assert

import (
	"fmt"
	"math"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/result"
	"github.com/slogate/slogate/internal/spec"
	"github.com/slogate/slogate/internal/vocab"
)

// rootSearch is the variable assertions read searches by:
// search["NAME"].concurrency (docs/spec.md#search).
const rootSearch = "search"

// rootCell is the variable a search objective reads its probe's cell by.
const rootCell = "cell"

// searchRead marks the values of a search that has no answer to give: not
// run or stopped by an error (infra: an infrastructure Error, exit 3), or
// run without finding a concurrency that meets the objective (the cell at
// the answer does not exist: the test fails).
type searchRead struct {
	why   result.UnknownRead
	infra bool
	// skip: the figure needs a baseline the run was not given; a test
	// whose every unknown read is such is a Skip.
	skip bool
	// undecided: the figure is unknown because the search's probes were
	// not decided with confidence (docs/method.md#undecided-searches): a
	// test whose unknown reads are all such, or skips, is Inconclusive.
	undecided bool
}

// cellObjectType is the object type of one cell of phase (decode[CTX][CONC]
// or prefill[CTX]): every metric of the phase as a number, plus status. It
// is the type cellObject builds, so the two cannot drift apart.
func cellObjectType(phase vocab.Phase, ps []float64) cty.Type {
	return cellObject(phase, ps, cty.UnknownVal(cty.String), func(metric.Metric) cty.Value { return cty.UnknownVal(cty.Number) }).Type()
}

// cellObject builds the object of one cell of phase: its status (a string)
// and every metric of the phase measured with percentiles ps (the table's
// and the naming rule's statistics), each a number given by value. It is the
// one definition of a cell's type (cellObjectType).
func cellObject(phase vocab.Phase, ps []float64, status cty.Value, value func(metric.Metric) cty.Value) cty.Value {
	attrs := map[string]cty.Value{spec.CellStatusAttribute: status}
	ms := metric.ForCells(phase, ps)
	if phase == vocab.PhaseTraffic {
		ms = append(ms, metric.TurnMetrics()...) // ttft_ms_turn1 …: null without conversations
	}
	for _, m := range ms {
		attrs[m.Name] = value(m)
	}
	return cty.ObjectVal(attrs)
}

// probeObjectType is the type of one element of a concurrency search's
// search["NAME"].probes; rateProbeObjectType of a rate search's.
var (
	probeObjectType     = cty.Object(map[string]cty.Type{"concurrency": cty.Number, "passed": cty.Bool})
	rateProbeObjectType = cty.Object(map[string]cty.Type{"rate": cty.Number, "passed": cty.Bool, "decision": cty.String})
)

// searchObject builds a concurrency search's search["NAME"] from its
// parts; searchObjectType is its type, taken from the same function so the
// two cannot drift apart.
func searchObject(conc, found, monotone, cell, probes cty.Value) cty.Value {
	return cty.ObjectVal(map[string]cty.Value{
		"concurrency": conc, "found": found, "monotone": monotone, "cell": cell, "probes": probes,
	})
}

// rateSearchObject builds a rate search's search["NAME"] from its parts
// (the attributes of spec.RateSearchAttributes).
func rateSearchObject(rate, lower, upper, found, monotone, cell, probes cty.Value) cty.Value {
	return cty.ObjectVal(map[string]cty.Value{
		"rate": rate, "rate_lower": lower, "rate_upper": upper, "found": found, "monotone": monotone, "cell": cell, "probes": probes,
	})
}

func searchObjectType(s *spec.Search, ps []float64) cty.Type {
	u := cty.UnknownVal
	if s.IsRate() {
		return rateSearchObject(u(cty.Number), u(cty.Number), u(cty.Number), u(cty.Bool), u(cty.Bool),
			u(cellObjectType(vocab.PhaseTraffic, ps)), u(cty.List(rateProbeObjectType))).Type()
	}
	return searchObject(u(cty.Number), u(cty.Bool), u(cty.Bool),
		u(cellObjectType(vocab.PhaseDecode, ps)), u(cty.List(probeObjectType))).Type()
}

// unknownSearch is search["NAME"] of s with every attribute unknown,
// marked m (no mark when m is nil: the static scope); its cell has the
// statistics of percentiles ps.
func unknownSearch(s *spec.Search, m *searchRead, ps []float64) cty.Value {
	attrs := map[string]cty.Value{}
	for name, ty := range searchObjectType(s, ps).AttributeTypes() {
		v := cty.UnknownVal(ty)
		if name == "cell" {
			v = cellObject(s.Phase(), ps, cty.UnknownVal(cty.String), func(metric.Metric) cty.Value { return cty.UnknownVal(cty.Number) })
		}
		if m != nil {
			v = markAll(v, *m)
		}
		attrs[name] = v
	}
	return cty.ObjectVal(attrs)
}

// markAll marks v, and each attribute of an object v, with m.
func markAll(v cty.Value, m searchRead) cty.Value {
	if v.Type().IsObjectType() && v.IsKnown() {
		attrs := map[string]cty.Value{}
		for name := range v.Type().AttributeTypes() {
			attrs[name] = v.GetAttr(name).Mark(m)
		}
		return cty.ObjectVal(attrs)
	}
	return v.Mark(m)
}

// probeCell is the object of a measured probe cell (cell.<metric>), with
// the statistics of percentiles ps.
func probeCell(c *result.DecodeCell, ps []float64) cty.Value {
	return cellObject(vocab.PhaseDecode, ps, cty.StringVal(string(c.Status)), func(m metric.Metric) cty.Value {
		if v, ok := c.Metric(m.Name); ok {
			return cty.NumberFloatVal(v)
		}
		return cty.NullVal(cty.Number)
	})
}

// trafficProbeCell is the object of a rate search's probe cell, with the
// statistics of percentiles ps.
func trafficProbeCell(c *result.TrafficCell, ps []float64) cty.Value {
	return cellObject(vocab.PhaseTraffic, ps, cty.StringVal(string(c.Status)), func(m metric.Metric) cty.Value {
		if v, ok := c.Metric(m.Name); ok {
			return cty.NumberFloatVal(v)
		}
		return cty.NullVal(cty.Number)
	})
}

// searchValue is search["NAME"] as res recorded it.
func searchValue(s *spec.Search, res *result.Results, ps []float64) cty.Value {
	r, ok := res.SearchByName(s.Name)
	switch {
	case !ok:
		return unknownSearch(s, &searchRead{why: result.UnknownRead{Rule: result.SearchNotRun, Name: s.Name}, infra: true}, ps)
	case r.StoppedUnmeasurable():
		// The client could not measure a probe (docs/method.md#unmeasurable):
		// undecided, not a server that failed.
		return unknownSearch(s, &searchRead{why: result.UnknownRead{Rule: result.SearchNoAnswer, Name: s.Name, Text: r.Error}, undecided: true}, ps)
	case r.Error != "":
		return unknownSearch(s, &searchRead{why: result.UnknownRead{Rule: result.SearchNoAnswer, Name: s.Name, Text: r.Error}, infra: true}, ps)
	case s.IsRate():
		return rateSearchValue(s, r, ps)
	}
	probes := cty.ListValEmpty(probeObjectType)
	if len(r.Probes) > 0 {
		var ps []cty.Value
		for _, p := range r.Probes {
			ps = append(ps, cty.ObjectVal(map[string]cty.Value{"concurrency": cty.NumberIntVal(int64(p.Concurrency)), "passed": cty.BoolVal(p.Passed)}))
		}
		probes = cty.ListVal(ps)
	}
	var cell cty.Value
	if p, ok := r.Probe(r.Concurrency); r.Found && ok {
		cell = probeCell(&p.Cell, ps)
	} else {
		m := searchRead{why: result.UnknownRead{Rule: result.SearchNoConcurrency, Name: s.Name, Lo: float64(r.Range[0]), Hi: float64(r.Range[1])}}
		cell = cellObject(vocab.PhaseDecode, ps, cty.StringVal("not_measured").Mark(m), func(metric.Metric) cty.Value { return cty.UnknownVal(cty.Number).Mark(m) })
	}
	return searchObject(cty.NumberIntVal(int64(r.Concurrency)), cty.BoolVal(r.Found), cty.BoolVal(r.Monotone), cell, probes)
}

// rateSearchValue is a rate search's search["NAME"] as r recorded it: the
// answer and its bounds (0 when none meets the objective at lo; an upper
// bound that is not bounded, hi met, is unknown and marked so), the cell
// at the answer and the probes.
func rateSearchValue(s *spec.Search, r *result.Search, ps []float64) cty.Value {
	probes := cty.ListValEmpty(rateProbeObjectType)
	if len(r.Probes) > 0 {
		var vs []cty.Value
		for _, p := range r.Probes {
			vs = append(vs, cty.ObjectVal(map[string]cty.Value{"rate": cty.NumberFloatVal(p.Rate), "passed": cty.BoolVal(p.Passed), "decision": cty.StringVal(p.Decision)}))
		}
		probes = cty.ListVal(vs)
	}
	var cell cty.Value
	if p, ok := r.RateProbe(r.Rate); r.Found && ok && p.Traffic != nil {
		cell = trafficProbeCell(p.Traffic, ps)
	} else {
		m := searchRead{why: result.UnknownRead{Rule: result.SearchNoRate, Name: s.Name, Lo: r.RateRange[0], Hi: r.RateRange[1]}}
		if !loDecided(r) {
			m.undecided = true
			m.why = result.UnknownRead{Rule: result.SearchLoUndecided, Name: s.Name, Lo: r.RateRange[0], Decision: loDecision(r)}
		}
		cell = cellObject(vocab.PhaseTraffic, ps, cty.StringVal("not_measured").Mark(m), func(metric.Metric) cty.Value { return cty.UnknownVal(cty.Number).Mark(m) })
	}
	upper := cty.NumberFloatVal(r.RateUpper)
	if r.RateUpper == 0 && r.Found {
		m := searchRead{why: result.UnknownRead{Rule: result.SearchTopMet, Name: s.Name, Hi: r.RateRange[1]}}
		if r.RateLower < r.RateRange[1] {
			// hi was not decided met: no probe decided failed, so the
			// upper bound is not known rather than absent.
			m.undecided = true
			n, of := undecided(r)
			m.why = result.UnknownRead{Rule: result.SearchNoneFailed, Name: s.Name, Undecided: n, Probes: of}
		}
		upper = cty.UnknownVal(cty.Number).Mark(m)
	}
	return rateSearchObject(cty.NumberFloatVal(r.Rate), cty.NumberFloatVal(r.RateLower), upper, cty.BoolVal(r.Found), cty.BoolVal(r.Monotone), cell, probes)
}

// searchesVar is the `search` variable: one object per search block of sp,
// built by value. It is an object, not a map: a rate search's attributes
// are not a concurrency search's.
func searchesVar(sp *spec.Spec, value func(*spec.Search) cty.Value) cty.Value {
	if len(sp.Searches) == 0 {
		return cty.EmptyObjectVal
	}
	m := map[string]cty.Value{}
	for _, s := range sp.Searches {
		m[s.Name] = value(s)
	}
	return cty.ObjectVal(m)
}

// addSearches adds the `search` variable to sc.
func (sc *scope) addSearches(value func(*spec.Search) cty.Value) {
	sc.ctx.Variables[rootSearch] = searchesVar(sc.sp, value)
	sc.roots[rootSearch] = true
}

// objectiveScope is the scope an objective is evaluated in: `cell` is the
// probe's cell, var and the functions come from the spec.
func objectiveScope(sp *spec.Spec, cell cty.Value) *scope {
	parent := sp.EvalContext
	if parent == nil {
		parent = defaultEvalContext()
	}
	ctx := parent.NewChild()
	ctx.Variables = map[string]cty.Value{rootCell: cell}
	return &scope{sp: sp, ctx: ctx, roots: map[string]bool{rootCell: true}}
}

// checkObjective is the static check of a search's objective (as for an
// assert's condition: docs/spec.md#static-checks): evaluated over a cell of
// unknown metrics, it must be a bool.
func checkObjective(sp *spec.Spec, s *spec.Search, srv *spec.Server) hcl.Diagnostics {
	if s.Objective == nil {
		return nil
	}
	cell := cellObject(s.Phase(), specPercentiles(sp), cty.UnknownVal(cty.String), func(m metric.Metric) cty.Value {
		if why := cannotProduce(m, srv); why != "" {
			return cty.NullVal(cty.Number).Mark(unproducible{metric: m.Name, why: why})
		}
		return cty.UnknownVal(cty.Number)
	})
	diags := objectiveScope(sp, cell).checkCondition(s.Objective)
	for _, d := range diags {
		if d.Summary == "Condition is not a bool" || d.Summary == "Null condition" {
			d.Summary = strings.Replace(d.Summary, "Condition", "Objective", 1)
			example := "cell.per_request_tps >= 50"
			if s.IsRate() {
				example = "cell.goodput_share >= 0.95"
			}
			d.Detail = strings.Replace(strings.Replace(d.Detail, "The condition", "The objective", 1),
				`decode["8K"][64].total_tps >= 6000`, example, 1)
		}
	}
	return diags
}

// Objective evaluates concurrency search s's objective over the probe
// cell c (docs/method.md#search). It returns whether the objective held
// and the values it read (one result.Reading per comparison, as an assert's
// details: views.ReadingLines writes them); an error when it cannot say
// (a metric the cell lacks, a non-bool value).
func Objective(sp *spec.Spec, s *spec.Search, c *result.DecodeCell) (bool, []result.Reading, error) {
	return evalObjective(sp, s, probeCell(c, specPercentiles(sp)))
}

// TrafficObjective evaluates rate search s's objective over the traffic
// cell c, as Objective does a decode cell's: the runner calls it with the
// cell's metrics at the pessimistic and at the optimistic ends of their
// intervals (docs/method.md#rate-search).
func TrafficObjective(sp *spec.Spec, s *spec.Search, c *result.TrafficCell) (bool, []result.Reading, error) {
	return evalObjective(sp, s, trafficProbeCell(c, specPercentiles(sp)))
}

// evalObjective evaluates s's objective over the cell object cell.
func evalObjective(sp *spec.Spec, s *spec.Search, cell cty.Value) (bool, []result.Reading, error) {
	sc := objectiveScope(sp, cell)
	val, diags := s.Objective.Value(sc.ctx)
	if diags.HasErrors() {
		return false, nil, fmt.Errorf("objective could not be evaluated: %s", firstError(diags))
	}
	val, _ = val.UnmarkDeep()
	switch {
	case val.IsNull() || !val.IsKnown():
		return false, nil, fmt.Errorf("objective is null or unknown: it must be true or false")
	case val.Type() != cty.Bool:
		return false, nil, fmt.Errorf("objective is a %s, not a bool", val.Type().FriendlyName())
	}
	return val.True(), sc.explain(s.Objective), nil
}

// ObjectiveText is the objective of s as written in the spec.
func ObjectiveText(sp *spec.Spec, s *spec.Search) string {
	if s.Objective == nil {
		return ""
	}
	sc := &scope{sp: sp}
	return sc.source(s.Objective.Range())
}

// loDecided reports whether rate search r's probe at the bottom of its
// range was decided with confidence (met or failed), or the search has no
// probe at all: only then does `found` rest on a decision.
func loDecided(r *result.Search) bool {
	for _, p := range r.Probes {
		if p.Rate == r.RateRange[0] {
			return p.Decision == result.DecisionMet || p.Decision == result.DecisionFailed
		}
	}
	return len(r.Probes) == 0
}

// loDecision is the decision of rate search r's probe at lo, as recorded.
func loDecision(r *result.Search) string {
	for _, p := range r.Probes {
		if p.Rate == r.RateRange[0] {
			return p.Decision
		}
	}
	return "not measured"
}

// undecided is how many of rate search r's probes were not decided with
// confidence, of how many.
func undecided(r *result.Search) (n, of int) {
	for _, p := range r.Probes {
		if p.Decision != result.DecisionMet && p.Decision != result.DecisionFailed {
			n++
		}
	}
	return n, len(r.Probes)
}

// optimisticRate is the highest capacity rate search r's confident
// decisions leave possible (docs/method.md#undecided-searches): just below
// its upper bound (the lowest rate decided failed), or the top of its
// range when no probe was decided failed; ok is false when the search
// decided its answer, nothing above it left open: lo decided failed, a
// stopped search, or an answer at its upper bound's step with no probe
// undecided.
func optimisticRate(r *result.Search) (rate float64, ok bool) {
	if r.Error != "" || len(r.Probes) == 0 {
		return 0, false
	}
	if !r.Found && loDecided(r) {
		return 0, false // none meets it at lo, decided
	}
	if allDecided(r) {
		// Every probe met or failed with confidence: the answer is the
		// search's at its precision, and a finer precision, not more
		// windows, would move it.
		return 0, false
	}
	top := r.RateRange[1]
	if r.RateUpper > 0 {
		top = math.Nextafter(r.RateUpper, 0)
	}
	if r.Found && top <= r.RateLower {
		// Its confident lower bound is already the most it could be. An
		// answer at the top taken from point estimates alone (rate_lower
		// below it) is still open: CI's twin read 9 req/s with rate_lower
		// 0, every probe undecided, and failed where it was undecided.
		return 0, false
	}
	return top, true
}

// allDecided reports whether every probe of r was decided met or failed
// with confidence.
func allDecided(r *result.Search) bool {
	for _, p := range r.Probes {
		if p.Decision != result.DecisionMet && p.Decision != result.DecisionFailed {
			return false
		}
	}
	return true
}

// optimisticSearchValue is rate search s's search["NAME"] at the highest
// capacity its confident decisions leave possible (optimisticRate): found,
// with rate and rate_lower that capacity, the rest as recorded; ok is
// false when the search left nothing open.
func optimisticSearchValue(s *spec.Search, r *result.Search, ps []float64) (cty.Value, bool) {
	top, ok := optimisticRate(r)
	if !ok {
		return cty.NilVal, false
	}
	v := rateSearchValue(s, r, ps)
	attrs := v.AsValueMap()
	attrs["rate"], attrs["rate_lower"], attrs["found"] = cty.NumberFloatVal(top), cty.NumberFloatVal(top), cty.True
	return cty.ObjectVal(attrs), true
}
