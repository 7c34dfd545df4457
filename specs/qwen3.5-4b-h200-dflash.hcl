# Qwen3.5-4B (BF16) with DFlash speculative decoding on one H200 NVL.
# Renders exactly the launch of testdata/seeds/qwen3.5-4b-h200-dflash.txt and
# codifies that report's numbers as SLOs.
#
#   slogate validate specs/qwen3.5-4b-h200-dflash.hcl
#   slogate plan     specs/qwen3.5-4b-h200-dflash.hcl
#   slogate run      specs/qwen3.5-4b-h200-dflash.hcl      # on the H200
#   slogate run -sim specs/qwen3.5-4b-h200-dflash.hcl      # on the simulator

variable "api_key" {
  description = "API key the server requires (--api-key). Taken from VLLM_API_KEY; without it a fixed local placeholder is used, which slogate also sends, so the run works either way. Never printed: reports show <redacted>."
  type        = string
  default     = try(env("VLLM_API_KEY"), "slogate-local-key")
}

variable "vllm_command" {
  description = "The vllm executable. CI jobs that run inside the vllm/vllm-openai image pass -var vllm_command=vllm (docs/ci.md)."
  type        = string
  default     = "${env("HOME")}/env_h200-z-lab-vllm/bin/vllm"
}

variable "sim_args" {
  description = "Simulator flags appended to the launch, for `slogate run -sim` only (a real vLLM rejects them). Qwen3.5 is a hybrid model (linear-attention layers): the simulator serves it as vLLM does, hybrid with prefix caching on, without any flag (docs/vllm.md#hybrid-models); -var 'sim_args=[\"--sim-hybrid=false\"]' serves it as a plain decoder."
  type        = list(string)
  default     = []
}

server "qwen" {
  command                = var.vllm_command
  model                  = "Qwen/Qwen3.5-4B"
  served_model_name      = "qwen"
  tensor_parallel_size   = 1
  max_model_len          = 262144
  gpu_memory_utilization = 0.872563
  max_num_batched_tokens = 32768
  attention_backend      = "flash_attn"
  speculative {
    method                 = "dflash"
    model                  = "z-lab/Qwen3.5-4B-DFlash"
    num_speculative_tokens = 7
  }
  args = concat([
    "--trust-remote-code",
    "--reasoning-parser", "qwen3",
    "--enable-auto-tool-choice",
    "--tool-call-parser", "qwen3_coder",
  ], var.sim_args)
  host    = "0.0.0.0"
  port    = 8000
  api_key = var.api_key

  labels = {
    quantization = "BF16"
    gpu          = "H200 NVL"
    gpu_count    = "1"
    vram         = "141 GB"
    build        = "cuda-13.2"
    engine       = "vllm" # the seed ran vLLM 0.26.1rc1.dev914+gc3dabcddc
    commit       = "c3dabcddc328"
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
