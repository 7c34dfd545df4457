server "zero" {
  model              = "Qwen/Qwen3.5-4B"
  price_per_gpu_hour = 0 # ERROR: Invalid price
}

server "negative" {
  model              = "Qwen/Qwen3.5-4B"
  port               = 8001
  price_per_gpu_hour = -3.5 # ERROR: Invalid price
}

server "words" {
  model              = "Qwen/Qwen3.5-4B"
  port               = 8002
  price_per_gpu_hour = "3.50 USD" # ERROR: Incorrect attribute value type
}

matrix "decode" {
  contexts    = ["8K"]
  concurrency = [1]
}
