# A small, quick spec for the built-in simulator: `make demo` runs
#   slogate run -sim specs/demo.hcl
# The served model maps to the simulator's Qwen3.5-4B DFlash profile (fitted
# to the Qwen seed report), so the SLOs below are the seed's numbers with a
# generous tolerance: 2-second windows and 1,024-token outputs are noisier
# than the seed's 30 s and 4,096.

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
  port          = 18000 # not vLLM's 8000, so the demo does not collide with a real server
  ready_timeout = "60s"

  labels = {
    quantization = "BF16"
    gpu          = "simulated H200 NVL"
  }
}

measure {
  duration   = "2s"
  max_output = 1024
}

prefill { contexts = ["8K", "32K", "128K"] }

matrix "decode" {
  contexts    = ["8K", "32K", "128K"]
  concurrency = [1, 4, 16, 64]
}

assert "decode_8k_64" {
  condition     = decode["8K"][64].total_tps >= 5000
  error_message = "decode throughput at 8K x 64 fell below 5,000 tok/s"
}

assert "decode_8k_1_ttft" {
  condition     = decode["8K"][1].ttft_ms <= 500
  error_message = "time to first token of one 8K stream rose above 500 ms"
}

assert "prefill_8k" {
  condition     = prefill["8K"].tps >= 30000
  error_message = "cold prefill at 8K fell below 30K tok/s"
}

expect "decode_total_tps" {
  metric    = "total_tps"
  # 1,024-token outputs restart streams 4x as often as the seed's 4,096,
  # which costs the low-concurrency 128K cells ~20% on the simulator.
  tolerance = 0.30
  values = {
    "8K"   = [408.2, 1496.1, 3975.7, 6018.4]
    "32K"  = [368.5, 1331.4, 3280.0, 4299.4]
    "128K" = [328.1, 954.1, 1737.7, 1911.3]
  }
}
