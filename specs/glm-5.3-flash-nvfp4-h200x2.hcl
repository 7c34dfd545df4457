# GLM-5.3-Flash (NVFP4) with DFlash2 speculative decoding on two H200 NVL
# (tensor parallel 2, expert parallel). Renders exactly the launch of
# testdata/seeds/glm-5.3-flash-nvfp4-h200x2.txt and codifies that report's
# numbers as SLOs.

variable "api_key" {
  description = "API key the server requires (--api-key). Taken from VLLM_API_KEY; without it a fixed local placeholder is used, which slogate also sends, so the run works either way. Never printed: reports show <redacted>."
  type        = string
  default     = try(env("VLLM_API_KEY"), "slogate-local-key")
}

variable "vllm_command" {
  description = "The vllm executable. CI jobs that run inside the vllm/vllm-openai image pass -var vllm_command=vllm (docs/ci.md)."
  type        = string
  default     = "${env("HOME")}/env_h200-nvidia-glm53flash-dflash2-vllm-3b5189828/bin/vllm"
}

variable "sim_args" {
  description = "Simulator flags appended to the launch, for `slogate run -sim` only (a real vLLM rejects them). The simulator already exposes this launch as vLLM does: tensor parallel 2 on two GPUs is one engine (data_parallel_size = 1), so one vllm:cache_config_info series and one KV log line."
  type        = list(string)
  default     = []
}

server "glm" {
  command                = var.vllm_command
  model                  = "nvidia/GLM-5.3-Flash-NVFP4"
  served_model_name      = "nvidia/GLM-5.3-Flash-NVFP4"
  tensor_parallel_size   = 2
  data_parallel_size     = 1
  enable_expert_parallel = true
  max_model_len          = "1M" # 1048576
  gpu_memory_utilization = 0.94
  max_num_batched_tokens = 8192
  max_num_seqs           = 32
  attention_backend      = "FLASHINFER_MLA_SPARSE_SM90"
  kv_cache_dtype         = "fp8"
  speculative {
    method                 = "dflash"
    model                  = "incoai/GLM-5.3-Flash-DFlash2"
    num_speculative_tokens = 7
    config = {
      kv_cache_dtype = "auto" # the draft model keeps its own KV cache dtype
    }
  }
  args = concat([
    "--reasoning-parser", "glm45",
    "--enable-auto-tool-choice",
    "--tool-call-parser", "glm47",
    "--enable-ep-weight-filter",
    "--model-loader-extra-config", jsonencode({ enable_multithread_load = true, num_threads = 128 }),
    "--enable-chunked-prefill",
    "--linear-backend", "humming",
    "--moe-backend", "humming",
  ], var.sim_args)
  env = {
    VLLM_USE_V2_MODEL_RUNNER    = "1"
    VLLM_ENGINE_READY_TIMEOUT_S = "3600"
  }
  host          = "0.0.0.0"
  port          = 8000
  api_key       = var.api_key
  ready_timeout = "60m" # as VLLM_ENGINE_READY_TIMEOUT_S: loading takes long

  labels = {
    quantization = "NVFP4"
    gpu          = "H200 NVL"
    gpu_count    = "2"
    vram         = "282 GB (2 x 141 GB)"
    build        = "cuda-13.2"
    engine       = "vllm" # the seed ran vLLM 0.1.dev1+g3b5189828
    commit       = "3b518982806c"
  }
}

measure {
  duration   = "30s"
  max_output = 4096
}

# 1024K equals max_model_len: a prefill context may be as long as the model
# allows (the runner sends max_model_len - 1 prompt tokens and 1 output).
prefill { contexts = ["8K", "16K", "32K", "64K", "128K", "256K", "512K", "1019K", "1024K"] }

matrix "decode" {
  contexts    = ["8K", "16K", "32K", "64K", "128K", "256K", "512K", "1019K"]
  concurrency = [1, 2, 4, 8, 16, 32, 64, 128]
}

assert "decode_8k_16" {
  condition     = decode["8K"][16].total_tps >= 850
  error_message = "decode throughput at 8K x 16 fell below 850 tok/s (seed: 893.7)"
}

assert "decode_1019k_1" {
  condition     = decode["1019K"][1].total_tps >= 140
  error_message = "a single stream at 1019K decodes below 140 tok/s (seed: 149.1)"
}

assert "prefill_128k" {
  condition     = prefill["128K"].tps >= 11000
  error_message = "cold prefill at 128K fell below 11K tok/s (seed: 12.4K)"
}

# The seed's total tok/s matrix over its *valid* cells. Over-capacity cells
# are null. The "Requests queued" cells (concurrency above max_num_seqs = 32
# at 8K-64K) are null too: they were measured, but while requests waited,
# so their throughput is queueing noise (64K x 32 gave 251.3) rather than a
# level worth gating on.
expect "decode_total_tps" {
  metric    = "total_tps"
  tolerance = 0.10
  values = {
    "8K"    = [153.9, 247.4, 406.9, 608.7, 893.7, null, null, null]
    "16K"   = [158.1, 254.8, 383.2, 626.7, 893.1, null, null, null]
    "32K"   = [156.0, 260.9, 406.8, 616.6, 898.7, null, null, null]
    "64K"   = [156.5, 244.8, 367.2, 599.5, 881.3, null, null, null]
    "128K"  = [156.7, 258.5, 399.1, 608.7, 866.4, null, null, null]
    "256K"  = [157.0, 262.6, 389.5, 583.8, null, null, null, null]
    "512K"  = [144.3, 254.7, 380.5, null, null, null, null, null]
    "1019K" = [149.1, 235.4, null, null, null, null, null, null]
  }
}
