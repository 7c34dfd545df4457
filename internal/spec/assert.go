package spec

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/numfmt"
	namesuggest "github.com/slogate/slogate/internal/suggest"
	"github.com/slogate/slogate/internal/vocab"
)

// ServerAttributes are the attributes of the `server` object that
// assert/expect conditions may read (server.kv_cache_tokens, …). They are
// the keys of result.Server that describe the measured server.
var ServerAttributes = []string{
	"name", "model", "served_model", "endpoint", "version", "max_model_len",
	"kv_cache_tokens", "max_num_seqs", "tensor_parallel_size", "kv_cache_dtype", "speculative",
	"simulated", "gpus", "labels",
}

// CellStatusAttribute is the attribute of every cell object that holds its
// status ("valid", "queued", …) beside the metrics.
const CellStatusAttribute = "status"

var assertSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "condition", Required: true},
		{Name: "error_message"},
	},
}

var expectSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "metric", Required: true},
		{Name: "matrix"},
		{Name: "tolerance"},
		{Name: "values", Required: true},
	},
}

// decodeAssert decodes an `assert "NAME"` block and finds, statically, the
// cells its condition reads.
func (l *loader) decodeAssert(blk *hcl.Block) (*Assert, hcl.Diagnostics) {
	a := &Assert{Name: blk.Labels[0], DeclRange: blk.DefRange}
	content, diags := blk.Body.Content(assertSchema)
	if msg, ok, d := l.str(content.Attributes, "error_message"); ok || d != nil {
		diags = append(diags, d...)
		a.ErrorMessage = msg
	}
	if attr, ok := content.Attributes["condition"]; ok {
		a.Condition = attr.Expr
		cells, readsServer, d := l.references(attr.Expr)
		diags = append(diags, d...)
		diags = append(diags, unitHints(attr.Expr)...)
		a.Cells, a.ReadsServer = cells, readsServer
		a.Metrics = l.metricsRead(attr.Expr)
		for _, tr := range attr.Expr.Variables() {
			if tr.RootName() == rootSearch {
				names, _ := l.searchReference(tr)
				for _, n := range names {
					if !slices.Contains(a.Searches, n) {
						a.Searches = append(a.Searches, n)
					}
				}
			}
		}
	}
	return a, diags
}

// references walks the traversals of a condition (expr.Variables()) and
// returns the cells they read, in order of first appearance, and whether
// the condition reads `server`. A traversal that stops above a cell (e.g.
// decode["8K"] inside a for expression) needs every cell below it.
func (l *loader) references(expr hcl.Expression) ([]vocab.CellRef, bool, hcl.Diagnostics) {
	var (
		diags       hcl.Diagnostics
		cells       []vocab.CellRef
		readsServer bool
		readsData   bool
	)
	addCell := func(c vocab.CellRef) {
		if !slices.Contains(cells, c) {
			cells = append(cells, c)
		}
	}
	for _, tr := range expr.Variables() {
		switch tr.RootName() {
		case rootVar:
			diags = append(diags, l.varReference(tr)...)
		case rootServer:
			readsData, readsServer = true, true
			diags = append(diags, serverReference(tr)...)
		case rootSearch:
			readsData = true
			_, d := l.searchReference(tr)
			diags = append(diags, d...)
		case rootCorrectness:
			readsData = true
			diags = append(diags, l.correctnessReference(tr)...)
		case rootPrefill:
			readsData = true
			diags = append(diags, l.prefillReference(tr, addCell)...)
		default:
			d, measured := l.blockReference(tr, addCell)
			readsData = readsData || measured
			diags = append(diags, d...)
		}
	}
	if !readsData && !diags.HasErrors() {
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Constant condition",
			Detail:   `The condition reads no measured data, so it gives the same answer whatever the server does. Compare a cell's metric, like decode["8K"][64].total_tps >= 6000, or prefill["8K"].tps, or server.kv_cache_tokens.`,
			Subject:  expr.Range().Ptr(),
		})
	}
	return cells, readsServer, diags
}

// varReference checks a condition's traversal of var: var.NAME must name
// a declared variable.
func (l *loader) varReference(tr hcl.Traversal) hcl.Diagnostics {
	if len(tr) > 1 {
		if at, ok := tr[1].(hcl.TraverseAttr); ok && l.spec.Variable(at.Name) == nil {
			return hcl.Diagnostics{l.undeclaredVar(at.Name, tr)}
		}
	}
	return nil
}

