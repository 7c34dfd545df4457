package spec

import (
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/slogate/slogate/internal/vocab"
)

// Search is a `search "NAME"` block (docs/method.md#search,
// docs/spec.md#search): a concurrency search finds the largest
// concurrency in [Lo, Hi] whose decode cell at Context meets Objective; a
// rate search (Traffic set) finds the highest request rate in [RateLo,
// RateHi] whose cell of traffic block Traffic meets it, to a relative
// Precision (docs/method.md#rate-search).
type Search struct {
	Name string
	// Context is a concurrency search's context; in a rate search, the
	// traffic block's (0 when its workload sets the lengths).
	Context int
	// Lo and Hi are a concurrency search's range; 0 in a rate search.
	Lo, Hi int
	// Traffic is a rate search's traffic block (an open loop); "" in a
	// concurrency search.
	Traffic string
	// RateLo and RateHi are a rate search's range in requests per second
	// (0 < RateLo < RateHi).
	RateLo, RateHi float64
	// Precision is the relative width at which a rate search's bisection
	// stops (DefaultPrecision unless written).
	Precision float64
	// CheckWindows is the number of windows a rate search measures at its
	// answer once found, for a later run's paired check of capacity lost
	// (docs/method.md#paired-capacity-check); 0 when it measures none.
	CheckWindows int
	// MaxWindows is the most windows one probe of a rate search measures
	// before it goes by its point estimates
	// (docs/method.md#rate-search-precision); 0 when not written (the
	// search's default, ratesearch.DefaultMaxWindows).
	MaxWindows int
	// Objective is a bool expression over the probe's cell, read as
	// cell.<metric> (and var.NAME): a decode metric in a concurrency
	// search, a traffic metric in a rate search.
	Objective hcl.Expression
	// ObjectiveMetrics are the metrics the objective reads, in order of
	// first appearance.
	ObjectiveMetrics []string

	DeclRange hcl.Range
}

// IsRate reports whether s is a rate search (`traffic = "BLOCK"`).
func (s *Search) IsRate() bool { return s.Traffic != "" }

// Phase is the phase of s's probe cells: traffic in a rate search, decode
// in a concurrency search.
func (s *Search) Phase() vocab.Phase {
	if s.IsRate() {
		return vocab.PhaseTraffic
	}
	return vocab.PhaseDecode
}

// DefaultPrecision is a rate search's precision when it sets none: half
// the gate's default tolerance, so that a change of the tolerance can be
// told from the search's precision (issue 31).
const DefaultPrecision = 0.025

// MaxPrecision is the coarsest precision a rate search accepts.
const MaxPrecision = 0.25

// rootSearch is the root name under which assertions read searches:
// search["NAME"].concurrency.
const rootSearch = "search"

// rootCell is the root name an objective reads the probe's cell by.
const rootCell = "cell"

// SearchAttributes are the attributes of a concurrency search["NAME"] in
// conditions.
var SearchAttributes = []string{"concurrency", "found", "monotone", "cell", "probes"}

// RateSearchAttributes are the attributes of a rate search["NAME"] in
// conditions.
var RateSearchAttributes = []string{"rate", "rate_lower", "rate_upper", "found", "monotone", "cell", "probes"}

// Attributes are the attributes conditions may read of s.
func (s *Search) Attributes() []string {
	if s.IsRate() {
		return RateSearchAttributes
	}
	return SearchAttributes
}

var searchSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "context"},
		{Name: "concurrency"},
		{Name: "traffic"},
		{Name: "rate"},
		{Name: "precision"},
		{Name: "check_windows"},
		{Name: "max_windows"},
		{Name: "objective", Required: true},
	},
}

// Search returns the search block called name, or nil.
func (s *Spec) Search(name string) *Search {
	for _, x := range s.Searches {
		if x.Name == name {
			return x
		}
	}
	return nil
}

