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

	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/numfmt"
	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/workload"
)

// Traffic is a `traffic "LABEL"` block (docs/spec.md#traffic,
// docs/method.md#traffic): open-loop arrivals at each of Rates requests per
// second, or a closed loop keeping each of Concurrency requests in flight,
// over one workload. Each rate or concurrency is a cell.
type Traffic struct {
	Label string // the name used in expressions: steady["8K"][4], replay[8]
	// Workload names the `workload "NAME"` block the requests send; "" is
	// the unnamed workload. WorkloadRange is where it is written.
	Workload      string
	WorkloadRange hcl.Range
	// Context is the prompt length; 0 when the workload sets its own
	// lengths (a dataset or input_tokens), and then the cells are indexed
	// without it: replay[8] rather than steady["8K"][4].
	Context int
	// Rates are the open loop's requests per second, in the order
	// written; nil for a closed loop.
	Rates []float64
	// Concurrency are the closed loop's requests in flight, in the order
	// written (as vllm bench serve --max-concurrency); nil for an open loop.
	Concurrency []int
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
	// SaturationAfter is how long an open-loop cell's queue must grow
	// before the cell stops early as saturated (docs/method.md#saturation);
	// 0 when not set (measure.SaturationAfter gives the default).
	// SaturationOff: saturation_after = "0s", never stop.
	SaturationAfter time.Duration
	SaturationOff   bool

	DeclRange hcl.Range
	// ContextRange is where context is written.
	ContextRange hcl.Range
	// LoopRange is where rate or concurrency is written (its name); zero
	// when neither is.
	LoopRange hcl.Range
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
		{Name: "workload"},
		{Name: "context"},
		{Name: "rate"},
		{Name: "concurrency"},
		{Name: "arrivals"},
		{Name: "burstiness"},
		{Name: "duration"},
		{Name: "warmup"},
		{Name: "seed"},
		{Name: "max_outstanding"},
		{Name: "slo"},
		{Name: "saturation_after"},
	},
}

// arrivalKinds are the accepted values of arrivals.
var arrivalKinds = []string{vocab.ArrivalsPoisson, vocab.ArrivalsConstant, vocab.ArrivalsGamma, vocab.ArrivalsTrace}

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
	t := &Traffic{Label: blk.Labels[0], Arrivals: vocab.ArrivalsPoisson, WarmUp: DefaultTrafficWarmUp,
		MaxOutstanding: vocab.DefaultMaxOutstanding, DeclRange: blk.DefRange}
	content, diags := blk.Body.Content(trafficSchema)
	if d := trafficLabelProblem(blk); d != nil {
		return nil, append(diags, d)
	}
	at := content.Attributes
	diags = append(diags, l.decodeTrafficPrompts(t, at)...)
	diags = append(diags, l.decodeTrafficLoop(t, at)...)
	diags = append(diags, l.decodeArrivals(t, at)...)
	if d, text, ok, dd := l.duration(at, "duration"); ok || dd != nil {
		diags = append(diags, dd...)
		if ok {
			t.Duration, t.DurationText = d, text
		}
	}
	if d, _, ok, dd := l.durationOrZero(at, "warmup"); ok || dd != nil {
		diags = append(diags, dd...)
		if ok {
			t.WarmUp = d
		}
	}
	if a, ok := at["seed"]; ok {
		diags = append(diags, l.decodeTrafficSeed(t, a)...)
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
	diags = append(diags, l.decodeSaturation(t, at)...)
	return t, diags
}

// decodeSaturation reads saturation_after, how long an open loop's queue
// must grow before its cell stops as saturated: "0s" never stops it. A
// closed loop's queue is bounded by its concurrency, so it has none.
func (l *loader) decodeSaturation(t *Traffic, at hcl.Attributes) hcl.Diagnostics {
	a, ok := at["saturation_after"]
	if !ok {
		return nil
	}
	if t.Concurrency != nil {
		return hcl.Diagnostics{invalidCtx("Not used in a closed loop", a.NameRange, a.Range,
			"saturation_after stops an open loop whose queue grows without bound; with concurrency the requests in flight are bounded, so it would be ignored. Remove it, or use rate.")}
	}
	d, _, ok, diags := l.durationOrZero(at, "saturation_after")
	if ok {
		t.SaturationAfter, t.SaturationOff = d, d == 0
	}
	return diags
}

