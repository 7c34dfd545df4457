server "qwen" { model = "Qwen/Qwen3.5-4B" }

# A misspelled concurrency is one mistake: the matrix's errors, and no
# second one on the assert that reads the matrix ("it measures ." of nothing).
matrix "decode" { # ERROR: Missing required argument
  contexts   = ["8K"]
  concurency = [1, 64] # ERROR: Unsupported argument
}

assert "decode_8k_64" {
  condition     = decode["8K"][64].total_tps >= 6000
  error_message = "decode throughput at 8K x 64 fell below 6,000 tok/s"
}
