server "qwen" {
  model         = "Qwen/Qwen3.5-4B"
  max_model_len = 16384
}
measure { max_output = 512 }

matrix "decode" {
  contexts    = ["8K"]
  concurrency = [1]
}

traffic "rates" {
  context = "8K"
  rate    = [1, 0, -2, 1, "fast"] # ERROR: Invalid rate # ERROR: Invalid rate # ERROR: Duplicate rate # ERROR: Invalid rate
}

traffic "arrivals" {
  context  = "8K"
  rate     = [1]
  arrivals = "poison" # ERROR: Invalid arrivals
}

traffic "bursty" {
  context    = "8K"
  rate       = [1]
  burstiness = 0.5 # ERROR: Burstiness without gamma arrivals
}

traffic "gamma" {
  context  = "8K"
  rate     = [1]
  arrivals = "gamma" # ERROR: Missing burstiness
}

traffic "gamma_zero" {
  context    = "8K"
  rate       = [1]
  arrivals   = "gamma"
  burstiness = 0 # ERROR: Invalid burstiness
}

traffic "slo" {
  context = "8K"
  rate    = [1]
  slo = {
    ttft_ms   = 2000
    tpot_ms   = 50 # ERROR: Unsupported SLO metric
    e2e_ms    = 0  # ERROR: Invalid SLO
  }
}

traffic "long" {
  context = "16K" # ERROR: Context too long for max_model_len
  rate    = [1]
}

traffic "negative_warmup" {
  context = "8K"
  rate    = 2
  warmup  = "-1s" # ERROR: Invalid duration
}

traffic "bad_warmup" {
  context = "8K"
  rate    = 2
  warmup  = "none" # ERROR: Invalid duration
}

traffic "decode" { # ERROR: Duplicate label
  context = "8K"
  rate    = 2
}

traffic "server" { # ERROR: Reserved traffic label
  context = "8K"
  rate    = 2
}

assert "refs" {
  condition = rates["8K"][3].goodput_rps > 1 && slo["4K"][1].goodput_rps > 0 && slo["8K"][1].goodput > 0 # ERROR: Reference to an unmeasured rate # ERROR: Reference to an unmeasured context # ERROR: Unknown metric
}