// trafficLabelProblem reports a traffic label that conditions cannot read:
// a reserved root name, or not an identifier. It is nil for a usable label.
func trafficLabelProblem(blk *hcl.Block) *hcl.Diagnostic {
	label := blk.Labels[0]
	switch {
	case label == rootPrefill || label == rootServer || label == rootVar || label == rootSearch || label == rootCorrectness:
		return invalid("Reserved traffic label", blk.LabelRanges[0],
			"%q is a reserved name in conditions (prefill, server, search, correctness and var are); choose another label, such as \"steady\".", label)
	case !hclsyntax.ValidIdentifier(label):
		return invalid("Invalid traffic label", blk.LabelRanges[0],
			"%q cannot be read in conditions as %s[CTX][RATE]: a label starts with a letter and holds letters, digits, _ and -.", label, label)
	}
	return nil
}

// decodeTrafficPrompts reads what a traffic block sends: its context and
// the workload it names.
func (l *loader) decodeTrafficPrompts(t *Traffic, at hcl.Attributes) hcl.Diagnostics {
	var diags hcl.Diagnostics
	if n, d := l.tokens(at, "context"); n != nil || d != nil {
		diags = append(diags, d...)
		if n != nil {
			t.Context = *n
			t.ContextRange = at["context"].Expr.Range()
		}
	}
	if s, ok, d := l.str(at, "workload"); ok || d != nil {
		diags = append(diags, d...)
		if ok {
			t.Workload, t.WorkloadRange = s, at["workload"].Expr.Range()
		}
	}
	return diags
}

// decodeTrafficLoop reads rate (an open loop) or concurrency (a closed
// loop): exactly one of them. A closed loop drops, with a diagnostic each,
// the attributes only an open loop's arrivals read.
func (l *loader) decodeTrafficLoop(t *Traffic, at hcl.Attributes) hcl.Diagnostics {
	var diags hcl.Diagnostics
	r, hasRate := at["rate"]
	if hasRate {
		t.LoopRange = r.NameRange
		rates, d := l.rateList(r)
		diags = append(diags, d...)
		t.Rates = rates
	}
	a, ok := at["concurrency"]
	switch {
	case ok && hasRate:
		diags = append(diags, invalidCtx("Rate and concurrency", a.NameRange, a.Range,
			fmt.Sprintf("A traffic block is an open loop at each rate or a closed loop at each concurrency, not both (rate is at %s). Split it into two traffic blocks.", where(r.NameRange))))
	case ok:
		t.LoopRange = a.NameRange
		concs, _, d := l.intList(a, "concurrency")
		diags = append(diags, d...)
		t.Concurrency = concs
		// What only an open loop's arrival schedule reads.
		for _, name := range []string{"arrivals", "burstiness", "seed", "max_outstanding"} {
			if o, ok := at[name]; ok {
				diags = append(diags, invalidCtx("Not used in a closed loop", o.NameRange, o.Range,
					fmt.Sprintf("%s shapes an open loop's arrivals; with concurrency each request is sent when one in flight ends, so %s would be ignored. Remove it, or use rate.", name, name)))
				delete(at, name)
			}
		}
	case hasRate && traceArrivals(l, at):
		diags = append(diags, invalidCtx("Rate with trace arrivals", r.NameRange, r.Range,
			"arrivals = \"trace\" sends each request at its trace's time (scaled by the workload's speed): the trace sets the rate. Remove rate, or use other arrivals."))
	case !hasRate && traceArrivals(l, at):
	case !hasRate:
		diags = append(diags, invalid("Missing rate or concurrency", t.DeclRange,
			"A traffic block needs rate = [1, 2, 4] (requests per second, an open loop) or concurrency = [8, 32] (requests in flight, a closed loop)."))
	}
	return diags
}

