# The GLM-5.3-Flash seed (specs/glm-5.3-flash-nvfp4-h200x2.hcl) launched on
# SGLang: the same server, cells and SLOs, written in SGLang's vocabulary
# (docs/sglang.md#flags). Its rendered launch is the golden file
# spec/testdata/sglang/glm-5.3-flash-nvfp4-h200x2.launch
# (regenerate: go test ./spec -run TestSGLangSeedLaunch -update).

variable "api_key" {
  description = "API key the server requires (--api-key). Taken from SGLANG_API_KEY (slogate's convention: SGLang itself reads the key only from --api-key); without it a fixed local placeholder is used, which slogate also sends. Never printed: reports show <redacted>."
  type        = string
  default     = try(env("SGLANG_API_KEY"), "slogate-local-key")
}

variable "sglang_command" {
  description = "The sglang executable (`sglang serve`; docs/sglang.md#launch)."
  type        = string
  default     = "${env("HOME")}/env_h200-nvidia-glm53flash-sglang/bin/sglang"
}

variable "sim_args" {
  description = "Simulator flags appended to the launch, for `slogate run -sim` only (a real SGLang rejects them)."
  type        = list(string)
  default     = []
}

server "glm" {
  engine                 = "sglang"
  command                = var.sglang_command
  model                  = "nvidia/GLM-5.3-Flash-NVFP4"
  served_model_name      = "nvidia/GLM-5.3-Flash-NVFP4"
  tensor_parallel_size   = 2
  data_parallel_size     = 1
  max_model_len          = "1M" # 1048576
  gpu_memory_utilization = 0.94
  max_num_seqs           = 32 # --max-running-requests
  attention_backend      = "dsa" # SGLang's sparse-attention backend for GLM-5's DSA
  kv_cache_dtype         = "fp8_e4m3" # vLLM's fp8
  speculative {
    method                 = "dflash"
    model                  = "incoai/GLM-5.3-Flash-DFlash2"
    num_speculative_tokens = 7
    config = {
      draft_kv_cache_dtype = "auto" # --speculative-draft-kv-cache-dtype: the draft keeps its own dtype
    }
  }
  args = concat([
    "--ep-size", "2", # vLLM's enable_expert_parallel over the two GPUs
    "--reasoning-parser", "glm45",
    "--tool-call-parser", "glm47",
    "--chunked-prefill-size", "8192", # vLLM's max_num_batched_tokens
  ], var.sim_args)
  host          = "0.0.0.0"
  port          = 8000
  api_key       = var.api_key
  ready_timeout = "60m" # loading takes long

  labels = {
    quantization = "NVFP4"
    gpu          = "H200 NVL"
    gpu_count    = "2"
    vram         = "282 GB (2 x 141 GB)"
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