// decodeSearch decodes a `search "NAME"` block. It runs after the servers,
// the measure block and the traffic blocks are decoded: a concurrency
// search's context must leave room for max_output within each server's
// max_model_len, a rate search's traffic block must exist.
func (l *loader) decodeSearch(blk *hcl.Block) (*Search, hcl.Diagnostics) {
	s := &Search{Name: blk.Labels[0], DeclRange: blk.DefRange}
	content, diags := blk.Body.Content(searchSchema)
	if !hclsyntax.ValidIdentifier(s.Name) {
		diags = append(diags, invalid("Invalid search name", blk.LabelRanges[0],
			"%q cannot be read in conditions as search[%q]: a name starts with a letter and holds letters, digits, _ and -.", s.Name, s.Name))
	}
	at := content.Attributes
	if _, ok := at["traffic"]; ok {
		diags = append(diags, l.decodeRateSearch(s, at)...)
	} else {
		diags = append(diags, l.decodeConcurrencySearch(s, blk, at)...)
	}
	if a, ok := at["objective"]; ok {
		s.Objective = a.Expr
		metrics, d := l.objectiveReferences(a.Expr, s.Phase())
		diags = append(diags, d...)
		diags = append(diags, unitHints(a.Expr)...)
		s.ObjectiveMetrics = metrics
	}
	return s, diags
}

// decodeConcurrencySearch reads a concurrency search's context and
// concurrency = [lo, hi] (both required); rate and precision belong to a
// rate search.
func (l *loader) decodeConcurrencySearch(s *Search, blk *hcl.Block, at hcl.Attributes) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, name := range []string{"rate", "precision", "check_windows", "max_windows"} {
		if a, ok := at[name]; ok {
			diags = append(diags, invalid("Rate search attribute without traffic", a.NameRange,
				"%s belongs to a rate search, which names its traffic block: add traffic = \"BLOCK\" (an open-loop traffic block) and rate = [lo, hi], or remove %s for a concurrency search.", name, name))
		}
	}
	for _, name := range []string{"context", "concurrency"} {
		if _, ok := at[name]; !ok {
			diags = append(diags, invalid("Missing required argument", blk.Body.MissingItemRange(),
				"A search over concurrency needs context and concurrency = [lo, hi]; %s is missing. A search over request rate needs traffic = \"BLOCK\" and rate = [lo, hi] instead.", name))
		}
	}
	if a, ok := at["context"]; ok {
		if n, d := l.tokens(at, "context"); d.HasErrors() {
			diags = append(diags, d...)
		} else if n != nil {
			s.Context = *n
			diags = append(diags, l.checkSearchContext(s, a.Expr.Range())...)
		}
	}
	if a, ok := at["concurrency"]; ok {
		diags = append(diags, l.searchRange(s, a)...)
	}
	return diags
}

// decodeRateSearch reads a rate search: traffic naming an open-loop
// traffic block, rate = [lo, hi] and precision; context and concurrency
// are the traffic block's business.
func (l *loader) decodeRateSearch(s *Search, at hcl.Attributes) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, name := range []string{"context", "concurrency"} {
		if a, ok := at[name]; ok {
			diags = append(diags, invalid("Not used in a rate search", a.NameRange,
				"A search with traffic is over request rate: the traffic block gives the workload, context, arrivals, window and SLO, so %s does not belong here. Remove it, or remove traffic and rate for a search over concurrency.", name))
		}
	}
	ta := at["traffic"]
	name, ok, d := l.str(at, "traffic")
	diags = append(diags, d...)
	if ok {
		s.Traffic = name
		diags = append(diags, l.rateSearchTraffic(s, ta)...)
	}
	if a, ok := at["rate"]; ok {
		diags = append(diags, l.rateSearchRange(s, a)...)
	} else {
		diags = append(diags, invalid("Missing rate", ta.Range,
			"A rate search needs the range of request rates it searches: add rate = [lo, hi] in requests per second, such as rate = [0.5, 32]."))
	}
	s.Precision = DefaultPrecision
	if a, ok := at["precision"]; ok {
		p, d := l.precision(a)
		diags = append(diags, d...)
		if p != nil {
			s.Precision = *p
		}
	}
	if a, ok := at["check_windows"]; ok {
		n, d := l.windowCount(a, MaxCheckWindows,
			"check_windows is the number of windows the search measures at its answer for a later run's paired check of capacity lost, a whole number from 2 to %d such as 24 (docs/method.md#paired-capacity-check); got %s.")
		diags = append(diags, d...)
		s.CheckWindows = n
	}
	if a, ok := at["max_windows"]; ok {
		n, d := l.windowCount(a, MaxProbeWindows,
			"max_windows is the most windows one probe measures before it goes by its point estimates, a whole number from 2 to %d such as 16 (docs/method.md#rate-search-precision); got %s.")
		diags = append(diags, d...)
		s.MaxWindows = n
	}
	return diags
}

