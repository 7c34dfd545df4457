# A valid spec's max_gpu_time is held to its plan (plan.CheckBudget).

server "qwen" {
  model = "Qwen/Qwen3.5-4B"
}

measure {
  duration     = "30s"
  repeat       = "auto"
  max_gpu_time = "1s" # ERROR: max_gpu_time below the minimum
}

matrix "decode" {
  contexts    = ["1K"]
  concurrency = [1, 8]
}
