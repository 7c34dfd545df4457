package spec

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/slogate/slogate/internal/metric"
	"github.com/slogate/slogate/internal/workload"
)

// Correctness is a `correctness "NAME"` block (docs/spec.md#correctness):
// greedy requests for a dataset's prompts in the same boot as the speed
// cells, outside every timed window, their outputs compared with the
// baseline's and, with a scorer, scored against the dataset's answers.
type Correctness struct {
	Name string
	// DatasetText is the dataset as written, DatasetPath resolved against
	// the spec's folder; Items its lines.
	DatasetText, DatasetPath string
	Items                    *workload.Items
	// Chat is set when the dataset's lines are conversations (sent to the
	// chat API), else they are prompts (the completions API).
	Chat bool
	// MaxOutput is the tokens asked for each prompt (default 64);
	// Logprobs the top-k kept at every position (default 5, 0: none).
	MaxOutput, Logprobs int
	// Scorer is one of Scorers, "" for no accuracy check; Pattern the
	// regex scorer's pattern (one capture group: the answer).
	Scorer  string
	Pattern string
	// Concurrency is the requests in flight (default 1: batching can
	// change a kernel's arithmetic, and with it the greedy tokens).
	Concurrency int
	// MaxMismatch is the share of prompts allowed to mismatch the
	// baseline (default 0); Margin the accuracy's non-inferiority margin
	// (default 0.01); NearTieGap the logprob gap of a near tie (default
	// 0.1).
	MaxMismatch, Margin, NearTieGap float64

	DeclRange hcl.Range
}

// Defaults of a correctness block.
const (
	DefaultCorrectnessMaxOutput = 64
	DefaultLogprobs             = 5
	DefaultCorrectnessMargin    = 0.01
	DefaultNearTieGap           = 0.1
	// MaxLogprobs is the most top-k logprobs a block may ask (vLLM's
	// default max_logprobs is 20).
	MaxLogprobs = 20
)

// Scorers are the values of scorer (docs/spec.md#correctness).
var Scorers = []string{"exact", "contains", "regex", "number", "choice", "json"}

var correctnessSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "dataset", Required: true},
		{Name: "max_output"},
		{Name: "logprobs"},
		{Name: "scorer"},
		{Name: "pattern"},
		{Name: "concurrency"},
		{Name: "max_mismatch"},
		{Name: "margin"},
		{Name: "near_tie_gap"},
	},
}

