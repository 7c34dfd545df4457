# An error outside the asserts leaves the spec incomplete: the static
# checks wait until it is fixed (the non-bool condition below is not
# reported yet).

server "qwen" {
  model   = "Qwen/Qwen3.5-4B"
  gpus    = "many" # ERROR: Unsupported argument
}

matrix "decode" {
  contexts    = ["8K"]
  concurrency = [1]
}

assert "not_a_bool" {
  condition = decode["8K"][1].total_tps + 1
}
