server "qwen" {
  model         = "Qwen/Qwen3.5-4B"
  max_model_len = 4096
}

workload "lines" {
  dataset = "../../../../testdata/datasets/prompts.jsonl"
  speed   = 2 # ERROR: Not used without a trace
}

workload "agent" {
  dataset = "../../../../testdata/datasets/agent.jsonl.gz"
  speed   = 0 # ERROR: Invalid speed
}

traffic "agentic" {
  workload = "agent"
  rate     = [1, 50] # ERROR: Agentic trace without trace arrivals
}
