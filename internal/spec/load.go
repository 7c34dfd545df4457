package spec

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/slogate/slogate/internal/vocab"
	"github.com/slogate/slogate/internal/workload"
)

// LoadOptions are the inputs of a spec that do not come from its file.
type LoadOptions struct {
	// Vars are the -var NAME=VALUE settings, converted to each variable's
	// declared type. A name no `variable` block declares is an error.
	Vars map[string]string
	// LookupEnv backs the env() function; nil means os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// ReadDataset reads a named workload's dataset file at load time, so
	// that its problems are diagnostics at the dataset attribute; a
	// problem with the file is a *workload.DatasetError. specload passes
	// requests.ReadDataset: spec itself reads no file but the spec's own
	// (internal/layers). Nil makes every dataset attribute an error.
	ReadDataset func(path, format string) (*workload.Dataset, error)
	// ReadItems reads a correctness block's dataset at load time, so that
	// a problem with a line is a diagnostic at that line; specload passes
	// requests.ReadItems. Nil makes every correctness dataset an error.
	ReadItems func(path string) (*workload.Items, error)
}

// Defaults applied when a spec leaves an attribute unset.
const (
	DefaultCommand      = "vllm"
	DefaultHost         = "0.0.0.0"
	DefaultPort         = 8000
	DefaultReadyTimeout = 30 * time.Minute
	DefaultDuration     = 30 * time.Second
	DefaultMaxOutput    = 4096
	DefaultEndpoint     = "completions"
	DefaultRepeat       = 1
	DefaultMaxRepeat    = 20
	DefaultBoots        = 1
	// MinAutoRepeat is repeat = "auto"'s minimum a side: the fewest repeats
	// at which the decision can be statistical (docs/method.md#repeat-auto).
	MinAutoRepeat    = 4
	DefaultTolerance = 0.05
	DefaultMatrix    = "decode"
)

// Reserved root names in assert/expect expressions: a matrix may not use them.
const (
	rootPrefill = "prefill"
	rootServer  = "server"
	rootVar     = "var"
)

// Load reads, decodes and validates the spec file at path. It always returns
// a non-nil Spec with Files set, so that diagnostics can be printed with
// source snippets (WriteDiagnostics); the Spec is usable only when the
// diagnostics hold no errors.
func Load(path string, opts LoadOptions) (*Spec, hcl.Diagnostics) {
	src, err := os.ReadFile(path)
	if err != nil {
		s := newSpec(path, map[string]*hcl.File{})
		return s, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Cannot read spec file",
			Detail:   fmt.Sprintf("%s. Check the path of the spec.", err),
		}}
	}
	return LoadSource(path, src, opts)
}

// LoadSource is Load for a spec already in memory; filename names it in
// diagnostics and anchors file() paths.
func LoadSource(filename string, src []byte, opts LoadOptions) (*Spec, hcl.Diagnostics) {
	parser := hclparse.NewParser()
	f, diags := parser.ParseHCL(src, filename)
	s := newSpec(filename, parser.Files())
	if diags.HasErrors() || f == nil {
		return s, diags
	}
	l := &loader{spec: s, opts: opts, dir: filepath.Dir(filename)}
	if l.opts.LookupEnv == nil {
		l.opts.LookupEnv = os.LookupEnv
	}
	diags = append(diags, l.load(f)...)
	return s, diags
}

func newSpec(filename string, files map[string]*hcl.File) *Spec {
	return &Spec{
		Filename: filename,
		Files:    files,
		Measure:  defaultMeasure(hcl.Range{Filename: filename}),
		Workload: DefaultWorkload(hcl.Range{Filename: filename}),
	}
}

var rootSchema = &hcl.BodySchema{
	Blocks: []hcl.BlockHeaderSchema{
		{Type: "variable", LabelNames: []string{"name"}},
		{Type: "server", LabelNames: []string{"name"}},
		{Type: "measure"},
		{Type: "prefill"},
		{Type: "workload"},
		{Type: "matrix", LabelNames: []string{"label"}},
		{Type: "traffic", LabelNames: []string{"label"}},
		{Type: "assert", LabelNames: []string{"name"}},
		{Type: "expect", LabelNames: []string{"name"}},
		{Type: "search", LabelNames: []string{"name"}},
		{Type: "correctness", LabelNames: []string{"name"}},
	},
}

