package spec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/agext/levenshtein"
	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"

	"github.com/slogate/slogate/internal/engine"
)

var serverSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "engine"},
		{Name: "device"},
		{Name: "command"},
		{Name: "model", Required: true},
		{Name: "served_model_name"},
		{Name: "tensor_parallel_size"},
		{Name: "pipeline_parallel_size"},
		{Name: "data_parallel_size"},
		{Name: "enable_expert_parallel"},
		{Name: "max_model_len"},
		{Name: "gpu_memory_utilization"},
		{Name: "max_num_batched_tokens"},
		{Name: "max_num_seqs"},
		{Name: "attention_backend"},
		{Name: "kv_cache_dtype"},
		{Name: "enable_prefix_caching"},
		{Name: "kv_cache_tokens"},
		{Name: "args"},
		{Name: "env"},
		{Name: "api_key"},
		{Name: "host"},
		{Name: "port"},
		{Name: "ready_timeout"},
		{Name: "labels"},
		{Name: "price_per_gpu_hour"},
	},
	Blocks: []hcl.BlockHeaderSchema{{Type: "speculative"}, {Type: "container"}},
}

var speculativeSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "method"},
		{Name: "model"},
		{Name: "num_speculative_tokens"},
		{Name: "config"},
	},
}

// decodeServer decodes a `server "NAME"` block, applying defaults.
func (l *loader) decodeServer(blk *hcl.Block) (*Server, hcl.Diagnostics) {
	s := &Server{
		Name:         blk.Labels[0],
		Engine:       DefaultEngine,
		Host:         DefaultHost,
		Port:         DefaultPort,
		ReadyTimeout: DefaultReadyTimeout,
		DeclRange:    blk.DefRange,
	}
	content, diags := blk.Body.Content(serverSchema)
	at := content.Attributes
	add := func(d hcl.Diagnostics) { diags = append(diags, d...) }
	add(l.decodeEngine(at, s))
	s.Command = s.syntax().Command
	setStr := func(dst *string, name string, nonEmpty bool) {
		v, ok, d := l.str(at, name)
		add(d)
		if !ok {
			return
		}
		if nonEmpty && v == "" {
			add(hcl.Diagnostics{invalid("Invalid value", at[name].Expr.Range(), "%s must not be empty.", name)})
			return
		}
		*dst = v
	}
	setStr(&s.Command, "command", true)
	setStr(&s.Model, "model", true)
	setStr(&s.ServedModelName, "served_model_name", false)
	setStr(&s.AttentionBackend, "attention_backend", false)
	setStr(&s.KVCacheDtype, "kv_cache_dtype", false)
	setStr(&s.APIKey, "api_key", false)
	setStr(&s.Host, "host", true)
	add(l.decodeDevice(at, s))

	var d hcl.Diagnostics
	s.TensorParallelSize, d = l.positiveInt(at, "tensor_parallel_size", 0)
	add(d)
	s.PipelineParallelSize, d = l.positiveInt(at, "pipeline_parallel_size", 0)
	add(d)
	s.DataParallelSize, d = l.positiveInt(at, "data_parallel_size", 0)
	add(d)
	s.MaxNumBatchedTokens, d = l.tokens(at, "max_num_batched_tokens")
	add(d)
	s.MaxNumSeqs, d = l.positiveInt(at, "max_num_seqs", 0)
	add(d)
	s.EnableExpertParallel, d = l.boolean(at, "enable_expert_parallel")
	add(d)
	s.EnablePrefixCaching, d = l.boolean(at, "enable_prefix_caching")
	add(d)
	s.MaxModelLen, d = l.tokens(at, "max_model_len")
	add(d)
	if s.MaxModelLen != nil {
		l.maxModelLenRange[s] = at["max_model_len"].Expr.Range()
	}
	if n, d := l.tokens(at, "kv_cache_tokens"); n != nil || d != nil {
		add(d)
		if n != nil {
			k := int64(*n)
			s.KVCacheTokens = &k
		}
	}
	s.GPUMemoryUtilization, d = l.float(at, "gpu_memory_utilization")
	add(d)
	if g := s.GPUMemoryUtilization; g != nil && (*g <= 0 || *g > 1) {
		add(hcl.Diagnostics{invalid("Invalid value", at["gpu_memory_utilization"].Expr.Range(),
			"gpu_memory_utilization is a fraction of GPU memory, greater than 0 and at most 1; got %g.", *g)})
		s.GPUMemoryUtilization = nil
	}
	s.PricePerGPUHour, d = l.float(at, "price_per_gpu_hour")
	add(d)
	if p := s.PricePerGPUHour; p != nil && !(*p > 0) {
		add(hcl.Diagnostics{invalid("Invalid price", at["price_per_gpu_hour"].Expr.Range(),
			"price_per_gpu_hour is what one GPU costs an hour, a positive number (3.50 for $3.50); got %g.", *p)})
		s.PricePerGPUHour = nil
	}
	if p, d := l.positiveInt(at, "port", 65535); p != nil || d != nil {
		add(d)
		if p != nil {
			s.Port = *p
		}
	}
	if dur, _, ok, d := l.duration(at, "ready_timeout"); ok || d != nil {
		add(d)
		if ok {
			s.ReadyTimeout = dur
		}
	}
	s.Args, d = l.stringList(at, "args")
	add(d)
	s.Env, d = l.stringMap(at, "env")
	add(d)
	s.Labels, d = l.stringMap(at, "labels")
	add(d)

	add(checkEngineValues(at, s))

	blocks := content.Blocks.ByType()
	for i, sb := range blocks["speculative"] {
		if i > 0 {
			add(hcl.Diagnostics{invalid("Duplicate speculative block", sb.DefRange,
				"A server has at most one speculative block; the first one is at %s.", where(blocks["speculative"][0].DefRange))})
			continue
		}
		sp, d := l.decodeSpeculative(sb, s.syntax())
		add(d)
		s.Speculative = sp
	}
	for i, cb := range blocks["container"] {
		if i > 0 {
			add(hcl.Diagnostics{invalid("Duplicate container block", cb.DefRange,
				"A server has at most one container block; the first one is at %s.", where(blocks["container"][0].DefRange))})
			continue
		}
		c, d := l.decodeContainer(cb)
		add(d)
		s.Container = c
		if a, ok := at["command"]; ok {
			add(hcl.Diagnostics{invalid("Command with a container", a.Expr.Range(),
				"A server with a container block runs the image (its entrypoint, or the container block's command), so the server's command is not used: remove it, or remove the container block to launch %q directly.", s.Command)})
		}
	}
	return s, diags
}

