# Rate searches: search { traffic = "BLOCK" rate = [lo, hi] }: the traffic
# block, the range, the precision, check_windows, max_windows, the objective
# over traffic metrics, and assertions that read search["NAME"].rate.
server "qwen" { model = "Qwen/Qwen3.5-4B" }

traffic "chat" {
  context = "1K"
  rate    = [1]
  slo     = { ttft_ms = 500 }
}

traffic "closed" {
  context     = "1K"
  concurrency = [4]
}

search "ok" {
  traffic   = "chat"
  rate      = [0.5, 32]
  precision = "5%"
  objective = cell.goodput_share >= 0.95 && cell.ttft_ms_p99 <= 500
}

search "reversed" {
  traffic   = "chat"
  rate      = [8, 2] # ERROR: Invalid search range
  objective = cell.goodput_share >= 0.95
}

search "zero" {
  traffic   = "chat"
  rate      = [0, 8] # ERROR: Invalid rate
  objective = cell.goodput_share >= 0.95
}

search "negative" {
  traffic   = "chat"
  rate      = [1, -8] # ERROR: Invalid rate
  objective = cell.goodput_share >= 0.95
}

search "one_end" {
  traffic   = "chat"
  rate      = [8] # ERROR: Invalid search range
  objective = cell.goodput_share >= 0.95
}

search "no_rate" {
  traffic   = "chat" # ERROR: Missing rate
  objective = cell.goodput_share >= 0.95
}

search "no_block" {
  traffic   = "chatt" # ERROR: Unknown traffic block
  rate      = [1, 8]
  objective = cell.goodput_share >= 0.95
}

search "closed_loop" {
  traffic   = "closed" # ERROR: Closed-loop traffic in a rate search
  rate      = [1, 8]
  objective = cell.goodput_share >= 0.95
}

search "with_concurrency" {
  traffic     = "chat"
  concurrency = [1, 8] # ERROR: Not used in a rate search
  rate        = [1, 8]
  objective   = cell.goodput_share >= 0.95
}

search "with_context" {
  traffic   = "chat"
  context   = "1K" # ERROR: Not used in a rate search
  rate      = [1, 8]
  objective = cell.goodput_share >= 0.95
}

search "rate_without_traffic" {
  context     = "1K"
  concurrency = [1, 8]
  rate        = [1, 8] # ERROR: Rate search attribute without traffic
  objective   = cell.per_request_tps >= 50
}

search "no_range" { # ERROR: Missing required argument
  context   = "1K"
  objective = cell.per_request_tps >= 50
}

search "coarse" {
  traffic   = "chat"
  rate      = [1, 8]
  precision = 0.5 # ERROR: Invalid precision
  objective = cell.goodput_share >= 0.95
}

search "precision_zero" {
  traffic   = "chat"
  rate      = [1, 8]
  precision = 0 # ERROR: Invalid precision
  objective = cell.goodput_share >= 0.95
}

search "checked" {
  traffic       = "chat"
  rate          = [1, 8]
  check_windows = 24
  objective     = cell.goodput_share >= 0.95
}

search "check_one" {
  traffic       = "chat"
  rate          = [1, 8]
  check_windows = 1 # ERROR: Invalid check_windows
  objective     = cell.goodput_share >= 0.95
}

search "check_zero" {
  traffic       = "chat"
  rate          = [1, 8]
  check_windows = 0 # ERROR: Invalid check_windows
  objective     = cell.goodput_share >= 0.95
}

search "check_fraction" {
  traffic       = "chat"
  rate          = [1, 8]
  check_windows = 2.5 # ERROR: Invalid check_windows
  objective     = cell.goodput_share >= 0.95
}

search "check_too_many" {
  traffic       = "chat"
  rate          = [1, 8]
  check_windows = 201 # ERROR: Invalid check_windows
  objective     = cell.goodput_share >= 0.95
}

search "check_string" {
  traffic       = "chat"
  rate          = [1, 8]
  check_windows = "24" # ERROR: Invalid check_windows
  objective     = cell.goodput_share >= 0.95
}

search "check_without_traffic" {
  context       = "1K"
  concurrency   = [1, 8]
  check_windows = 24 # ERROR: Rate search attribute without traffic
  objective     = cell.per_request_tps >= 50
}

search "longer_probes" {
  traffic     = "chat"
  rate        = [1, 8]
  max_windows = 16
  objective   = cell.goodput_share >= 0.95
}

search "max_windows_one" {
  traffic     = "chat"
  rate        = [1, 8]
  max_windows = 1 # ERROR: Invalid max_windows
  objective   = cell.goodput_share >= 0.95
}

search "max_windows_without_traffic" {
  context     = "1K"
  concurrency = [1, 8]
  max_windows = 16 # ERROR: Rate search attribute without traffic
  objective   = cell.per_request_tps >= 50
}

search "constant" {
  traffic   = "chat"
  rate      = [1, 8]
  objective = 1 < 2 # ERROR: Constant objective
}

search "decode_metric" {
  traffic   = "chat"
  rate      = [1, 8]
  objective = cell.per_request_tps >= 50 # ERROR: Unknown metric
}

assert "reads_ok" {
  condition = search["ok"].rate >= 4 && search["ok"].rate_lower >= 3 && search["ok"].cell.goodput_rps >= 3.8
}

assert "rate_of_concurrency_search" {
  condition = search["rate_without_traffic"].rate >= 4 # ERROR: Unsupported attribute
}

assert "concurrency_of_rate_search" {
  condition = search["ok"].concurrency >= 4 # ERROR: Unsupported attribute
}

assert "decode_metric_of_rate_search" {
  condition = search["ok"].cell.per_request_tps >= 4 # ERROR: Unknown metric
}
