# llama.cpp's llama-server serving a generated model, as CI runs it on every
# run (docs/llamacpp.md#example-spec, docs/ci.md#llamacpp):
#   go run ./internal/gguf/genmodels -out /tmp/gguf    # tiny.gguf, deep.gguf, other.gguf
#   slogate run -var model=/tmp/gguf/tiny.gguf specs/llamacpp/tiny.hcl
# with a llama-server on PATH (Debian's llama.cpp-tools, Homebrew's llama.cpp,
# an upstream release). Without one, the repository's build runs from a root
# file system of its own, which needs root (it chroots):
#   sudo scripts/llamacpp-setup.sh                     # once: builds /var/cache/slogate/llamacpp-root
#   sudo slogate run -var llama_server=$PWD/scripts/llama-server -var model=/tmp/gguf/tiny.gguf specs/llamacpp/tiny.hcl
# The simulator imitates no llama.cpp: -sim is refused (exit 2).

variable "llama_server" {
  description = "The llama-server executable: on PATH, or the repository's scripts/llama-server (as root, after scripts/llamacpp-setup.sh)."
  type        = string
  default     = "llama-server"
}

variable "model" {
  description = "A GGUF model, a path on the server's side (go run ./internal/gguf/genmodels -out DIR writes DIR/tiny.gguf)."
  type        = string
  default     = "/tmp/gguf/tiny.gguf"
}

variable "port" {
  type    = number
  default = 18600
}

variable "duration" {
  description = "Each cell's window and the traffic window: CI passes 1s (two cores)."
  type        = string
  default     = "3s"
}

server "tiny" {
  engine            = "llamacpp"
  # Debian's build, the one CI runs, is CPU-only: the cost is server time,
  # not GPU time (docs/spec.md#device).
  device            = "cpu"
  command           = var.llama_server
  model             = var.model
  served_model_name = "tiny"
  # One request's context: rendered as -c 1024 = 512 × --parallel 2
  # (`slogate plan` says so under the launch).
  max_model_len = 512
  max_num_seqs  = 2
  # One thread: on a two-core machine the other core stays slogate's.
  args          = ["-t", "1"]
  host          = "127.0.0.1"
  port          = var.port
  ready_timeout = "60s"
}

measure {
  duration   = var.duration
  max_output = 64
}

# A short instruction: the built-in one renders to about 360 tokens in
# tiny.gguf's 380-token vocabulary, more than the context here.
workload { instruction = "Write about it." }

workload "mix" {
  prompt        = "random"
  input_tokens  = { min = 64, max = 192 }
  output_tokens = 32
}

prefill { contexts = ["256"] }

# One stream, and four on the server's two slots: the other two wait for a
# slot (llamacpp:requests_deferred), so that cell is queued.
matrix "decode" {
  contexts    = ["256"]
  concurrency = [1, 4]
}

traffic "open" {
  workload = "mix"
  rate     = [2]
  duration = var.duration
  warmup   = "0s"
}

# Greedy outputs of every line, recorded in correctness.jsonl; a later run
# with -baseline compares them prompt by prompt (docs/method.md#correctness).
correctness "greedy" {
  dataset    = "prompts.jsonl"
  max_output = 24
}

assert "streams" {
  condition     = decode["256"][1].per_request_tps > 1
  error_message = "one stream decodes no tokens"
}

assert "queued_above_slots" {
  condition     = decode["256"][4].status == "queued"
  error_message = "4 streams on 2 slots did not wait"
}

assert "traffic" {
  condition     = open[2].completed > 0
  error_message = "no traffic request completed"
}

assert "answers" {
  condition     = correctness["greedy"].errors == 0
  error_message = "a correctness prompt failed"
}
