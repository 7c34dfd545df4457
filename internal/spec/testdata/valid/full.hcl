# Every block and attribute of the language.
variable "tp" {
  type        = number
  default     = 2
  description = "tensor parallel size"
}

variable "limit" {
  default = 6000
}

server "big" {
  command                = "${env("HOME")}/venv/bin/vllm"
  model                  = "org/Model"
  served_model_name      = "big"
  tensor_parallel_size   = var.tp
  pipeline_parallel_size = 1
  data_parallel_size     = 1
  enable_expert_parallel = true
  max_model_len          = "256K"
  gpu_memory_utilization = 0.9
  max_num_batched_tokens = "8k"
  max_num_seqs           = 64
  attention_backend      = "flash_attn"
  kv_cache_dtype         = "fp8"
  enable_prefix_caching  = false
  kv_cache_tokens        = "1M"
  speculative {
    method                 = "eagle3"
    model                  = "org/Draft"
    num_speculative_tokens = 3
    config = {
      kv_cache_dtype = "auto"
      draft_tensor_parallel_size = 1
    }
  }
  args          = ["--trust-remote-code", format("--seed=%d", 7)]
  env           = { VLLM_USE_V2_MODEL_RUNNER = 1 }
  api_key       = try(env("NOT_SET_ANYWHERE"), "fallback-key")
  host          = "127.0.0.1"
  port          = 9000
  ready_timeout = "60m"
  labels = {
    quantization = "FP8"
    gpu          = upper("h200 nvl")
  }
}

server "small" {
  model = "org/Small"
}

measure {
  duration   = "2s"
  max_output = "1k"
  endpoint   = "chat"
  repeat     = 3
}

prefill { contexts = ["8K", 32768, "128K"] }

matrix "decode" {
  contexts    = ["8K", "32K"]
  concurrency = [1, 4, "16"]
}

matrix "long" {
  contexts    = ["128K"]
  concurrency = [1]
}

assert "decode_8k_4" {
  condition     = decode["8K"][4].total_tps >= var.limit && decode[8192][4].ttft_ms < 500
  error_message = "too slow"
}

assert "prefill_and_long" {
  condition = prefill["128K"].tps > long["128K"][1].total_tps
}

assert "whole_row" {
  condition = alltrue([for c in [1, 4, 16] : decode["32K"][c].total_tps > 100])
}

assert "capacity" {
  condition = server.kv_cache_tokens >= 1000000
}

expect "decode_total_tps" {
  metric    = "total_tps"
  tolerance = 0.1
  values = {
    "8K"  = [400, 1500, null]
    32768 = [370, 1300, 3000]
  }
}

expect "prefill_tps" {
  matrix = "prefill"
  metric = "tps"
  values = {
    "8K"   = 46700
    "128K" = [33100]
  }
}

assert "status_and_labels" {
  condition = decode["8K"][1].status == "valid" && server.labels["gpu"] != ""
}

workload {
  prompt               = "article"
  document             = file("document.txt")
  instruction          = "Write a long article about it."
  distinct             = true
  sampling             = { temperature = 0.6, top_p = 0.95, top_k = 20, seed = 7 }
  chat_template_kwargs = { enable_thinking = false }
}
