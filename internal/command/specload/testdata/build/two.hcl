# Two servers: a build of one server cannot be told.

server "a" {
  model = "Qwen/Qwen3.5-4B"
}

server "b" {
  model = "Qwen/Qwen3.5-4B"
}

matrix "decode" {
  contexts    = ["1K"]
  concurrency = [1]
}
