server "qwen" {
  model         = "Qwen/Qwen3.5-4B"
  ready_timeout = "soon" # ERROR: Invalid duration
}

measure {
  duration = "30 seconds" # ERROR: Invalid duration
}

server "b" {
  model         = "b"
  ready_timeout = "-5m" # ERROR: Invalid duration
}
