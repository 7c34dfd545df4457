package spec

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"

	"github.com/slogate/slogate/internal/numfmt"
	"github.com/slogate/slogate/metric"
	"github.com/slogate/slogate/result"
	"github.com/slogate/slogate/vocab"
)

// Traffic is a `traffic "LABEL"` block: open-loop arrivals at each of Rates
// requests per second against one context (docs/spec.md#traffic,
// docs/method.md#traffic). Each rate is a cell.
type Traffic struct {
	Label   string // the name used in expressions: steady["8K"][4]
	Context int
	Rates   []float64 // requests per second, in the order written
	// Arrivals is "poisson" (default), "constant" or "gamma"; Burstiness is
	// the gamma shape (set exactly when Arrivals is "gamma").
	Arrivals   string
	Burstiness float64
	// Duration is the window; DurationText as written. Load sets it to
	// measure.duration when the block has none.
	Duration     time.Duration
	DurationText string
	// WarmUp is how long arrivals run before the window opens.
	WarmUp time.Duration
	// Seed seeds the arrival schedule (default 0, as `vllm bench serve`).
	Seed int64
	// MaxOutstanding is the safety cap on requests in flight.
	MaxOutstanding int
	// SLO is what a request must meet to count as goodput.
	SLO TrafficSLO

	DeclRange hcl.Range
	// ContextRange is where context is written.
	ContextRange hcl.Range
}

// TrafficSLO is a traffic block's slo: per-request limits; nil is "no
// limit". A request meets the SLO when its own TTFT, its own mean time
// between tokens and its own end-to-end latency are each at most the limit
// (docs/method.md#goodput).
type TrafficSLO struct {
	TTFTMs *float64
	TBTMs  *float64
	E2EMs  *float64
}

// SLOKeys are the keys a traffic block's slo object accepts.
var SLOKeys = []string{metric.TTFTMs, metric.TBTMs, metric.E2EMs}

// DefaultTrafficWarmUp is a traffic block's warm-up when it sets none.
const DefaultTrafficWarmUp = 10 * time.Second

var trafficSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "context", Required: true},
		{Name: "rate", Required: true},
		{Name: "arrivals"},
		{Name: "burstiness"},
		{Name: "duration"},
		{Name: "warmup"},
		{Name: "seed"},
		{Name: "max_outstanding"},
		{Name: "slo"},
	},
}

// arrivalKinds are the accepted values of arrivals.
var arrivalKinds = []string{result.ArrivalsPoisson, result.ArrivalsConstant, result.ArrivalsGamma}

// TrafficBlock returns the traffic block with label, or nil.
func (s *Spec) TrafficBlock(label string) *Traffic {
	for _, t := range s.Traffic {
		if t.Label == label {
			return t
		}
	}
	return nil
}

