server "qwen" { model = "Qwen/Qwen3.5-4B" }

matrix "prefill" { # ERROR: Reserved matrix label
  contexts    = ["8K"]
  concurrency = [1]
}

matrix "long context" { # ERROR: Invalid matrix label
  contexts    = ["8K"]
  concurrency = [1]
}
