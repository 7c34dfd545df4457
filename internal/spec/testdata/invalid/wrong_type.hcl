server "qwen" {
  model                  = "Qwen/Qwen3.5-4B"
  port                   = "eighty" # ERROR: Incorrect attribute value type
  tensor_parallel_size   = true # ERROR: Incorrect attribute value type
  enable_prefix_caching  = "maybe" # ERROR: Incorrect attribute value type
  args                   = "--trust-remote-code" # ERROR: Incorrect attribute value type
  env                    = ["A=1"] # ERROR: Incorrect attribute value type
  gpu_memory_utilization = 1.5 # ERROR: Invalid value
  max_num_seqs           = 2.5 # ERROR: Invalid value
  speculative {
    config = "x" # ERROR: Incorrect attribute value type
  }
}

expect "e" {
  metric = "total_tps"
  values = ["8K", 1] # ERROR: Invalid expect values
}

matrix "decode" {
  contexts    = ["8K"]
  concurrency = [1]
}
