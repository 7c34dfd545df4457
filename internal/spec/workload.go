package spec

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/slogate/slogate/internal/workload"
)

// Workload is a `workload` block: what requests send
// (docs/spec.md#workload). The unnamed block is what the decode and prefill
// requests send, and traffic blocks without a workload attribute; a named
// block, `workload "NAME"`, is what the traffic blocks that name it send
// (docs/spec.md#named-workloads). Spec.Workload is never nil after Load: a
// spec without the unnamed block gets DefaultWorkload's values, the seed
// reports' method (an article prompt, one prompt shared by every stream,
// the server's default sampling).
type Workload struct {
	// Name is a named block's label; "" for the unnamed block.
	Name string
	// Options are the block's values: prompt (workload.Article, the
	// default, or workload.Random; a named block also
	// workload.DatasetPrompt), document, instruction, distinct, sampling,
	// chat_template_kwargs and seed (DefaultSeed when the spec does not
	// set it), and a named block's dataset, lengths, prefix and turns. The
	// workload package takes them as they are.
	workload.Options
	// Dataset is the dataset file as read at load time (nil without one),
	// to hand to requests.NewScheduler; DatasetText is the path as written.
	Dataset     *workload.Dataset
	DatasetText string

	DeclRange hcl.Range
	// DatasetRange, InputTokensRange, OutputTokensRange, PrefixRange and
	// TurnsRange are where those attributes are written (DeclRange when
	// unset), for diagnostics about them after the load (a dataset line a
	// plan cannot send).
	DatasetRange, InputTokensRange, OutputTokensRange, PrefixRange, TurnsRange hcl.Range
	// SpeedRange is where a trace's speed is written (its name); zero when
	// it is not.
	SpeedRange hcl.Range
}

// SetsLengths reports whether the workload decides its prompts' lengths
// itself (a dataset or input_tokens), so that a traffic block using it has
// no context.
func (w *Workload) SetsLengths() bool {
	return w.Prompt == workload.DatasetPrompt || w.InputTokens.IsSet()
}

// NamedWorkload returns the `workload "NAME"` block called name, or nil.
func (s *Spec) NamedWorkload(name string) *Workload {
	for _, w := range s.Workloads {
		if w.Name == name {
			return w
		}
	}
	return nil
}

// DefaultSeed seeds random prompts when workload.seed is not set; it is
// recorded in results.json like a written one.
const DefaultSeed uint64 = 1

