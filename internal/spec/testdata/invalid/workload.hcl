server "qwen" { model = "Qwen/Qwen3.5-4B" }

workload {
  prompt      = "articel" # ERROR: Invalid prompt
  document    = "" # ERROR: Empty document
  instruction = "   " # ERROR: Empty instruction
  distinct    = "sometimes" # ERROR: Incorrect attribute value type
  sampling = {
    temperature = "hot" # ERROR: Invalid sampling value
    top_pp      = 0.9 # ERROR: Unknown sampling parameter
    top_p       = 1.5 # ERROR: Invalid sampling value
    top_k       = 2.5 # ERROR: Invalid sampling value
    max_tokens  = 10 # ERROR: Unknown sampling parameter
  }
  chat_template_kwargs = "thinking" # ERROR: Incorrect attribute value type
  seed                 = 3 # ERROR: Seed without random prompts
  temperature          = 0.6 # ERROR: Unsupported argument
}

workload { # ERROR: Duplicate workload block
  prompt = "random"
}
