# A greedy temperature (below 1e-5) with min_p beside a speculative block:
# SamplingParams.__post_init__ resets min_p to 0 for greedy sampling before
# _validate_spec_decode runs, so vLLM accepts these requests.
server "qwen" {
  model = "Qwen/Qwen3.5-4B"
  speculative {
    method = "ngram"
  }
}

workload {
  sampling = {
    temperature = 0.000009
    min_p       = 0.1
  }
}
