# Conditions that parse and load but can never give true or false: Check
# reports each at its line without measuring anything.

server "qwen" {
  model = "Qwen/Qwen3.5-4B"
}

prefill { contexts = ["8K"] }

matrix "decode" {
  contexts    = ["8K", "32K"]
  concurrency = [1, 64]
}

variable "floor" {
  type    = number
  default = 6000
}

assert "not_a_bool" {
  condition = decode["8K"][64].total_tps + 1 # ERROR: Condition is not a bool
}

assert "number_against_string" {
  condition = decode["8K"][1].ttft_ms <= "60sec" # ERROR: Invalid operand
}

assert "string_result" {
  condition = "${decode["8K"][1].ttft_ms}ms" # ERROR: Condition is not a bool
}

assert "server_fact_against_string" {
  condition = server.kv_cache_tokens > "lots" # ERROR: Invalid operand
}

assert "null_literal_branch" {
  condition = decode["8K"][64].total_tps > 1 ? null : null # ERROR: Null condition
}

assert "bool_and_number" {
  condition = decode["8K"][64].total_tps >= var.floor && prefill["8K"].tps # ERROR: Invalid operand
}

# Each of these is fine: the value is a bool once measured.
assert "fine_comparison" {
  condition = decode["8K"][64].total_tps >= var.floor
}

assert "fine_number_as_string" {
  condition = decode["8K"][64].total_tps >= "6000"
}

assert "fine_for" {
  condition = alltrue([for c in [1, 64] : decode["32K"][c].ttft_ms < 2000])
}

assert "fine_try" {
  condition = try(decode["8K"][64].total_tps > 1, false)
}

assert "fine_server_total_tps" {
  condition = decode["8K"][64].server_total_tps >= 0.9 * decode["8K"][64].total_tps
}

assert "fine_status" {
  condition = decode["32K"][64].status != "error"
}

assert "fine_server" {
  condition = server.kv_cache_tokens >= 64 * (32768 + 4096) || server.version == "0.11.0"
}
