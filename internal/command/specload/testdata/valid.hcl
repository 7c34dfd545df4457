# A valid spec: nothing to say.

server "qwen" {
  model = "Qwen/Qwen3.5-4B"
}

matrix "decode" {
  contexts    = ["1K"]
  concurrency = [1]
}
