variable "x" { default = 1 }
variable "x" { default = 2 } # ERROR: Duplicate variable block

server "qwen" { model = "a" }
server "qwen" { model = "b" } # ERROR: Duplicate server block

measure {}
measure {} # ERROR: Duplicate measure block

prefill { contexts = ["8K"] }
prefill { contexts = ["8K"] } # ERROR: Duplicate prefill block

matrix "decode" {
  contexts    = ["8K", 8192] # ERROR: Duplicate context
  concurrency = [1, 1] # ERROR: Duplicate concurrency
}
matrix "decode" { # ERROR: Duplicate matrix block
  contexts    = ["8K"]
  concurrency = [1]
}

assert "a" { condition = decode["8K"][1].total_tps > 1 }
assert "a" { condition = decode["8K"][1].total_tps > 2 } # ERROR: Duplicate assert block

expect "e" {
  metric = "total_tps"
  values = {
    "8K" = [1]
    8192 = [2] # ERROR: Duplicate expect row
  }
}
expect "e" { # ERROR: Duplicate expect block
  metric = "total_tps"
  values = { "8K" = [1] }
}

server "glm" {
  model = "c"
  speculative { method = "dflash" }
  speculative { method = "mtp" } # ERROR: Duplicate speculative block
}