// decodeArrivals reads the open loop's arrival schedule: arrivals, and
// burstiness, the shape gamma arrivals need and no other kind reads.
func (l *loader) decodeArrivals(t *Traffic, at hcl.Attributes) hcl.Diagnostics {
	var diags hcl.Diagnostics
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
	b, d := l.float(at, "burstiness")
	if b == nil && d == nil {
		if t.Arrivals == vocab.ArrivalsGamma {
			diags = append(diags, invalid("Missing burstiness", at["arrivals"].Expr.Range(),
				"gamma arrivals need burstiness, the gamma shape: 1 is Poisson, 0.5 burstier, 4 more regular. Add burstiness = 0.5, for example."))
		}
		return diags
	}
	diags = append(diags, d...)
	rng := at["burstiness"].Expr.Range()
	switch {
	case b == nil:
	case t.Arrivals != vocab.ArrivalsGamma:
		diags = append(diags, invalid("Burstiness without gamma arrivals", rng,
			"burstiness is the shape of gamma arrivals; with arrivals = %q it would be ignored. Set arrivals = \"gamma\" or remove burstiness.", t.Arrivals))
	case !(*b > 0) || math.IsInf(*b, 0):
		diags = append(diags, invalid("Invalid burstiness", rng,
			"burstiness must be a positive number (1 is Poisson; below 1 burstier, above 1 more regular); got %v.", *b))
	default:
		t.Burstiness = *b
	}
	return diags
}

// decodeTrafficSeed reads seed, the arrival schedule's seed: a whole
// number ≥ 0.
func (l *loader) decodeTrafficSeed(t *Traffic, a *hcl.Attribute) hcl.Diagnostics {
	v, ok, diags := l.value("seed", a.Expr, cty.Number)
	if !ok {
		return diags
	}
	if n, whole := wholeNumber(v.AsBigFloat()); whole && n >= 0 {
		t.Seed = int64(n)
		return diags
	}
	return append(diags, invalid("Invalid seed", a.Expr.Range(), "seed must be a whole number ≥ 0; got %s.", v.AsBigFloat().Text('g', -1)))
}

// rateList reads rate: one number or a list of numbers, each > 0 and
// written once, each diagnostic at its element.
func (l *loader) rateList(attr *hcl.Attribute) ([]float64, hcl.Diagnostics) {
	return l.numberList(attr, numberListKind{name: "rate", what: "rate", scalar: true, value: rateValue, spell: vocab.FormatRate})
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
	fitChecked := map[*Workload]bool{}
	var sends []trafficSend
	for _, t := range l.spec.Traffic {
		if t.Duration == 0 {
			t.Duration, t.DurationText = l.spec.Measure.Duration, l.spec.Measure.DurationText
		}
		if m := l.spec.Matrix(t.Label); m != nil {
			diags = append(diags, invalid("Duplicate label", t.DeclRange,
				"Traffic %q has the label of the matrix at %s; conditions read both as %s[CTX][…]. Give one another label.", t.Label, where(m.DeclRange), t.Label))
		}
		w, d := l.trafficWorkload(t)
		diags = append(diags, d...)
		if w == nil {
			continue
		}
		diags = append(diags, l.checkTraceArrivals(t, w)...)
		sends = append(sends, trafficSend{t, w})
		maxOut, outText := l.spec.Measure.MaxOutput, "max_output"
		if w.OutputTokens.IsSet() {
			maxOut, outText = w.OutputTokens.Max, "output_tokens' max"
		}
		if !fitChecked[w] {
			fitChecked[w] = true
			if w.InputTokens.IsSet() {
				diags = append(diags, l.checkLengthsFit(t, w, maxOut, outText)...)
			}
			diags = append(diags, l.checkFilterFits(t, w)...)
			diags = append(diags, l.checkTraceFits(w, maxOut)...)
		}
		if t.Context == 0 {
			continue
		}
		for _, srv := range l.spec.Servers {
			if srv.MaxModelLen == nil || t.Context+w.Prefix.Tokens+maxOut <= *srv.MaxModelLen {
				continue
			}
			mml := *srv.MaxModelLen
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Context too long for max_model_len",
				Detail: fmt.Sprintf("Traffic %q sends prompts of %s (%d tokens%s) plus %s %d = %d tokens, more than server %q allows (max_model_len = %d at %s). Use a context of at most %d tokens, lower %s, or raise max_model_len.",
					t.Label, vocab.FormatTokens(t.Context), t.Context, prefixText(w.Prefix), outText, maxOut, t.Context+w.Prefix.Tokens+maxOut, srv.Name, mml, where(l.maxModelLenRange[srv]), mml-maxOut-w.Prefix.Tokens, outText),
				Subject: t.ContextRange.Ptr(),
			})
		}
	}
	diags = append(diags, checkTraceSpeed(sends)...)
	return diags
}

