package spec

import (
	"fmt"
	"strconv"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

var measureSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "duration"},
		{Name: "max_output"},
		{Name: "endpoint"},
		{Name: "repeat"},
		{Name: "max_repeat"},
		{Name: "max_gpu_time"},
		{Name: "boots"},
		{Name: "percentiles"},
	},
}

var prefillSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "contexts", Required: true}},
}

var matrixSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "contexts", Required: true},
		{Name: "concurrency", Required: true},
	},
}

func defaultMeasure(rng hcl.Range) *Measure {
	return &Measure{
		Duration:     DefaultDuration,
		DurationText: DefaultDuration.String(),
		MaxOutput:    DefaultMaxOutput,
		Endpoint:     DefaultEndpoint,
		Repeat:       DefaultRepeat,
		Boots:        DefaultBoots,
		DeclRange:    rng,
		RepeatRange:  rng, MaxGPUTimeRange: rng, BootsRange: rng,
	}
}

// WithDuration returns a copy of the spec whose measure block has window d
// (`-duration`, on run and plan alike); d ≤ 0 returns the spec itself.
func (s *Spec) WithDuration(d time.Duration) *Spec {
	if d <= 0 {
		return s
	}
	m := *s.Measure
	m.Duration, m.DurationText = d, d.String()
	cp := *s
	cp.Measure = &m
	return &cp
}

// decodeMeasure decodes the `measure` block, applying defaults.
func (l *loader) decodeMeasure(blk *hcl.Block) (*Measure, hcl.Diagnostics) {
	m := defaultMeasure(blk.DefRange)
	content, diags := blk.Body.Content(measureSchema)
	at := content.Attributes
	if d, text, ok, dd := l.duration(at, "duration"); ok || dd != nil {
		diags = append(diags, dd...)
		if ok {
			m.Duration, m.DurationText = d, text
		}
	}
	if n, dd := l.tokens(at, "max_output"); n != nil || dd != nil {
		diags = append(diags, dd...)
		if n != nil {
			m.MaxOutput = *n
			l.maxOutputRange = at["max_output"].Expr.Range().Ptr()
		}
	}
	diags = append(diags, l.decodeRepeats(m, at)...)
	if a, ok := at["percentiles"]; ok {
		ps, dd := l.percentileList(a)
		diags = append(diags, dd...)
		m.Percentiles = ps
	}
	if e, ok, dd := l.str(at, "endpoint"); ok || dd != nil {
		diags = append(diags, dd...)
		if ok {
			if e != "completions" && e != "chat" {
				diags = append(diags, invalid("Invalid endpoint", at["endpoint"].Expr.Range(),
					"endpoint is \"completions\" (token-ID prompts on /v1/completions) or \"chat\" (/v1/chat/completions); got %q.", e))
			} else {
				m.Endpoint = e
			}
		}
	}
	return m, diags
}

// decodeRepeats decodes repeat (a whole number or "auto"), max_repeat,
// max_gpu_time and boots into m, and checks that they fit together: the
// bounds belong to repeat = "auto", max_repeat is at least its minimum,
// and there are no more boots than repeats (docs/method.md#boots).
func (l *loader) decodeRepeats(m *Measure, at hcl.Attributes) hcl.Diagnostics {
	var diags hcl.Diagnostics
	if a, ok := at["repeat"]; ok {
		m.RepeatRange = a.Expr.Range()
		v, ok, dd := l.value("repeat", a.Expr, cty.DynamicPseudoType)
		diags = append(diags, dd...)
		switch {
		case !ok:
		case v.Type() == cty.String && v.AsString() == "auto":
			m.Repeat, m.RepeatAuto, m.MaxRepeat = MinAutoRepeat, true, DefaultMaxRepeat
		case v.Type() == cty.String:
			diags = append(diags, invalid("Invalid repeat", a.Expr.Range(),
				"repeat is how many times each cell is measured: a whole number, or \"auto\" to repeat a gated cell until its decision is reached; got %q.", v.AsString()))
		default:
			n, dd := l.positiveInt(at, "repeat", 0)
			for _, d := range dd {
				switch d.Summary {
				case "Invalid value":
					d.Summary = "Invalid repeat"
					d.Detail += " repeat is how many times each cell is measured (or \"auto\")."
				case "Incorrect attribute value type":
					d.Detail += " repeat is a whole number or \"auto\"."
				}
			}
			diags = append(diags, dd...)
			if n != nil {
				m.Repeat = *n
			}
		}
	}
	notAuto := func(name string) *hcl.Diagnostic {
		return invalid("Bound without repeat = \"auto\"", at[name].Expr.Range(),
			"%s bounds repeat = \"auto\" (repeats sized to the noise); with a fixed repeat it has no effect: set repeat = \"auto\" or remove %s.", name, name)
	}
	if n, dd := l.positiveInt(at, "max_repeat", 0); n != nil || dd != nil {
		diags = append(diags, dd...)
		switch {
		case n == nil:
		case !m.RepeatAuto:
			diags = append(diags, notAuto("max_repeat"))
		case *n < MinAutoRepeat:
			diags = append(diags, invalid("Invalid max_repeat", at["max_repeat"].Expr.Range(),
				"max_repeat must be at least %d, repeat = \"auto\"'s minimum a side (fewer cannot make a statistical decision); got %d.", MinAutoRepeat, *n))
		default:
			m.MaxRepeat = *n
		}
	}
	if d, text, ok, dd := l.duration(at, "max_gpu_time"); ok || dd != nil {
		diags = append(diags, dd...)
		switch {
		case !ok:
		case !m.RepeatAuto:
			diags = append(diags, notAuto("max_gpu_time"))
		default:
			m.MaxGPUTime, m.MaxGPUTimeText, m.MaxGPUTimeRange = d, text, at["max_gpu_time"].Expr.Range()
		}
	}
	if n, dd := l.positiveInt(at, "boots", 0); n != nil || dd != nil {
		for _, d := range dd {
			if d.Summary == "Invalid value" {
				d.Summary = "Invalid boots"
				d.Detail += " boots is how many times the server is started, the repeats split over the starts."
			}
		}
		diags = append(diags, dd...)
		if n != nil {
			rng := at["boots"].Expr.Range()
			switch {
			case *n > 1 && m.RepeatAuto:
				diags = append(diags, invalid("Invalid boots", rng,
					"repeat = \"auto\" decides within one server boot; with boots = %d give a fixed repeat (at least %d), split over the boots.", *n, *n))
			case *n > m.Repeat:
				diags = append(diags, invalid("More boots than repeats", rng,
					"boots = %d restarts the server between groups of repeats, but repeat = %d gives fewer repeats than boots: raise repeat to at least %d (e.g. %d, %d a boot) or lower boots.", *n, m.Repeat, *n, 3**n, 3))
			default:
				m.Boots, m.BootsRange = *n, rng
			}
		}
	}
	return diags
}

