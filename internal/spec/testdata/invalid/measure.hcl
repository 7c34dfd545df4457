server "qwen" { model = "Qwen/Qwen3.5-4B" }

measure {
  endpoint   = "grpc" # ERROR: Invalid endpoint
  repeat     = 0 # ERROR: Invalid repeat
  max_output = 0 # ERROR: Invalid token count
}
