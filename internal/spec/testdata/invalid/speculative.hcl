server "qwen" {
  model = "Qwen/Qwen3.5-4B"
  speculative {
    method                 = "dflash"
    num_speculative_tokens = 0 # ERROR: Invalid value
    config = {
      method = "eagle" # ERROR: Duplicate speculative setting
    }
  }
}