// MaxCheckWindows is the most windows a rate search's check_windows asks.
const MaxCheckWindows = 200

// MaxProbeWindows is the most windows a rate search's max_windows asks of
// one probe.
const MaxProbeWindows = 1000

// windowCount reads a rate search's count of windows (check_windows,
// max_windows): a whole number from 2 (two windows are the fewest whose
// spread can be told) to most; detail, given most and what was written,
// is the diagnostic's text otherwise.
func (l *loader) windowCount(a *hcl.Attribute, most int, detail string) (int, hcl.Diagnostics) {
	v, diags := a.Expr.Value(l.spec.EvalContext)
	if diags.HasErrors() {
		return 0, diags
	}
	got := "a value not known when the spec is loaded"
	if v.IsWhollyKnown() {
		got = friendly(v)
	}
	if v.IsWhollyKnown() && !v.IsNull() && v.Type() == cty.Number {
		bf := v.AsBigFloat()
		if n, acc := bf.Int64(); acc == big.Exact && n >= 2 && n <= int64(most) {
			return int(n), diags
		}
		got = bf.Text('g', -1) // the number written, not "number"
	}
	return 0, append(diags, invalid("Invalid "+a.Name, a.Expr.Range(), detail, most, got))
}

// rateSearchTraffic checks that s.Traffic names an open-loop traffic
// block and takes its context.
func (l *loader) rateSearchTraffic(s *Search, a *hcl.Attribute) hcl.Diagnostics {
	t := l.spec.TrafficBlock(s.Traffic)
	if t == nil {
		var labels []string
		for _, t := range l.spec.Traffic {
			labels = append(labels, t.Label)
		}
		known := "the spec declares no traffic block"
		if len(labels) > 0 {
			known = "the traffic blocks are " + quotedList(labels)
		}
		return hcl.Diagnostics{unknownName("Unknown traffic block", a.Expr.Range(), a.Range,
			fmt.Sprintf("Search %q probes the cells of traffic block %q, but %s. Name a traffic block with rate = […] (an open loop), or declare traffic %q.", s.Name, s.Traffic, known, s.Traffic),
			s.Traffic, labels)}
	}
	if t.ClosedLoop() {
		return hcl.Diagnostics{invalidCtx("Closed-loop traffic in a rate search", a.Expr.Range(), a.Range,
			fmt.Sprintf("Traffic %q keeps requests in flight (concurrency, a closed loop, at %s), so it has no request rate to search: a rate search sends open-loop arrivals at each probe's rate. Name a traffic block with rate = […], or search concurrency instead.", t.Label, where(t.DeclRange)))}
	}
	if t.Arrivals == vocab.ArrivalsTrace {
		return hcl.Diagnostics{invalidCtx("Trace arrivals in a rate search", a.Expr.Range(), a.Range,
			fmt.Sprintf("Traffic %q sends each request at its trace's time (arrivals = \"trace\", at %s), so it has no request rate to search. Give the block other arrivals (the trace's requests are then sent at each probe's rate), or replay it without a search.", t.Label, where(t.DeclRange)))}
	}
	s.Context = t.Context
	return nil
}

// rateSearchRange reads rate = [lo, hi] with 0 < lo < hi requests per
// second.
func (l *loader) rateSearchRange(s *Search, a *hcl.Attribute) hcl.Diagnostics {
	ends, diags := readRange(l, a, searchRangeForm[float64]{
		form:   "rate is the range of request rates searched, a pair [lo, hi] in requests per second such as [0.5, 32].",
		value:  rateValue,
		bad:    "Invalid rate",
		detail: "%s: the range searched is [lo, hi] with 0 < lo < hi, such as [0.5, 32].",
		empty: func(lo, hi float64) string {
			return fmt.Sprintf("The range [%s, %s] is empty: its lower end must be below its upper end, as in [%s, %s].",
				vocab.FormatRate(lo), vocab.FormatRate(hi), vocab.FormatRate(min(lo, hi)), vocab.FormatRate(max(lo, hi)))
		},
	})
	if ends != nil {
		s.RateLo, s.RateHi = ends[0], ends[1]
	}
	return diags
}

