server "qwen" { model = "Qwen/Qwen3.5-4B" }

prefill { contexts = ["8K"] }

matrix "decode" {
  contexts    = ["8K", "32K"]
  concurrency = [1, 4, 16]
}

expect "rows" {
  metric = "total_tps"
  values = {
    "8K"  = [400, 1500, null]
    "16K" = [370, 1300, 3000] # ERROR: Reference to an unmeasured context
    "32K" = [370, 1300] # ERROR: Expect row does not match matrix
  }
}

expect "metric" {
  metric    = "total_tsp" # ERROR: Unknown metric
  tolerance = 1.5 # ERROR: Invalid tolerance
  values    = { "8K" = [1, 2, 3] }
}

expect "matrix" {
  matrix = "decoed" # ERROR: Reference to an undeclared matrix
  metric = "total_tps"
  values = { "8K" = [1, 2, 3] }
}

expect "prefill_rows" {
  matrix = "prefill"
  metric = "tps"
  values = {
    "8K"  = 46700
    "32K" = 46000 # ERROR: Reference to an unmeasured context
  }
}

expect "values" {
  metric = "ttft_ms"
  values = {
    "8K" = [1, "fast", 3] # ERROR: Invalid expected value
  }
}

expect "negative_tolerance" {
  metric    = "tbt_ms"
  tolerance = -0.1 # ERROR: Invalid tolerance
  values    = { "8K" = [1, 2, 3] }
}
