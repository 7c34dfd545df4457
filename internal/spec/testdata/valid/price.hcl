# A server priced by the GPU-hour: the reports give what a million output
# tokens cost at a search's answer (docs/method.md#cost).
server "qwen" {
  model              = "Qwen/Qwen3.5-4B"
  price_per_gpu_hour = 3.50
}

matrix "decode" {
  contexts    = ["8K"]
  concurrency = [1]
}
