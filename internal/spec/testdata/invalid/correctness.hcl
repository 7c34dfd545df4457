# Correctness blocks: the attributes' checks. The dataset's own problems
# are diagnostics at the dataset's lines (correctness_test.go).
server "qwen" {
  model = "Qwen/Qwen3.5-4B"
}

correctness "ok" {
  dataset = "../correctness/answers.jsonl"
  scorer  = "regex"
  pattern = "= (\\d+)"
}

correctness "bad_scorer" {
  dataset = "../correctness/answers.jsonl"
  scorer  = "exakt" # ERROR: Invalid scorer
}

correctness "no_group" {
  dataset = "../correctness/answers.jsonl"
  scorer  = "regex"
  pattern = "#### \\d+" # ERROR: Pattern without a capture group
}

correctness "no_pattern" {
  dataset = "../correctness/answers.jsonl"
  scorer  = "regex" # ERROR: Missing pattern
}

correctness "stray_pattern" {
  dataset = "../correctness/answers.jsonl"
  pattern = "(\\d+)" # ERROR: Pattern without the regex scorer
}

correctness "bounds" {
  dataset      = "../correctness/answers.jsonl"
  logprobs     = 21  # ERROR: Invalid value
  max_mismatch = 1.5 # ERROR: Invalid value
  margin       = -1  # ERROR: Invalid value
  concurrency  = 0   # ERROR: Invalid value
}

correctness "missing" {
  dataset = "../correctness/none.jsonl" # ERROR: Cannot read dataset
}

correctness "ok" { # ERROR: Duplicate correctness block
  dataset = "../correctness/answers.jsonl"
}

assert "reads_ok" {
  condition = correctness["ok"].mismatch_rate <= 0 && correctness["ok"].accuracy >= 0.5
}

assert "undeclared" {
  condition = correctness["nope"].mismatch_rate <= 0 # ERROR: Reference to an undeclared correctness block
}

assert "bad_figure" {
  condition = correctness["ok"].mismatch <= 0 # ERROR: Unsupported attribute
}

matrix "correctness" { # ERROR: Reserved matrix label
  contexts    = ["1K"]
  concurrency = [1]
}