// serverReference checks a condition's traversal of server: the step
// after it must be one of ServerAttributes.
func serverReference(tr hcl.Traversal) hcl.Diagnostics {
	if len(tr) < 2 {
		return nil
	}
	name, ok := stepName(tr[1])
	if ok && slices.Contains(ServerAttributes, name) {
		return nil
	}
	return hcl.Diagnostics{unknownName("Unsupported attribute", tr[1].SourceRange(), tr.SourceRange(),
		fmt.Sprintf("The server object has no attribute %q; it has %s.", name, strings.Join(ServerAttributes, ", ")),
		name, ServerAttributes)}
}

// prefillReference checks a condition's traversal of prefill
// (prefill["8K"].tps) and adds the cells it reads.
func (l *loader) prefillReference(tr hcl.Traversal, addCell func(vocab.CellRef)) hcl.Diagnostics {
	if l.spec.Prefill == nil {
		return hcl.Diagnostics{invalidCtx("Reference to unmeasured prefill", tr[0].SourceRange(), tr.SourceRange(),
			"The condition reads prefill, but the spec has no prefill block: add prefill { contexts = [...] }.")}
	}
	var diags hcl.Diagnostics
	ctxs := l.spec.Prefill.Contexts
	if len(tr) > 1 {
		ctx, d := l.contextStep(tr, 1, "prefill", ctxs)
		diags = append(diags, d...)
		if d.HasErrors() {
			return diags
		}
		ctxs = []int{ctx}
		if len(tr) > 2 {
			diags = append(diags, l.metricStep(tr, 2, vocab.PhasePrefill, "prefill")...)
		}
	}
	for _, c := range ctxs {
		addCell(vocab.CellRef{Phase: vocab.PhasePrefill, Context: c})
	}
	return diags
}

// blockReference checks a condition's traversal rooted at a traffic
// block's or a matrix's label and adds the cells it reads; measured is
// false when the root names neither.
func (l *loader) blockReference(tr hcl.Traversal, addCell func(vocab.CellRef)) (diags hcl.Diagnostics, measured bool) {
	if t := l.spec.TrafficBlock(tr.RootName()); t != nil {
		return l.trafficReference(tr, t, addCell), true
	}
	m := l.spec.Matrix(tr.RootName())
	if m == nil {
		return hcl.Diagnostics{l.unknownRoot(tr)}, false
	}
	return l.matrixReference(tr, m, addCell), true
}

// matrixReference checks a condition's traversal of matrix m
// (decode["8K"][64].total_tps) and adds the cells it reads. Each step is
// checked, so that one pass names every problem of the reference (the
// context, the concurrency and the metric).
func (l *loader) matrixReference(tr hcl.Traversal, m *Matrix, addCell func(vocab.CellRef)) hcl.Diagnostics {
	var diags hcl.Diagnostics
	ctxs, concs := m.Contexts, m.Concurrency
	bad := false
	if d := unmeasuredCell(tr, m); d != nil {
		diags, bad = append(diags, d), true
	} else {
		if len(tr) > 1 {
			ctx, d := l.contextStep(tr, 1, fmt.Sprintf("matrix %q", m.Label), m.Contexts)
			diags = append(diags, d...)
			ctxs, bad = []int{ctx}, d.HasErrors()
			if _, index := tr[1].(hcl.TraverseIndex); !index {
				return diags // not a cell reference at all: its later steps mean nothing
			}
		}
		if len(tr) > 2 {
			conc, d := concurrencyStep(tr, 2, m)
			diags = append(diags, d...)
			concs, bad = []int{conc}, bad || d.HasErrors()
		}
	}
	if len(tr) > 3 {
		diags = append(diags, l.metricStep(tr, 3, vocab.PhaseDecode, m.Label)...)
	}
	if bad {
		return diags
	}
	for _, c := range ctxs {
		for _, k := range concs {
			addCell(vocab.CellRef{Phase: vocab.PhaseDecode, Matrix: m.Label, Context: c, Concurrency: k})
		}
	}
	return diags
}

