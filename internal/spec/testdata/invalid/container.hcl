server "a" {
  model   = "m"
  command = "vllm" # ERROR: Command with a container
  container {
    runtime     = "dokcer" # ERROR: Invalid container runtime
    image       = "vllm/vllm-openai:v0.11.0"
    gpus        = "device=" # ERROR: Invalid gpus
    volumes     = ["/data/hf"] # ERROR: Invalid volume
    shm_size    = "16 GB" # ERROR: Invalid shm_size
    ipc         = "hots" # ERROR: Invalid ipc
    args        = ["--name=mine"] # ERROR: Conflicting container argument
    name_prefix = "-x" # ERROR: Invalid name_prefix
    memory      = "64g" # ERROR: Unsupported argument
  }
  container { # ERROR: Duplicate container block
    image = "x"
  }
}

server "b" {
  model = "m"
  container { # ERROR: Missing required argument
    gpus = 0 # ERROR: Invalid gpus
  }
}

server "c" {
  model = "m"
  container {
    image = "" # ERROR: Invalid image
    args  = ["-d"] # ERROR: Conflicting container argument
  }
}
