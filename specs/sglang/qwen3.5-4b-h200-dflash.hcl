# The Qwen DFlash seed (specs/qwen3.5-4b-h200-dflash.hcl) launched on SGLang:
# the same server, cells and SLOs, written in SGLang's vocabulary
# (docs/sglang.md#flags). Its rendered launch is the golden file
# spec/testdata/sglang/qwen3.5-4b-h200-dflash.launch
# (regenerate: go test ./spec -run TestSGLangSeedLaunch -update).
#
#   slogate plan     specs/sglang/qwen3.5-4b-h200-dflash.hcl
#   slogate run -sim specs/sglang/qwen3.5-4b-h200-dflash.hcl   # on the SGLang simulator

variable "api_key" {
  description = "API key the server requires (--api-key). Taken from SGLANG_API_KEY (slogate's convention: SGLang itself reads the key only from --api-key); without it a fixed local placeholder is used, which slogate also sends. Never printed: reports show <redacted>."
  type        = string
  default     = try(env("SGLANG_API_KEY"), "slogate-local-key")
}

variable "sglang_command" {
  description = "The sglang executable (`sglang serve`; docs/sglang.md#launch)."
  type        = string
  default     = "${env("HOME")}/env_h200-z-lab-sglang/bin/sglang"
}

variable "sim_args" {
  description = "Simulator flags appended to the launch, for `slogate run -sim` only (a real SGLang rejects them)."
  type        = list(string)
  default     = []
}

server "qwen" {
  engine                 = "sglang"
  command                = var.sglang_command
  model                  = "Qwen/Qwen3.5-4B"
  served_model_name      = "qwen"
  tensor_parallel_size   = 1
  max_model_len          = 262144
  gpu_memory_utilization = 0.872563
  attention_backend      = "fa3" # SGLang's FlashAttention-3 (vLLM's flash_attn)
  speculative {
    method                 = "dflash" # --speculative-algorithm DFLASH
    model                  = "z-lab/Qwen3.5-4B-DFlash"
    num_speculative_tokens = 7 # a block of 8 (7 drafted): --speculative-dflash-block-size 8
  }
  args = concat([
    "--trust-remote-code",
    "--reasoning-parser", "qwen3",
    "--tool-call-parser", "qwen3_coder", # SGLang has no --enable-auto-tool-choice: the parser enables tools
    "--chunked-prefill-size", "32768",   # vLLM's max_num_batched_tokens
  ], var.sim_args)
  host    = "0.0.0.0"
  port    = 8000
  api_key = var.api_key

  labels = {
    quantization = "BF16"
    gpu          = "H200 NVL"
    gpu_count    = "1"
    vram         = "141 GB"
  }
}

measure {
  duration   = "30s"
  max_output = 4096
}

prefill { contexts = ["8K", "16K", "32K", "64K", "128K", "251K", "256K"] }

matrix "decode" {
  contexts    = ["8K", "16K", "32K", "64K", "128K", "251K"]
  concurrency = [1, 2, 4, 8, 16, 32, 64, 128]
}

assert "decode_8k_64" {
  condition     = decode["8K"][64].total_tps >= 6000
  error_message = "decode throughput at 8K x 64 fell below 6,000 tok/s"
}

assert "decode_8k_1_per_request" {
  condition     = decode["8K"][1].per_request_tps >= 350
  error_message = "a single 8K stream decodes below 350 tok/s (seed: 405.9)"
}

assert "decode_128k_128" {
  condition     = decode["128K"][128].total_tps >= 1800
  error_message = "decode throughput at 128K x 128 fell below 1,800 tok/s (seed: 1,954.6)"
}

assert "prefill_8k" {
  condition     = prefill["8K"].tps >= 40000
  error_message = "cold prefill at 8K fell below 40K tok/s (seed: 46.7K)"
}

# The seed's total tok/s matrix; 251K x 128 was over capacity, so null.
expect "decode_total_tps" {
  metric    = "total_tps"
  tolerance = 0.10
  values = {
    "8K"   = [408.2, 779.9, 1496.1, 2612.0, 3975.7, 5311.0, 6018.4, 6429.2]
    "16K"  = [375.6, 753.3, 1419.8, 2451.6, 3765.5, 4720.5, 5342.7, 5690.7]
    "32K"  = [368.5, 721.1, 1331.4, 2238.5, 3280.0, 3866.9, 4299.4, 4483.9]
    "64K"  = [360.8, 673.4, 1176.2, 1847.8, 2462.9, 2862.3, 3063.4, 3144.8]
    "128K" = [328.1, 536.5, 954.1, 1344.4, 1737.7, 1846.0, 1911.3, 1954.6]
    "251K" = [282.0, 470.7, 676.6, 862.5, 1010.4, 1072.7, 1103.4, null]
  }
}
