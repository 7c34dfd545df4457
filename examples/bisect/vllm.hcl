# A spec for `slogate bisect` over vLLM's per-commit images
# (docs/ci.md#bisect): each line of images.txt replaces container.image.
#   slogate bisect -good vllm/vllm-openai:v0.10.0 -bad vllm/vllm-openai:v0.11.0 -candidates examples/bisect/images.txt examples/bisect/vllm.hcl
server "qwen" {
  model                = "Qwen/Qwen3.5-4B"
  tensor_parallel_size = 1
  max_model_len        = "32K"
  container {
    runtime = "docker"
    image   = "vllm/vllm-openai:v0.10.0"
    gpus    = "all"
  }
}

measure {
  duration = "30s"
  repeat   = "auto"
}

matrix "decode" {
  contexts    = ["8K"]
  concurrency = [1, 64]
}
