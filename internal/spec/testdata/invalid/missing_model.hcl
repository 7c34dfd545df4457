server "qwen" { # ERROR: Missing required argument
  served_model_name = "qwen"
}

matrix "decode" { # ERROR: Missing required argument
  contexts = ["8K"]
}
