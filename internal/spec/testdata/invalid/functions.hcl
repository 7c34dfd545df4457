server "qwen" {
  model             = env("SLOGATE_UNSET_VARIABLE") # ERROR: Invalid function argument
  command           = file("../../spec.go") # ERROR: Invalid function argument
  served_model_name = nosuch("x") # ERROR: Call to unknown function
  api_key           = try(env("SLOGATE_UNSET_VARIABLE"), "fallback")
}
