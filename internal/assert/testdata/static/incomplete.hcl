# An error outside the asserts does not hide theirs: validate reports the
# server's, the matrix's and the conditions' problems in one pass. What an
# error leaves unsure is not checked, so that no error is a consequence of
# another: an assert that reads a block with an error, and what a server
# with an error can produce.

server "qwen" {
  model = "Qwen/Qwen3.5-4B"
  gpus  = "many" # ERROR: Unsupported argument
  speculativ { # ERROR: Unsupported block type
    method = "dflash"
    model  = "z-lab/Qwen3.5-4B-DFlash"
  }
}

matrix "decode" {
  contexts    = ["8K"]
  concurrency = [1]
}

matrix "broken" {
  contexts    = ["8Q"] # ERROR: Invalid context size
  concurrency = [1]
}

assert "not_a_bool" {
  condition = decode["8K"][1].total_tps + 1 # ERROR: Condition is not a bool
}

assert "string_threshold" {
  condition = decode["8K"][1].total_tps >= "fast" # ERROR: Invalid operand
}

# The server block has errors (its speculative block misspelt): whether it
# produces the acceptance rate is unsure, so reading it is not an error.
assert "acceptance" {
  condition = decode["8K"][1].spec_accept_rate >= 0.5
}

# The matrix is broken: whatever this reads is unsure.
assert "reads_broken" {
  condition = broken["8K"][1].total_tps + 1
}
