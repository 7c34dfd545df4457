# A valid spec gets the plan's warnings: a concurrency above max_num_seqs
# queues (plan.Check).

server "qwen" {
  model        = "Qwen/Qwen3.5-4B"
  max_num_seqs = 2
}

matrix "decode" {
  contexts    = ["1K"]
  concurrency = [1, 8] # WARNING: Concurrency above max_num_seqs
}
