package spec

import (
	"encoding/json"
	"fmt"
	"math/big"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/slogate/slogate/workload"
)

// Workload is the `workload` block: what the decode and prefill requests
// send (docs/spec.md#workload). Spec.Workload is never nil after Load: a
// spec without the block gets DefaultWorkload's values, the seed reports'
// method (an article prompt, one prompt shared by every stream, the
// server's default sampling).
type Workload struct {
	// Options are the block's values: prompt (workload.Article, the
	// default, or workload.Random), document, instruction, distinct,
	// sampling, chat_template_kwargs and seed (DefaultSeed when the spec
	// does not set it). The workload package takes them as they are.
	workload.Options

	DeclRange hcl.Range
}

// DefaultSeed seeds random prompts when workload.seed is not set; it is
// recorded in results.json like a written one.
const DefaultSeed uint64 = 1

// SamplingFields are the request fields `workload.sampling` may set: the
// numeric fields of vLLM's SamplingParams that its OpenAI-compatible
// completion and chat requests accept.
var SamplingFields = []string{
	"temperature", "top_p", "top_k", "min_p",
	"repetition_penalty", "presence_penalty", "frequency_penalty", "seed",
}

var workloadSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "prompt"},
		{Name: "document"},
		{Name: "instruction"},
		{Name: "distinct"},
		{Name: "sampling"},
		{Name: "chat_template_kwargs"},
		{Name: "seed"},
	},
}

// DefaultWorkload is the workload of a spec without a workload block; rng
// is the range it is attributed to.
func DefaultWorkload(rng hcl.Range) *Workload {
	return &Workload{Options: workload.Options{Prompt: workload.Article, Seed: DefaultSeed}, DeclRange: rng}
}

// decodeWorkload decodes the `workload` block, applying defaults. The
// check against measure.endpoint waits for checkWorkload, after every
// block is decoded.
func (l *loader) decodeWorkload(blk *hcl.Block) (*Workload, hcl.Diagnostics) {
	w := DefaultWorkload(blk.DefRange)
	content, diags := blk.Body.Content(workloadSchema)
	at := content.Attributes

	if p, ok, d := l.str(at, "prompt"); ok || d != nil {
		diags = append(diags, d...)
		if ok {
			if p != workload.Article && p != workload.Random {
				diags = append(diags, unknownName("Invalid prompt", at["prompt"].Expr.Range(), at["prompt"].Range,
					fmt.Sprintf("prompt is %q (a reference document and an instruction to write about it, rendered by the chat template) or %q (random token IDs); got %q.",
						workload.Article, workload.Random, p), p, []string{workload.Article, workload.Random}))
			} else {
				w.Prompt = p
			}
		}
	}
	l.workloadPromptRange = nil
	if a, ok := at["prompt"]; ok {
		l.workloadPromptRange = a.Expr.Range().Ptr()
	}
	random := w.Prompt == workload.Random

	// Attributes that only an article prompt reads.
	for _, name := range []string{"document", "instruction", "chat_template_kwargs"} {
		if a, ok := at[name]; ok && random {
			diags = append(diags, invalidCtx("Not used by random prompts", a.NameRange, a.Range,
				fmt.Sprintf("%s is part of an article prompt; prompt = %q sends random token IDs, with no document, instruction or chat template. Remove %s, or use prompt = %q.",
					name, workload.Random, name, workload.Article)))
			delete(at, name)
		}
	}
	for _, name := range []string{"document", "instruction"} {
		s, ok, d := l.str(at, name)
		diags = append(diags, d...)
		if !ok {
			continue
		}
		if strings.TrimSpace(s) == "" {
			what := "the reference text the article is about"
			if name == "instruction" {
				what = "what the model is asked to write"
			}
			diags = append(diags, invalid("Empty "+name, at[name].Expr.Range(),
				"%s is %s, and it is empty. Remove the attribute to use the built-in one, or check the file it reads.", name, what))
			continue
		}
		if name == "document" {
			w.Document = s
		} else {
			w.Instruction = s
		}
	}
	if b, d := l.boolean(at, "distinct"); b != nil || d != nil {
		diags = append(diags, d...)
		if b != nil {
			w.Distinct = *b
		}
	}
	if a, ok := at["sampling"]; ok {
		s, d := l.sampling(a)
		diags = append(diags, d...)
		w.Sampling = s
	}
	if a, ok := at["chat_template_kwargs"]; ok {
		kw, d := l.jsonObject(a)
		diags = append(diags, d...)
		w.ChatTemplateKwargs = kw
	}
	if a, ok := at["seed"]; ok {
		if !random {
			diags = append(diags, invalidCtx("Seed without random prompts", a.NameRange, a.Range,
				fmt.Sprintf("seed seeds the token IDs of prompt = %q; this workload's prompt is %q. Remove seed (a sampling seed goes in sampling = { seed = … }).",
					workload.Random, w.Prompt)))
		} else if v, ok, d := l.value("seed", a.Expr, cty.Number); ok || d != nil {
			diags = append(diags, d...)
			if ok {
				n, whole := wholeUint(v.AsBigFloat())
				if !whole {
					diags = append(diags, invalid("Invalid seed", a.Expr.Range(),
						"seed is a whole number from 0 to 2^64−1; got %s.", v.AsBigFloat().Text('g', -1)))
				} else {
					w.Seed = n
				}
			}
		}
	}
	return w, diags
}

