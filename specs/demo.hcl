# The spec of `make demo` (scripts/demo.sh), for the built-in simulator:
#   slogate run -sim specs/demo.hcl
# The served model maps to the simulator's Qwen3.5-4B DFlash profile (fitted
# to the Qwen seed report, testdata/seeds/qwen3.5-4b-h200-dflash.txt), so
# the SLOs below are the seed's numbers with room: throughput floors 25 %
# below the seed, TTFT ceilings 50 % above it (1-second windows are noisier
# than the seed's 30 s). Each cell is measured 5 times, so that a -baseline
# comparison is decided by the statistical test (docs/method.md#repeats).
# The demo's "upgrade" is the same spec on a simulator 20 % slower per step:
#   slogate run -sim -var 'sim_args=["--sim-slowdown", "1.2"]' -baseline OLD/results.json specs/demo.hcl

variable "sim_args" {
  description = "Simulator flags appended to the launch, for `slogate run -sim` only (a real vLLM rejects them): [\"--sim-slowdown\", \"1.2\"] is a build 20 % slower per step."
  type        = list(string)
  default     = []
}

variable "port" {
  description = "The simulator's port: not vLLM's 8000, so the demo does not collide with a real server."
  type        = number
  default     = 18000
}

server "qwen" {
  model                  = "Qwen/Qwen3.5-4B"
  served_model_name      = "qwen"
  tensor_parallel_size   = 1
  max_model_len          = "256K"
  gpu_memory_utilization = 0.872563
  max_num_batched_tokens = 32768
  attention_backend      = "flash_attn"
  speculative {
    method                 = "dflash"
    model                  = "z-lab/Qwen3.5-4B-DFlash"
    num_speculative_tokens = 7
  }
  args          = var.sim_args
  port          = var.port
  ready_timeout = "60s"

  labels = {
    quantization = "BF16"
    gpu          = "H200 NVL"
  }
}

measure {
  duration   = "1s"
  max_output = 512
  repeat     = 5
}

# No prefill cells: a cold prefill takes 0.2 s, where a loaded machine's
# scheduling jitter is as large as the change the demo shows (the cold
# request is still sent before the decode cells: it warms the prompt cache).

matrix "decode" {
  contexts    = ["8K"]
  concurrency = [1, 16]
}

# Seed: 8K x 1 405.9 tok/s per request, TTFT 78 ms; 8K x 16 257.3 tok/s
# per request, TTFT 126 ms.

assert "decode_8k_1" {
  condition     = decode["8K"][1].per_request_tps >= 304
  error_message = "one 8K stream fell below 304 tok/s (seed 405.9)"
}

assert "ttft_8k_1" {
  condition     = decode["8K"][1].ttft_ms <= 117
  error_message = "time to first token of one 8K stream rose above 117 ms (seed 78)"
}

assert "decode_8k_16" {
  condition     = decode["8K"][16].per_request_tps >= 193
  error_message = "16 streams at 8K fell below 193 tok/s each (seed 257.3)"
}

assert "ttft_8k_16" {
  condition     = decode["8K"][16].ttft_ms <= 189
  error_message = "time to first token of 16 streams at 8K rose above 189 ms (seed 126)"
}

expect "decode_per_request_tps" {
  metric    = "per_request_tps"
  tolerance = 0.25 # the floors above, cell by cell
  values = {
    "8K" = [405.9, 257.3]
  }
}
