#!/usr/bin/env bash
# Merges the results of every gate step into one report, compares each run
# with its baseline, shows the comparison as the build's annotation
# and exits with the worst verdict (docs/ci.md#merging-the-results).
set -euo pipefail

buildkite-agent artifact download bin/slogate .
buildkite-agent artifact download "out/**/*" .
buildkite-agent artifact download "baseline/**/*" . || true # none on the first build
chmod +x bin/slogate
code=0
# out/<dir>/results.json: <dir> is the server, or spec/server (docs/ci.md#run-names)
mapfile -t runs < <(find out -name results.json | sort)
bin/slogate merge -out merged "${runs[@]}" > merge.txt || code=$?
cat merge.txt
{
  echo "<!-- slogate-vllm-upgrade-gate -->"
  echo "### vLLM ${VLLM_TAG:-} (slogate exit $code)"
  echo
  echo '```'
  cat merge.txt
  echo '```'
  find merged -mindepth 2 -name results.json | sort | while read -r now; do
    dir=${now#merged/}
    dir=${dir%/results.json}
    echo
    if [ -f "baseline/$dir/results.json" ]; then
      bin/slogate diff -format md "baseline/$dir/results.json" "$now" 2>&1 || true
    else
      echo "$dir: no baseline on main yet, gated on its spec's asserts alone."
    fi
  done
} > comment.md
# One annotation per build (its context), replaced when the step is retried.
style=success
[ "$code" = 0 ] || style=error
buildkite-agent annotate --context slogate --style "$style" < comment.md || true
exit "$code"
