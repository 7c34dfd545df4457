package sglang

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/slogate/slogate/internal/engine"
	namesuggest "github.com/slogate/slogate/internal/suggest"
)

// syntax is SGLang's launch: `sglang serve MODEL --flag value …`, the
// flags named after ServerArgs' fields (python/sglang/srt/server_args.py;
// docs/sglang.md#flags).
var syntax = &engine.Syntax{
	Command:    "sglang",
	Subcommand: []string{"serve"},
	ServeArgs:  serveArgs,
	// ServerArgs.kv_cache_dtype's choices (server_args.py, 2026 builds;
	// fp4_e2m1 in older ones).
	KVCacheDtypes: []string{"auto", "fp8_e5m2", "fp8_e4m3", "mxfp8", "bf16", "bfloat16", "nvfp4", "fp4_mx_block16", "fp4_e2m1"},
	// ATTENTION_BACKEND_CHOICES of server_args.py (2026 builds).
	AttentionBackends: []string{
		"triton", "torch_native", "flex_attention", "dsa", "nsa", "dsv4", "compressed",
		"cutlass_mla", "fa3", "fa4", "flashinfer", "flashmla", "trtllm_mla", "cutedsl_mla", "tokenspeed_mla",
		"trtllm_mha", "dual_chunk_flash_attn", "hpc_ops", "minicpm_flashattn", "minicpm_flashinfer",
		"aiter", "wave", "intel_amx", "ascend", "intel_xpu",
	},
	ValuesSource:         "the choices of ServerArgs in python/sglang/srt/server_args.py, docs/sglang.md#flags",
	KVCacheDtypeFlag:     "--kv-cache-dtype",
	AttentionBackendFlag: "--attention-backend",
	OtherSpellings: map[string]map[string]engine.Spelling{
		"kv_cache_dtype": {"fp8": {Value: "fp8_e4m3", Why: "vLLM's fp8 is fp8_e4m3: \"CUDA 11.8+ supports fp8 (=fp8_e4m3)\", vllm/config/cache.py"}},
		"attention_backend": {
			"FLASHINFER":  {Value: "flashinfer", Why: "the FlashInfer kernels"},
			"TRITON_ATTN": {Value: "triton", Why: "the Triton kernels"},
			"FLASH_ATTN":  {Value: "fa3", Why: "FlashAttention 3, which vLLM's FLASH_ATTN runs on Hopper; fa4 on Blackwell"},
		},
	},
	Unsupported: map[string]string{
		"enable_expert_parallel": `SGLang sizes expert parallelism instead of switching it on: write args = ["--ep-size", "N"] (docs/sglang.md#flags).`,
		"max_num_batched_tokens": `SGLang bounds a prefill chunk and a prefill batch separately: write args = ["--chunked-prefill-size", "N"] and/or ["--max-prefill-tokens", "N"] (docs/sglang.md#flags).`,
	},
	CheckSpeculative:  checkSpeculative,
	CheckLaunch:       checkLaunch,
	SpeculativeMethod: speculativeMethod,
	MaxNumSeqsFlags:   []string{"--max-running-requests", "--max_running_requests"},
	// speculative_hook.py: every builtin algorithm's handler sets
	// max_running_requests = 48 when it is not given ("Max running
	// requests is reset to 48 for speculative decoding").
	ImpliedMaxNumSeqs: func(s engine.Launch) *int {
		if s.Speculative == nil {
			return nil
		}
		n := 48
		return &n
	},
	// lmsysorg/sglang has no ENTRYPOINT or CMD (docs/sglang.md#launch).
	ContainerCommand: []string{"sglang", "serve"},
	APIKeyEnv:        "", // --api-key only
	UnmeasuredFlags:  []string{"--host", "--port", "--api-key"},
	Docs:             "docs/sglang.md#flags",
}

