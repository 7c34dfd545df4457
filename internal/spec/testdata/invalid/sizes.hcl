server "qwen" {
  model           = "Qwen/Qwen3.5-4B"
  max_model_len   = "256Q" # ERROR: Invalid context size
  kv_cache_tokens = -5 # ERROR: Invalid token count
}

prefill {
  contexts = [
    "8K",
    "16Q", # ERROR: Invalid context size
    0, # ERROR: Invalid context size
    1.5, # ERROR: Invalid context size
    "-4K", # ERROR: Invalid context size
    true, # ERROR: Invalid context size
  ]
}

matrix "decode" {
  contexts    = [] # ERROR: Empty list
  concurrency = [1, 0, "x", 2.5, "4"] # ERROR: Invalid concurrency # ERROR: Invalid concurrency # ERROR: Invalid concurrency
}
