package spec

import (
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

var measureSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "duration"},
		{Name: "max_output"},
		{Name: "endpoint"},
		{Name: "repeat"},
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
		DeclRange:    rng,
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
	if n, dd := l.positiveInt(at, "repeat", 0); n != nil || dd != nil {
		for _, d := range dd {
			if d.Summary == "Invalid value" {
				d.Summary = "Invalid repeat"
				d.Detail += " repeat is how many times each cell is measured."
			}
		}
		diags = append(diags, dd...)
		if n != nil {
			m.Repeat = *n
		}
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
	case label == rootPrefill || label == rootServer || label == rootVar || label == rootSearch:
		diags = append(diags, invalid("Reserved matrix label", blk.LabelRanges[0],
			"%q is a reserved name in conditions (prefill, server, search and var are); choose another label, such as \"decode\".", label))
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
