server "qwen" { model = "Qwen/Qwen3.5-4B" }

measure {
  repeat = true # ERROR: Incorrect attribute value type
  boots  = [2] # ERROR: Incorrect attribute value type
}