// CorrectnessBlock returns the correctness block called name, or nil.
func (s *Spec) CorrectnessBlock(name string) *Correctness {
	for _, c := range s.Correctness {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// decodeCorrectness decodes a `correctness "NAME"` block and reads its
// dataset: a problem with a line of the file is a diagnostic at that line
// of the file.
func (l *loader) decodeCorrectness(blk *hcl.Block) (*Correctness, hcl.Diagnostics) {
	c := &Correctness{Name: blk.Labels[0], DeclRange: blk.DefRange, MaxOutput: DefaultCorrectnessMaxOutput, Logprobs: DefaultLogprobs,
		Concurrency: 1, Margin: DefaultCorrectnessMargin, NearTieGap: DefaultNearTieGap}
	content, diags := blk.Body.Content(correctnessSchema)
	if !hclsyntax.ValidIdentifier(c.Name) {
		diags = append(diags, invalid("Invalid correctness name", blk.LabelRanges[0],
			"%q cannot be read in conditions as correctness[%q]: a name starts with a letter and holds letters, digits, _ and -.", c.Name, c.Name))
	}
	at := content.Attributes
	if n, d := l.positiveInt(at, "max_output", 0); d != nil || n != nil {
		diags = append(diags, d...)
		if n != nil {
			c.MaxOutput = *n
		}
	}
	if n, d := l.positiveInt(at, "concurrency", 0); d != nil || n != nil {
		diags = append(diags, d...)
		if n != nil {
			c.Concurrency = *n
		}
	}
	diags = append(diags, l.decodeLogprobs(c, at)...)
	diags = append(diags, l.decodeCorrectnessLimits(c, at)...)
	diags = append(diags, l.decodeScorer(c, at)...)
	if a, ok := at["dataset"]; ok {
		diags = append(diags, l.readItems(c, a)...)
	}
	return c, diags
}

// decodeLogprobs reads logprobs, the top-k kept at every position: a
// whole number from 0 to MaxLogprobs.
func (l *loader) decodeLogprobs(c *Correctness, at hcl.Attributes) hcl.Diagnostics {
	a, v, ok, diags := l.attr(at, "logprobs", cty.Number)
	if !ok {
		return diags
	}
	n, whole := wholeNumber(v.AsBigFloat())
	if !whole || n < 0 || n > MaxLogprobs {
		return append(diags, invalid("Invalid value", a.Expr.Range(),
			"logprobs is the top-k kept at every position, a whole number from 0 (none) to %d; got %s.", MaxLogprobs, v.AsBigFloat().Text('g', -1)))
	}
	c.Logprobs = n
	return diags
}

// decodeCorrectnessLimits reads the block's shares and gaps: max_mismatch
// and margin (from 0 to 1) and near_tie_gap (from 0 to 10).
func (l *loader) decodeCorrectnessLimits(c *Correctness, at hcl.Attributes) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, f := range []struct {
		name string
		dst  *float64
		what string
	}{
		{"max_mismatch", &c.MaxMismatch, "the share of prompts allowed to mismatch the baseline, from 0 to 1"},
		{"margin", &c.Margin, "the accuracy drop within tolerance, a share from 0 to 1 (0.01 is one point)"},
		{"near_tie_gap", &c.NearTieGap, "the logprob gap of a near tie, in nats, from 0 to 10"},
	} {
		v, d := l.float(at, f.name)
		diags = append(diags, d...)
		if v == nil {
			continue
		}
		hi := 1.0
		if f.name == "near_tie_gap" {
			hi = 10
		}
		if *v < 0 || *v > hi {
			diags = append(diags, invalid("Invalid value", at[f.name].Expr.Range(), "%s is %s; got %g.", f.name, f.what, *v))
			continue
		}
		*f.dst = *v
	}
	return diags
}

// decodeScorer reads scorer, one of Scorers, and pattern, the regex
// scorer's pattern with a capture group, which it needs and no other
// scorer reads.
func (l *loader) decodeScorer(c *Correctness, at hcl.Attributes) hcl.Diagnostics {
	var diags hcl.Diagnostics
	if s, ok, d := l.str(at, "scorer"); ok || d != nil {
		diags = append(diags, d...)
		if ok && !slices.Contains(Scorers, s) {
			a := at["scorer"]
			diags = append(diags, unknownName("Invalid scorer", a.Expr.Range(), a.Range,
				fmt.Sprintf("scorer is %s (docs/spec.md#correctness); got %q.", quotedList(Scorers), s), s, Scorers))
		} else if ok {
			c.Scorer = s
		}
	}
	p, ok, d := l.str(at, "pattern")
	if !ok && d == nil {
		if c.Scorer == "regex" {
			diags = append(diags, invalid("Missing pattern", at["scorer"].Expr.Range(),
				"The regex scorer reads the answer from the output by a pattern with a capture group: add pattern = \"#### (\\\\d+)\"."))
		}
		return diags
	}
	diags = append(diags, d...)
	if ok {
		diags = append(diags, c.setPattern(p, at["pattern"])...)
	}
	return diags
}

// setPattern sets c's pattern to p, written at a, when it is an RE2
// regular expression with a capture group and c's scorer is regex.
func (c *Correctness) setPattern(p string, a *hcl.Attribute) hcl.Diagnostics {
	switch re, err := regexp.Compile(p); {
	case c.Scorer != "regex":
		return hcl.Diagnostics{invalidCtx("Pattern without the regex scorer", a.NameRange, a.Range,
			fmt.Sprintf("pattern is the regex scorer's; this block's scorer is %q. Set scorer = \"regex\", or remove pattern.", c.Scorer))}
	case err != nil:
		return hcl.Diagnostics{invalid("Invalid pattern", a.Expr.Range(), "pattern is an RE2 regular expression (Go's regexp): %v.", err)}
	case re.NumSubexp() < 1:
		return hcl.Diagnostics{invalid("Pattern without a capture group", a.Expr.Range(),
			"The regex scorer compares the pattern's first capture group with the answer; %q has none. Put the answer's part in parentheses, as in \"#### (\\\\d+)\".", p)}
	}
	c.Pattern = p
	return nil
}

// readItems reads c's dataset and checks its lines against the block: one
// API for every line, an answer on every line when there is a scorer.
func (l *loader) readItems(c *Correctness, a *hcl.Attribute) hcl.Diagnostics {
	p, ok, diags := l.str(hcl.Attributes{"dataset": a}, "dataset")
	if !ok {
		return diags
	}
	c.DatasetText, c.DatasetPath = p, p
	if !filepath.IsAbs(p) {
		c.DatasetPath = filepath.Join(l.dir, p)
	}
	if l.opts.ReadItems == nil {
		return hcl.Diagnostics{invalidCtx("Cannot read dataset", a.Expr.Range(), a.Range,
			"The spec was loaded without a correctness dataset reader (spec.LoadOptions.ReadItems), so the dataset cannot be read or checked.")}
	}
	items, err := l.opts.ReadItems(c.DatasetPath)
	var de *workload.DatasetError
	switch {
	case err == nil:
	case errors.As(err, &de) && de.Line > 0 && len(de.Data) > 0:
		return hcl.Diagnostics{l.atDatasetLine(c, a, de.Data, de.Line, "Invalid dataset line", de.Why()+".")}
	case errors.As(err, &de) && de.Unreadable:
		return hcl.Diagnostics{invalidCtx("Cannot read dataset", a.Expr.Range(), a.Range,
			fmt.Sprintf("%s. The path is relative to the spec's folder (%s).", de.Error(), l.dir))}
	default:
		return hcl.Diagnostics{invalidCtx("Invalid dataset", a.Expr.Range(), a.Range, err.Error()+".")}
	}
	c.Items = items
	c.Chat = items.Items[0].Chat()
	for _, it := range items.Items {
		if it.Chat() != c.Chat {
			kind := map[bool]string{true: "a conversation (chat API)", false: "a prompt (completions API)"}
			return hcl.Diagnostics{l.atDatasetLine(c, a, items.Data, it.Line, "Mixed dataset",
				fmt.Sprintf("This line is %s and line %d is %s: a block's lines all go to one API. Split them into two correctness blocks.",
					kind[it.Chat()], items.Items[0].Line, kind[c.Chat]))}
		}
		if c.Scorer != "" && !it.HasAnswer {
			return hcl.Diagnostics{l.atDatasetLine(c, a, items.Data, it.Line, "Answer missing",
				fmt.Sprintf("The block's scorer %q scores each output against the line's \"answer\"; this line has none. Add \"answer\" to every line, or remove scorer (the outputs are then compared with the baseline's only).", c.Scorer))}
		}
	}
	return nil
}

// atDatasetLine is a diagnostic at line of c's dataset file (data are its
// bytes, kept in Spec.Files for the snippet), naming the block whose
// dataset it is.
func (l *loader) atDatasetLine(c *Correctness, a *hcl.Attribute, data []byte, line int, summary, detail string) *hcl.Diagnostic {
	return l.atFileLine(c.DatasetPath, data, line, summary, fmt.Sprintf("%s (The dataset of correctness %q, %s.)", detail, c.Name, where(a.Range)))
}

// atFileLine is a diagnostic at line of file name (data are its bytes,
// kept in Spec.Files for the snippet).
func (l *loader) atFileLine(name string, data []byte, line int, summary, detail string) *hcl.Diagnostic {
	if l.spec.Files[name] == nil {
		l.spec.Files[name] = &hcl.File{Bytes: data}
	}
	start, n := 0, 1
	for n < line && start < len(data) {
		if data[start] == '\n' {
			n++
		}
		start++
	}
	end := start
	for end < len(data) && data[end] != '\n' {
		end++
	}
	rng := hcl.Range{Filename: name,
		Start: hcl.Pos{Line: line, Column: 1, Byte: start},
		End:   hcl.Pos{Line: line, Column: end - start + 1, Byte: end}}
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: detail, Subject: &rng}
}

