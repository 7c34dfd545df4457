variable "needed" {} # ERROR: No value for required variable

variable "typed" {
  type    = number
  default = "many" # ERROR: Invalid default value for variable
}

variable "bad type" { # ERROR: Invalid variable name
  default = 1
}

server "qwen" {
  model   = "Qwen/Qwen3.5-4B"
  api_key = var.nope # ERROR: Unsupported attribute
}
