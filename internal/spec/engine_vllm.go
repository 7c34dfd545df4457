package spec

// vllmSyntax is vLLM's launch: `vllm serve MODEL --flag value …`
// (docs/vllm.md#flags).
var vllmSyntax = &engineSyntax{
	title:         "vLLM",
	command:       "vllm",
	serveArgs:     vllmServeArgs,
	kvCacheDtypes: CacheDTypes,
	valuesSource:  "CacheDType in vllm/config/cache.py, docs/vllm.md#flags",
	otherSpellings: map[string]map[string]spelling{
		"kv_cache_dtype": {"bf16": {"bfloat16", "SGLang's bf16 and bfloat16 are one choice, docs/sglang.md#flags"}},
	},
	maxNumSeqsFlags:  []string{"--max-num-seqs", "--max_num_seqs"},
	containerCommand: nil, // vllm/vllm-openai's entrypoint is `vllm serve`
	apiKeyEnv:        "VLLM_API_KEY",
	docs:             "docs/vllm.md#flags",
}

// vllmServeArgs are the arguments of `vllm serve`: MODEL --flag value …, the
// API key's flag only when key is set, --host host.
func vllmServeArgs(s *Server, key, host string) []string {
	a := launchArgs{s.Model}
	str, num := a.str, a.num
	str("--served-model-name", s.ServedModelName)
	num("--tensor-parallel-size", s.TensorParallelSize)
	num("--pipeline-parallel-size", s.PipelineParallelSize)
	num("--data-parallel-size", s.DataParallelSize)
	if s.EnableExpertParallel != nil && *s.EnableExpertParallel {
		a = append(a, "--enable-expert-parallel")
	}
	num("--max-model-len", s.MaxModelLen)
	a.fraction("--gpu-memory-utilization", s.GPUMemoryUtilization)
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
