# spec_accept_rate and spec_accept_len exist only on a server with a
# speculative block; server_total_tps on every server.

server "plain" {
  model = "Qwen/Qwen3.5-4B"
}

matrix "decode" {
  contexts    = ["8K"]
  concurrency = [1, 64]
}

assert "accept_rate" {
  condition = decode["8K"][1].spec_accept_rate >= 0.5 # ERROR: Metric the server cannot produce
}

assert "accept_len_in_for" {
  condition = alltrue([for c in [1, 64] : decode["8K"][c].spec_accept_len > 2]) # ERROR: Metric the server cannot produce
}

assert "accept_len_alone" {
  condition = decode["8K"][64].spec_accept_len # ERROR: Metric the server cannot produce
}

expect "acceptance" {
  metric = "spec_accept_rate" # ERROR: Metric the server cannot produce
  values = { "8K" = [0.6, 0.6] }
}

# A read that tolerates the missing value is as fine here as in a run.
assert "fine_guarded" {
  condition = try(decode["8K"][1].spec_accept_rate >= 0.5, true)
}

assert "fine_null_check" {
  condition = decode["8K"][1].spec_accept_rate == null
}

assert "fine_server_total_tps" {
  condition = decode["8K"][64].server_total_tps > 0
}
