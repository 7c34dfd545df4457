package llamacpp

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/slogate/slogate/internal/engine"
	namesuggest "github.com/slogate/slogate/internal/suggest"
)

// syntax is llama-server's launch: `llama-server -m MODEL --flag value …`
// (docs/llamacpp.md#flags). Every flag and its value are separate words:
// llama-server refuses --flag=value ("error: invalid argument").
var syntax = &engine.Syntax{
	Command:   "llama-server",
	ServeArgs: serveArgs,
	// KV cache types are checked by CheckLaunch, as errors: llama-server
	// exits on any other (docs/llamacpp.md#kv-cache-types).
	KVCacheDtypeFlag: "-ctk",
	ValuesSource:     "llama-server -h, docs/llamacpp.md#kv-cache-types",
	Unsupported: map[string]string{
		"pipeline_parallel_size": `llama.cpp splits a model's layers over GPUs by itself (--split-mode layer, its default, pipelined): remove it, and choose the GPUs with args = ["--device", "DEV1,DEV2"] or ["--tensor-split", "3,1"] (docs/llamacpp.md#flags).`,
		"data_parallel_size":     `llama-server serves one model instance with --parallel slots: raise max_num_seqs (its --parallel), or run one server per replica (docs/llamacpp.md#flags).`,
		"enable_expert_parallel": `llama.cpp has no expert parallelism; args = ["--cpu-moe"] or ["--n-cpu-moe", "N"] keep expert weights in host memory instead (docs/llamacpp.md#flags).`,
		"gpu_memory_utilization": `llama.cpp sizes what it offloads by layers, not by a memory fraction: write args = ["-ngl", "N"] (layers in VRAM) or ["--fit-target", "MiB"] (the margin --fit leaves per device) (docs/llamacpp.md#flags).`,
		"max_num_batched_tokens": `llama.cpp's nearest flags are the logical and physical batch sizes: write args = ["-b", "N"] and/or ["-ub", "N"] (docs/llamacpp.md#flags).`,
		"attention_backend":      `llama.cpp picks its kernels by backend and has one switch, Flash Attention: write args = ["-fa", "on"] (or "off"; default auto) (docs/llamacpp.md#flags).`,
	},
	CheckLaunch:       checkLaunch,
	CheckSpeculative:  checkSpeculative,
	SpeculativeMethod: speculativeMethod,
	MaxNumSeqsFlags:   []string{"-np", "--parallel"},
	MaxNumSeqsName:    "--parallel",
	LaunchNotes:       launchNotes,
	// The server image's entrypoint is llama-server (ggml-org's
	// server images, and the one .ci/run builds).
	ContainerCommand: nil,
	APIKeyEnv:        "LLAMA_API_KEY",
	NoSimulator:      true,
	CPUBuilds:        true,
	Docs:             "docs/llamacpp.md#flags",
}

