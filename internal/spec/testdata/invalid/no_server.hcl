# ERROR: Missing server block
measure { duration = "2s" }
