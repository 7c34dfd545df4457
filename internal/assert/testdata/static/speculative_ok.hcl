# With a speculative block the acceptance metrics are there: no diagnostic.

server "dflash" {
  model = "Qwen/Qwen3.5-4B"
  speculative {
    method                 = "dflash"
    model                  = "z-lab/Qwen3.5-4B-DFlash"
    num_speculative_tokens = 7
  }
}

matrix "decode" {
  contexts    = ["8K"]
  concurrency = [1, 64]
}

assert "accept_rate" {
  condition = decode["8K"][1].spec_accept_rate >= 0.5
}

assert "accept_len_in_for" {
  condition = alltrue([for c in [1, 64] : decode["8K"][c].spec_accept_len > 2])
}

expect "acceptance" {
  metric = "spec_accept_rate"
  values = { "8K" = [0.6, 0.6] }
}
