server "qwen" {
  model                = "Qwen/Qwen3.5-4B"
  tensor_paralel_size  = 1 # ERROR: Unsupported argument
  speculative {
    metod = "dflash" # ERROR: Unsupported argument
  }
}

measure {
  durration = "30s" # ERROR: Unsupported argument
}

workload {
  instrction = "Write." # ERROR: Unsupported argument
}