// rootCorrectness is the root name under which conditions read the
// correctness blocks: correctness["NAME"].mismatch_rate.
const rootCorrectness = "correctness"

// correctnessReference checks a condition's read of correctness[...]:
// correctness["NAME"].<figure> of a declared block (metric.Correctness).
func (l *loader) correctnessReference(tr hcl.Traversal) hcl.Diagnostics {
	var names []string
	for _, c := range l.spec.Correctness {
		names = append(names, c.Name)
	}
	if len(tr) < 2 {
		return nil
	}
	name, ok := stepName(tr[1])
	if _, isIndex := tr[1].(hcl.TraverseIndex); !ok || !isIndex {
		return hcl.Diagnostics{invalidCtx("Invalid correctness reference", tr[1].SourceRange(), tr.SourceRange(),
			`Index correctness with a correctness block's name, like correctness["greedy"].mismatch_rate.`)}
	}
	if l.spec.CorrectnessBlock(name) == nil {
		known := "no correctness block is declared"
		if len(names) > 0 {
			known = "the declared correctness blocks are " + strings.Join(names, ", ")
		}
		return hcl.Diagnostics{unknownName("Reference to an undeclared correctness block", tr[1].SourceRange(), tr.SourceRange(),
			fmt.Sprintf("No correctness %q is declared; %s.", name, known), name, names)}
	}
	if len(tr) > 2 {
		attr, ok := stepName(tr[2])
		if all := metric.CorrectnessNames(); !ok || !slices.Contains(all, attr) {
			return hcl.Diagnostics{unknownName("Unsupported attribute", tr[2].SourceRange(), tr.SourceRange(),
				fmt.Sprintf("A correctness block has no figure %q; it has %s (docs/spec.md#correctness).", attr, strings.Join(all, ", ")), attr, all)}
		}
	}
	return nil
}