// metricsRead is the prefill and decode metrics expr reads by name, by
// phase, each once in order of first appearance: the step after a prefill
// context (prefill["8K"].tps) or after a matrix cell
// (decode["8K"][1].per_request_tps). A metric read through a for
// expression's variable is not found here.
func (l *loader) metricsRead(expr hcl.Expression) map[vocab.Phase][]string {
	var out map[vocab.Phase][]string
	add := func(phase vocab.Phase, tr hcl.Traversal, i int) {
		if len(tr) <= i {
			return
		}
		name, ok := stepName(tr[i])
		if _, known := metric.Lookup(phase, name); !ok || !known || slices.Contains(out[phase], name) {
			return
		}
		if out == nil {
			out = map[vocab.Phase][]string{}
		}
		out[phase] = append(out[phase], name)
	}
	for _, tr := range expr.Variables() {
		switch root := tr.RootName(); {
		case root == rootPrefill:
			add(vocab.PhasePrefill, tr, 2)
		case l.spec.Matrix(root) != nil:
			add(vocab.PhaseDecode, tr, 3)
		}
	}
	return out
}

// AssertedMetrics are the prefill and decode metrics the spec's assert
// blocks read (Assert.Metrics) and its expect blocks set, by phase, each
// once in order of first appearance: a comparison with a baseline
// compares them beside its default metrics, so that a metric an SLO is
// written on is never left out of the gate (docs/method.md#comparing-runs).
func (s *Spec) AssertedMetrics() map[vocab.Phase][]string {
	out := map[vocab.Phase][]string{}
	add := func(phase vocab.Phase, name string) {
		if !slices.Contains(out[phase], name) {
			out[phase] = append(out[phase], name)
		}
	}
	for _, a := range s.Asserts {
		for _, phase := range []vocab.Phase{vocab.PhasePrefill, vocab.PhaseDecode} {
			for _, name := range a.Metrics[phase] {
				add(phase, name)
			}
		}
	}
	for _, e := range s.Expects {
		phase := vocab.PhaseDecode
		if e.Matrix == "prefill" {
			phase = vocab.PhasePrefill
		}
		add(phase, e.Metric)
	}
	return out
}

// stepName is the name an attribute step or a string index step selects.
func stepName(t hcl.Traverser) (string, bool) {
	switch s := t.(type) {
	case hcl.TraverseAttr:
		return s.Name, true
	case hcl.TraverseIndex:
		if s.Key.Type() == cty.String && s.Key.IsKnown() && !s.Key.IsNull() {
			return s.Key.AsString(), true
		}
	}
	return "", false
}

// contextStep reads tr[i] as a context index ("8K" or 8192) that must be
// one of measured.
func (l *loader) contextStep(tr hcl.Traversal, i int, what string, measured []int) (int, hcl.Diagnostics) {
	idx, ok := tr[i].(hcl.TraverseIndex)
	if !ok || !idx.Key.IsKnown() || idx.Key.IsNull() {
		return 0, hcl.Diagnostics{invalidCtx("Invalid cell reference", tr[i].SourceRange(), tr.SourceRange(),
			fmt.Sprintf("Index %s with a context, like %s[\"8K\"]%s.", tr.RootName(), tr.RootName(), cellSuffix(tr.RootName())))}
	}
	ctx, err := tokenValue(idx.Key)
	if err != nil {
		return 0, hcl.Diagnostics{invalidCtx("Invalid context size", tr[i].SourceRange(), tr.SourceRange(), upperFirst(err.Error())+".")}
	}
	// An empty list is the block's own error (its contexts are missing or
	// invalid), reported there: a second error here would only say
	// "it measures ." of nothing.
	if len(measured) > 0 && !slices.Contains(measured, ctx) {
		return 0, hcl.Diagnostics{invalidCtx("Reference to an unmeasured context", tr[i].SourceRange(), tr.SourceRange(),
			fmt.Sprintf("%s does not measure context %s; it measures %s.", upperFirst(what), vocab.FormatTokens(ctx), numfmt.List(measured, vocab.FormatTokens)))}
	}
	return ctx, nil
}

func cellSuffix(root string) string {
	if root == rootPrefill {
		return ".tps"
	}
	return "[64].total_tps"
}