// loader holds the state of one Load: the spec being filled and the source
// ranges of attributes needed for checks that span blocks.
type loader struct {
	spec *Spec
	opts LoadOptions
	dir  string

	// maxModelLenRange[server] is where max_model_len was set.
	maxModelLenRange map[*Server]hcl.Range
	// maxOutputRange is where measure.max_output was set (nil: default).
	maxOutputRange *hcl.Range
	// contextRanges[matrix][i] is where the matrix's Contexts[i] is written.
	contextRanges map[*Matrix][]hcl.Range
	// prefillContextRanges[i] is where Prefill.Contexts[i] is written.
	prefillContextRanges []hcl.Range
	// promptRange[w] is where workload w's prompt is written (absent: the
	// default); samplingAttr[w] is its sampling attribute.
	promptRange  map[*Workload]*hcl.Range
	samplingAttr map[*Workload]*hcl.Attribute
	// maxTotalRange[w] is where workload w's max_total_tokens is written.
	maxTotalRange map[*Workload]hcl.Range
	// pending expect blocks: decoded after every matrix is known.
	expectBlocks []*hcl.Block
	assertBlocks []*hcl.Block
	searchBlocks []*hcl.Block
}

func (l *loader) load(f *hcl.File) hcl.Diagnostics {
	body, named := namedWorkloadBlocks(f.Body)
	content, diags := body.Content(rootSchema)
	content.Blocks = append(content.Blocks, named...)
	l.maxModelLenRange = map[*Server]hcl.Range{}
	l.contextRanges = map[*Matrix][]hcl.Range{}
	l.promptRange, l.samplingAttr, l.maxTotalRange = map[*Workload]*hcl.Range{}, map[*Workload]*hcl.Attribute{}, map[*Workload]hcl.Range{}

	// Variables first: every other block may read var.NAME.
	seen := map[string]map[string]hcl.Range{}
	dup := func(blk *hcl.Block) bool {
		if len(blk.Labels) == 0 {
			return false
		}
		m := seen[blk.Type]
		if m == nil {
			m = map[string]hcl.Range{}
			seen[blk.Type] = m
		}
		if prev, ok := m[blk.Labels[0]]; ok {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  fmt.Sprintf("Duplicate %s block", blk.Type),
				Detail: fmt.Sprintf("A %s block named %q was already declared at %s. Each %s needs its own name.",
					blk.Type, blk.Labels[0], where(prev), blk.Type),
				Subject: blk.LabelRanges[0].Ptr(),
				Context: hcl.RangeBetween(blk.TypeRange, blk.LabelRanges[0]).Ptr(),
			})
			return true
		}
		m[blk.Labels[0]] = blk.DefRange
		return false
	}
	for _, blk := range content.Blocks {
		if blk.Type == "variable" && !dup(blk) {
			v, d := l.decodeVariable(blk)
			diags = append(diags, d...)
			if v != nil {
				l.spec.Variables = append(l.spec.Variables, v)
			}
		}
	}
	diags = append(diags, l.checkVarFlags()...)
	l.spec.EvalContext = l.evalContext(l.varObject())

	var measureBlock, prefillBlock, workloadBlock *hcl.Block
	single := func(prev **hcl.Block, blk *hcl.Block) bool {
		if *prev != nil {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  fmt.Sprintf("Duplicate %s block", blk.Type),
				Detail:   fmt.Sprintf("A spec has at most one %s block; the first one is at %s.", blk.Type, where((*prev).DefRange)),
				Subject:  blk.DefRange.Ptr(),
			})
			return false
		}
		*prev = blk
		return true
	}
	for _, blk := range content.Blocks {
		switch blk.Type {
		case "server":
			if dup(blk) {
				continue
			}
			srv, d := l.decodeServer(blk)
			diags = append(diags, d...)
			l.spec.Servers = append(l.spec.Servers, srv)
		case "measure":
			if single(&measureBlock, blk) {
				m, d := l.decodeMeasure(blk)
				diags = append(diags, d...)
				l.spec.Measure = m
			}
		case "prefill":
			if single(&prefillBlock, blk) {
				p, d := l.decodePrefill(blk)
				diags = append(diags, d...)
				l.spec.Prefill = p
			}
		case "workload":
			if len(blk.Labels) == 1 {
				if !dup(blk) {
					w, d := l.decodeWorkload(blk)
					diags = append(diags, d...)
					l.spec.Workloads = append(l.spec.Workloads, w)
				}
				continue
			}
			if single(&workloadBlock, blk) {
				w, d := l.decodeWorkload(blk)
				diags = append(diags, d...)
				l.spec.Workload = w
			}
		case "matrix":
			if dup(blk) {
				continue
			}
			m, d := l.decodeMatrix(blk)
			diags = append(diags, d...)
			if m != nil {
				l.spec.Matrices = append(l.spec.Matrices, m)
			}
		case "traffic":
			if dup(blk) {
				continue
			}
			t, d := l.decodeTraffic(blk)
			diags = append(diags, d...)
			if t != nil {
				l.spec.Traffic = append(l.spec.Traffic, t)
			}
		case "assert":
			if !dup(blk) {
				l.assertBlocks = append(l.assertBlocks, blk)
			}
		case "expect":
			if !dup(blk) {
				l.expectBlocks = append(l.expectBlocks, blk)
			}
		case "search":
			if !dup(blk) {
				l.searchBlocks = append(l.searchBlocks, blk)
			}
		case "correctness":
			if !dup(blk) {
				c, d := l.decodeCorrectness(blk)
				diags = append(diags, d...)
				l.spec.Correctness = append(l.spec.Correctness, c)
			}
		}
	}
	if len(l.spec.Servers) == 0 && !seenType(content.Blocks, "server") {
		r := hcl.Range{Filename: l.spec.Filename, Start: hcl.InitialPos, End: hcl.InitialPos}
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Missing server block",
			Detail:   `A spec needs at least one server "NAME" { model = "…" } block: slogate launches and measures each server.`,
			Subject:  &r,
		})
	}
	diags = append(diags, l.checkTraffic()...)
	// Blocks that read the measured data come last: they refer to matrices
	// and contexts declared anywhere in the file (and searches, which come
	// first: assertions read them).
	for _, blk := range l.searchBlocks {
		s, d := l.decodeSearch(blk)
		diags = append(diags, d...)
		l.spec.Searches = append(l.spec.Searches, s)
	}
	for _, blk := range l.assertBlocks {
		a, d := l.decodeAssert(blk)
		diags = append(diags, d...)
		l.spec.Asserts = append(l.spec.Asserts, a)
	}
	for _, blk := range l.expectBlocks {
		e, d := l.decodeExpect(blk)
		diags = append(diags, d...)
		l.spec.Expects = append(l.spec.Expects, e)
	}
	diags = append(diags, l.checkModelLen()...)
	diags = append(diags, l.checkWorkload()...)
	return diags
}

