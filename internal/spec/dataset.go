package spec

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/slogate/slogate/internal/workload"
)

// namedWorkloadSchema is a `workload "NAME"` block's: the unnamed block's
// attributes and the ones traffic reads (docs/spec.md#named-workloads).
var namedWorkloadSchema = &hcl.BodySchema{
	Attributes: append(slices.Clone(workloadSchema.Attributes),
		hcl.AttributeSchema{Name: "dataset"},
		hcl.AttributeSchema{Name: "format"},
		hcl.AttributeSchema{Name: "min_prompt_tokens"},
		hcl.AttributeSchema{Name: "min_output_tokens"},
		hcl.AttributeSchema{Name: "max_prompt_tokens"},
		hcl.AttributeSchema{Name: "max_total_tokens"},
		hcl.AttributeSchema{Name: "input_tokens"},
		hcl.AttributeSchema{Name: "output_tokens"},
		hcl.AttributeSchema{Name: "ignore_eos"},
		hcl.AttributeSchema{Name: "prefix"},
		hcl.AttributeSchema{Name: "turns"},
		hcl.AttributeSchema{Name: "speed"},
		hcl.AttributeSchema{Name: "slice"},
		hcl.AttributeSchema{Name: "max_requests"},
		hcl.AttributeSchema{Name: "drop_over_length"},
	),
}

// filterAttributes are the attributes of vLLM's is_valid_sequence limits,
// each with where its value goes.
var filterAttributes = []struct {
	name string
	dst  func(*workload.Filter) *int
}{
	{"min_prompt_tokens", func(f *workload.Filter) *int { return &f.MinPromptTokens }},
	{"min_output_tokens", func(f *workload.Filter) *int { return &f.MinOutputTokens }},
	{"max_prompt_tokens", func(f *workload.Filter) *int { return &f.MaxPromptTokens }},
	{"max_total_tokens", func(f *workload.Filter) *int { return &f.MaxTotalTokens }},
}

// decodeTrafficWorkload decodes a named workload's traffic attributes into
// w: the dataset (read now, so that its problems are diagnostics at load
// time) and its filter, the lengths, ignore_eos, prefix and turns.
func (l *loader) decodeTrafficWorkload(w *Workload, at hcl.Attributes) hcl.Diagnostics {
	for _, r := range []*hcl.Range{&w.DatasetRange, &w.InputTokensRange, &w.OutputTokensRange, &w.PrefixRange, &w.TurnsRange} {
		*r = w.DeclRange
	}
	diags := l.decodeDatasetFormat(w, at)
	diags = append(diags, l.decodeDataset(w, at)...)
	diags = append(diags, l.decodeTrace(w, at)...)
	diags = append(diags, l.decodeFilter(w, at)...)
	diags = append(diags, l.decodeLengths(w, at)...)
	diags = append(diags, l.setBool(at, "ignore_eos", &w.IgnoreEOS)...)
	if a, ok := at["prefix"]; ok {
		diags = append(diags, l.decodeWorkloadPrefix(w, a)...)
	}
	if n, d := l.positiveInt(at, "turns", 0); n != nil || d != nil {
		diags = append(diags, d...)
		if n != nil {
			diags = append(diags, decodeTurns(w, at["turns"], *n)...)
		}
	}
	return diags
}

// decodeDatasetFormat reads format, the dataset's format when it is not
// to be detected from the file; only a dataset reads it.
func (l *loader) decodeDatasetFormat(w *Workload, at hcl.Attributes) hcl.Diagnostics {
	f, ok, diags := l.str(at, "format")
	switch {
	case !ok:
	case w.Prompt != workload.DatasetPrompt:
		diags = append(diags, datasetOnly("format", at["format"], w))
	case !slices.Contains(workload.Formats, f):
		diags = append(diags, unknownName("Invalid dataset format", at["format"].Expr.Range(), at["format"].Range,
			fmt.Sprintf("format is %s (docs/spec.md#datasets); got %q. Leave it out to detect the format from the file.", quotedList(workload.Formats), f), f, workload.Formats))
	default:
		w.DatasetFormat = f
	}
	return diags
}

