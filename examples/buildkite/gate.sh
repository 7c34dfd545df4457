#!/usr/bin/env bash
# Measures and gates one server (SPEC, SERVER, DIR, ESTIMATED_S from the matrix)
# inside the vllm/vllm-openai image. Its exit code is slogate's (docs/ci.md).
set -euo pipefail

buildkite-agent artifact download bin/slogate .
buildkite-agent artifact download "baseline/**/*" . || true # none on the first build
chmod +x bin/slogate
export PATH="$PWD/bin:$PATH"

limit=$(( ESTIMATED_S * 2 + 3600 )) # twice the estimate, plus an hour for the download and start-up
if [ -f "baseline/$DIR/results.json" ]; then
  slogate run -server "$SERVER" -var vllm_command=vllm -out "out/$DIR" -timeout "${limit}s" \
    -baseline "baseline/$DIR/results.json" -tolerance 5% "$SPEC"
else
  slogate run -server "$SERVER" -var vllm_command=vllm -out "out/$DIR" -timeout "${limit}s" "$SPEC"
fi