// namedWorkloadBlocks takes the `workload "NAME"` blocks out of a file's
// body: the schema names the workload block once, unlabelled (the
// unnamed block prefill and decode use), and HCL's schema cannot hold the
// same block type with and without a label. The rest of the body is
// decoded by the schema as before; a workload block with more labels stays
// in it, for HCL's "Extraneous label" diagnostic.
func namedWorkloadBlocks(body hcl.Body) (hcl.Body, hcl.Blocks) {
	sb, ok := body.(*hclsyntax.Body)
	if !ok {
		return body, nil
	}
	rest := *sb
	rest.Blocks = nil
	var named hcl.Blocks
	for _, b := range sb.Blocks {
		if b.Type == "workload" && len(b.Labels) == 1 {
			named = append(named, b.AsHCLBlock())
			continue
		}
		rest.Blocks = append(rest.Blocks, b)
	}
	return &rest, named
}

func seenType(blocks hcl.Blocks, typ string) bool {
	for _, b := range blocks {
		if b.Type == typ {
			return true
		}
	}
	return false
}

// Matrix returns the matrix with label, or nil.
func (s *Spec) Matrix(label string) *Matrix {
	for _, m := range s.Matrices {
		if m.Label == label {
			return m
		}
	}
	return nil
}

// Variable returns the variable called name, or nil.
func (s *Spec) Variable(name string) *Variable {
	for _, v := range s.Variables {
		if v.Name == name {
			return v
		}
	}
	return nil
}

// checkModelLen reports decode contexts that leave no room for max_output
// tokens, and prefill contexts longer than max_model_len, per server that
// sets max_model_len.
func (l *loader) checkModelLen() hcl.Diagnostics {
	var diags hcl.Diagnostics
	maxOut := l.spec.Measure.MaxOutput
	for _, srv := range l.spec.Servers {
		if srv.MaxModelLen == nil {
			continue
		}
		mml := *srv.MaxModelLen
		ctxRange := l.maxModelLenRange[srv]
		for _, m := range l.spec.Matrices {
			for i, c := range m.Contexts {
				if c+maxOut > mml {
					diags = append(diags, &hcl.Diagnostic{
						Severity: hcl.DiagError,
						Summary:  "Context too long for max_model_len",
						Detail: fmt.Sprintf("Matrix %q decodes at context %s (%d tokens) plus max_output %d = %d tokens, more than server %q allows (max_model_len = %d at %s). Use a context of at most %d tokens, lower measure.max_output, or raise max_model_len.",
							m.Label, vocab.FormatTokens(c), c, maxOut, c+maxOut, srv.Name, mml, where(ctxRange), mml-maxOut),
						Subject: l.contextRanges[m][i].Ptr(),
					})
				}
			}
		}
		if p := l.spec.Prefill; p != nil {
			for i, c := range p.Contexts {
				if c > mml {
					diags = append(diags, &hcl.Diagnostic{
						Severity: hcl.DiagError,
						Summary:  "Context too long for max_model_len",
						Detail: fmt.Sprintf("Prefill context %s (%d tokens) is more than server %q allows (max_model_len = %d at %s). A prefill context may be at most max_model_len.",
							vocab.FormatTokens(c), c, srv.Name, mml, where(ctxRange)),
						Subject: l.prefillContextRanges[i].Ptr(),
					})
				}
			}
		}
	}
	return diags
}