// trafficWorkload resolves traffic block t's workload and checks its
// context against it: a named workload must exist; a workload that sets
// its own lengths takes no context, any other needs one.
func (l *loader) trafficWorkload(t *Traffic) (*Workload, hcl.Diagnostics) {
	w := l.spec.Workload
	if t.Workload != "" {
		if w = l.spec.NamedWorkload(t.Workload); w == nil {
			names := make([]string, len(l.spec.Workloads))
			for i, n := range l.spec.Workloads {
				names[i] = n.Name
			}
			detail := fmt.Sprintf("workload names a `workload \"NAME\" { … }` block; there is no workload %q.", t.Workload)
			if len(names) == 0 {
				detail += " Add one, or remove workload to send the unnamed workload."
			}
			return nil, hcl.Diagnostics{unknownName("Unknown workload", t.WorkloadRange, t.DeclRange, detail, t.Workload, names)}
		}
	}
	switch {
	case w.SetsLengths() && t.Context != 0:
		return nil, hcl.Diagnostics{invalid("Context with a workload that sets lengths", t.ContextRange,
			"Workload %q (%s) decides each prompt's length (%s), so traffic %q has no context: remove context. Its cells are read as %s[RATE] (or %s[CONC] in a closed loop).",
			w.Name, where(w.DeclRange), lengthSource(w), t.Label, t.Label, t.Label)}
	case !w.SetsLengths() && t.Context == 0:
		return nil, hcl.Diagnostics{invalid("Missing context", t.DeclRange,
			"Traffic %q sends prompts of one length: add context = \"8K\" (or name a workload whose dataset or input_tokens sets the lengths).", t.Label)}
	}
	return w, nil
}

// lengthSource says where a workload's prompt lengths come from.
func lengthSource(w *Workload) string {
	if w.Prompt == workload.DatasetPrompt {
		return "its dataset " + w.DatasetText
	}
	return "input_tokens = " + w.InputTokens.String()
}

// prefixText is ", behind a prefix of P tokens" for a workload with
// shared prefixes.
func prefixText(p workload.Prefix) string {
	if !p.IsSet() {
		return ""
	}
	return fmt.Sprintf(" behind a shared prefix of %d", p.Tokens)
}

// checkLengthsFit reports a workload whose longest prompt (prefix
// included) and longest output exceed a server's max_model_len.
func (l *loader) checkLengthsFit(t *Traffic, w *Workload, maxOut int, outText string) hcl.Diagnostics {
	var diags hcl.Diagnostics
	longest := w.Prefix.Tokens + w.InputTokens.Max
	for _, srv := range l.spec.Servers {
		if srv.MaxModelLen == nil || longest+maxOut <= *srv.MaxModelLen {
			continue
		}
		diags = append(diags, invalid("Lengths too long for max_model_len", w.InputTokensRange,
			"Traffic %q sends workload %q's prompts of up to %d tokens%s plus %s %d = %d tokens, more than server %q allows (max_model_len = %d at %s). Lower input_tokens' max, or raise max_model_len.",
			t.Label, w.Name, w.InputTokens.Max, prefixText(w.Prefix), outText, maxOut, longest+maxOut, srv.Name, *srv.MaxModelLen, where(l.maxModelLenRange[srv])))
	}
	return diags
}

// Cells are the cells traffic block t measures, in the order written:
// one per rate (open loop) or per concurrency (closed loop), at t's
// context (0 when its workload sets the lengths).
func (t *Traffic) Cells() []vocab.CellRef {
	var refs []vocab.CellRef
	for _, r := range t.Rates {
		refs = append(refs, vocab.CellRef{Phase: vocab.PhaseTraffic, Matrix: t.Label, Context: t.Context, Rate: r})
	}
	for _, c := range t.Concurrency {
		refs = append(refs, vocab.CellRef{Phase: vocab.PhaseTraffic, Matrix: t.Label, Context: t.Context, Concurrency: c})
	}
	return refs
}

// ClosedLoop reports whether t keeps a concurrency in flight rather than
// launching at rates.
func (t *Traffic) ClosedLoop() bool { return len(t.Concurrency) > 0 }

