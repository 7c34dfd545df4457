package vllm

import "github.com/slogate/slogate/internal/engine"

// syntax is vLLM's launch: `vllm serve MODEL --flag value …`
// (docs/vllm.md#flags).
var syntax = &engine.Syntax{
	Command:              "vllm",
	Subcommand:           []string{"serve"},
	ServeArgs:            serveArgs,
	KVCacheDtypes:        CacheDTypes,
	KVCacheDtypeFlag:     "--kv-cache-dtype",
	AttentionBackendFlag: "--attention-backend",
	ValuesSource:         "CacheDType in vllm/config/cache.py, docs/vllm.md#flags",
	OtherSpellings: map[string]map[string]engine.Spelling{
		"kv_cache_dtype": {"bf16": {Value: "bfloat16", Why: "SGLang's bf16 and bfloat16 are one choice, docs/sglang.md#flags"}},
	},
	MaxNumSeqsFlags:            []string{"--max-num-seqs", "--max_num_seqs"},
	SpeculativeSamplingRefusal: "vLLM answers HTTP 400 \"The min_p and logit_bias sampling parameters are not yet supported with speculative decoding.\" to every such request (SamplingParams._validate_spec_decode, vLLM PR #31982; docs/vllm.md#sampling-parameters)",
	ContainerCommand:           nil, // vllm/vllm-openai's entrypoint is `vllm serve`
	APIKeyEnv:                  "VLLM_API_KEY",
	UnmeasuredFlags:            []string{"--host", "--port", "--api-key"},
	CheckLaunch:                checkLaunch,
	Docs:                       "docs/vllm.md#flags",
}

// serveArgs are the arguments of `vllm serve`: MODEL --flag value …, the
// API key's flag only when key is set, --host host.
func serveArgs(s engine.Launch, key, host string) []string {
	a := engine.Args{s.Model}
	str, num := a.Str, a.Num
	str("--served-model-name", s.ServedModelName)
	num("--tensor-parallel-size", s.TensorParallelSize)
	num("--pipeline-parallel-size", s.PipelineParallelSize)
	num("--data-parallel-size", s.DataParallelSize)
	if s.EnableExpertParallel != nil && *s.EnableExpertParallel {
		a = append(a, "--enable-expert-parallel")
	}
	num("--max-model-len", s.MaxModelLen)
	a.Fraction("--gpu-memory-utilization", s.GPUMemoryUtilization)
	str("--host", host)
	if s.Port != 0 {
		num("--port", &s.Port)
	}
	str("--api-key", key)
	num("--max-num-batched-tokens", s.MaxNumBatchedTokens)
	num("--max-num-seqs", s.MaxNumSeqs)
	str("--attention-backend", s.AttentionBackend)
	str("--kv-cache-dtype", s.KVCacheDtype)
	if s.EnablePrefixCaching != nil {
		if *s.EnablePrefixCaching {
			a = append(a, "--enable-prefix-caching")
		} else {
			a = append(a, "--no-enable-prefix-caching")
		}
	}
	if s.Speculative != nil {
		a = append(a, "--speculative-config", s.Speculative.JSON())
	}
	return append(a, s.Args...)
}

// CacheDTypes are the values of vLLM's --kv-cache-dtype (the CacheDType
// literal of vllm/config/cache.py, 2026-09 builds). An unknown value is a
// warning, not an error: newer builds add values.
var CacheDTypes = []string{
	"auto", "float16", "bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc", "fp8_ds_mla", "nvfp4_ds_mla",
	"turboquant_k8v4", "turboquant_4bit_nc", "turboquant_k3v4_nc", "turboquant_3bit_nc",
	"int4_per_token_head", "int8_per_token_head", "fp8_per_token_head", "nvfp4", "nvfp4_4over6",
}