// decodeDataset reads dataset, the file of a dataset workload's prompts,
// and reads the file itself; a dataset workload without one is an error
// at its prompt.
func (l *loader) decodeDataset(w *Workload, at hcl.Attributes) hcl.Diagnostics {
	dataset := w.Prompt == workload.DatasetPrompt
	p, ok, diags := l.str(at, "dataset")
	if !ok && diags == nil {
		if dataset && l.promptRange[w] != nil {
			diags = append(diags, invalid("Missing dataset", *l.promptRange[w],
				"prompt = %q sends the prompts of a dataset file; add dataset = \"sharegpt.json\" (a path relative to the spec's folder).", workload.DatasetPrompt))
		}
		return diags
	}
	a := at["dataset"]
	switch {
	case !ok:
	case !dataset:
		diags = append(diags, invalidCtx("Dataset with generated prompts", a.NameRange, a.Range,
			fmt.Sprintf("dataset is read by prompt = %q; this workload's prompt is %q. Remove prompt (or set it to %q), or remove dataset.", workload.DatasetPrompt, w.Prompt, workload.DatasetPrompt)))
	default:
		w.DatasetText, w.DatasetRange = p, a.Expr.Range()
		w.DatasetPath = p
		if !filepath.IsAbs(p) {
			w.DatasetPath = filepath.Join(l.dir, p)
		}
		diags = append(diags, l.readDataset(w, a)...)
	}
	return diags
}

// decodeFilter reads vLLM's is_valid_sequence limits into w.Filter (from
// workload.DefaultFilter); only a ShareGPT dataset reads them, and they
// must keep some entries.
func (l *loader) decodeFilter(w *Workload, at hcl.Attributes) hcl.Diagnostics {
	var diags hcl.Diagnostics
	w.Filter = workload.DefaultFilter
	for _, fa := range filterAttributes {
		n, d := l.tokens(at, fa.name)
		diags = append(diags, d...)
		if n == nil {
			continue
		}
		if a := at[fa.name]; w.Prompt != workload.DatasetPrompt || (w.Dataset != nil && w.Dataset.Format != workload.FormatShareGPT) {
			diags = append(diags, invalidCtx("Filter without a ShareGPT dataset", a.NameRange, a.Range,
				fmt.Sprintf("%s drops ShareGPT entries by their token counts, as vLLM's is_valid_sequence does; this workload %s. Remove %s.", fa.name, datasetKind(w), fa.name)))
			continue
		}
		*fa.dst(&w.Filter) = *n
		if fa.name == "max_total_tokens" {
			l.maxTotalRange[w] = at[fa.name].Expr.Range()
		}
	}
	if d := filterKeepsNothing(w.Filter, at); d != nil {
		diags = append(diags, d)
	}
	return diags
}

// filterKeepsNothing reports a filter whose limits cross, so that every
// entry is dropped, at the upper limit of the pair that crosses as
// written; it is nil for a filter that keeps some entries.
func filterKeepsNothing(f workload.Filter, at hcl.Attributes) *hcl.Diagnostic {
	if f.MinPromptTokens <= f.MaxPromptTokens && f.MaxPromptTokens <= f.MaxTotalTokens {
		return nil
	}
	a := at["max_total_tokens"]
	if f.MinPromptTokens > f.MaxPromptTokens || a == nil {
		a = at["max_prompt_tokens"]
	}
	if a == nil {
		a = at["min_prompt_tokens"]
	}
	return invalid("Filter keeps nothing", a.Expr.Range(),
		"min_prompt_tokens (%d) ≤ max_prompt_tokens (%d) ≤ max_total_tokens (%d) must hold, or every entry is dropped.", f.MinPromptTokens, f.MaxPromptTokens, f.MaxTotalTokens)
}