// fp4E2M1Refused is the warning detail of kv_cache_dtype fp4_e2m1:
// argparse still lists the choice, but configure_kv_cache_dtype
// (python/sglang/srt/mem_cache/kv_cache_dtype.py, 2026 builds) raises at
// startup (docs/sglang.md#flags). A warning, not an error: an older build
// serves it, and the spec does not say which build runs.
const fp4E2M1Refused = `SGLang builds of 2026 exit at startup on --kv-cache-dtype fp4_e2m1, though argparse still lists it: configure_kv_cache_dtype (python/sglang/srt/mem_cache/kv_cache_dtype.py) raises "ValueError: --kv-cache-dtype=fp4_e2m1 is deprecated. Use --kv-cache-dtype=fp4_mx_block16.". Write kv_cache_dtype = "fp4_mx_block16", the same block-size-16 FP4 E2M1 recipe under its new name (or "nvfp4" for NVIDIA's recipe); keep fp4_e2m1 only for a 2025 build that still serves it (docs/sglang.md#flags).`

// checkLaunch warns of a KV cache dtype newer SGLang builds refuse at
// startup, as the attribute or in args.
func checkLaunch(l engine.Launch, at hcl.Attributes) hcl.Diagnostics {
	var diags hcl.Diagnostics
	warn := func(a *hcl.Attribute) {
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: "KV cache dtype refused by newer SGLang",
			Detail: fp4E2M1Refused, Subject: a.Expr.Range().Ptr(), Context: a.Range.Ptr()})
	}
	if a, ok := at["kv_cache_dtype"]; ok && l.KVCacheDtype == "fp4_e2m1" {
		warn(a)
	}
	if a, ok := at["args"]; ok {
		for i, arg := range l.Args {
			if arg == "--kv-cache-dtype=fp4_e2m1" || arg == "--kv-cache-dtype" && i+1 < len(l.Args) && l.Args[i+1] == "fp4_e2m1" {
				warn(a)
				break
			}
		}
	}
	return diags
}

// serveArgs are the arguments of `sglang serve`: MODEL --flag value
// …, the API key's flag only when key is set, --host host, args last.
// --enable-metrics is always given: slogate reads /metrics, which SGLang
// serves only with it (docs/sglang.md#metrics).
func serveArgs(s engine.Launch, key, host string) []string {
	a := engine.Args{s.Model}
	str, num := a.Str, a.Num
	str("--served-model-name", s.ServedModelName)
	num("--tp-size", s.TensorParallelSize)
	num("--pp-size", s.PipelineParallelSize)
	num("--dp-size", s.DataParallelSize)
	num("--context-length", s.MaxModelLen)
	a.Fraction("--mem-fraction-static", s.GPUMemoryUtilization)
	if s.Device == engine.DeviceCPU {
		// SGLang picks its device by flag (server_args.py's --device).
		a = append(a, "--device", engine.DeviceCPU)
	}
	str("--host", host)
	if s.Port != 0 {
		num("--port", &s.Port)
	}
	str("--api-key", key)
	num("--max-running-requests", s.MaxNumSeqs)
	str("--attention-backend", s.AttentionBackend)
	str("--kv-cache-dtype", s.KVCacheDtype)
	if s.EnablePrefixCaching != nil && !*s.EnablePrefixCaching {
		a = append(a, "--disable-radix-cache") // the radix cache is on by default
	}
	a = append(a, "--enable-metrics")
	if sp := s.Speculative; sp != nil {
		a = append(a, sglangSpeculativeArgs(sp)...)
	}
	return append(a, s.Args...)
}

// sglangAlgorithm is one of SGLang's builtin speculative algorithms and how
// a number of speculative tokens N is written for it.
type sglangAlgorithm struct {
	name string
	// width renders N: the flags giving N drafted tokens a step; nil when
	// N has no one meaning for the algorithm.
	width func(n int) []string
}

// sglangBlock is DFLASH's width: a block of N+1, the verify window whose
// first position is the last verified token, so it drafts N
// (docs/sglang.md#speculative-token-mapping: dflash_worker.py fills
// block position 0 with it and drafts block_size-1).
func sglangBlock(n int) []string {
	return []string{"--speculative-dflash-block-size", strconv.Itoa(n + 1)}
}

