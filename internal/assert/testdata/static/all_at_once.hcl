# A reference error in one assert does not hide the type errors of the
# others: validate reports every problem of the spec in one pass.

server "qwen" {
  model = "Qwen/Qwen3.5-4B"
}

matrix "decode" {
  contexts    = ["8K"]
  concurrency = [1, 64]
}

assert "unmeasured" {
  condition = decode["8K"][32].total_tps > 100 # ERROR: Reference to an unmeasured concurrency
}

assert "not_a_bool" {
  condition = decode["8K"][64].total_tps + 1 # ERROR: Condition is not a bool
}

assert "number_against_string" {
  condition = decode["8K"][1].ttft_ms <= "60sec" # ERROR: Invalid operand
}

assert "fine" {
  condition = decode["8K"][1].ttft_ms <= 500
}