// decodePrefill decodes the `prefill` block.
func (l *loader) decodePrefill(blk *hcl.Block) (*Prefill, hcl.Diagnostics) {
	p := &Prefill{DeclRange: blk.DefRange}
	content, diags := blk.Body.Content(prefillSchema)
	if a, ok := content.Attributes["contexts"]; ok {
		ctxs, ranges, d := l.intList(a, "context")
		diags = append(diags, d...)
		p.Contexts = ctxs
		l.prefillContextRanges = ranges
	}
	return p, diags
}

// decodeMatrix decodes a `matrix "LABEL"` block. It returns nil when the
// label cannot be used in expressions.
func (l *loader) decodeMatrix(blk *hcl.Block) (*Matrix, hcl.Diagnostics) {
	label := blk.Labels[0]
	m := &Matrix{Label: label, DeclRange: blk.DefRange}
	content, diags := blk.Body.Content(matrixSchema)
	switch {
	case label == rootPrefill || label == rootServer || label == rootVar || label == rootSearch || label == rootCorrectness:
		diags = append(diags, invalid("Reserved matrix label", blk.LabelRanges[0],
			"%q is a reserved name in conditions (prefill, server, search, correctness and var are); choose another label, such as \"decode\".", label))
		return nil, diags
	case !hclsyntax.ValidIdentifier(label):
		diags = append(diags, invalid("Invalid matrix label", blk.LabelRanges[0],
			"%q cannot be read in conditions as %s[CTX][CONC]: a label starts with a letter and holds letters, digits, _ and -.", label, label))
		return nil, diags
	}
	if a, ok := content.Attributes["contexts"]; ok {
		ctxs, ranges, d := l.intList(a, "context")
		diags = append(diags, d...)
		m.Contexts = ctxs
		l.contextRanges[m] = ranges
	}
	if a, ok := content.Attributes["concurrency"]; ok {
		cs, ranges, d := l.intList(a, "concurrency")
		diags = append(diags, d...)
		m.Concurrency, m.ConcurrencyRanges = cs, ranges
	}
	return m, diags
}

// percentileList reads measure.percentiles: a list of numbers, each more
// than 0 and less than 100 and written once, each diagnostic at its
// element. Spelled in metric names by metric.PercentileSuffix (99.9 is
// "_p99_9"), a percentile needs no more decimals than FormatFloat gives.
func (l *loader) percentileList(attr *hcl.Attribute) ([]float64, hcl.Diagnostics) {
	return l.numberList(attr, numberListKind{name: "percentiles", what: "percentile", value: percentileValue,
		spell: func(p float64) string { return strconv.FormatFloat(p, 'f', -1, 64) }, example: ", such as [50, 90, 99]"})
}

// percentileValue turns one value into a percentile: a number in (0, 100).
func percentileValue(v cty.Value) (float64, error) {
	if !v.IsWhollyKnown() {
		return 0, fmt.Errorf("the value is unknown")
	}
	if v.IsNull() || v.Type() != cty.Number {
		return 0, fmt.Errorf("a percentile is a number between 0 and 100, such as 99.9, not %s", friendly(v))
	}
	f, _ := v.AsBigFloat().Float64()
	if !(f > 0 && f < 100) {
		return 0, fmt.Errorf("a percentile is more than 0 and less than 100; got %s", v.AsBigFloat().Text('g', -1))
	}
	return f, nil
}
