# With speculative decoding vLLM answers HTTP 400 to a request with min_p
# above 1e-5 or any logit_bias (SamplingParams._validate_spec_decode, vLLM
# PR #31982).
server "qwen" {
  model = "Qwen/Qwen3.5-4B"
  speculative {
    method                 = "dflash"
    model                  = "z-lab/Qwen3.5-4B-DFlash"
    num_speculative_tokens = 7
  }
}

workload {
  sampling = {
    temperature = 2
    min_p       = 0.1 # ERROR: min_p with speculative decoding
    logit_bias  = { "50256" = -100 } # ERROR: logit_bias with speculative decoding
  }
}
