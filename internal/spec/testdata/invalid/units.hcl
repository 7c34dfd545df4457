# A threshold written in the wrong unit: a duration string on a metric
# counted in milliseconds is an error that gives the number to write; a
# latency ceiling too small to be meant in milliseconds (seconds written
# as milliseconds) is a warning. Lower bounds and plausible ceilings are
# fine.

server "qwen" { model = "Qwen/Qwen3.5-4B" }

matrix "decode" {
  contexts    = ["4K"]
  concurrency = [1, 32]
}

assert "duration_string" {
  condition = decode["4K"][32].ttft_ms_p99 <= "3s" # ERROR: Invalid operand
}

assert "duration_string_reversed" {
  condition = "250ms" > decode["4K"][1].tbt_ms # ERROR: Invalid operand
}

assert "seconds_as_milliseconds" {
  condition = decode["4K"][32].ttft_ms_p99 <= 3.0 # WARNING: Ceiling of 3 ms?
}

assert "tbt_under_a_millisecond" {
  condition = decode["4K"][1].tbt_ms < 0.05 # WARNING: Ceiling of 0.05 ms?
}

assert "in_a_for" {
  condition = alltrue([for c in decode["4K"] : c.ttft_ms <= 2]) # WARNING: Ceiling of 2 ms?
}

assert "plausible" {
  condition = decode["4K"][1].tbt_ms <= 5 && decode["4K"][1].ttft_ms > 0 && decode["4K"][1].ttft_ms_count >= 3
}

assert "both_coordinates_unmeasured" {
  condition = decode["8K"][64].total_tps >= 100 # ERROR: Reference to an unmeasured cell
}

assert "unmeasured_cell_and_unknown_metric" {
  condition = decode["8K"][64].total_tp >= 100 # ERROR: Reference to an unmeasured cell # ERROR: Unknown metric
}