// concurrencyStep reads tr[i] as a concurrency index that m measures.
func concurrencyStep(tr hcl.Traversal, i int, m *Matrix) (int, hcl.Diagnostics) {
	idx, ok := tr[i].(hcl.TraverseIndex)
	if !ok || !idx.Key.IsKnown() {
		return 0, hcl.Diagnostics{invalidCtx("Invalid cell reference", tr[i].SourceRange(), tr.SourceRange(),
			fmt.Sprintf("Index a context of %s with a concurrency, like %s[\"8K\"][64].total_tps.", m.Label, m.Label))}
	}
	conc, err := concurrencyValue(idx.Key)
	if err != nil {
		return 0, hcl.Diagnostics{invalidCtx("Invalid concurrency", tr[i].SourceRange(), tr.SourceRange(), upperFirst(err.Error())+".")}
	}
	if len(m.Concurrency) > 0 && !slices.Contains(m.Concurrency, conc) { // empty: the matrix's own error, as in contextStep
		return 0, hcl.Diagnostics{invalidCtx("Reference to an unmeasured concurrency", tr[i].SourceRange(), tr.SourceRange(),
			fmt.Sprintf("Matrix %q does not measure concurrency %d; it measures %s.", m.Label, conc, numfmt.List(m.Concurrency, strconv.Itoa)))}
	}
	return conc, nil
}

// unmeasuredCell is the one diagnostic of a reference MATRIX[CTX][CONC]
// to a cell whose context and concurrency are both valid but neither
// measured, naming both: two separate errors would have the user fix the
// context, rerun and meet the concurrency. Nil otherwise (contextStep and
// concurrencyStep say what is wrong with either alone).
func unmeasuredCell(tr hcl.Traversal, m *Matrix) *hcl.Diagnostic {
	if len(tr) < 3 || len(m.Contexts) == 0 || len(m.Concurrency) == 0 {
		return nil
	}
	ci, ok1 := tr[1].(hcl.TraverseIndex)
	ki, ok2 := tr[2].(hcl.TraverseIndex)
	if !ok1 || !ok2 || !ci.Key.IsKnown() || !ki.Key.IsKnown() {
		return nil
	}
	ctx, err1 := tokenValue(ci.Key)
	conc, err2 := concurrencyValue(ki.Key)
	if err1 != nil || err2 != nil || slices.Contains(m.Contexts, ctx) || slices.Contains(m.Concurrency, conc) {
		return nil
	}
	return invalidCtx("Reference to an unmeasured cell", hcl.RangeBetween(tr[1].SourceRange(), tr[2].SourceRange()), tr.SourceRange(),
		fmt.Sprintf("Matrix %q measures neither context %s nor concurrency %d: its contexts are %s, its concurrency levels %s.",
			m.Label, vocab.FormatTokens(ctx), conc, numfmt.List(m.Contexts, vocab.FormatTokens), numfmt.List(m.Concurrency, strconv.Itoa)))
}

// metricStep checks that tr[i] names a metric of phase, a percentile
// among them one that measure.percentiles lists.
func (l *loader) metricStep(tr hcl.Traversal, i int, phase vocab.Phase, what string) hcl.Diagnostics {
	name, ok := stepName(tr[i])
	if !ok {
		return hcl.Diagnostics{invalidCtx("Invalid cell reference", tr[i].SourceRange(), tr.SourceRange(),
			fmt.Sprintf("Read a metric of the cell by name, like .%s.", metric.Names(phase)[0]))}
	}
	m, ok := metric.Lookup(phase, name)
	if ok && isTurnBeyond(name) {
		// The naming rule reads any turn, but a cell's object holds turns
		// 1 … MaxTurnMetrics only: said here, not as HCL's bare
		// "Unsupported attribute" of the static check.
		return hcl.Diagnostics{invalidCtx("Unknown metric", tr[i].SourceRange(), tr.SourceRange(),
			fmt.Sprintf("Conditions read the TTFT of conversation turns 1 to %d (%s … %s); %q is beyond them.",
				metric.MaxTurnMetrics, metric.TurnName(1), metric.TurnName(metric.MaxTurnMetrics), name))}
	}
	if ok {
		return l.percentileMeasured(m, tr[i].SourceRange(), tr.SourceRange())
	}
	if name == CellStatusAttribute {
		return nil
	}
	names := metric.Names(phase)
	listed := strings.Join(names, ", ")
	if phase == vocab.PhaseTraffic {
		// The per-turn TTFTs are a naming rule, not table rows: offer them
		// to the suggestion and name them in the list.
		for _, t := range metric.TurnMetrics() {
			names = append(names, t.Name)
		}
		listed += fmt.Sprintf(", and %s … %s (the TTFT of each conversation turn)", metric.TurnName(1), metric.TurnName(metric.MaxTurnMetrics))
	}
	return hcl.Diagnostics{unknownMetric(tr[i].SourceRange(), tr.SourceRange(),
		fmt.Sprintf("%s cells have no metric %q; the %s metrics are %s.", what, name, phase, listed),
		name, names)}
}

