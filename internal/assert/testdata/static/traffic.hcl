# Conditions on traffic cells: they type-check like matrix cells, and a
# mistake shows at its line before any server starts.

server "qwen" {
  model = "Qwen/Qwen3.5-4B"
}

traffic "steady" {
  context = "8K"
  rate    = [0.5, 4]
  slo     = { ttft_ms = 2000 }
}

assert "goodput_ok" {
  condition = steady["8K"][4].goodput_rps >= 3.5 && steady["8K"]["0.5"].ttft_ms_p99 <= 2000
}

assert "every_rate" {
  condition = alltrue([for rate, c in steady["8K"] : c.goodput_share >= 0.9])
}

assert "goodput_vs_string" {
  condition = steady["8K"][4].goodput_rps >= "fast" # ERROR: Invalid operand
}

assert "not_bool" {
  condition = steady["8K"][4].achieved_rps * 2 # ERROR: Condition is not a bool
}
