# A spec's own error and an assert's do not hide each other: every
# problem of the file in one pass (spec.Load, then assert.CheckLoaded).

server "qwen" {
  model       = "Qwen/Qwen3.5-4B"
  max_nm_seqs = 2 # ERROR: Unsupported argument
}

matrix "decode" {
  contexts    = ["1K"]
  concurrency = [1, 8]
}

assert "not_a_bool" {
  condition = decode["1K"][8].total_tps + 1 # ERROR: Condition is not a bool
}
