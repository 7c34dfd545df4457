package spec

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/vocab"
)

// plausibleCeilings are, per kind of latency metric (the prefix of its
// name), the smallest ceiling in milliseconds a condition plausibly sets: a
// lower one is most likely seconds written where milliseconds are read
// (ttft_ms_p99 <= 3 meant as 3 s). A time to the first token or a request's
// latency under 10 ms is below what any server answers in; a time between
// tokens of a few milliseconds is real (the demo's is 4 ms), under 1 ms it
// is not (docs/spec.md#static-checks).
var plausibleCeilings = []struct {
	prefix string
	ms     float64
}{
	{metric.TTFTMs, 10},
	{metric.E2EMs, 10},
	{metric.TBTMs, 1},
	{metric.ITLMs, 1},
	{metric.TPOTMs, 1},
}

// unitHints finds, in a condition or objective, the comparisons of a metric
// with a literal written in the wrong unit: a duration string on a metric
// counted in milliseconds or seconds (ttft_ms_p99 <= "3s": an error saying
// to write 3000) and a latency ceiling too small to be meant in
// milliseconds (ttft_ms_p99 <= 3: a warning asking "3 ms?"). Only the
// syntax is read: the literal and the metric's name (its unit from the
// metric table).
func unitHints(expr hcl.Expression) hcl.Diagnostics {
	node, ok := expr.(hclsyntax.Node)
	if !ok {
		return nil
	}
	var diags hcl.Diagnostics
	hclsyntax.VisitAll(node, func(n hclsyntax.Node) hcl.Diagnostics {
		op, ok := n.(*hclsyntax.BinaryOpExpr)
		if !ok {
			return nil
		}
		below, above := ceilingOps[op.Op]
		if !below && !above && op.Op != hclsyntax.OpEqual && op.Op != hclsyntax.OpNotEqual {
			return nil // not a comparison
		}
		for _, side := range []struct {
			metric, literal hclsyntax.Expression
			ceiling         bool // the literal bounds the metric from above
		}{{op.LHS, op.RHS, below}, {op.RHS, op.LHS, above}} {
			m, ok := comparedMetric(side.metric)
			if !ok {
				continue
			}
			if d := unitHint(m, side.literal, side.ceiling, op.Range()); d != nil {
				diags = append(diags, d)
			}
		}
		return nil
	})
	return diags
}

// ceilingOps are the comparison operators, each with whether its right
// operand bounds its left from above (<, <=) or its left bounds its right
// from above (>, >=).
var ceilingOps = map[*hclsyntax.Operation]bool{
	hclsyntax.OpLessThan:           true,
	hclsyntax.OpLessThanOrEqual:    true,
	hclsyntax.OpGreaterThan:        false,
	hclsyntax.OpGreaterThanOrEqual: false,
}

// comparedMetric is the metric an operand reads (its last step names one:
// decode["8K"][1].ttft_ms_p99, cell.tbt_ms, c.ttft_ms in a for), from the
// table of any phase that has it.
func comparedMetric(e hclsyntax.Expression) (metric.Metric, bool) {
	var tr hcl.Traversal
	switch e := e.(type) {
	case *hclsyntax.ScopeTraversalExpr:
		tr = e.Traversal
	case *hclsyntax.RelativeTraversalExpr:
		tr = e.Traversal
	}
	if len(tr) < 2 {
		return metric.Metric{}, false
	}
	name, ok := stepName(tr[len(tr)-1])
	if !ok {
		return metric.Metric{}, false
	}
	for _, phase := range []vocab.Phase{vocab.PhaseDecode, vocab.PhasePrefill, vocab.PhaseTraffic} {
		if m, ok := metric.Lookup(phase, name); ok {
			return m, true
		}
	}
	return metric.Metric{}, false
}

// unitHint is the diagnostic of metric m compared with literal (ceiling:
// the literal bounds m from above), or nil when the literal is not a
// literal or reads right.
func unitHint(m metric.Metric, literal hclsyntax.Expression, ceiling bool, comparison hcl.Range) *hcl.Diagnostic {
	switch lit := literal.(type) {
	case *hclsyntax.TemplateExpr:
		if !lit.IsStringLiteral() || (m.Unit != "ms" && m.Unit != "s") {
			return nil
		}
		v, d := lit.Value(nil)
		if d.HasErrors() || !v.IsKnown() || v.IsNull() {
			return nil
		}
		text := strings.TrimSpace(v.AsString())
		dur, err := time.ParseDuration(text)
		if err != nil {
			return nil // not a duration: the static check's "Invalid operand" says it
		}
		unit, per := "milliseconds", float64(time.Millisecond)
		if m.Unit == "s" {
			unit, per = "seconds", float64(time.Second)
		}
		n := strconv.FormatFloat(float64(dur)/per, 'f', -1, 64)
		return &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Invalid operand",
			Detail: fmt.Sprintf("%s is a number of %s, compared here with the string %q: write %s (%s in %s).",
				m.Name, unit, text, n, text, unit),
			Subject: lit.Range().Ptr(),
			Context: comparison.Ptr(),
		}
	case *hclsyntax.LiteralValueExpr:
		if !ceiling || m.Unit != "ms" || lit.Val.Type() != cty.Number || lit.Val.IsNull() {
			return nil
		}
		floor, ok := plausibleCeiling(m)
		x, _ := lit.Val.AsBigFloat().Float64()
		if !ok || x <= 0 || x >= floor {
			return nil
		}
		n := strconv.FormatFloat(x, 'f', -1, 64)
		return &hcl.Diagnostic{
			Severity: hcl.DiagWarning,
			Summary:  fmt.Sprintf("Ceiling of %s ms?", n),
			Detail: fmt.Sprintf("%s is in milliseconds: a ceiling of %s ms is faster than any server answers (under %s ms). If %s seconds is meant, write %s.",
				m.Name, n, strconv.FormatFloat(floor, 'f', -1, 64), n, strconv.FormatFloat(x*1000, 'f', -1, 64)),
			Subject: lit.Range().Ptr(),
			Context: comparison.Ptr(),
		}
	}
	return nil
}

// plausibleCeiling is the smallest plausible ceiling of latency metric m
// in milliseconds (plausibleCeilings), false for a metric that has none.
func plausibleCeiling(m metric.Metric) (float64, bool) {
	for _, c := range plausibleCeilings {
		if strings.HasPrefix(m.Name, c.prefix) {
			return c.ms, true
		}
	}
	return 0, false
}