// trafficReference checks a condition's traversal of traffic block t
// (t["8K"][4].goodput_rps; t[8].goodput_rps when t has no context) and
// adds the cells it reads.
func (l *loader) trafficReference(tr hcl.Traversal, t *Traffic, addCell func(vocab.CellRef)) hcl.Diagnostics {
	cells := t.Cells()
	i := 1 // the step after the label
	if t.Context != 0 {
		if len(tr) > i {
			if _, d := l.contextStep(tr, i, fmt.Sprintf("traffic %q", t.Label), []int{t.Context}); d.HasErrors() {
				return d
			}
		}
		i++
	}
	if len(tr) > i {
		ref, d := trafficStep(tr, i, t)
		if d.HasErrors() {
			return d
		}
		cells = []vocab.CellRef{ref}
	}
	var diags hcl.Diagnostics
	if len(tr) > i+1 {
		diags = l.metricStep(tr, i+1, vocab.PhaseTraffic, fmt.Sprintf("Traffic %q", t.Label))
	}
	for _, c := range cells {
		addCell(c)
	}
	return diags
}

// trafficIndex is how a condition indexes traffic block t's cells, with
// an example: steady["8K"][4], replay[8].
func trafficIndex(t *Traffic, key string) string {
	if t.Context == 0 {
		return fmt.Sprintf("%s[%s]", t.Label, key)
	}
	return fmt.Sprintf("%s[%q][%s]", t.Label, vocab.FormatTokens(t.Context), key)
}

// trafficStep reads tr[i] as the index of one of t's cells: a rate (a
// number, or a string for rates that are not whole: "0.5") in an open
// loop, a concurrency in a closed loop.
func trafficStep(tr hcl.Traversal, i int, t *Traffic) (vocab.CellRef, hcl.Diagnostics) {
	ref := vocab.CellRef{Phase: vocab.PhaseTraffic, Matrix: t.Label, Context: t.Context}
	what, example := "rate", "4"
	if t.ClosedLoop() {
		what, example = "concurrency", strconv.Itoa(t.Concurrency[0])
	} else if len(t.Rates) > 0 {
		example = vocab.FormatRate(t.Rates[0])
	}
	idx, ok := tr[i].(hcl.TraverseIndex)
	if !ok {
		return ref, hcl.Diagnostics{invalidCtx("Invalid cell reference", tr[i].SourceRange(), tr.SourceRange(),
			fmt.Sprintf("Index traffic %q with a %s, like %s.goodput_rps.", t.Label, what, trafficIndex(t, example)))}
	}
	hint := ""
	if t.Context == 0 && idx.Key.IsKnown() && !idx.Key.IsNull() && idx.Key.Type() == cty.String {
		if _, err := vocab.ParseTokens(idx.Key.AsString()); err == nil {
			hint = fmt.Sprintf(" Traffic %q has no context (its workload sets the lengths): index it as %s.", t.Label, trafficIndex(t, example))
		}
	}
	if t.ClosedLoop() {
		conc, err := concurrencyValue(idx.Key)
		if err != nil {
			return ref, hcl.Diagnostics{invalidCtx("Invalid concurrency", tr[i].SourceRange(), tr.SourceRange(), upperFirst(err.Error())+"."+hint)}
		}
		if !slices.Contains(t.Concurrency, conc) {
			return ref, hcl.Diagnostics{invalidCtx("Reference to an unmeasured concurrency", tr[i].SourceRange(), tr.SourceRange(),
				fmt.Sprintf("Traffic %q does not measure concurrency %d; it measures %s.", t.Label, conc, numfmt.List(t.Concurrency, strconv.Itoa)))}
		}
		ref.Concurrency = conc
		return ref, nil
	}
	rate, err := rateValue(idx.Key)
	if err != nil {
		return ref, hcl.Diagnostics{invalidCtx("Invalid rate", tr[i].SourceRange(), tr.SourceRange(), upperFirst(err.Error())+"."+hint)}
	}
	if !slices.Contains(t.Rates, rate) {
		return ref, hcl.Diagnostics{invalidCtx("Reference to an unmeasured rate", tr[i].SourceRange(), tr.SourceRange(),
			fmt.Sprintf("Traffic %q does not measure rate %s; it measures %s.", t.Label, vocab.FormatRate(rate), numfmt.List(t.Rates, vocab.FormatRate)))}
	}
	ref.Rate = rate
	return ref, nil
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

// traceArrivals reports whether a traffic block's attributes say
// arrivals = "trace" (read before decodeArrivals, which reports a wrong
// value).
func traceArrivals(l *loader, at hcl.Attributes) bool {
	a, ok := at["arrivals"]
	if !ok {
		return false
	}
	v, diags := a.Expr.Value(l.spec.EvalContext)
	return !diags.HasErrors() && v.Type() == cty.String && v.IsKnown() && !v.IsNull() && v.AsString() == vocab.ArrivalsTrace
}
