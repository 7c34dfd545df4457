# Search blocks: context, range and objective checks, and assertions that
# read search["NAME"].
server "qwen" {
  model         = "Qwen/Qwen3.5-4B"
  max_model_len = "16K"
}

measure { max_output = 4096 }

matrix "decode" {
  contexts    = ["8K"]
  concurrency = [1]
}

search "ok" {
  context     = "8K"
  concurrency = [1, 256]
  objective   = cell.per_request_tps >= 50 && cell.ttft_ms_p99 <= 2000
}

search "too_long" {
  context     = "16K" # ERROR: Context too long for max_model_len
  concurrency = [1, 8]
  objective   = cell.per_request_tps >= 50
}

search "bad_size" {
  context     = "8Q" # ERROR: Invalid context size
  concurrency = [1, 8]
  objective   = cell.per_request_tps >= 50
}

search "empty_range" {
  context     = "8K"
  concurrency = [8, 8] # ERROR: Invalid search range
  objective   = cell.per_request_tps >= 50
}

search "three" {
  context     = "8K"
  concurrency = [1, 8, 16] # ERROR: Invalid search range
  objective   = cell.per_request_tps >= 50
}

search "zero" {
  context     = "8K"
  concurrency = [0, 8] # ERROR: Invalid concurrency
  objective   = cell.per_request_tps >= 50
}

search "typo" {
  context     = "8K"
  concurrency = [1, 8]
  objective   = cell.per_request_tsp >= 50 # ERROR: Unknown metric
}

search "other_root" {
  context     = "8K"
  concurrency = [1, 8]
  objective   = decode["8K"][1].total_tps >= 50 # ERROR: Unknown variable in objective
}

search "constant" {
  context     = "8K"
  concurrency = [1, 8]
  objective   = 1 < 2 # ERROR: Constant objective
}

search "ok" { # ERROR: Duplicate search block
  context     = "8K"
  concurrency = [1, 8]
  objective   = cell.per_request_tps >= 50
}

assert "reads_ok" {
  condition = search["ok"].concurrency >= 48 && search["ok"].cell.ttft_ms <= 100 && search["ok"].found
}

assert "unknown_search" {
  condition = search["okk"].concurrency >= 48 # ERROR: Reference to an undeclared search
}

assert "unknown_attribute" {
  condition = search["ok"].answer >= 48 # ERROR: Unsupported attribute
}

assert "unknown_cell_metric" {
  condition = search["ok"].cell.total_tpss >= 48 # ERROR: Unknown metric
}

matrix "search" { # ERROR: Reserved matrix label
  contexts    = ["8K"]
  concurrency = [1]
}
