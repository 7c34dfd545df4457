# A spec for `slogate bisect -var-name build` on a launched server: the
# variable names the build, here a simulator build whose slowdown begins at
# b07 (slogate bisect -sim). A real one would pick a command path or venv:
#   command = "/opt/vllm-builds/${var.build}/bin/vllm"
variable "build" {
  description = "The build measured: b00 … b15."
  type        = string
  default     = "b00"
}

server "sim" {
  model = "Qwen/Qwen3.5-4B"
  port  = 18123
  args  = ["--sim-slowdown", tonumber(substr(var.build, 1, 2)) >= 7 ? "1.3" : "1.0"]
}

measure {
  duration = "500ms"
  repeat   = "auto"
}

matrix "decode" {
  contexts    = ["1K"]
  concurrency = [4]
}
