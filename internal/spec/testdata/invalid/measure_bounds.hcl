server "qwen" { model = "Qwen/Qwen3.5-4B" }

# Bounds of repeat = "auto" with a fixed repeat; more boots than repeats.
measure {
  repeat       = 5
  max_repeat   = 10 # ERROR: Bound without repeat = "auto"
  max_gpu_time = "1h" # ERROR: Bound without repeat = "auto"
  boots        = 6 # ERROR: More boots than repeats
}
