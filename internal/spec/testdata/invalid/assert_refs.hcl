server "qwen" { model = "Qwen/Qwen3.5-4B" }

matrix "decode" {
  contexts    = ["8K", "32K"]
  concurrency = [1, 64]
}

assert "unmeasured_context" {
  condition = decode["16K"][64].total_tps >= 1 # ERROR: Reference to an unmeasured context
}

assert "unmeasured_concurrency" {
  condition = decode[8192][32].total_tps >= 1 # ERROR: Reference to an unmeasured concurrency
}

assert "undeclared_matrix" {
  condition = decod["8K"][64].total_tps >= 1 # ERROR: Reference to an undeclared matrix
}

assert "unknown_metric" {
  condition = decode["8K"][64].total_tp >= 1 # ERROR: Unknown metric
}

assert "prefill_metric_on_decode" {
  condition = decode["8K"][64].tps >= 1 # ERROR: Unknown metric
}

assert "no_prefill_block" {
  condition = prefill["8K"].tps >= 1 # ERROR: Reference to unmeasured prefill
}

assert "constant" {
  condition = 1 + 1 == 2 # ERROR: Constant condition
}

assert "only_var" {
  condition = var.limit > 3 # ERROR: Reference to undeclared input variable
}

assert "server_attr" {
  condition = server.kv_cache_tokns > 0 # ERROR: Unsupported attribute
}

assert "bad_context" {
  condition = decode["8Q"][64].total_tps > 0 # ERROR: Invalid context size
}

assert "bad_concurrency" {
  condition = decode["8K"]["many"].total_tps > 0 # ERROR: Invalid concurrency
}

assert "attr_not_index" {
  condition = decode.total_tps > 0 # ERROR: Invalid cell reference
}

assert "stray" {
  condition = foo > 0 # ERROR: Unknown variable
}
