# Search objectives and assertions over search["NAME"] that load but can
# never give true or false: Check reports each at its line.

server "qwen" {
  model = "Qwen/Qwen3.5-4B"
}

search "ok" {
  context     = "8K"
  concurrency = [1, 64]
  objective   = cell.per_request_tps >= 50 && cell.ttft_ms_p99 <= 2000
}

search "not_a_bool" {
  context     = "8K"
  concurrency = [1, 64]
  objective   = cell.per_request_tps * 2 # ERROR: Objective is not a bool
}

search "string_operand" {
  context     = "8K"
  concurrency = [1, 64]
  objective   = cell.ttft_ms <= "2s" # ERROR: Invalid operand
}

search "speculative" {
  context     = "8K"
  concurrency = [1, 64]
  objective   = cell.spec_accept_rate >= 0.5 # ERROR: Metric the server cannot produce
}

assert "reads_a_search" {
  condition = search["ok"].concurrency >= 48 && search["ok"].found && length(search["ok"].probes) > 0
}

assert "search_not_a_bool" {
  condition = search["ok"].concurrency + 1 # ERROR: Condition is not a bool
}

assert "found_is_a_bool" {
  condition = search["ok"].found >= 1 # ERROR: Invalid operand
}