// sglangWindow is DSPARK's width: a verify window of N drafted tokens and
// the one before them, N+1 (speculative_hook.py's _handle_dspark checks
// num_draft_tokens = gamma + 1).
func sglangWindow(n int) []string {
	return []string{"--speculative-num-draft-tokens", strconv.Itoa(n + 1)}
}

// sglangChain is the EAGLE family's width as a chain: N draft steps of one
// candidate each, so N+1 tokens verified (speculative_hook.py's
// _handle_eagle_family sets num_draft_tokens = num_steps + 1 at topk 1, and
// needs all three once num_steps is given).
func sglangChain(n int) []string {
	return []string{"--speculative-num-steps", strconv.Itoa(n), "--speculative-eagle-topk", "1",
		"--speculative-num-draft-tokens", strconv.Itoa(n + 1)}
}

// sglangAlgorithms are SGLang's builtin --speculative-algorithm values
// (ServerArgs.speculative_algorithm's help; SGLang upper-cases the value),
// keyed by their lower-case name.
var sglangAlgorithms = map[string]sglangAlgorithm{
	"dflash":     {"DFLASH", sglangBlock},
	"dspark":     {"DSPARK", sglangWindow},
	"eagle":      {"EAGLE", sglangChain},
	"eagle3":     {"EAGLE3", sglangChain},
	"nextn":      {"NEXTN", sglangChain},
	"standalone": {"STANDALONE", sglangChain},
	"ngram":      {"NGRAM", nil}, // a tree of --speculative-num-draft-tokens, not a chain of N
	// UNO drafts with a LoRA of the target (--uno-lora-path, no draft
	// model); its --speculative-num-draft-tokens is a verify width Q,
	// linear or a tree (speculative_hook.py _handle_uno).
	"uno": {"UNO", nil},
	// FROZEN_KV_MTP: Gemma 4's assistant draft, reading the target's KV
	// in place; NEXTN or EAGLE with such a draft resolve to it
	// (_resolve_speculative_algorithm_alias), and it drafts a chain of
	// top-k 1 as the EAGLE family does (spec_info.py is_eagle).
	"frozen_kv_mtp": {"FROZEN_KV_MTP", sglangChain},
}

// vllmToSGLang maps vLLM's speculative methods to SGLang's algorithm of the
// same kind, so that one speculative block launches either engine.
var vllmToSGLang = map[string]string{"mtp": "nextn", "draft_model": "standalone"}

// sglangAlgorithmOf is the SGLang algorithm a speculative method names
// (vLLM's name or SGLang's, in any case); ok is false for none.
func sglangAlgorithmOf(method string) (sglangAlgorithm, bool) {
	m := strings.ToLower(method)
	if to, ok := vllmToSGLang[m]; ok {
		m = to
	}
	alg, ok := sglangAlgorithms[m]
	return alg, ok
}

// sglangSpeculativeArgs renders the speculative block as SGLang's flags:
// --speculative-algorithm, the draft model, N as the algorithm's width,
// then each config key K as --speculative-K (docs/sglang.md#speculative-decoding).
func sglangSpeculativeArgs(sp *engine.Speculative) []string {
	alg, ok := sglangAlgorithmOf(sp.Method)
	if !ok {
		return nil // Load refused it
	}
	a := []string{"--speculative-algorithm", alg.name}
	if sp.Model != "" {
		a = append(a, "--speculative-draft-model-path", sp.Model)
	}
	if n := sp.NumSpeculativeTokens; n != nil && alg.width != nil {
		a = append(a, alg.width(*n)...)
	}
	for _, k := range engine.SortedKeys(sp.Config) {
		flag := "--speculative-" + strings.ReplaceAll(k, "_", "-")
		switch v := sp.Config[k].(type) {
		case bool:
			if v {
				a = append(a, flag)
			}
		case string:
			a = append(a, flag, v)
		default:
			b, _ := json.Marshal(v)
			a = append(a, flag, string(b))
		}
	}
	return a
}

// sglangAlgorithmNames lists SGLang's builtin algorithms and the vLLM
// names slogate maps to them, for diagnostics.
func sglangAlgorithmNames() []string {
	var names []string
	for _, k := range engine.SortedKeys(sglangAlgorithms) {
		names = append(names, sglangAlgorithms[k].name)
	}
	return names
}