// SamplingFields are the request fields `workload.sampling` may set: the
// numeric fields of vLLM's SamplingParams that its OpenAI-compatible
// completion and chat requests accept.
var SamplingFields = []string{
	"temperature", "top_p", "top_k", "min_p",
	"repetition_penalty", "presence_penalty", "frequency_penalty", "seed", logitBiasField,
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

// decodeWorkload decodes a `workload` block, the unnamed one or a named
// one (whose traffic attributes decodeTrafficWorkload reads), applying
// defaults. The checks against measure.endpoint and the servers wait for
// checkWorkload, after every block is decoded.
func (l *loader) decodeWorkload(blk *hcl.Block) (*Workload, hcl.Diagnostics) {
	w := DefaultWorkload(blk.DefRange)
	named := len(blk.Labels) == 1
	schema := workloadSchema
	if named {
		w.Name, w.IgnoreEOS, schema = blk.Labels[0], true, namedWorkloadSchema
	}
	content, diags := blk.Body.Content(schema)
	at := content.Attributes

	diags = append(diags, l.decodePrompt(w, at, named)...)
	if a, ok := at["prompt"]; ok {
		l.promptRange[w] = a.Expr.Range().Ptr()
	}
	if _, ok := at["dataset"]; ok && l.promptRange[w] == nil {
		w.Prompt = workload.DatasetPrompt // dataset alone says where prompts come from
	}
	diags = append(diags, dropUnusedByPrompt(w, at)...)
	diags = append(diags, l.decodeArticleText(w, at)...)
	diags = append(diags, l.setBool(at, "distinct", &w.Distinct)...)
	if a, ok := at["sampling"]; ok {
		s, bias, d := l.sampling(a)
		diags = append(diags, d...)
		w.Sampling, w.LogitBias = s, bias
		l.samplingAttr[w] = a
	}
	if a, ok := at["chat_template_kwargs"]; ok {
		kw, d := l.jsonObject(a)
		diags = append(diags, d...)
		w.ChatTemplateKwargs = kw
	}
	if a, ok := at["seed"]; ok {
		diags = append(diags, l.decodeWorkloadSeed(w, a, named)...)
	}
	if named {
		diags = append(diags, l.decodeTrafficWorkload(w, at)...)
	}
	return w, diags
}

// decodePrompt reads prompt, the kind of prompts w sends: an article or
// random token IDs, and in a named block (only) a dataset's prompts.
func (l *loader) decodePrompt(w *Workload, at hcl.Attributes, named bool) hcl.Diagnostics {
	kinds := []string{workload.Article, workload.Random}
	if named {
		kinds = append(kinds, workload.DatasetPrompt)
	}
	p, ok, diags := l.str(at, "prompt")
	switch {
	case !ok:
	case p == workload.DatasetPrompt && !named:
		diags = append(diags, invalid("Dataset prompts in the unnamed workload", at["prompt"].Expr.Range(),
			"The unnamed workload block is what prefill and decode cells send, at each context of their list; a dataset brings its own lengths. Put the dataset in a named block, workload \"replay\" { prompt = %q, dataset = \"…\" }, and name it in a traffic block: workload = \"replay\".",
			workload.DatasetPrompt))
	case !slices.Contains(kinds, p):
		detail := fmt.Sprintf("prompt is %q (a reference document and an instruction to write about it, rendered by the chat template) or %q (random token IDs); got %q.",
			workload.Article, workload.Random, p)
		if named {
			detail = fmt.Sprintf("prompt is %q (a reference document and an instruction to write about it, rendered by the chat template), %q (random token IDs) or %q (the prompts of a dataset file); got %q.",
				workload.Article, workload.Random, workload.DatasetPrompt, p)
		}
		diags = append(diags, unknownName("Invalid prompt", at["prompt"].Expr.Range(), at["prompt"].Range, detail, p, kinds))
	default:
		w.Prompt = p
	}
	return diags
}

// dropUnusedByPrompt reports, and removes from at, the attributes w's
// kind of prompt does not read: an article's with random prompts, an
// article's shaping with dataset prompts.
func dropUnusedByPrompt(w *Workload, at hcl.Attributes) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, name := range []string{"document", "instruction", "chat_template_kwargs"} {
		if a, ok := at[name]; ok && w.Prompt == workload.Random {
			diags = append(diags, invalidCtx("Not used by random prompts", a.NameRange, a.Range,
				fmt.Sprintf("%s is part of an article prompt; prompt = %q sends random token IDs, with no document, instruction or chat template. Remove %s, or use prompt = %q.",
					name, workload.Random, name, workload.Article)))
			delete(at, name)
		}
	}
	for _, name := range []string{"document", "instruction", "distinct"} {
		if a, ok := at[name]; ok && w.Prompt == workload.DatasetPrompt {
			diags = append(diags, invalidCtx("Not used by dataset prompts", a.NameRange, a.Range,
				fmt.Sprintf("%s shapes article prompts; prompt = %q sends the dataset's prompts as they are. Remove %s.", name, workload.DatasetPrompt, name)))
			delete(at, name)
		}
	}
	return diags
}

// decodeArticleText reads document and instruction, an article prompt's
// texts; either, when written, must not be empty.
func (l *loader) decodeArticleText(w *Workload, at hcl.Attributes) hcl.Diagnostics {
	var diags hcl.Diagnostics
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
	return diags
}

// decodeWorkloadSeed reads seed, the seed of random prompts' token IDs
// (a named block may set it whatever its prompt): a whole number from 0 to
// 2^64−1.
func (l *loader) decodeWorkloadSeed(w *Workload, a *hcl.Attribute, named bool) hcl.Diagnostics {
	if w.Prompt != workload.Random && !named {
		return hcl.Diagnostics{invalidCtx("Seed without random prompts", a.NameRange, a.Range,
			fmt.Sprintf("seed seeds the token IDs of prompt = %q; this workload's prompt is %q. Remove seed (a sampling seed goes in sampling = { seed = … }).",
				workload.Random, w.Prompt))}
	}
	v, ok, diags := l.value("seed", a.Expr, cty.Number)
	if !ok {
		return diags
	}
	n, whole := wholeUint(v.AsBigFloat())
	if !whole {
		return append(diags, invalid("Invalid seed", a.Expr.Range(),
			"seed is a whole number from 0 to 2^64−1; got %s.", v.AsBigFloat().Text('g', -1)))
	}
	w.Seed = n
	return diags
}

// wholeUint returns f as a uint64 when it is a whole number in range.
func wholeUint(f *big.Float) (uint64, bool) {
	if !f.IsInt() || f.Sign() < 0 {
		return 0, false
	}
	n, acc := f.Uint64()
	return n, acc == big.Exact
}