// decodeLengths reads input_tokens, the generated prompts' lengths (a
// dataset's prompts keep their own), and output_tokens.
func (l *loader) decodeLengths(w *Workload, at hcl.Attributes) hcl.Diagnostics {
	var diags hcl.Diagnostics
	if a, ok := at["input_tokens"]; ok {
		if w.Prompt == workload.DatasetPrompt {
			diags = append(diags, invalidCtx("Not used by dataset prompts", a.NameRange, a.Range,
				"input_tokens sizes generated prompts; a dataset's prompts keep their own lengths. Remove input_tokens."))
		} else if n, d := l.length(a); d != nil || n.IsSet() {
			diags = append(diags, d...)
			w.InputTokens, w.InputTokensRange = n, a.Expr.Range()
		}
	}
	if a, ok := at["output_tokens"]; ok {
		n, d := l.length(a)
		diags = append(diags, d...)
		w.OutputTokens, w.OutputTokensRange = n, a.Expr.Range()
	}
	return diags
}

// decodeWorkloadPrefix reads prefix, the shared prefixes before each
// prompt, which a messages dataset's conversations do not take.
func (l *loader) decodeWorkloadPrefix(w *Workload, a *hcl.Attribute) hcl.Diagnostics {
	p, diags := l.prefix(a)
	w.Prefix, w.PrefixRange = p, a.Expr.Range()
	if p.IsDial() && w.Prompt != workload.Random {
		// Text prompts are re-tokenized by the server (and templated on
		// chat): only token IDs repeat exactly, in whole blocks.
		diags = append(diags, invalidCtx("Hit rate without random prompts", a.NameRange, a.Range,
			fmt.Sprintf("prefix.hit_rate repeats whole KV blocks of earlier prompts' tokens exactly, which only token-ID prompts can: prompt = %q on /v1/completions (measure.endpoint = \"completions\"). Use prompt = %q, or prefix = { groups, tokens } for shared prefixes of text.",
				workload.Random, workload.Random)))
	}
	if !p.IsDial() && w.Dataset != nil && w.Dataset.Format == workload.FormatMessages {
		diags = append(diags, invalidCtx("Prefix with conversations", a.NameRange, a.Range,
			"prefix puts a shared prefix before each prompt; a messages dataset's conversations are sent as they are (their own system messages and history are what later turns share). Remove prefix."))
	}
	return diags
}

// decodeTurns sets w's turns to n, as written at a, and reports more
// than one turn where there are no conversations to continue.
func decodeTurns(w *Workload, a *hcl.Attribute, n int) hcl.Diagnostics {
	w.Turns, w.TurnsRange = n, a.Expr.Range()
	switch {
	case w.Prompt == workload.Random && n > 1:
		return hcl.Diagnostics{invalidCtx("Turns with random prompts", a.NameRange, a.Range,
			fmt.Sprintf("a conversation is chat messages on /v1/chat/completions; prompt = %q sends token IDs, which only /v1/completions takes. Use prompt = %q.", workload.Random, workload.Article))}
	case w.Prompt == workload.DatasetPrompt && w.Dataset != nil && w.Dataset.Format != workload.FormatMessages && n > 1:
		return hcl.Diagnostics{invalidCtx("Turns without conversations", a.NameRange, a.Range,
			fmt.Sprintf("turns sends a conversation's next user turns; this workload %s, one prompt an entry. Use a messages dataset (format = %q), or remove turns.", datasetKind(w), workload.FormatMessages))}
	}
	return nil
}

// datasetOnly is the diagnostic for an attribute only a dataset reads, written
// without one.
func datasetOnly(name string, a *hcl.Attribute, w *Workload) *hcl.Diagnostic {
	return invalidCtx("Not used by generated prompts", a.NameRange, a.Range,
		fmt.Sprintf("%s belongs to a dataset (prompt = %q); this workload's prompt is %q. Remove %s.", name, workload.DatasetPrompt, w.Prompt, name))
}

// datasetKind says what a workload's prompts are, for messages.
func datasetKind(w *Workload) string {
	switch {
	case w.Prompt != workload.DatasetPrompt:
		return fmt.Sprintf("generates its prompts (prompt = %q)", w.Prompt)
	case w.Dataset == nil:
		return "has no readable dataset"
	}
	return fmt.Sprintf("reads a %s dataset", w.Dataset.Format)
}

