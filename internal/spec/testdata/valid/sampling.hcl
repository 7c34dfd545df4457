# Every boundary vLLM accepts.
server "qwen" {
  model = "Qwen/Qwen3.5-4B"
  speculative {
    method = "ngram"
  }
}

workload {
  sampling = {
    temperature        = 2
    top_p              = 1
    top_k              = -1
    min_p              = 0.00001
    repetition_penalty = 0.5
    presence_penalty   = -2
    frequency_penalty  = 2
    seed               = -9223372036854775808
  }
}