// samplingRule is the range vLLM accepts for a field: a value outside it
// is an HTTP 400 on every request. The ranges are
// SamplingParams._verify_args (vllm/sampling_params.py) and the request
// classes' field types (CompletionRequest, ChatCompletionRequest), as listed
// in docs/vllm.md#sampling-parameters.
type samplingRule struct {
	ok    func(f *big.Float) bool
	whole bool // the request field is an int (pydantic rejects 2.5)
	text  string
}

var (
	bigZero  = big.NewFloat(0)
	bigOne   = big.NewFloat(1)
	bigTwo   = big.NewFloat(2)
	bigMinus = big.NewFloat(-2)
	bigInt64 = [2]*big.Float{new(big.Float).SetInt64(math.MinInt64), new(big.Float).SetInt64(math.MaxInt64)}
)

// between reports lo ≤ f ≤ hi.
func between(f, lo, hi *big.Float) bool { return f.Cmp(lo) >= 0 && f.Cmp(hi) <= 0 }

var samplingRules = map[string]samplingRule{
	// "temperature must be in [0, 2]" since vLLM PR #44965 (2026-06).
	"temperature": {ok: func(f *big.Float) bool { return between(f, bigZero, bigTwo) }, text: "from 0 to 2 (vLLM PR #44965)"},
	"top_p":       {ok: func(f *big.Float) bool { return f.Sign() > 0 && f.Cmp(bigOne) <= 0 }, text: "more than 0 and at most 1"},
	"top_k":       {ok: func(f *big.Float) bool { return f.Cmp(big.NewFloat(-1)) >= 0 }, whole: true, text: "a whole number: 0 (or -1) for all tokens, or at least 1"},
	"min_p":       {ok: func(f *big.Float) bool { return between(f, bigZero, bigOne) }, text: "from 0 to 1"},
	// repetition_penalty must also be finite, which a number in HCL is.
	"repetition_penalty": {ok: func(f *big.Float) bool { return f.Sign() > 0 }, text: "more than 0 (1 is no penalty)"},
	"presence_penalty":   {ok: func(f *big.Float) bool { return between(f, bigMinus, bigTwo) }, text: "from -2 to 2"},
	"frequency_penalty":  {ok: func(f *big.Float) bool { return between(f, bigMinus, bigTwo) }, text: "from -2 to 2"},
	// seed: a 64-bit signed integer (Field(ge=_INT64_MIN, le=_INT64_MAX));
	// -1 means no seed.
	"seed": {ok: func(f *big.Float) bool { return between(f, bigInt64[0], bigInt64[1]) }, whole: true, text: "a whole number from -2^63 to 2^63-1 (-1: no seed)"},
}

// logitBiasField is the one sampling field that is an object: token ID →
// bias (vLLM clamps each bias to [-100, 100]).
const logitBiasField = "logit_bias"

// sampling decodes `sampling = { temperature = 0.6, … }`: known field
// names, numbers in the range vLLM accepts, kept as written; logit_bias is
// an object of token IDs to numbers.
func (l *loader) sampling(a *hcl.Attribute) (map[string]json.Number, map[string]json.Number, hcl.Diagnostics) {
	obj, diags := l.jsonObject(a)
	if obj == nil {
		return nil, nil, diags
	}
	out := map[string]json.Number{}
	var bias map[string]json.Number
	for _, k := range sortedKeys(obj) {
		if k == logitBiasField {
			b, d := l.logitBias(a, obj[k])
			diags = append(diags, d...)
			bias = b
			continue
		}
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
		f, _, err := big.ParseFloat(num.String(), 10, 256, big.ToNearestEven)
		if err != nil || (rule.whole && !f.IsInt()) || !rule.ok(f) {
			diags = append(diags, invalid("Invalid sampling value", l.objectValueRange(a, k),
				"sampling.%s must be %s: vLLM answers HTTP 400 to every request otherwise (docs/vllm.md#sampling-parameters); got %s.", k, rule.text, num))
			continue
		}
		out[k] = num
	}
	return out, bias, diags
}

