server "qwen" { model = "Qwen/Qwen3.5-4B" }

# Wrong values and types.
measure {
  repeat       = "many" # ERROR: Invalid repeat
  max_repeat   = "x" # ERROR: Incorrect attribute value type
  max_gpu_time = 3600 # ERROR: Invalid duration
  boots        = 0 # ERROR: Invalid boots
}