// isTurnBeyond reports whether name is a per-turn TTFT past the turns a
// condition can read (ttft_ms_turn9 and on).
func isTurnBeyond(name string) bool {
	for _, t := range metric.TurnMetrics() {
		if t.Name == name {
			return false
		}
	}
	return strings.HasPrefix(name, metric.TTFTMsTurn)
}

func (l *loader) undeclaredVar(name string, tr hcl.Traversal) *hcl.Diagnostic {
	var names []string
	for _, v := range l.spec.Variables {
		names = append(names, v.Name)
	}
	return unknownName("Reference to undeclared input variable", tr[1].SourceRange(), tr.SourceRange(),
		fmt.Sprintf("No variable %q is declared; add a variable %q { default = … } block.", name, name), name, names)
}

// unknownRoot reports a condition root that is neither prefill, server,
// var nor a declared matrix.
func (l *loader) unknownRoot(tr hcl.Traversal) *hcl.Diagnostic {
	root := tr.RootName()
	names := []string{rootPrefill, rootServer, rootVar}
	var labels []string
	for _, m := range l.spec.Matrices {
		labels = append(labels, m.Label)
	}
	for _, t := range l.spec.Traffic {
		labels = append(labels, t.Label)
	}
	names = append(names, labels...)
	known := "no matrix is declared"
	if len(labels) > 0 {
		known = "the declared matrices are " + strings.Join(labels, ", ")
	}
	summary, detail := "Unknown variable", fmt.Sprintf("There is no variable named %q: conditions read prefill[CTX], MATRIX[CTX][CONC] (%s), server and var.", root, known)
	if len(tr) > 1 {
		if _, ok := tr[1].(hcl.TraverseIndex); ok {
			summary = "Reference to an undeclared matrix"
			detail = fmt.Sprintf("No matrix %q is declared; %s.", root, known)
		}
	}
	return unknownName(summary, tr[0].SourceRange(), tr.SourceRange(), detail, root, names)
}

func unknownName(summary string, subject, context hcl.Range, detail, name string, candidates []string) *hcl.Diagnostic {
	if s := nearest(name, candidates); s != "" {
		detail += fmt.Sprintf(" Did you mean %q?", s)
	}
	return invalidCtx(summary, subject, context, detail)
}

// percentileMeasured reports a percentile of the naming rule that
// measure.percentiles does not list (docs/method.md#metric-names).
func (l *loader) percentileMeasured(m metric.Metric, subject, context hcl.Range) hcl.Diagnostics {
	ps := metric.DefaultPercentiles
	if l.spec.Measure != nil && len(l.spec.Measure.Percentiles) > 0 {
		ps = l.spec.Measure.Percentiles
	}
	if m.Percentile == 0 || slices.Contains(ps, m.Percentile) {
		return nil
	}
	list := make([]string, len(ps))
	for i, p := range ps {
		list[i] = strconv.FormatFloat(p, 'f', -1, 64)
	}
	p := strconv.FormatFloat(m.Percentile, 'f', -1, 64)
	return hcl.Diagnostics{invalidCtx("Unmeasured percentile", subject, context,
		fmt.Sprintf("%s is the %s percentile of %s, which is not measured: measure.percentiles is [%s]; add %s to it.",
			m.Name, p, m.PercentileOf, strings.Join(list, ", "), p))}
}

// unknownMetric is the "Unknown metric" diagnostic, with the metric the
// user probably meant: a typo, or the unit left out (ttft_p99 for
// ttft_ms_p99).
func unknownMetric(subject, context hcl.Range, detail, name string, candidates []string) *hcl.Diagnostic {
	if s := namesuggest.Name(name, candidates); s != "" {
		detail += fmt.Sprintf(" Did you mean %q?", s)
	}
	return invalidCtx("Unknown metric", subject, context, detail)
}

func invalidCtx(summary string, subject, context hcl.Range, detail string) *hcl.Diagnostic {
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  summary,
		Detail:   detail,
		Subject:  subject.Ptr(),
		Context:  context.Ptr(),
	}
}