// precision reads a rate search's precision: a fraction (0.025) or a
// percentage ("2.5%"), above 0 and at most MaxPrecision.
func (l *loader) precision(a *hcl.Attribute) (*float64, hcl.Diagnostics) {
	v, diags := a.Expr.Value(l.spec.EvalContext)
	if diags.HasErrors() {
		return nil, diags
	}
	var p float64
	var err error
	switch {
	case !v.IsWhollyKnown() || v.IsNull():
		err = fmt.Errorf("the value must be known when the spec is loaded")
	case v.Type() == cty.Number:
		p, _ = v.AsBigFloat().Float64()
	case v.Type() == cty.String && strings.HasSuffix(strings.TrimSpace(v.AsString()), "%"):
		p, err = strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v.AsString()), "%"), 64)
		p /= 100
	default:
		err = fmt.Errorf("precision is a fraction such as 0.025 or a percentage such as \"2.5%%\", not %s", friendly(v))
	}
	if err == nil && !(p > 0 && p <= MaxPrecision) {
		err = fmt.Errorf("precision is the relative width at which the search stops, above 0 and at most %g (%g%%), such as 0.025; got %g", MaxPrecision, MaxPrecision*100, p)
	}
	if err != nil {
		return nil, append(diags, invalid("Invalid precision", a.Expr.Range(), "%s.", upperFirst(err.Error())))
	}
	return &p, diags
}

// searchRange reads concurrency = [lo, hi] with 1 ≤ lo < hi.
func (l *loader) searchRange(s *Search, a *hcl.Attribute) hcl.Diagnostics {
	ends, diags := readRange(l, a, searchRangeForm[int]{
		form:   "concurrency is the range searched, a pair [lo, hi] such as [1, 256].",
		value:  concurrencyValue,
		bad:    "Invalid concurrency",
		detail: "%s.",
		empty: func(lo, hi int) string {
			return fmt.Sprintf("The range [%d, %d] is empty: its lower end must be below its upper end, as in [1, 256].", lo, hi)
		},
	})
	if ends != nil {
		s.Lo, s.Hi = ends[0], ends[1]
	}
	return diags
}

// searchRangeForm is what a search's [lo, hi] attribute says when it is
// written wrong: its form, how one end is read, the diagnostic of an end
// that cannot be (detail takes the reader's error) and of an empty range.
type searchRangeForm[T int | float64] struct {
	form, bad, detail string
	value             func(cty.Value) (T, error)
	empty             func(lo, hi T) string
}

// readRange reads a = [lo, hi] as f says, lo < hi; nil ends with the
// diagnostics when it cannot. The concurrency and the rate search share
// it: only their ends' reader and their words differ.
func readRange[T int | float64](l *loader, a *hcl.Attribute, f searchRangeForm[T]) (*[2]T, hcl.Diagnostics) {
	exprs, d := hcl.ExprList(a.Expr)
	if d.HasErrors() || len(exprs) != 2 {
		return nil, hcl.Diagnostics{invalid("Invalid search range", a.Expr.Range(), "%s", f.form)}
	}
	var diags hcl.Diagnostics
	var ends [2]T
	for i, e := range exprs {
		v, d := e.Value(l.spec.EvalContext)
		diags = append(diags, d...)
		if d.HasErrors() {
			return nil, diags
		}
		n, err := f.value(v)
		if err != nil {
			return nil, append(diags, invalid(f.bad, e.Range(), f.detail, upperFirst(err.Error())))
		}
		ends[i] = n
	}
	if ends[0] >= ends[1] {
		return nil, append(diags, invalid("Invalid search range", a.Expr.Range(), "%s", f.empty(ends[0], ends[1])))
	}
	return &ends, diags
}

// checkSearchContext reports a search context that leaves no room for
// max_output within a server's max_model_len.
func (l *loader) checkSearchContext(s *Search, rng hcl.Range) hcl.Diagnostics {
	var diags hcl.Diagnostics
	maxOut := l.spec.Measure.MaxOutput
	for _, srv := range l.spec.Servers {
		if srv.MaxModelLen == nil || s.Context+maxOut <= *srv.MaxModelLen {
			continue
		}
		mml := *srv.MaxModelLen
		diags = append(diags, invalid("Context too long for max_model_len", rng,
			"Search %q decodes at context %s (%d tokens) plus max_output %d = %d tokens, more than server %q allows (max_model_len = %d at %s). Use a context of at most %d tokens, lower measure.max_output, or raise max_model_len.",
			s.Name, vocab.FormatTokens(s.Context), s.Context, maxOut, s.Context+maxOut, srv.Name, mml, where(l.maxModelLenRange[srv]), mml-maxOut))
	}
	return diags
}

