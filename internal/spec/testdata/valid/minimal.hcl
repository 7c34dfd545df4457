# The smallest useful spec: every default applies.
server "qwen" {
  model = "Qwen/Qwen3.5-4B"
}

matrix "decode" {
  contexts    = ["8K"]
  concurrency = [1]
}

assert "decode_8k_1" {
  condition = decode["8K"][1].total_tps > 100
}
