package spec

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
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
	names := &blockNames{labels: map[string]map[string]hcl.Range{}, single: map[string]*hcl.Block{}}
	for _, blk := range content.Blocks {
		if blk.Type == "variable" {
			diags = append(diags, l.decodeVariableBlock(blk, names)...)
		}
	}
	diags = append(diags, l.checkVarFlags()...)
	l.spec.EvalContext = l.evalContext(l.varObject())

	for _, blk := range content.Blocks {
		decode, ok := blockDecoders[blk.Type]
		if !ok {
			continue
		}
		if d := names.duplicate(blk); d != nil {
			diags = append(diags, d)
			continue
		}
		diags = append(diags, decode(l, blk)...)
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
	diags = append(diags, l.decodeConditions()...)
	diags = append(diags, l.checkModelLen()...)
	diags = append(diags, l.checkWorkload()...)
	return diags
}

// blockNames are the blocks seen so far, to report a second block of a
// name (a labelled block) or of a type that a spec has once (measure,
// prefill, the unnamed workload).
type blockNames struct {
	// labels[type][label] is where the first block of that label is.
	labels map[string]map[string]hcl.Range
	// single[type] is the first block of a type a spec has once.
	single map[string]*hcl.Block
}

// singleBlocks are the block types a spec has at most once, unlabelled.
var singleBlocks = []string{"measure", "prefill", "workload"}

// duplicate reports blk when a block of its type and label, or of its
// once-only type, came before it; else it records blk and returns nil.
func (n *blockNames) duplicate(blk *hcl.Block) *hcl.Diagnostic {
	if len(blk.Labels) == 0 {
		if !slices.Contains(singleBlocks, blk.Type) {
			return nil
		}
		if prev := n.single[blk.Type]; prev != nil {
			return &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  fmt.Sprintf("Duplicate %s block", blk.Type),
				Detail:   fmt.Sprintf("A spec has at most one %s block; the first one is at %s.", blk.Type, where(prev.DefRange)),
				Subject:  blk.DefRange.Ptr(),
			}
		}
		n.single[blk.Type] = blk
		return nil
	}
	m := n.labels[blk.Type]
	if m == nil {
		m = map[string]hcl.Range{}
		n.labels[blk.Type] = m
	}
	if prev, ok := m[blk.Labels[0]]; ok {
		return &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  fmt.Sprintf("Duplicate %s block", blk.Type),
			Detail: fmt.Sprintf("A %s block named %q was already declared at %s. Each %s needs its own name.",
				blk.Type, blk.Labels[0], where(prev), blk.Type),
			Subject: blk.LabelRanges[0].Ptr(),
			Context: hcl.RangeBetween(blk.TypeRange, blk.LabelRanges[0]).Ptr(),
		}
	}
	m[blk.Labels[0]] = blk.DefRange
	return nil
}

// decodeVariableBlock decodes a `variable "NAME"` block into the spec,
// unless a variable of that name came before.
func (l *loader) decodeVariableBlock(blk *hcl.Block, names *blockNames) hcl.Diagnostics {
	if d := names.duplicate(blk); d != nil {
		return hcl.Diagnostics{d}
	}
	v, diags := l.decodeVariable(blk)
	if v != nil {
		l.spec.Variables = append(l.spec.Variables, v)
	}
	return diags
}

// blockDecoders decode each root block type but variable (decoded
// first) into the spec. Assert, expect and search blocks wait in the
// loader for decodeConditions: they read blocks declared anywhere.
var blockDecoders = map[string]func(*loader, *hcl.Block) hcl.Diagnostics{
	"server": func(l *loader, blk *hcl.Block) hcl.Diagnostics {
		srv, diags := l.decodeServer(blk)
		l.spec.Servers = append(l.spec.Servers, srv)
		return diags
	},
	"measure": func(l *loader, blk *hcl.Block) hcl.Diagnostics {
		m, diags := l.decodeMeasure(blk)
		l.spec.Measure = m
		return diags
	},
	"prefill": func(l *loader, blk *hcl.Block) hcl.Diagnostics {
		p, diags := l.decodePrefill(blk)
		l.spec.Prefill = p
		return diags
	},
	"workload": func(l *loader, blk *hcl.Block) hcl.Diagnostics {
		w, diags := l.decodeWorkload(blk)
		if len(blk.Labels) == 1 {
			l.spec.Workloads = append(l.spec.Workloads, w)
		} else {
			l.spec.Workload = w
		}
		return diags
	},
	"matrix": func(l *loader, blk *hcl.Block) hcl.Diagnostics {
		m, diags := l.decodeMatrix(blk)
		if m != nil {
			l.spec.Matrices = append(l.spec.Matrices, m)
		}
		return diags
	},
	"traffic": func(l *loader, blk *hcl.Block) hcl.Diagnostics {
		t, diags := l.decodeTraffic(blk)
		if t != nil {
			l.spec.Traffic = append(l.spec.Traffic, t)
		}
		return diags
	},
	"assert": func(l *loader, blk *hcl.Block) hcl.Diagnostics {
		l.assertBlocks = append(l.assertBlocks, blk)
		return nil
	},
	"expect": func(l *loader, blk *hcl.Block) hcl.Diagnostics {
		l.expectBlocks = append(l.expectBlocks, blk)
		return nil
	},
	"search": func(l *loader, blk *hcl.Block) hcl.Diagnostics {
		l.searchBlocks = append(l.searchBlocks, blk)
		return nil
	},
	"correctness": func(l *loader, blk *hcl.Block) hcl.Diagnostics {
		c, diags := l.decodeCorrectness(blk)
		l.spec.Correctness = append(l.spec.Correctness, c)
		return diags
	},
}

// decodeConditions decodes the blocks that read the measured data, last:
// they refer to matrices and contexts declared anywhere in the file. The
// searches come first, as assertions read them.
func (l *loader) decodeConditions() hcl.Diagnostics {
	var diags hcl.Diagnostics
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