// logitBias checks sampling.logit_bias: keys are token IDs (vLLM converts
// them with int() and rejects a negative one), values are numbers.
func (l *loader) logitBias(a *hcl.Attribute, v any) (map[string]json.Number, hcl.Diagnostics) {
	rng := l.objectValueRange(a, logitBiasField)
	m, ok := v.(map[string]any)
	if !ok {
		return nil, hcl.Diagnostics{invalid("Invalid sampling value", rng,
			"sampling.logit_bias is an object of token IDs to biases, like { \"50256\" = -100 }, not %s.", jsonKind(v))}
	}
	out := map[string]json.Number{}
	var diags hcl.Diagnostics
	for _, id := range sortedKeys(m) {
		if n, err := strconv.ParseUint(id, 10, 31); err != nil || n > math.MaxInt32 {
			diags = append(diags, invalid("Invalid sampling value", rng,
				"sampling.logit_bias keys are token IDs (whole numbers from 0); got %q.", id))
			continue
		}
		num, isNum := m[id].(json.Number)
		if !isNum {
			diags = append(diags, invalid("Invalid sampling value", rng,
				"sampling.logit_bias[%q] is a number (vLLM clamps it to [-100, 100]), not %s.", id, jsonKind(m[id])))
			continue
		}
		out[id] = num
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

// checkWorkload checks each workload against the other blocks: random
// prompts are token IDs, which only /v1/completions takes; conversations
// go to /v1/chat/completions only; min_p and logit_bias are rejected by a
// server with speculative decoding.
func (l *loader) checkWorkload() hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, w := range append([]*Workload{l.spec.Workload}, l.spec.Workloads...) {
		if w.Prompt == workload.Random && l.spec.Measure.Endpoint == "chat" && l.promptRange[w] != nil {
			diags = append(diags, invalid("Random prompts on the chat endpoint", *l.promptRange[w],
				"prompt = %q sends token IDs, which /v1/chat/completions cannot take; measure.endpoint is \"chat\" (%s). Use endpoint = \"completions\", or prompt = %q.",
				workload.Random, where(l.spec.Measure.DeclRange), workload.Article))
		}
		diags = append(diags, l.checkConversations(w)...)
		diags = append(diags, l.checkTraceWorkload(w)...)
		diags = append(diags, l.checkSpeculativeSampling(w)...)
	}
	return diags
}

// specDecodeMinP is vLLM's _SAMPLING_EPS: a min_p above it is "set"; a
// temperature below it is greedy.
var specDecodeMinP = big.NewFloat(samplingEps)

// samplingEps is vLLM's _SAMPLING_EPS.
const samplingEps = 1e-5

// checkSpeculativeSampling applies the engine's refusal of min_p and
// logit_bias with speculative decoding (engine.Syntax.
// SpeculativeSamplingRefusal: vLLM's SamplingParams._validate_spec_decode,
// PR #31982): with speculative decoding on, a request whose min_p is above
// 1e-5 or that sets any logit_bias is answered HTTP 400, so every request
// of the run would fail. A temperature below 1e-5 is greedy:
// SamplingParams.__post_init__ resets min_p to 0 before the check, so
// min_p is then no error. A server of an engine that takes them (SGLang,
// llama.cpp) is not checked.
func (l *loader) checkSpeculativeSampling(w *Workload) hcl.Diagnostics {
	a := l.samplingAttr[w]
	if a == nil {
		return nil
	}
	var spec *Server
	for _, s := range l.spec.Servers {
		if s.Speculative != nil && s.syntax().SpeculativeSamplingRefusal != "" {
			spec = s
			break
		}
	}
	if spec == nil {
		return nil
	}
	rule := spec.syntax().SpeculativeSamplingRefusal
	var diags hcl.Diagnostics
	// Compared as the float64 vLLM parses from the request's JSON.
	greedy := false
	if t, ok := w.Sampling["temperature"]; ok {
		if f, _ := t.Float64(); f < samplingEps {
			greedy = true
		}
	}
	if num, ok := w.Sampling["min_p"]; ok && !greedy {
		if f, _, err := big.ParseFloat(num.String(), 10, 256, big.ToNearestEven); err == nil && f.Cmp(specDecodeMinP) > 0 {
			diags = append(diags, invalidCtx("min_p with speculative decoding", l.objectValueRange(a, "min_p"), a.Range,
				fmt.Sprintf("sampling.min_p is %s and server %q has a speculative block (%s): %s. Set min_p = 0 (or leave it out), or remove the speculative block.",
					num, spec.Name, where(spec.Speculative.DeclRange), rule)))
		}
	}
	if len(w.LogitBias) > 0 {
		diags = append(diags, invalidCtx("logit_bias with speculative decoding", l.objectValueRange(a, logitBiasField), a.Range,
			fmt.Sprintf("sampling.logit_bias is set and server %q has a speculative block (%s): %s. Remove logit_bias, or remove the speculative block.",
				spec.Name, where(spec.Speculative.DeclRange), rule)))
	}
	return diags
}