// objectiveReferences checks that an objective reads only cell.<metric>
// of the probe's phase (decode in a concurrency search, traffic in a rate
// search) and var.NAME, and returns the metrics it reads.
func (l *loader) objectiveReferences(expr hcl.Expression, phase vocab.Phase) ([]string, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	var metrics []string
	example := "cell.per_request_tps >= 50"
	what := "Decode"
	if phase == vocab.PhaseTraffic {
		example, what = "cell.goodput_share >= 0.95", "Traffic"
	}
	for _, tr := range expr.Variables() {
		switch tr.RootName() {
		case rootVar:
			if len(tr) > 1 {
				if at, ok := tr[1].(hcl.TraverseAttr); ok && l.spec.Variable(at.Name) == nil {
					diags = append(diags, l.undeclaredVar(at.Name, tr))
				}
			}
		case rootCell:
			if len(tr) < 2 {
				diags = append(diags, invalidCtx("Invalid cell reference", tr.SourceRange(), expr.Range(),
					fmt.Sprintf("Read a metric of the probe's cell by name, like %s.", strings.Fields(example)[0])))
				continue
			}
			d := l.metricStep(tr, 1, phase, what)
			diags = append(diags, d...)
			if name, ok := stepName(tr[1]); ok && !d.HasErrors() && name != CellStatusAttribute && !slices.Contains(metrics, name) {
				metrics = append(metrics, name)
			}
		default:
			diags = append(diags, unknownName("Unknown variable in objective", tr[0].SourceRange(), tr.SourceRange(),
				fmt.Sprintf("An objective reads the probe's %s cell as cell.<metric> (and var.NAME); %q is not one of them.", phase, tr.RootName()),
				tr.RootName(), []string{rootCell, rootVar}))
		}
	}
	if len(metrics) == 0 && !diags.HasErrors() {
		diags = append(diags, invalid("Constant objective", expr.Range(),
			"The objective reads no %s metric of the probe's cell, so every probe would give the same answer: write a comparison such as %s.", phase, example))
	}
	return metrics, diags
}

// searchReference checks a condition's read of search[...] and returns the
// names of the searches it needs: search["NAME"].concurrency, .found,
// .monotone, .cell.<metric>, .probes. A read of search as a whole needs
// every search.
func (l *loader) searchReference(tr hcl.Traversal) ([]string, hcl.Diagnostics) {
	var names []string
	for _, s := range l.spec.Searches {
		names = append(names, s.Name)
	}
	if len(tr) < 2 {
		return names, nil
	}
	name, ok := stepName(tr[1])
	if _, isIndex := tr[1].(hcl.TraverseIndex); !ok || !isIndex {
		return nil, hcl.Diagnostics{invalidCtx("Invalid search reference", tr[1].SourceRange(), tr.SourceRange(),
			`Index search with a search block's name, like search["max_users"].concurrency.`)}
	}
	if l.spec.Search(name) == nil {
		known := "no search block is declared"
		if len(names) > 0 {
			known = "the declared searches are " + strings.Join(names, ", ")
		}
		return nil, hcl.Diagnostics{unknownName("Reference to an undeclared search", tr[1].SourceRange(), tr.SourceRange(),
			fmt.Sprintf("No search %q is declared; %s.", name, known), name, names)}
	}
	if len(tr) > 2 {
		s := l.spec.Search(name)
		attrs := s.Attributes()
		attr, ok := stepName(tr[2])
		if !ok || !slices.Contains(attrs, attr) {
			kind := "A concurrency search"
			if s.IsRate() {
				kind = "A rate search"
			}
			return nil, hcl.Diagnostics{unknownName("Unsupported attribute", tr[2].SourceRange(), tr.SourceRange(),
				fmt.Sprintf("%s has no attribute %q; it has %s.", kind, attr, strings.Join(attrs, ", ")), attr, attrs)}
		}
		if attr == "cell" && len(tr) > 3 {
			if d := l.metricStep(tr, 3, s.Phase(), "Search"); d.HasErrors() {
				return nil, d
			}
		}
	}
	return []string{name}, nil
}
