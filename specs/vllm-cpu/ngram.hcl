# vLLM's CPU build decoding speculatively, n-gram drafts from the prompt
# and the output so far (no draft model), the soak of e2e/vllm_test.go
# (SLOGATE_VLLM_SOAK=1): acceptance from vLLM's own vllm:spec_decode_*
# counters, and against a run of specs/vllm-cpu/tiny.hcl (-baseline) the
# correctness block's lossless check: greedy outputs with speculation
# equal to those without.
#   slogate run -var vllm=/var/cache/slogate/vllm/0.32.0/bin/vllm-cpu -var model=/tmp/hfm/tiny \
#     -baseline TINY/results.json specs/vllm-cpu/ngram.hcl

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
  default = 18420
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
  max_num_seqs      = 4
  env               = { VLLM_CPU_KVCACHE_SPACE = "1" }
  args              = ["--enforce-eager"]
  host              = "127.0.0.1"
  port              = var.port
  ready_timeout     = "4m"
  speculative {
    method                 = "ngram"
    num_speculative_tokens = 3
    config                 = { prompt_lookup_min = 2, prompt_lookup_max = 4 }
  }
}

# As specs/vllm-cpu/tiny.hcl measures, so that -baseline compares them,
# but greedy: at the server's default sampling (temperature 1) vLLM
# 0.32.0's CPU build accepted none of 377 drafted tokens, and decoded at
# 33.6 tok/s against 256 without drafts (docs/vllm.md#cpu-build).
measure {
  duration   = var.duration
  max_output = 64
  repeat     = 3
}

workload {
  instruction = "Write about it."
  sampling    = { temperature = 0 }
}

matrix "decode" {
  contexts    = ["256"]
  concurrency = [1]
}

correctness "greedy" {
  dataset    = "prompts.jsonl"
  max_output = 32
}

assert "drafts_accepted" {
  condition     = decode["256"][1].spec_accept_rate > 0
  error_message = "no n-gram draft was accepted"
}
