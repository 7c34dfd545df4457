package spec

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/slogate/slogate/internal/vocab"
)

// Search is a `search "NAME"` block: find the largest concurrency in
// [Lo, Hi] whose decode cell at Context meets Objective
// (docs/method.md#search, docs/spec.md#search).
type Search struct {
	Name    string
	Context int
	Lo, Hi  int
	// Objective is a bool expression over the probe's cell, read as
	// cell.<decode metric> (and var.NAME).
	Objective hcl.Expression
	// ObjectiveMetrics are the decode metrics the objective reads, in order
	// of first appearance.
	ObjectiveMetrics []string

	DeclRange hcl.Range
}

// rootSearch is the root name under which assertions read searches:
// search["NAME"].concurrency.
const rootSearch = "search"

// rootCell is the root name an objective reads the probe's cell by.
const rootCell = "cell"

// SearchAttributes are the attributes of search["NAME"] in conditions.
var SearchAttributes = []string{"concurrency", "found", "monotone", "cell", "probes"}

var searchSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "context", Required: true},
		{Name: "concurrency", Required: true},
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

// decodeSearch decodes a `search "NAME"` block. It runs after the servers
// and the measure block are decoded: the context must leave room for
// max_output within each server's max_model_len.
func (l *loader) decodeSearch(blk *hcl.Block) (*Search, hcl.Diagnostics) {
	s := &Search{Name: blk.Labels[0], DeclRange: blk.DefRange}
	content, diags := blk.Body.Content(searchSchema)
	if !hclsyntax.ValidIdentifier(s.Name) {
		diags = append(diags, invalid("Invalid search name", blk.LabelRanges[0],
			"%q cannot be read in conditions as search[%q]: a name starts with a letter and holds letters, digits, _ and -.", s.Name, s.Name))
	}
	at := content.Attributes
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
	if a, ok := at["objective"]; ok {
		s.Objective = a.Expr
		metrics, d := l.objectiveReferences(a.Expr)
		diags = append(diags, d...)
		s.ObjectiveMetrics = metrics
	}
	return s, diags
}

// searchRange reads concurrency = [lo, hi] with 1 ≤ lo < hi.
func (l *loader) searchRange(s *Search, a *hcl.Attribute) hcl.Diagnostics {
	exprs, d := hcl.ExprList(a.Expr)
	if d.HasErrors() || len(exprs) != 2 {
		return hcl.Diagnostics{invalid("Invalid search range", a.Expr.Range(),
			"concurrency is the range searched, a pair [lo, hi] such as [1, 256].")}
	}
	var diags hcl.Diagnostics
	var ends [2]int
	for i, e := range exprs {
		v, d := e.Value(l.spec.EvalContext)
		diags = append(diags, d...)
		if d.HasErrors() {
			return diags
		}
		n, err := concurrencyValue(v)
		if err != nil {
			return append(diags, invalid("Invalid concurrency", e.Range(), "%s.", upperFirst(err.Error())))
		}
		ends[i] = n
	}
	if ends[0] >= ends[1] {
		return append(diags, invalid("Invalid search range", a.Expr.Range(),
			"The range [%d, %d] is empty: its lower end must be below its upper end, as in [1, 256].", ends[0], ends[1]))
	}
	s.Lo, s.Hi = ends[0], ends[1]
	return diags
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

// objectiveReferences checks that an objective reads only cell.<decode
// metric> and var.NAME, and returns the metrics it reads.
func (l *loader) objectiveReferences(expr hcl.Expression) ([]string, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	var metrics []string
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
					"Read a metric of the probe's cell by name, like cell.per_request_tps."))
				continue
			}
			d := l.metricStep(tr, 1, vocab.PhaseDecode, "Decode")
			diags = append(diags, d...)
			if name, ok := stepName(tr[1]); ok && !d.HasErrors() && name != CellStatusAttribute && !slices.Contains(metrics, name) {
				metrics = append(metrics, name)
			}
		default:
			diags = append(diags, unknownName("Unknown variable in objective", tr[0].SourceRange(), tr.SourceRange(),
				fmt.Sprintf("An objective reads the probe's decode cell as cell.<metric> (and var.NAME); %q is not one of them.", tr.RootName()),
				tr.RootName(), []string{rootCell, rootVar}))
		}
	}
	if len(metrics) == 0 && !diags.HasErrors() {
		diags = append(diags, invalid("Constant objective", expr.Range(),
			"The objective reads no metric of the probe's cell, so every probe would give the same answer: write a comparison such as cell.per_request_tps >= 50."))
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
		attr, ok := stepName(tr[2])
		if !ok || !slices.Contains(SearchAttributes, attr) {
			return nil, hcl.Diagnostics{unknownName("Unsupported attribute", tr[2].SourceRange(), tr.SourceRange(),
				fmt.Sprintf("A search has no attribute %q; it has %s.", attr, strings.Join(SearchAttributes, ", ")), attr, SearchAttributes)}
		}
		if attr == "cell" && len(tr) > 3 {
			if d := l.metricStep(tr, 3, vocab.PhaseDecode, "Search"); d.HasErrors() {
				return nil, d
			}
		}
	}
	return []string{name}, nil
}
