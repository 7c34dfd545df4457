# The Ling-3.0-flash seed (specs/ling-3.0-flash-int4-h200x2.hcl) launched on
# SGLang: the same server, cells and SLOs, written in SGLang's vocabulary
# (docs/sglang.md#flags). vLLM's ling3 reasoning and tool-call parsers and
# --mamba-cache-mode have no SGLang counterpart in the parsers and flags
# docs/sglang.md cites, so they are left out. Its rendered launch is the
# golden file spec/testdata/sglang/ling-3.0-flash-int4-h200x2.launch
# (regenerate: go test ./spec -run TestSGLangSeedLaunch -update).

variable "api_key" {
  description = "API key the server requires (--api-key). Taken from SGLANG_API_KEY (slogate's convention: SGLang itself reads the key only from --api-key); without it a fixed local placeholder is used, which slogate also sends. Never printed: reports show <redacted>."
  type        = string
  default     = try(env("SGLANG_API_KEY"), "slogate-local-key")
}

variable "sglang_command" {
  description = "The sglang executable (`sglang serve`; docs/sglang.md#launch)."
  type        = string
  default     = "${env("HOME")}/env_h200-inclusionai-sglang/bin/sglang"
}

variable "sim_args" {
  description = "Simulator flags appended to the launch, for `slogate run -sim` only (a real SGLang rejects them)."
  type        = list(string)
  default     = []
}

server "ling" {
  engine                 = "sglang"
  command                = var.sglang_command
  model                  = "inclusionAI/Ling-3.0-flash-int4"
  served_model_name      = "ling"
  tensor_parallel_size   = 2
  max_model_len          = "256K" # 262144
  gpu_memory_utilization = 0.872072
  args                   = concat(["--trust-remote-code"], var.sim_args)
  host                   = "0.0.0.0"
  port                   = 8000
  api_key                = var.api_key

  labels = {
    quantization = "INT4"
    gpu          = "H200 NVL"
    gpu_count    = "2"
    vram         = "282 GB (2 x 141 GB)"
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

assert "decode_8k_128" {
  condition     = decode["8K"][128].total_tps >= 6000
  error_message = "decode throughput at 8K x 128 fell below 6,000 tok/s (seed: 6,337.6)"
}

assert "decode_251k_32" {
  condition     = decode["251K"][32].total_tps >= 1250
  error_message = "decode throughput at 251K x 32 fell below 1,250 tok/s (seed: 1,359.3)"
}

assert "prefill_64k" {
  condition     = prefill["64K"].tps >= 25000
  error_message = "cold prefill at 64K fell below 25K tok/s (seed: 28.3K)"
}

# The seed's total tok/s matrix; 128K x 128 and 251K x 64/128 were over
# capacity, so null.
expect "decode_total_tps" {
  metric    = "total_tps"
  tolerance = 0.10
  values = {
    "8K"   = [173.9, 305.5, 560.1, 990.5, 1684.3, 2743.8, 4228.9, 6337.6]
    "16K"  = [172.0, 302.2, 557.0, 966.7, 1651.4, 2723.5, 4082.9, 5865.4]
    "32K"  = [169.0, 297.8, 544.2, 962.1, 1591.8, 2523.3, 3703.2, 5166.1]
    "64K"  = [163.1, 288.3, 526.3, 909.2, 1496.8, 2205.5, 3112.4, 4016.1]
    "128K" = [152.7, 271.1, 495.0, 738.8, 1274.6, 1825.2, 2391.8, null]
    "251K" = [135.9, 244.7, 458.2, 709.3, 1039.7, 1359.3, null, null]
  }
}