// CacheTypes are the values of llama-server's -ctk/-ctv (`llama-server -h`
// of b11669: "allowed values: f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl,
// q5_0, q5_1 (default: f16)"); any other makes it exit 1 before loading.
var CacheTypes = []string{"f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "iq4_nl", "q5_0", "q5_1"}

// otherCacheTypes are other engines' kv_cache_dtype values and what
// llama.cpp writes for them ("" where it has none).
var otherCacheTypes = map[string]string{
	"float16":  "f16",
	"bfloat16": "bf16",
	"float32":  "f32",
	"fp8":      "",
	"fp8_e4m3": "",
	"fp8_e5m2": "",
}

// parallel is the --parallel the launch gives: the last -np/--parallel
// of args, else max_num_seqs; nil when neither (llama-server then picks
// the slots itself, with a unified KV pool).
func parallel(l engine.Launch) *int {
	n := l.MaxNumSeqs
	for i := 0; i+1 < len(l.Args); i++ {
		if l.Args[i] == "-np" || l.Args[i] == "--parallel" {
			if v, err := strconv.Atoi(l.Args[i+1]); err == nil && v > 0 {
				n = &v
			}
		}
	}
	return n
}

// contextSize is the -c rendered: max_model_len × --parallel, since
// max_model_len is one request's (one slot's) context and llama-server
// splits -c over its slots; max_model_len alone without --parallel (the
// automatic slots then share one unified pool, each slot's context the
// whole -c); nil without max_model_len.
func contextSize(l engine.Launch) *int {
	if l.MaxModelLen == nil {
		return nil
	}
	c := *l.MaxModelLen
	if p := parallel(l); p != nil {
		c *= *p
	}
	return &c
}

// serveArgs are llama-server's arguments: -m MODEL, the flags, the API
// key's flag only when key is set, --host host, args last. --metrics is
// always given: slogate reads /metrics, which llama-server serves only
// with it (501 otherwise, docs/llamacpp.md#metrics).
func serveArgs(l engine.Launch, key, host string) []string {
	var a engine.Args
	str, num := a.Str, a.Num
	str("-m", l.Model)
	str("--alias", l.ServedModelName)
	num("-c", contextSize(l))
	num("--parallel", l.MaxNumSeqs)
	if l.KVCacheDtype != "" {
		a = append(a, "-ctk", l.KVCacheDtype, "-ctv", l.KVCacheDtype)
	}
	if l.EnablePrefixCaching != nil && !*l.EnablePrefixCaching {
		a = append(a, "--no-cache-prompt") // on by default
	}
	if sp := l.Speculative; sp != nil {
		a = append(a, speculativeArgs(sp)...)
	}
	str("--host", host)
	if l.Port != 0 {
		num("--port", &l.Port)
	}
	str("--api-key", key)
	a = append(a, "--metrics")
	return append(a, l.Args...)
}

// launchNotes say how -c was rendered, for `slogate plan`.
func launchNotes(l engine.Launch) []engine.LaunchNote {
	c := contextSize(l)
	if c == nil {
		return []engine.LaunchNote{{Rule: engine.ContextFromModel}}
	}
	if p := parallel(l); p != nil {
		return []engine.LaunchNote{{Rule: engine.ContextPerSlot, Context: *c, MaxModelLen: *l.MaxModelLen, Parallel: *p}}
	}
	return []engine.LaunchNote{{Rule: engine.ContextUnified, Context: *c, MaxModelLen: *l.MaxModelLen}}
}

// checkLaunch reports what llama-server would refuse or ignore: an unknown
// KV cache type (it exits on it), tensor_parallel_size > 1, --flag=value
// in args.
func checkLaunch(l engine.Launch, at hcl.Attributes) hcl.Diagnostics {
	var diags hcl.Diagnostics
	if a, ok := at["kv_cache_dtype"]; ok && l.KVCacheDtype != "" && !slices.Contains(CacheTypes, l.KVCacheDtype) {
		detail := fmt.Sprintf("llama-server's -ctk and -ctv take %s (llama-server -h, docs/llamacpp.md#kv-cache-types); it exits on %q before loading the model.",
			strings.Join(CacheTypes, ", "), l.KVCacheDtype)
		if v, other := otherCacheTypes[l.KVCacheDtype]; l.KVCacheDtype == "auto" {
			detail += " Leave kv_cache_dtype out for llama.cpp's default, f16."
		} else if other && v != "" {
			detail += fmt.Sprintf(" %q is another engine's spelling: llama.cpp writes %q.", l.KVCacheDtype, v)
		} else if other {
			detail += " llama.cpp has no fp8 KV cache; its 8-bit type is q8_0."
		} else if near := namesuggest.Closest(strings.ToLower(l.KVCacheDtype), CacheTypes); near != "" {
			detail += fmt.Sprintf(" Did you mean %q?", near)
		}
		diags = append(diags, engine.InvalidCtx("Unknown kv_cache_dtype", a.Expr.Range(), a.Range, detail))
	}
	if a, ok := at["tensor_parallel_size"]; ok && l.TensorParallelSize != nil && *l.TensorParallelSize > 1 {
		diags = append(diags, engine.InvalidCtx("Attribute not supported by llama.cpp", a.NameRange, a.Range,
			`llama.cpp has no tensor-parallel size: its --split-mode tensor (EXPERIMENTAL in llama-server -h) splits over the GPUs it finds, and a build without GPU offload exits on it ("LLAMA_SPLIT_MODE_TENSOR needs >= 1 devices"), so slogate does not render it. On a GPU build write args = ["--split-mode", "tensor"] (or "layer", the default, or "row"), with ["--device", "DEV1,DEV2"] to choose the GPUs (docs/llamacpp.md#flags).`))
	}
	if a, ok := at["args"]; ok {
		for _, arg := range l.Args {
			if flag, _, eq := strings.Cut(arg, "="); eq && strings.HasPrefix(flag, "-") && !strings.Contains(flag, " ") {
				diags = append(diags, engine.InvalidCtx("Flag with a value after =", a.Expr.Range(), a.Range,
					fmt.Sprintf("llama-server takes a flag and its value as two words and exits on %q (\"error: invalid argument\"): write %q, %q instead (docs/llamacpp.md#flags).",
						arg, flag, strings.SplitN(arg, "=", 2)[1])))
			}
		}
	}
	return diags
}

// specTypes are llama-server's --spec-type values (llama-server -h of
// b11669), "none" left out.
var specTypes = []string{"draft-simple", "draft-eagle3", "draft-mtp", "draft-dflash", "draft-dspark",
	"ngram-simple", "ngram-map-k", "ngram-map-k4v", "ngram-mod", "ngram-cache"}

// commonMethods map slogate's (and vLLM's) common speculative methods to
// llama.cpp's types.
var commonMethods = map[string]string{
	"draft":       "draft-simple",
	"draft_model": "draft-simple",
	"dflash":      "draft-dflash",
	"dspark":      "draft-dspark",
	"eagle3":      "draft-eagle3",
	"mtp":         "draft-mtp",
	"ngram":       "ngram-simple",
}

// specTypesOf are the --spec-type values of method (a comma-separated
// list of llama.cpp's types or the common names); ok is false when one
// is neither.
func specTypesOf(method string) (types []string, ok bool) {
	for _, m := range strings.Split(method, ",") {
		m = strings.ToLower(strings.TrimSpace(m))
		if t, common := commonMethods[m]; common {
			m = t
		}
		if !slices.Contains(specTypes, m) {
			return nil, false
		}
		types = append(types, m)
	}
	return types, len(types) > 0
}

// needsDraftModel says whether a type drafts with a second model (-md):
// every draft-* but draft-mtp, which drafts with the target's own MTP
// layers. Without one llama-server logs the failure and serves without
// speculation (draft-simple: "requires a draft context").
func needsDraftModel(t string) bool {
	return strings.HasPrefix(t, "draft-") && t != "draft-mtp"
}

// speculativeArgs renders the block as llama-server's flags: --spec-type
// TYPES, -md MODEL, --spec-draft-n-max N (ngram-mod: --spec-ngram-mod-n-max
// N), then each config key K as --spec-K (underscores as dashes), a true
// boolean as the flag alone, a false one as --no-spec-K.
func speculativeArgs(sp *engine.Speculative) []string {
	types, ok := specTypesOf(sp.Method)
	if !ok {
		return nil // Load refused it
	}
	a := []string{"--spec-type", strings.Join(types, ",")}
	if sp.Model != "" {
		a = append(a, "-md", sp.Model)
	}
	if n := sp.NumSpeculativeTokens; n != nil {
		flag := "--spec-draft-n-max"
		if slices.Equal(types, []string{"ngram-mod"}) {
			flag = "--spec-ngram-mod-n-max"
		}
		a = append(a, flag, strconv.Itoa(*n))
	}
	for _, k := range engine.SortedKeys(sp.Config) {
		name := "spec-" + strings.ReplaceAll(k, "_", "-")
		switch v := sp.Config[k].(type) {
		case bool:
			if v {
				a = append(a, "--"+name)
			} else {
				a = append(a, "--no-"+name)
			}
		case string:
			a = append(a, "--"+name, v)
		default:
			b, _ := json.Marshal(v)
			a = append(a, "--"+name, string(b))
		}
	}
	return a
}

// checkSpeculative reports what of a speculative block llama-server cannot
// take: no method, a method it lacks, a draft type without its draft
// model, a token count an n-gram type has no one flag for, config keys
// that repeat the attributes or hold lists.
func checkSpeculative(sp *engine.Speculative, at hcl.Attributes, cfg hcl.Range) hcl.Diagnostics {
	var diags hcl.Diagnostics
	names := strings.Join(specTypes, ", ")
	common := "draft → draft-simple, dflash → draft-dflash, dspark → draft-dspark, eagle3 → draft-eagle3, mtp → draft-mtp, ngram → ngram-simple"
	if sp.Method == "" {
		return append(diags, engine.Invalid("Missing speculative method", sp.DeclRange,
			"llama-server speculates only with --spec-type (default none; a draft model alone is loaded and not used): set method to one of %s, or slogate's %s (docs/llamacpp.md#speculative-decoding).", names, common))
	}
	types, ok := specTypesOf(sp.Method)
	if !ok {
		detail := fmt.Sprintf("llama-server's --spec-type takes %s (a comma-separated list of them), and slogate maps %s (docs/llamacpp.md#speculative-decoding); %q is none of them.", names, common, sp.Method)
		if near := namesuggest.Closest(strings.ToLower(sp.Method), append(slices.Clone(specTypes), engine.SortedKeys(commonMethods)...)); near != "" {
			detail += fmt.Sprintf(" Did you mean %q?", near)
		}
		return append(diags, engine.InvalidCtx("Speculative method not supported by llama.cpp", at["method"].Expr.Range(), at["method"].Range, detail))
	}
	if sp.Model == "" {
		for _, t := range types {
			if needsDraftModel(t) {
				diags = append(diags, engine.Invalid("Missing draft model", sp.DeclRange,
					"llama-server's %s drafts with a second model (-md): set model to the draft's GGUF path (the target's own path drafts with itself). Without one llama-server logs \"failed to initialize speculative decoding context\" and serves without speculation (docs/llamacpp.md#speculative-decoding).", t))
				break
			}
		}
	}
	if a, set := at["num_speculative_tokens"]; set && sp.NumSpeculativeTokens != nil {
		for _, t := range types {
			if strings.HasPrefix(t, "ngram-") && t != "ngram-mod" {
				diags = append(diags, engine.InvalidCtx("Attribute not supported by llama.cpp", a.NameRange, a.Range,
					fmt.Sprintf("llama-server's %s drafts an m-gram of --spec-%s-size-m tokens, not num_speculative_tokens: remove it and write config = { %s_size_m = N } (docs/llamacpp.md#speculative-decoding).", t, t, strings.ReplaceAll(t, "-", "_"))))
				break
			}
		}
	}
	owned := map[string]string{"type": "method", "draft_model": "model", "model": "model", "draft_n_max": "num_speculative_tokens", "ngram_mod_n_max": "num_speculative_tokens"}
	return append(diags, engine.CheckSpeculativeConfig(sp, cfg, owned, "llama.cpp", "docs/llamacpp.md#speculative-decoding", "--spec-K")...)
}

// speculativeMethod is llama.cpp's --spec-type for the block's method
// ("draft" → "draft-simple"), else the method as written.
func speculativeMethod(sp *engine.Speculative) string {
	if types, ok := specTypesOf(sp.Method); ok {
		return strings.Join(types, ",")
	}
	return sp.Method
}