// wholeUint returns f as a uint64 when it is a whole number in range.
func wholeUint(f *big.Float) (uint64, bool) {
	if !f.IsInt() || f.Sign() < 0 {
		return 0, false
	}
	n, acc := f.Uint64()
	return n, acc == big.Exact
}

// samplingRule is the range vLLM's SamplingParams accepts for a field
// (its argument checks); a value outside it is a 400 on every request.
type samplingRule struct {
	ok    func(f float64) bool
	whole bool
	text  string
}

var samplingRules = map[string]samplingRule{
	"temperature":        {ok: func(f float64) bool { return f >= 0 }, text: "at least 0"},
	"top_p":              {ok: func(f float64) bool { return f > 0 && f <= 1 }, text: "more than 0 and at most 1"},
	"top_k":              {ok: func(f float64) bool { return f >= -1 }, whole: true, text: "a whole number: -1 or 0 (all tokens) or at least 1"},
	"min_p":              {ok: func(f float64) bool { return f >= 0 && f <= 1 }, text: "from 0 to 1"},
	"repetition_penalty": {ok: func(f float64) bool { return f > 0 }, text: "more than 0 (1 is no penalty)"},
	"presence_penalty":   {ok: func(f float64) bool { return f >= -2 && f <= 2 }, text: "from -2 to 2"},
	"frequency_penalty":  {ok: func(f float64) bool { return f >= -2 && f <= 2 }, text: "from -2 to 2"},
	"seed":               {ok: func(float64) bool { return true }, whole: true, text: "a whole number"},
}

// sampling decodes `sampling = { temperature = 0.6, … }`: known field
// names, numbers in the range vLLM accepts, kept as written.
func (l *loader) sampling(a *hcl.Attribute) (map[string]json.Number, hcl.Diagnostics) {
	obj, diags := l.jsonObject(a)
	if obj == nil {
		return nil, diags
	}
	out := map[string]json.Number{}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		rule, known := samplingRules[k]
		if !known {
			diags = append(diags, unknownName("Unknown sampling parameter", l.objectKeyRange(a, k), a.Range,
				fmt.Sprintf("sampling sets the request's sampling fields; %q is not one of them (%s).", k, strings.Join(SamplingFields, ", ")),
				k, SamplingFields))
			continue
		}
		num, isNum := obj[k].(json.Number)
		if !isNum {
			diags = append(diags, invalid("Invalid sampling value", l.objectValueRange(a, k),
				"sampling.%s is a number, not %s.", k, jsonKind(obj[k])))
			continue
		}
		f, err := num.Float64()
		if err == nil && rule.whole {
			_, err = num.Int64()
		}
		if err != nil || !rule.ok(f) {
			diags = append(diags, invalid("Invalid sampling value", l.objectValueRange(a, k),
				"sampling.%s must be %s (vLLM rejects every request otherwise); got %s.", k, rule.text, num))
			continue
		}
		out[k] = num
	}
	return out, diags
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a bool"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// objectValueRange is the range of key k's value in an object
// constructor, else the whole expression's range.
func (l *loader) objectValueRange(a *hcl.Attribute, k string) hcl.Range {
	pairs, diags := hcl.ExprMap(a.Expr)
	if !diags.HasErrors() {
		for _, p := range pairs {
			if v, d := p.Key.Value(l.spec.EvalContext); !d.HasErrors() && v.IsKnown() && !v.IsNull() && v.Type() == cty.String && v.AsString() == k {
				return p.Value.Range()
			}
		}
	}
	return a.Expr.Range()
}

// checkWorkload checks the workload against the measure block: random
// prompts are token IDs, which only /v1/completions takes.
func (l *loader) checkWorkload() hcl.Diagnostics {
	if l.spec.Workload.Prompt != workload.Random || l.spec.Measure.Endpoint != "chat" || l.workloadPromptRange == nil {
		return nil
	}
	return hcl.Diagnostics{invalid("Random prompts on the chat endpoint", *l.workloadPromptRange,
		"prompt = %q sends token IDs, which /v1/chat/completions cannot take; measure.endpoint is \"chat\" (%s). Use endpoint = \"completions\", or prompt = %q.",
		workload.Random, where(l.spec.Measure.DeclRange), workload.Article)}
}
