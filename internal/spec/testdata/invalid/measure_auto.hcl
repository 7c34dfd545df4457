server "qwen" { model = "Qwen/Qwen3.5-4B" }

# repeat = "auto" and its bounds.
measure {
  repeat       = "auto"
  max_repeat   = 3 # ERROR: Invalid max_repeat
  max_gpu_time = "soon" # ERROR: Invalid duration
  boots        = 2 # ERROR: Invalid boots
}
