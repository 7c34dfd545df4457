server "qwen" {
  model         = "Qwen/Qwen3.5-4B"
  max_model_len = 4096
}

measure { endpoint = "completions" }

workload {
  prompt = "dataset" # ERROR: Dataset prompts in the unnamed workload
}

workload "replay" {
  dataset           = "../../../../testdata/datasets/sharegpt.json"
  document          = "Not read by datasets." # ERROR: Not used by dataset prompts
  input_tokens      = 512 # ERROR: Not used by dataset prompts
  max_prompt_tokens = "2K"
  max_total_tokens  = "1K" # ERROR: Filter keeps nothing
}

workload "replay" { # ERROR: Duplicate workload block
  prompt = "article"
}

workload "lines" {
  prompt            = "dataset"
  dataset           = "../../../../testdata/datasets/prompts.jsonl"
  min_prompt_tokens = 8 # ERROR: Filter without a ShareGPT dataset
  turns             = 3 # ERROR: Turns without conversations
}

workload "nodata" {
  prompt = "dataset" # ERROR: Missing dataset
  format = "csv" # ERROR: Invalid dataset format
}

workload "generated" {
  prompt        = "random"
  dataset       = "x.json" # ERROR: Dataset with generated prompts
  format        = "jsonl" # ERROR: Not used by generated prompts
  turns         = 2 # ERROR: Turns with random prompts
  input_tokens  = { min = 900, max = 100 } # ERROR: Invalid length
  output_tokens = { mean = 100 } # ERROR: Invalid length
}

workload "lengths" {
  prompt        = "article"
  input_tokens  = { mean = 1000, stdev = 200 } # ERROR: Unknown length key
  output_tokens = { min = 10, max = 20, distribution = "zipf" } # ERROR: Invalid distribution
  ignore_eos    = "yes please" # ERROR: Incorrect attribute value type
  prefix        = { groups = 0, tokens = 256 } # ERROR: Invalid prefix
  turns         = 0 # ERROR: Invalid value
}

workload "shapes" {
  input_tokens  = { mean = 100, stddev = 10, distribution = "uniform" } # ERROR: Invalid length
  output_tokens = { max = 20 } # ERROR: Invalid length
  prefix        = { groups = 4, size = 256 } # ERROR: Unknown prefix key
}

workload "convs" {
  dataset = "../../../../testdata/datasets/messages.jsonl" # ERROR: Conversations on the completions endpoint
  prefix  = { groups = 2, tokens = 64 } # ERROR: Prefix with conversations
}

workload "talk" {
  turns = 3 # ERROR: Conversations on the completions endpoint
}
