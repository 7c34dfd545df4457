# Sampling ranges as vLLM checks them (SamplingParams._verify_args and the
# request classes; docs/vllm.md#sampling-parameters).
server "qwen" {
  model          = "Qwen/Qwen3.5-4B"
  kv_cache_dtype = "fp8_e4m2" # WARNING: Unknown kv_cache_dtype
}

workload {
  sampling = {
    temperature        = 2.5 # ERROR: Invalid sampling value
    top_p              = 0 # ERROR: Invalid sampling value
    top_k              = -2 # ERROR: Invalid sampling value
    min_p              = 1.01 # ERROR: Invalid sampling value
    repetition_penalty = 0 # ERROR: Invalid sampling value
    presence_penalty   = -2.5 # ERROR: Invalid sampling value
    frequency_penalty  = 2.01 # ERROR: Invalid sampling value
    seed               = 9223372036854775808 # ERROR: Invalid sampling value
    logit_bias         = { "-5" = 1, "42" = "up" } # ERROR: Invalid sampling value # ERROR: Invalid sampling value
  }
}
