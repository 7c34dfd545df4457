server "qwen" { model = "Qwen/Qwen3.5-4B" }

measure { percentiles = [50, 90, 95, 99, 99.9] }

matrix "decode" {
  contexts    = ["8K"]
  concurrency = [64]
}

assert "tail" {
  condition = decode["8K"][64].ttft_ms_p95 <= 2000 && decode["8K"][64].ttft_ms_p99_9 <= 4000 && decode["8K"][64].itl_ms_count >= 20
}
