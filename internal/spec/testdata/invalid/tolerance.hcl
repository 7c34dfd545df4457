server "qwen" { model = "Qwen/Qwen3.5-4B" }

matrix "decode" {
  contexts    = ["8K"]
  concurrency = [1]
}

expect "percent_over_100" {
  metric    = "total_tps"
  tolerance = "150%" # ERROR: Invalid tolerance
  values    = { "8K" = [100] }
}

expect "negative_percent" {
  metric    = "total_tps"
  tolerance = "-5%" # ERROR: Invalid tolerance
  values    = { "8K" = [100] }
}

expect "not_a_percentage" {
  metric    = "total_tps"
  tolerance = "five percent" # ERROR: Invalid tolerance
  values    = { "8K" = [100] }
}

expect "a_bool" {
  metric    = "total_tps"
  tolerance = true # ERROR: Invalid tolerance
  values    = { "8K" = [100] }
}

expect "fraction_is_fine" {
  metric    = "total_tps"
  tolerance = 0.05
  values    = { "8K" = [100] }
}

expect "percent_is_fine" {
  metric    = "total_tps"
  tolerance = "5%"
  values    = { "8K" = [100] }
}

expect "all_of_it_is_fine" {
  metric    = "total_tps"
  tolerance = "100%"
  values    = { "8K" = [100] }
}
