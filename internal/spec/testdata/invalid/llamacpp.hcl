# llama.cpp (docs/llamacpp.md#flags): KV cache types llama-server exits on,
# attributes it has no flag for, --flag=value, speculative methods it
# lacks. TestEngineDiagnostics checks the details.
server "unsupported" {
  engine                 = "llamacpp"
  model                  = "/models/tiny.gguf"
  kv_cache_dtype         = "q9_9" # ERROR: Unknown kv_cache_dtype
  tensor_parallel_size   = 2 # ERROR: Attribute not supported by llama.cpp
  data_parallel_size     = 2 # ERROR: Attribute not supported by llama.cpp
  gpu_memory_utilization = 0.9 # ERROR: Attribute not supported by llama.cpp
  attention_backend      = "fa3" # ERROR: Attribute not supported by llama.cpp
  args                   = ["--ctx-size=4096"] # ERROR: Flag with a value after =
  speculative {
    method = "suffix" # ERROR: Speculative method not supported by llama.cpp
  }
}

server "tp1" {
  engine               = "llamacpp"
  model                = "/models/tiny.gguf"
  tensor_parallel_size = 1 # fine: one device renders nothing
  kv_cache_dtype       = "q8_0"
}

server "nodraft" {
  engine = "llamacpp"
  model  = "/models/tiny.gguf"
  speculative { # ERROR: Missing draft model
    method = "draft"
  }
}

server "ngram" {
  engine = "llamacpp"
  model  = "/models/tiny.gguf"
  speculative {
    method                 = "ngram"
    num_speculative_tokens = 4 # ERROR: Attribute not supported by llama.cpp
  }
}

server "nomethod" {
  engine = "llamacpp"
  model  = "/models/tiny.gguf"
  speculative { # ERROR: Missing speculative method
    model = "/models/tiny.gguf"
  }
}
