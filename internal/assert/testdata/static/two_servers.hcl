# One spec, two servers: the acceptance metric is read through a guard that
# a run of either server gets past, so neither is reported; an unguarded
# read is reported once, naming the server without speculative decoding.

server "plain" {
  model = "Qwen/Qwen3.5-4B"
}

server "dflash" {
  model = "Qwen/Qwen3.5-4B"
  port  = 8001
  speculative {
    method = "dflash"
    model  = "z-lab/Qwen3.5-4B-DFlash"
  }
}

matrix "decode" {
  contexts    = ["8K"]
  concurrency = [1]
}

assert "guarded" {
  condition = server.speculative == "" || decode["8K"][1].spec_accept_rate >= 0.5
}

assert "unguarded" {
  condition = decode["8K"][1].spec_accept_rate >= 0.5 # ERROR: Metric the server cannot produce
}