// readDataset reads w's dataset at load time, so that an unreadable file,
// a malformed line or a missing field is a diagnostic at the dataset
// attribute naming the dataset's own file and line.
func (l *loader) readDataset(w *Workload, a *hcl.Attribute) hcl.Diagnostics {
	if l.opts.ReadDataset == nil {
		return hcl.Diagnostics{invalidCtx("Cannot read dataset", a.Expr.Range(), a.Range,
			"The spec was loaded without a dataset reader (spec.LoadOptions.ReadDataset), so the dataset cannot be read or checked.")}
	}
	d, err := l.opts.ReadDataset(w.DatasetPath, w.DatasetFormat)
	if err == nil {
		w.Dataset = d
		return nil
	}
	var de *workload.DatasetError
	if !errors.As(err, &de) {
		return hcl.Diagnostics{invalidCtx("Invalid dataset", a.Expr.Range(), a.Range, err.Error()+".")}
	}
	if workload.IsTrace(de.Format) && de.Line > 0 && de.Data != nil {
		// A trace's problem is at its own line (docs/spec.md#traces).
		return hcl.Diagnostics{l.atFileLine(w.DatasetPath, de.Data, de.Line, "Invalid trace",
			fmt.Sprintf("%s: %s. (The dataset of workload %q, %s.)", de.Format, de.Why(), w.Name, where(a.Range)))}
	}
	summary, fix := "Invalid dataset", "Fix the file, or point dataset at another."
	switch {
	case de.Unreadable:
		summary, fix = "Cannot read dataset", fmt.Sprintf("The path is relative to the spec's folder (%s).", l.dir)
	case de.Empty:
		summary = "Empty dataset"
	}
	if de.Format != "" && w.DatasetFormat == "" {
		fix += fmt.Sprintf(" It was read as %s, detected from the file; format = %s sets the format.", de.Format, quotedList(workload.Formats))
	}
	return hcl.Diagnostics{invalidCtx(summary, a.Expr.Range(), a.Range, fmt.Sprintf("%s. %s", de.Error(), fix))}
}

// objectAttr is one key of an object attribute as written: its name, its
// value and where the key is.
type objectAttr struct {
	name     string
	value    hcl.Expression
	keyRange hcl.Range
}

// objectAttrs reads an object constructor's keys, reporting a value that is
// not one ({ … } is required, as example shows).
func (l *loader) objectAttrs(a *hcl.Attribute, example string) ([]objectAttr, hcl.Diagnostics) {
	pairs, diags := hcl.ExprMap(a.Expr)
	if diags.HasErrors() {
		return nil, hcl.Diagnostics{typeError(a.Name, a.Expr, l.spec.EvalContext, fmt.Errorf("an object such as %s is required", example))}
	}
	var out []objectAttr
	for _, p := range pairs {
		name := hcl.ExprAsKeyword(p.Key)
		if name == "" {
			v, d := p.Key.Value(l.spec.EvalContext)
			if d.HasErrors() || v.IsNull() || !v.IsKnown() || v.Type() != cty.String {
				diags = append(diags, invalid("Invalid key", p.Key.Range(), "%s's keys are names, as in %s.", a.Name, example))
				continue
			}
			name = v.AsString()
		}
		out = append(out, objectAttr{name, p.Value, p.Key.Range()})
	}
	return out, diags
}

// lengthKeys are the keys of a length object.
var lengthKeys = []string{"min", "max", "mean", "stddev", "distribution"}

// lengthDistributions are the values of a length object's distribution.
var lengthDistributions = []string{workload.Uniform, workload.Normal, workload.Lognormal}

// lengthExample is a length object with every key but distribution, for
// messages.
const lengthExample = "{ mean = 1000, stddev = 200, min = 400, max = 1600 }"

