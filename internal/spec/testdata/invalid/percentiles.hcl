server "qwen" { model = "Qwen/Qwen3.5-4B" }

measure {
  percentiles = [
    50,
    100,   # ERROR: Invalid percentile
    99.9,
    99.9,  # ERROR: Duplicate percentile
    "p99", # ERROR: Invalid percentile
    0,     # ERROR: Invalid percentile
  ]
}

matrix "decode" {
  contexts    = ["8K"]
  concurrency = [64]
}

assert "p95_not_listed" {
  condition = decode["8K"][64].ttft_ms_p95 <= 2000 # ERROR: Unmeasured percentile
}

assert "unit_left_out" {
  condition = decode["8K"][64].ttft_p99 <= 2000 # ERROR: Unknown metric
}
