# An invalid spec is not planned: the concurrency above max_num_seqs is
# not warned of while the file has an error.

server "qwen" {
  model        = "Qwen/Qwen3.5-4B"
  max_num_seqs = 2
  modle        = "x" # ERROR: Unsupported argument
}

matrix "decode" {
  contexts    = ["1K"]
  concurrency = [1, 8]
}
