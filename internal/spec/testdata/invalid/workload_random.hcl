server "qwen" { model = "Qwen/Qwen3.5-4B" }

measure { endpoint = "chat" }

workload {
  prompt               = "random" # ERROR: Random prompts on the chat endpoint
  document             = "The reference text." # ERROR: Not used by random prompts
  instruction          = "Write." # ERROR: Not used by random prompts
  chat_template_kwargs = { enable_thinking = false } # ERROR: Not used by random prompts
  seed                 = -1 # ERROR: Invalid seed
  sampling             = 0.6 # ERROR: Incorrect attribute value type
}
