server "qwen" {
  model         = "Qwen/Qwen3.5-4B"
  max_model_len = 4096
}

measure { max_output = 512 }

workload "replay" {
  dataset       = "../../../../testdata/datasets/sharegpt.json"
  output_tokens = 256
}

workload "spread" {
  prompt        = "random"
  input_tokens  = { mean = 2000, stddev = 400, min = 1000, max = 3000 } # ERROR: Lengths too long for max_model_len
  output_tokens = { min = 512, max = 1200 }
}

workload "fixed" {
  prompt = "random"
  prefix = { groups = 4, tokens = 1024 }
}

traffic "both" {
  workload = "replay"
  context  = "2K" # ERROR: Context with a workload that sets lengths
  rate     = [1]
}

traffic "typo" {
  workload = "replya" # ERROR: Unknown workload
  rate     = [1]
}

traffic "none" { # ERROR: Missing context
  workload = "fixed"
  rate     = [1]
}

traffic "loops" {
  workload    = "replay"
  rate        = [1]
  concurrency = [8] # ERROR: Rate and concurrency
}

traffic "idle" { # ERROR: Missing rate or concurrency
  workload = "replay"
}

traffic "closed" {
  workload        = "spread"
  concurrency     = [8, 0, 8] # ERROR: Invalid concurrency # ERROR: Duplicate concurrency
  arrivals        = "constant" # ERROR: Not used in a closed loop
  max_outstanding = 64 # ERROR: Not used in a closed loop
}

traffic "again" {
  workload    = "spread"
  concurrency = [4]
}

traffic "long" {
  workload = "fixed"
  context  = "3K" # ERROR: Context too long for max_model_len
  rate     = 2
}

assert "refs" {
  condition = replay_conc[16].goodput_rps > 0 && closed[8].goodput_share > 0 && again["8K"][4].ttft_ms > 0 && long["3K"][3].ttft_ms > 0 # ERROR: Reference to an unmeasured concurrency # ERROR: Invalid concurrency # ERROR: Reference to an unmeasured rate
}

traffic "replay_conc" {
  workload    = "replay"
  concurrency = [8, 32]
}

workload "long_entries" {
  dataset          = "../../../../testdata/datasets/sharegpt.json"
  max_total_tokens = "8K" # ERROR: Filter beyond max_model_len
}

traffic "long_replay" {
  workload    = "long_entries"
  concurrency = [4]
}
