# device (docs/spec.md#device): an unknown device, and what vLLM's CPU build
# ignores or may refuse (docs/vllm.md#cpu-build). TestDeviceDiagnostics
# checks the details.
server "typo" {
  model  = "/models/tiny"
  device = "cpus" # ERROR: Unknown device
}

server "unsized" {
  model  = "/models/tiny"
  device = "cpu" # WARNING: CPU KV cache not sized
}

server "both" {
  model                  = "/models/tiny"
  device                 = "cpu"
  gpu_memory_utilization = 0.5 # WARNING: gpu_memory_utilization ignored by the CPU build
  env                    = { VLLM_CPU_KVCACHE_SPACE = "2" }
  attention_backend      = "FLASH_ATTN" # WARNING: attention_backend ignored by the CPU build
  kv_cache_dtype         = "nvfp4" # WARNING: KV cache dtype not listed by the CPU build
}

server "cpu" {
  model             = "/models/tiny"
  device            = "cpu"
  env               = { VLLM_CPU_KVCACHE_SPACE = "2" }
  attention_backend = "cpu_attn"
  kv_cache_dtype    = "fp8_e5m2"
}

server "gpu" {
  model = "/models/tiny"
  env   = { VLLM_CPU_KVCACHE_SPACE = "2" } # WARNING: CPU build setting without device = "cpu"
}

server "named" {
  model  = "/models/tiny"
  device = "gpu"
}