// length reads input_tokens or output_tokens: a token count (512, "1K"),
// { min, max } (uniform, both included), or { mean, stddev, min, max }
// (normal, rounded and clipped; min and max default to mean ∓ 5 stddev, min
// at least 1, as GuideLLM's), with distribution = "lognormal" for a
// log-normal of that mean and stddev.
func (l *loader) length(a *hcl.Attribute) (workload.Length, hcl.Diagnostics) {
	if _, d := hcl.ExprMap(a.Expr); d.HasErrors() {
		n, diags := l.tokens(hcl.Attributes{a.Name: a}, a.Name)
		if n == nil {
			return workload.Length{}, diags
		}
		return workload.FixedLength(*n), diags
	}
	keys, diags := l.objectAttrs(a, lengthExample)
	var p lengthParts
	for _, k := range keys {
		diags = append(diags, l.lengthKey(a, k, &p)...)
	}
	if diags.HasErrors() {
		return workload.Length{}, diags
	}
	out, problem := p.build(a.Name)
	if problem != "" {
		return workload.Length{}, append(diags, invalid("Invalid length", a.Expr.Range(), "%s", problem))
	}
	return out, diags
}

// lengthParts are the keys of a length object as read; nil (or "") when
// not written.
type lengthParts struct {
	mean, stddev *float64
	lo, hi       *int
	dist         string
}

// lengthKey reads key k of length object a into p.
func (l *loader) lengthKey(a *hcl.Attribute, k objectAttr, p *lengthParts) hcl.Diagnostics {
	switch k.name {
	case "min":
		return l.lengthBound(a, k, &p.lo)
	case "max":
		return l.lengthBound(a, k, &p.hi)
	case "mean":
		return l.lengthMoment(a, k, &p.mean)
	case "stddev":
		return l.lengthMoment(a, k, &p.stddev)
	case "distribution":
		return l.lengthDistribution(a, k, &p.dist)
	}
	return hcl.Diagnostics{unknownName("Unknown length key", k.keyRange, a.Range,
		fmt.Sprintf("A length is a token count, { min, max } (uniform) or %s, optionally with distribution = %q; %q is not one of its keys.", lengthExample, workload.Lognormal, k.name),
		k.name, lengthKeys)}
}

// lengthBound reads a length's min or max, a token count, into dst.
func (l *loader) lengthBound(a *hcl.Attribute, k objectAttr, dst **int) hcl.Diagnostics {
	v, ok, diags := l.value(a.Name+"."+k.name, k.value, cty.DynamicPseudoType)
	if !ok {
		return diags
	}
	n, err := tokenValue(v)
	if err != nil {
		return append(diags, invalid("Invalid token count", k.value.Range(), "%s.%s: %s.", a.Name, k.name, err))
	}
	*dst = &n
	return diags
}

// lengthMoment reads a length's mean (more than 0) or stddev (at least 0),
// a number of tokens, into dst.
func (l *loader) lengthMoment(a *hcl.Attribute, k objectAttr, dst **float64) hcl.Diagnostics {
	v, ok, diags := l.value(a.Name+"."+k.name, k.value, cty.Number)
	if !ok {
		return diags
	}
	f, _ := v.AsBigFloat().Float64()
	if math.IsInf(f, 0) || f < 0 || (k.name == "mean" && f == 0) {
		return append(diags, invalid("Invalid length", k.value.Range(), "%s.%s is a number of tokens %s; got %s.", a.Name, k.name,
			map[string]string{"mean": "more than 0", "stddev": "at least 0"}[k.name], v.AsBigFloat().Text('g', -1)))
	}
	*dst = &f
	return diags
}

// lengthDistribution reads a length's distribution, one of
// lengthDistributions, into dst.
func (l *loader) lengthDistribution(a *hcl.Attribute, k objectAttr, dst *string) hcl.Diagnostics {
	v, ok, diags := l.value(a.Name+".distribution", k.value, cty.String)
	if !ok {
		return diags
	}
	s := v.AsString()
	if !slices.Contains(lengthDistributions, s) {
		return append(diags, unknownName("Invalid distribution", k.value.Range(), a.Range,
			fmt.Sprintf("%s.distribution is %s; got %q.", a.Name, quotedList(lengthDistributions), s), s, lengthDistributions))
	}
	*dst = s
	return diags
}