// checkSpeculative reports what of a speculative block SGLang cannot
// take: no method, a method it lacks, a token count NGRAM has no meaning
// for, and config keys that repeat what the attributes render or that are
// not one flag's value.
func checkSpeculative(sp *engine.Speculative, at hcl.Attributes, cfg hcl.Range) hcl.Diagnostics {
	var diags hcl.Diagnostics
	builtins := strings.Join(sglangAlgorithmNames(), ", ")
	if sp.Method == "" {
		return append(diags, engine.Invalid("Missing speculative method", sp.DeclRange,
			"SGLang needs --speculative-algorithm: set method to one of %s (or vLLM's mtp, draft_model), see docs/sglang.md#speculative-decoding.", builtins))
	}
	alg, ok := sglangAlgorithmOf(sp.Method)
	if !ok {
		detail := fmt.Sprintf("SGLang has no speculative method %q: its --speculative-algorithm takes %s, and slogate maps vLLM's mtp to NEXTN and draft_model to STANDALONE (docs/sglang.md#speculative-decoding). An algorithm a plugin registers goes in args instead: args = [\"--speculative-algorithm\", \"NAME\"].",
			sp.Method, builtins)
		if near := namesuggest.Closest(strings.ToLower(sp.Method), append(engine.SortedKeys(sglangAlgorithms), engine.SortedKeys(vllmToSGLang)...)); near != "" {
			detail += fmt.Sprintf(" Did you mean %q?", near)
		}
		return append(diags, engine.InvalidCtx("Speculative method not supported by SGLang", at["method"].Expr.Range(), at["method"].Range, detail))
	}
	if sp.NumSpeculativeTokens != nil && alg.width == nil {
		why := fmt.Sprintf("SGLang's %s drafts a tree of --speculative-num-draft-tokens (default 12), not a chain of num_speculative_tokens: remove it and write config = { num_draft_tokens = N } (docs/sglang.md#speculative-decoding).", alg.name)
		if alg.name == "UNO" {
			why = "SGLang's UNO takes --speculative-num-draft-tokens as its verify width Q, a chain's or a tree's, not num_speculative_tokens: remove it and write config = { num_draft_tokens = Q } (speculative_hook.py _handle_uno, docs/sglang.md#speculative-decoding)."
		}
		diags = append(diags, engine.InvalidCtx("Attribute not supported by SGLang", at["num_speculative_tokens"].NameRange, at["num_speculative_tokens"].Range, why))
	}
	if alg.name == "UNO" && sp.Model != "" {
		diags = append(diags, engine.InvalidCtx("Draft model not supported by UNO", at["model"].NameRange, at["model"].Range,
			"SGLang's UNO reuses the target model and refuses --speculative-draft-model-path (speculative_hook.py _handle_uno): remove model and give its draft LoRA as args = [\"--uno-lora-path\", \"PATH\"]."))
	}
	if alg.name == "DFLASH" && sp.Model == "" {
		diags = append(diags, engine.Invalid("Missing draft model", sp.DeclRange,
			"SGLang's DFLASH needs --speculative-draft-model-path: set model to the draft model (speculative_hook.py _handle_dflash)."))
	}
	owned := map[string]string{"algorithm": "method", "draft_model_path": "model", "draft_model": "model"}
	if sp.NumSpeculativeTokens != nil && alg.width != nil {
		for _, k := range []string{"num_steps", "eagle_topk", "num_draft_tokens", "dflash_block_size"} {
			owned[k] = "num_speculative_tokens"
		}
	}
	return append(diags, engine.CheckSpeculativeConfig(sp, cfg, owned, "SGLang", "docs/sglang.md#speculative-decoding", "--speculative-K")...)
}

// speculativeMethod is SGLang's algorithm for the block's method
// ("dflash" → "DFLASH", vLLM's "mtp" → "NEXTN"), else the method as
// written.
func speculativeMethod(sp *engine.Speculative) string {
	if alg, ok := sglangAlgorithmOf(sp.Method); ok {
		return alg.name
	}
	return sp.Method
}