// decodeTraffic decodes a `traffic "LABEL"` block. It returns nil when the
// label cannot be used in expressions.
func (l *loader) decodeTraffic(blk *hcl.Block) (*Traffic, hcl.Diagnostics) {
	label := blk.Labels[0]
	t := &Traffic{Label: label, Arrivals: result.ArrivalsPoisson, WarmUp: DefaultTrafficWarmUp,
		MaxOutstanding: result.DefaultMaxOutstanding, DeclRange: blk.DefRange}
	content, diags := blk.Body.Content(trafficSchema)
	switch {
	case label == rootPrefill || label == rootServer || label == rootVar || label == rootSearch:
		return nil, append(diags, invalid("Reserved traffic label", blk.LabelRanges[0],
			"%q is a reserved name in conditions (prefill, server, search and var are); choose another label, such as \"steady\".", label))
	case !hclsyntax.ValidIdentifier(label):
		return nil, append(diags, invalid("Invalid traffic label", blk.LabelRanges[0],
			"%q cannot be read in conditions as %s[CTX][RATE]: a label starts with a letter and holds letters, digits, _ and -.", label, label))
	}
	at := content.Attributes
	if n, d := l.tokens(at, "context"); n != nil || d != nil {
		diags = append(diags, d...)
		if n != nil {
			t.Context = *n
			t.ContextRange = at["context"].Expr.Range()
		}
	}
	if a, ok := at["rate"]; ok {
		rates, d := l.rateList(a)
		diags = append(diags, d...)
		t.Rates = rates
	}
	if s, ok, d := l.str(at, "arrivals"); ok || d != nil {
		diags = append(diags, d...)
		if ok {
			if slices.Contains(arrivalKinds, s) {
				t.Arrivals = s
			} else {
				diags = append(diags, unknownName("Invalid arrivals", at["arrivals"].Expr.Range(), at["arrivals"].Range,
					fmt.Sprintf("arrivals is %s; got %q.", quotedList(arrivalKinds), s), s, arrivalKinds))
			}
		}
	}
	if b, d := l.float(at, "burstiness"); b != nil || d != nil {
		diags = append(diags, d...)
		rng := at["burstiness"].Expr.Range()
		switch {
		case b == nil:
		case t.Arrivals != result.ArrivalsGamma:
			diags = append(diags, invalid("Burstiness without gamma arrivals", rng,
				"burstiness is the shape of gamma arrivals; with arrivals = %q it would be ignored. Set arrivals = \"gamma\" or remove burstiness.", t.Arrivals))
		case !(*b > 0) || math.IsInf(*b, 0):
			diags = append(diags, invalid("Invalid burstiness", rng,
				"burstiness must be a positive number (1 is Poisson; below 1 burstier, above 1 more regular); got %v.", *b))
		default:
			t.Burstiness = *b
		}
	} else if t.Arrivals == result.ArrivalsGamma {
		diags = append(diags, invalid("Missing burstiness", at["arrivals"].Expr.Range(),
			"gamma arrivals need burstiness, the gamma shape: 1 is Poisson, 0.5 burstier, 4 more regular. Add burstiness = 0.5, for example."))
	}
	if d, text, ok, dd := l.duration(at, "duration"); ok || dd != nil {
		diags = append(diags, dd...)
		if ok {
			t.Duration, t.DurationText = d, text
		}
	}
	if d, _, ok, dd := l.duration(at, "warmup"); ok || dd != nil {
		diags = append(diags, dd...)
		if ok {
			t.WarmUp = d
		}
	}
	if a, ok := at["seed"]; ok {
		if v, ok, d := l.value("seed", a.Expr, cty.Number); ok || d != nil {
			diags = append(diags, d...)
			if ok {
				if n, whole := wholeNumber(v.AsBigFloat()); whole && n >= 0 {
					t.Seed = int64(n)
				} else {
					diags = append(diags, invalid("Invalid seed", a.Expr.Range(), "seed must be a whole number ≥ 0; got %s.", v.AsBigFloat().Text('g', -1)))
				}
			}
		}
	}
	if n, d := l.positiveInt(at, "max_outstanding", 0); n != nil || d != nil {
		diags = append(diags, d...)
		if n != nil {
			t.MaxOutstanding = *n
		}
	}
	if a, ok := at["slo"]; ok {
		slo, d := l.slo(a)
		diags = append(diags, d...)
		t.SLO = slo
	}
	return t, diags
}

// rateList reads rate: one number or a list of numbers, each > 0 and
// written once, each diagnostic at its element.
func (l *loader) rateList(attr *hcl.Attribute) ([]float64, hcl.Diagnostics) {
	return l.numberList(attr, numberListKind{name: "rate", what: "rate", scalar: true, value: rateValue, spell: result.FormatRate})
}

// numberListKind describes a list attribute of distinct numbers for
// numberList: its name, what one element is called in messages, whether a
// single value stands for a list of one, how a value is read and spelled,
// and an example for the "Empty list" message.
type numberListKind struct {
	name, what string
	scalar     bool
	value      func(cty.Value) (float64, error)
	spell      func(float64) string
	example    string
}

// numberList reads a list of distinct numbers of kind k, each diagnostic
// at its element: "Invalid <what>", "Duplicate <what>", "Empty list".
func (l *loader) numberList(attr *hcl.Attribute, k numberListKind) ([]float64, hcl.Diagnostics) {
	elems, diags := l.listElements(attr, k.name, k.scalar)
	var out []float64
	for _, e := range elems {
		v, err := k.value(e.v)
		if err != nil {
			diags = append(diags, invalid("Invalid "+k.what, e.rng, "%s.", upperFirst(err.Error())))
			continue
		}
		if slices.Contains(out, v) {
			diags = append(diags, invalid("Duplicate "+k.what, e.rng, "%s %s appears twice in %s.", k.what, k.spell(v), k.name))
			continue
		}
		out = append(out, v)
	}
	if len(out) == 0 && !diags.HasErrors() {
		diags = append(diags, invalid("Empty list", attr.Expr.Range(), "%s needs at least one value%s.", k.name, k.example))
	}
	return out, diags
}

// listElement is one element of a list attribute and where it is written.
type listElement struct {
	v   cty.Value
	rng hcl.Range
}

