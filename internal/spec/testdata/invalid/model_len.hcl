server "qwen" {
  model         = "Qwen/Qwen3.5-4B"
  max_model_len = "32K"
}

measure { max_output = 4096 }

# A prefill context may be as long as max_model_len; longer is an error.
prefill {
  contexts = ["8K", "32K", "64K"] # ERROR: Context too long for max_model_len
}

# 28K + 4096 output tokens fit exactly; 32K + 4096 do not.
matrix "decode" {
  contexts    = ["28K", "32K"] # ERROR: Context too long for max_model_len
  concurrency = [1]
}
