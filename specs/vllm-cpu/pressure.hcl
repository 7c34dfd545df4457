# vLLM's CPU build under pressure (docs/vllm.md#cpu-build), the soak of
# e2e/vllm_test.go (SLOGATE_VLLM_SOAK=1): a KV cache of 12 blocks (3 MiB,
# 1,536 tokens of the tiny model at 128 tokens a block), so that 5
# streams of 264 tokens preempt; admission control that refuses past 12
# unfinished requests; the SLO search over request rate.
#   slogate run -var vllm=/var/cache/slogate/vllm/0.32.0/bin/vllm-cpu -var model=/tmp/hfm/tiny specs/vllm-cpu/pressure.hcl

variable "vllm" {
  description = "The vLLM launcher scripts/vllm-setup.sh printed for the release measured."
  type        = string
  default     = "/var/cache/slogate/vllm/0.32.0/bin/vllm-cpu"
}

variable "model" {
  description = "A model directory in the Hugging Face layout (go run ./internal/hfmodel/genmodels -out DIR writes DIR/tiny)."
  type        = string
  default     = "/tmp/hfm/tiny"
}

variable "port" {
  type    = number
  default = 18410
}

variable "duration" {
  type    = string
  default = "2s"
}

server "tiny" {
  device            = "cpu"
  command           = var.vllm
  model             = var.model
  served_model_name = "tiny"
  max_model_len     = 1024
  max_num_seqs      = 8
  # 3 MiB of KV cache: 12 blocks of 128 tokens; the queue refuses past 12
  # unfinished requests (HTTP 503, vLLM 0.29 on).
  args          = ["--enforce-eager", "--kv-cache-memory-bytes", "3145728", "--max-num-queued-reqs", "12"]
  host          = "127.0.0.1"
  port          = var.port
  ready_timeout = "4m"
}

measure {
  duration   = var.duration
  max_output = 64
}

# Every stream its own prompt: a shared one would share its blocks.
workload {
  instruction = "Write about it."
  distinct    = true
}

workload "mix" {
  prompt        = "random"
  input_tokens  = { min = 64, max = 128 }
  output_tokens = 64
}

# 200 + 64 tokens are 3 blocks a stream: 4 streams hold the 12 blocks, 5
# (1,320 tokens, under the 1,536 of the capacity) need 15 and preempt.
matrix "decode" {
  contexts    = ["200"]
  concurrency = [2, 5]
}

traffic "open" {
  workload = "mix"
  rate     = [4]
  duration = "4s"
  warmup   = "1s"
  slo      = { ttft_ms = 2000 }
}

search "capacity" {
  traffic   = "open"
  rate      = [2, 40]
  precision = "25%"
  objective = cell.goodput_share >= 0.7
}
