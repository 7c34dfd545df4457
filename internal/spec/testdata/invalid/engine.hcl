# Engines (docs/spec.md#engines): an unknown engine, attributes SGLang has
# no flag for, values outside SGLang's vocabulary, speculative methods and
# settings SGLang cannot take. TestEngineDiagnostics checks the details.
server "typo" {
  model  = "Qwen/Qwen3.5-4B"
  engine = "sglnag" # ERROR: Unknown engine
}

server "unsupported" {
  engine                 = "sglang"
  model                  = "Qwen/Qwen3.5-4B"
  enable_expert_parallel = true # ERROR: Attribute not supported by SGLang
  max_num_batched_tokens = 8192 # ERROR: Attribute not supported by SGLang
  kv_cache_dtype         = "fp8" # WARNING: Unknown kv_cache_dtype
  attention_backend      = "flash_attn" # WARNING: Unknown attention_backend
  speculative {
    method = "suffix" # ERROR: Speculative method not supported by SGLang
  }
}

server "ngram" {
  engine = "sglang"
  model  = "Qwen/Qwen3.5-4B"
  speculative {
    method                 = "ngram"
    num_speculative_tokens = 4 # ERROR: Attribute not supported by SGLang
  }
}

server "dflash" {
  engine = "sglang"
  model  = "Qwen/Qwen3.5-4B"
  speculative { # ERROR: Missing draft model
    method                 = "dflash"
    num_speculative_tokens = 7
    config = { # ERROR: Duplicate speculative setting
      num_draft_tokens = 8
    }
  }
}

server "nomethod" {
  engine = "sglang"
  model  = "Qwen/Qwen3.5-4B"
  speculative { # ERROR: Missing speculative method
    model = "z-lab/Qwen3.5-4B-DFlash"
  }
}

server "vllm" {
  model             = "Qwen/Qwen3.5-4B"
  attention_backend = "fa3" # fine for vLLM: its backends are not checked
  kv_cache_dtype    = "fp8_e4m2" # WARNING: Unknown kv_cache_dtype
}

# fp4_e2m1 is in SGLang's argparse choices, but 2026 builds exit on it at
# startup (kv_cache_dtype.py): a warning naming fp4_mx_block16.
server "fp4" {
  engine         = "sglang"
  model          = "Qwen/Qwen3.5-4B"
  kv_cache_dtype = "fp4_e2m1" # WARNING: KV cache dtype refused by newer SGLang
}

server "fp4args" {
  engine = "sglang"
  model  = "Qwen/Qwen3.5-4B"
  args   = ["--kv-cache-dtype", "fp4_e2m1"] # WARNING: KV cache dtype refused by newer SGLang
}
