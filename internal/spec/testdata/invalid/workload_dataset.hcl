server "qwen" { model = "Qwen/Qwen3.5-4B" }

measure { endpoint = "chat" }

workload "missing" {
  dataset = "../../../../testdata/datasets/none.json" # ERROR: Cannot read dataset
}

workload "empty" {
  dataset = "../../../../testdata/datasets/bad/empty.json" # ERROR: Empty dataset
}

workload "malformed" {
  dataset = "../../../../testdata/datasets/bad/sharegpt_malformed.json" # ERROR: Invalid dataset
}

workload "no_value" {
  dataset = "../../../../testdata/datasets/bad/sharegpt_missing_value.json" # ERROR: Invalid dataset
}

workload "no_prompt" {
  dataset = "../../../../testdata/datasets/bad/prompts_missing_prompt.jsonl" # ERROR: Invalid dataset
}

workload "bad_line" {
  dataset = "../../../../testdata/datasets/bad/prompts_malformed.jsonl" # ERROR: Invalid dataset
}

workload "no_user" {
  dataset = "../../../../testdata/datasets/bad/messages_no_user.jsonl" # ERROR: Invalid dataset
}

workload "wrong_format" {
  dataset = "../../../../testdata/datasets/prompts.jsonl" # ERROR: Invalid dataset
  format  = "sharegpt"
}

workload "no_turns" {
  dataset = "../../../../testdata/datasets/bad/sharegpt_no_usable.json" # ERROR: Empty dataset
}
