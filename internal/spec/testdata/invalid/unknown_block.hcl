# ERROR: Missing server block
servr "qwen" { # ERROR: Unsupported block type
  model = "Qwen/Qwen3.5-4B"
}

measures { # ERROR: Unsupported block type
}
