# A server in a container: its builds are images.

server "qwen" {
  model = "Qwen/Qwen3.5-4B"
  container {
    image = "vllm/vllm-openai:v0.26.1"
  }
}

matrix "decode" {
  contexts    = ["1K"]
  concurrency = [1]
}
