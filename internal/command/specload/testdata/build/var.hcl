# A launched server whose build is a variable (-var-name vllm).

variable "vllm" {
  type = string
}

server "qwen" {
  model   = "Qwen/Qwen3.5-4B"
  command = "/opt/${var.vllm}/bin/vllm"
}

matrix "decode" {
  contexts    = ["1K"]
  concurrency = [1]
}