// listElements reads the elements of list attribute attr (name in
// messages), each with its own range when the list is written out; a single
// value stands for a list of one when scalar is set.
func (l *loader) listElements(attr *hcl.Attribute, name string, scalar bool) ([]listElement, hcl.Diagnostics) {
	var elems []listElement
	var diags hcl.Diagnostics
	if exprs, d := hcl.ExprList(attr.Expr); !d.HasErrors() {
		for _, e := range exprs {
			v, d := e.Value(l.spec.EvalContext)
			diags = append(diags, d...)
			if !d.HasErrors() {
				elems = append(elems, listElement{v, e.Range()})
			}
		}
		return elems, diags
	}
	v, d := attr.Expr.Value(l.spec.EvalContext)
	diags = append(diags, d...)
	if d.HasErrors() {
		return nil, diags
	}
	want := "a list of numbers is required"
	if scalar {
		want = "a number or a list of numbers is required"
	}
	switch {
	case !v.IsWhollyKnown() || v.IsNull():
		return nil, append(diags, typeError(name, attr.Expr, l.spec.EvalContext, fmt.Errorf("%s", want)))
	case v.Type().IsListType() || v.Type().IsTupleType() || v.Type().IsSetType():
		for it := v.ElementIterator(); it.Next(); {
			_, e := it.Element()
			elems = append(elems, listElement{e, attr.Expr.Range()})
		}
	case scalar:
		elems = append(elems, listElement{v, attr.Expr.Range()})
	default:
		return nil, append(diags, typeError(name, attr.Expr, l.spec.EvalContext, fmt.Errorf("%s", want)))
	}
	return elems, diags
}

// rateValue turns one value into a request rate: a finite number > 0, or
// a string holding one (how assertions index rates that are not whole).
func rateValue(v cty.Value) (float64, error) {
	if !v.IsWhollyKnown() {
		return 0, fmt.Errorf("the value is unknown")
	}
	if !v.IsNull() && v.Type() == cty.String {
		f, err := strconv.ParseFloat(strings.TrimSpace(v.AsString()), 64)
		if err != nil {
			return 0, fmt.Errorf("%q is not a number of requests per second", v.AsString())
		}
		v = cty.NumberFloatVal(f)
	}
	if v.IsNull() || v.Type() != cty.Number {
		return 0, fmt.Errorf("a rate is a number of requests per second, not %s", friendly(v))
	}
	f, _ := v.AsBigFloat().Float64()
	if !(f > 0) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("a rate must be more than 0 requests per second; got %s", v.AsBigFloat().Text('g', -1))
	}
	return f, nil
}

// slo reads the slo object: keys from SLOKeys, each a number > 0.
func (l *loader) slo(attr *hcl.Attribute) (TrafficSLO, hcl.Diagnostics) {
	var slo TrafficSLO
	pairs, diags := hcl.ExprMap(attr.Expr)
	if diags.HasErrors() {
		return slo, hcl.Diagnostics{typeError("slo", attr.Expr, l.spec.EvalContext,
			fmt.Errorf("an object such as { ttft_ms = 2000, tbt_ms = 50 } is required"))}
	}
	for _, p := range pairs {
		kv, d := p.Key.Value(l.spec.EvalContext)
		if d.HasErrors() {
			// A bare identifier key (ttft_ms = …) is read by its name.
			if name := hcl.ExprAsKeyword(p.Key); name != "" {
				kv, d = cty.StringVal(name), nil
			}
		}
		diags = append(diags, d...)
		if d.HasErrors() {
			continue
		}
		ks, err := convert.Convert(kv, cty.String)
		if err != nil || ks.IsNull() {
			diags = append(diags, invalid("Invalid SLO key", p.Key.Range(), "slo keys are metric names: %s.", strings.Join(SLOKeys, ", ")))
			continue
		}
		key := ks.AsString()
		var dst **float64
		switch key {
		case metric.TTFTMs:
			dst = &slo.TTFTMs
		case metric.TBTMs:
			dst = &slo.TBTMs
		case metric.E2EMs:
			dst = &slo.E2EMs
		default:
			diags = append(diags, unknownName("Unsupported SLO metric", p.Key.Range(), attr.Range,
				fmt.Sprintf("slo limits a request's own latencies: %s; got %q.", strings.Join(SLOKeys, ", "), key), key, SLOKeys))
			continue
		}
		v, ok, d := l.value("slo."+key, p.Value, cty.Number)
		diags = append(diags, d...)
		if !ok {
			continue
		}
		f, _ := v.AsBigFloat().Float64()
		if !(f > 0) || math.IsInf(f, 0) {
			diags = append(diags, invalid("Invalid SLO", p.Value.Range(), "slo.%s must be a number of milliseconds more than 0; got %s.", key, v.AsBigFloat().Text('g', -1)))
			continue
		}
		*dst = &f
	}
	return slo, diags
}