// build makes the length of attribute name from the keys read, or says
// why they make none.
func (p lengthParts) build(name string) (workload.Length, string) {
	var out workload.Length
	switch {
	case p.mean == nil && p.stddev == nil:
		if p.dist == workload.Normal || p.dist == workload.Lognormal {
			return out, fmt.Sprintf("%s.distribution = %q needs mean and stddev, as in %s.", name, p.dist, lengthExample)
		}
		if p.lo == nil || p.hi == nil {
			return out, fmt.Sprintf("%s = { min, max } needs both (a uniform draw from min to max, both included); for one count write %s = 512.", name, name)
		}
		out = workload.Length{Distribution: workload.Uniform, Min: *p.lo, Max: *p.hi}
	case p.mean == nil || p.stddev == nil:
		return out, fmt.Sprintf("%s needs mean and stddev together, as in %s.", name, lengthExample)
	case p.dist == workload.Uniform:
		return out, fmt.Sprintf("%s.distribution = %q draws from min to max; mean and stddev belong to %q and %q.", name, p.dist, workload.Normal, workload.Lognormal)
	default:
		out = workload.Length{Distribution: workload.Normal, Mean: *p.mean, Stddev: *p.stddev}
		if p.dist == workload.Lognormal {
			out.Distribution = workload.Lognormal
		}
		out.Min = max(1, int(math.Round(*p.mean-5**p.stddev)))
		out.Max = int(math.Round(*p.mean + 5**p.stddev))
		if p.lo != nil {
			out.Min = *p.lo
		}
		if p.hi != nil {
			out.Max = *p.hi
		}
	}
	if err := out.Check(); err != nil {
		return workload.Length{}, fmt.Sprintf("%s: %s.", name, err)
	}
	return out, ""
}

// prefix reads prefix in either form: { groups = G, tokens = P }, shared
// prefixes, or { hit_rate = H, block = B }, a dialled prefix-cache hit
// rate (block optional: workload.DefaultPrefixBlock). Keys of both forms
// are one diagnostic saying which to drop.
func (l *loader) prefix(a *hcl.Attribute) (workload.Prefix, hcl.Diagnostics) {
	const example = "{ groups = 4, tokens = 256 }"
	const dialExample = "{ hit_rate = 0.6, block = 16 }"
	keys, diags := l.objectAttrs(a, example)
	var p workload.Prefix
	var groupsKey, dialKey *objectAttr
	hitRate := false
	for i, k := range keys {
		switch k.name {
		case "groups", "tokens":
			groupsKey = &keys[i]
		case "hit_rate", "block":
			dialKey = &keys[i]
		}
		switch k.name {
		case "groups":
			v, ok, d := l.value("prefix.groups", k.value, cty.Number)
			diags = append(diags, d...)
			if !ok {
				continue
			}
			n, whole := wholeNumber(v.AsBigFloat())
			if !whole || n < 1 {
				diags = append(diags, invalid("Invalid prefix", k.value.Range(), "prefix.groups is a whole number ≥ 1 (how many shared prefixes); got %s.", v.AsBigFloat().Text('g', -1)))
				continue
			}
			p.Groups = n
		case "tokens":
			v, ok, d := l.value("prefix.tokens", k.value, cty.DynamicPseudoType)
			diags = append(diags, d...)
			if !ok {
				continue
			}
			n, err := tokenValue(v)
			if err != nil {
				diags = append(diags, invalid("Invalid prefix", k.value.Range(), "prefix.tokens: %s.", err))
				continue
			}
			p.Tokens = n
		case "hit_rate":
			v, ok, d := l.value("prefix.hit_rate", k.value, cty.Number)
			diags = append(diags, d...)
			if !ok {
				continue
			}
			h, _ := v.AsBigFloat().Float64()
			if h < 0 || h > 1 {
				diags = append(diags, invalid("Invalid prefix", k.value.Range(), "prefix.hit_rate is the share of each prompt's tokens the prefix cache should serve, 0 to 1; got %s.", v.AsBigFloat().Text('g', -1)))
				continue
			}
			p.HitRate, hitRate = h, true
		case "block":
			v, ok, d := l.value("prefix.block", k.value, cty.DynamicPseudoType)
			diags = append(diags, d...)
			if !ok {
				continue
			}
			n, err := tokenValue(v)
			if err != nil {
				diags = append(diags, invalid("Invalid prefix", k.value.Range(), "prefix.block: %s.", err))
				continue
			}
			p.Block = n
		default:
			diags = append(diags, unknownName("Unknown prefix key", k.keyRange, a.Range,
				fmt.Sprintf("prefix is %s (how many shared prefixes and how long each is) or %s (the share of each prompt the prefix cache should serve, in whole KV blocks); %q is not one of its keys.", example, dialExample, k.name),
				k.name, []string{"groups", "tokens", "hit_rate", "block"}))
		}
	}
	if groupsKey != nil && dialKey != nil {
		return workload.Prefix{}, append(diags, invalidCtx("Mixed prefix forms", dialKey.keyRange, a.Range,
			fmt.Sprintf("prefix is either %s, shared prefixes before each prompt, or %s, a dialled hit rate within each prompt; this one has %s and %s. Drop groups and tokens to dial the hit rate, or drop hit_rate and block to keep shared prefixes.",
				example, dialExample, groupsKey.name, dialKey.name)))
	}
	if diags.HasErrors() {
		return p, diags
	}
	if dialKey != nil {
		if !hitRate {
			return workload.Prefix{}, append(diags, invalid("Invalid prefix", a.Expr.Range(), "a dialled prefix needs hit_rate, as in %s.", dialExample))
		}
		if p.Block == 0 {
			p.Block = workload.DefaultPrefixBlock
		}
		return p, diags
	}
	if p.Groups == 0 || p.Tokens == 0 {
		return workload.Prefix{}, append(diags, invalid("Invalid prefix", a.Expr.Range(), "prefix needs groups and tokens, as in %s.", example))
	}
	return p, diags
}