// decodeSpeculative decodes a server's `speculative` block.
func (l *loader) decodeSpeculative(blk *hcl.Block, e *engine.Syntax) (*Speculative, hcl.Diagnostics) {
	sp := &Speculative{DeclRange: blk.DefRange}
	content, diags := blk.Body.Content(speculativeSchema)
	at := content.Attributes
	var d hcl.Diagnostics
	sp.Method, _, d = l.str(at, "method")
	diags = append(diags, d...)
	sp.Model, _, d = l.str(at, "model")
	diags = append(diags, d...)
	sp.NumSpeculativeTokens, d = l.positiveInt(at, "num_speculative_tokens", 0)
	diags = append(diags, d...)
	if a, ok := at["config"]; ok {
		cfg, d := l.jsonObject(a)
		diags = append(diags, d...)
		for _, k := range sortedKeys(cfg) {
			if k == "method" || k == "model" || k == "num_speculative_tokens" {
				diags = append(diags, invalid("Duplicate speculative setting", l.objectKeyRange(a, k),
					"config sets %q, which the speculative block has its own attribute for: write %s = … beside config instead.", k, k))
				delete(cfg, k)
			}
		}
		if len(cfg) > 0 {
			sp.Config = cfg
		}
	}
	if e.CheckSpeculative != nil && !diags.HasErrors() {
		cfgRange := blk.DefRange
		if a, ok := at["config"]; ok {
			cfgRange = a.Expr.Range()
		}
		diags = append(diags, e.CheckSpeculative(sp, at, cfgRange)...)
	}
	return sp, diags
}

// jsonObject evaluates an object-valued attribute into JSON values (numbers
// kept exact as json.Number).
func (l *loader) jsonObject(a *hcl.Attribute) (map[string]any, hcl.Diagnostics) {
	v, diags := a.Expr.Value(l.spec.EvalContext)
	if diags.HasErrors() || v.IsNull() {
		return nil, diags
	}
	if !v.IsWhollyKnown() || !(v.Type().IsObjectType() || v.Type().IsMapType()) {
		return nil, append(diags, typeError(a.Name, a.Expr, l.spec.EvalContext, fmt.Errorf("an object is required, like { kv_cache_dtype = \"auto\" }")))
	}
	b, err := ctyjson.Marshal(v, v.Type())
	if err != nil {
		return nil, append(diags, typeError(a.Name, a.Expr, l.spec.EvalContext, err))
	}
	var out map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&out); err != nil {
		return nil, append(diags, typeError(a.Name, a.Expr, l.spec.EvalContext, err))
	}
	return out, diags
}

// objectKeyRange is the range of key k in an object constructor, else the
// whole expression's range.
func (l *loader) objectKeyRange(a *hcl.Attribute, k string) hcl.Range {
	pairs, diags := hcl.ExprMap(a.Expr)
	if !diags.HasErrors() {
		for _, p := range pairs {
			if v, d := p.Key.Value(l.spec.EvalContext); !d.HasErrors() && v.IsKnown() && !v.IsNull() && v.Type() == cty.String && v.AsString() == k {
				return p.Key.Range()
			}
		}
	}
	return a.Expr.Range()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// nearest returns the candidate closest to name when it is a plausible typo
// (edit distance < 3, as HCL's own suggestions), else "".
func nearest(name string, candidates []string) string {
	best, bestDist := "", 3
	for _, c := range candidates {
		if d := levenshtein.Distance(name, c, nil); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}