// checkTraffic applies measure.duration to traffic blocks without their
// own, and reports labels shared with a matrix and contexts that leave no
// room for max_output under a server's max_model_len.
func (l *loader) checkTraffic() hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, t := range l.spec.Traffic {
		if t.Duration == 0 {
			t.Duration, t.DurationText = l.spec.Measure.Duration, l.spec.Measure.DurationText
		}
		if m := l.spec.Matrix(t.Label); m != nil {
			diags = append(diags, invalid("Duplicate label", t.DeclRange,
				"Traffic %q has the label of the matrix at %s; conditions read both as %s[CTX][…]. Give one another label.", t.Label, where(m.DeclRange), t.Label))
		}
		if t.Context == 0 {
			continue
		}
		maxOut := l.spec.Measure.MaxOutput
		for _, srv := range l.spec.Servers {
			if srv.MaxModelLen == nil || t.Context+maxOut <= *srv.MaxModelLen {
				continue
			}
			mml := *srv.MaxModelLen
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Context too long for max_model_len",
				Detail: fmt.Sprintf("Traffic %q sends prompts of %s (%d tokens) plus max_output %d = %d tokens, more than server %q allows (max_model_len = %d at %s). Use a context of at most %d tokens, lower measure.max_output, or raise max_model_len.",
					t.Label, result.FormatTokens(t.Context), t.Context, maxOut, t.Context+maxOut, srv.Name, mml, where(l.maxModelLenRange[srv]), mml-maxOut),
				Subject: t.ContextRange.Ptr(),
			})
		}
	}
	return diags
}

// trafficReference checks a condition's traversal of traffic block t
// (t["8K"][4].goodput_rps) and adds the cells it reads.
func (l *loader) trafficReference(tr hcl.Traversal, t *Traffic, addCell func(result.CellRef)) hcl.Diagnostics {
	ctxs, rates := []int{t.Context}, t.Rates
	if len(tr) > 1 {
		ctx, d := l.contextStep(tr, 1, fmt.Sprintf("traffic %q", t.Label), []int{t.Context})
		if d.HasErrors() {
			return d
		}
		ctxs = []int{ctx}
	}
	if len(tr) > 2 {
		rate, d := rateStep(tr, 2, t)
		if d.HasErrors() {
			return d
		}
		rates = []float64{rate}
	}
	var diags hcl.Diagnostics
	if len(tr) > 3 {
		diags = l.metricStep(tr, 3, vocab.PhaseTraffic, fmt.Sprintf("Traffic %q", t.Label))
	}
	for _, c := range ctxs {
		for _, r := range rates {
			addCell(result.CellRef{Phase: vocab.PhaseTraffic, Matrix: t.Label, Context: c, Rate: r})
		}
	}
	return diags
}

// rateStep reads tr[i] as a rate index that t measures: a number, or a
// string for rates that are not whole ("0.5").
func rateStep(tr hcl.Traversal, i int, t *Traffic) (float64, hcl.Diagnostics) {
	idx, ok := tr[i].(hcl.TraverseIndex)
	if !ok {
		example := "4"
		if len(t.Rates) > 0 {
			example = result.FormatRate(t.Rates[0])
		}
		return 0, hcl.Diagnostics{invalidCtx("Invalid cell reference", tr[i].SourceRange(), tr.SourceRange(),
			fmt.Sprintf("Index a context of %s with a rate, like %s[%q][%s].goodput_rps.", t.Label, t.Label, result.FormatTokens(t.Context), example))}
	}
	rate, err := rateValue(idx.Key)
	if err != nil {
		return 0, hcl.Diagnostics{invalidCtx("Invalid rate", tr[i].SourceRange(), tr.SourceRange(), upperFirst(err.Error())+".")}
	}
	if !slices.Contains(t.Rates, rate) {
		return 0, hcl.Diagnostics{invalidCtx("Reference to an unmeasured rate", tr[i].SourceRange(), tr.SourceRange(),
			fmt.Sprintf("Traffic %q does not measure rate %s; it measures %s.", t.Label, result.FormatRate(rate), numfmt.List(t.Rates, result.FormatRate)))}
	}
	return rate, nil
}

func quotedList(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	if len(q) < 2 {
		return strings.Join(q, "")
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}