// checkFilterFits reports a ShareGPT workload whose filter keeps entries
// longer than a server's max_model_len: such an entry would stop the
// traffic cell when its tokens are counted (the filter is where vLLM's
// benchmark drops long entries, so the limit belongs there).
func (l *loader) checkFilterFits(t *Traffic, w *Workload) hcl.Diagnostics {
	if w.Dataset == nil || w.Dataset.Format != workload.FormatShareGPT {
		return nil
	}
	rng, written := l.maxTotalRange[w]
	if !written {
		rng = w.DatasetRange
	}
	var diags hcl.Diagnostics
	for _, srv := range l.spec.Servers {
		if srv.MaxModelLen == nil || w.Filter.MaxTotalTokens <= *srv.MaxModelLen {
			continue
		}
		diags = append(diags, invalid("Filter beyond max_model_len", rng,
			"Traffic %q replays workload %q, whose filter keeps entries of up to max_total_tokens = %d tokens (prompt and output; vLLM's default 2048 when not written), more than server %q allows (max_model_len = %d at %s). Set max_total_tokens = %d.",
			t.Label, w.Name, w.Filter.MaxTotalTokens, srv.Name, *srv.MaxModelLen, where(l.maxModelLenRange[srv]), *srv.MaxModelLen))
	}
	return diags
}

// checkConversations reports a workload of conversations on the
// completions endpoint: each turn resends the history as chat messages,
// which only /v1/chat/completions takes.
func (l *loader) checkConversations(w *Workload) hcl.Diagnostics {
	if l.spec.Measure.Endpoint == "chat" {
		return nil
	}
	rng, what := w.TurnsRange, fmt.Sprintf("turns = %d", w.Turns)
	switch {
	case w.Turns > 1 && w.Prompt == workload.Article:
	case w.Dataset != nil && w.Dataset.Format == workload.FormatMessages:
		rng, what = w.DatasetRange, "a messages dataset"
	default:
		return nil
	}
	at := "the default: the spec has no measure block" // no range to name (it read "file:0")
	if l.spec.Measure.DeclRange.Start.Line > 0 {
		at = where(l.spec.Measure.DeclRange)
	}
	return hcl.Diagnostics{invalid("Conversations on the completions endpoint", rng,
		"%s sends each turn with the conversation's history as chat messages, which only /v1/chat/completions takes; measure.endpoint is %q (%s). Set measure { endpoint = \"chat\" }.",
		what, l.spec.Measure.Endpoint, at)}
}
