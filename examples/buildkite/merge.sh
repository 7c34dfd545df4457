#!/usr/bin/env bash
# Merges the results of every gate step into one report and exits with the
# worst verdict (docs/ci.md#merging-the-results).
set -euo pipefail

buildkite-agent artifact download bin/slogate .
buildkite-agent artifact download "out/**/*" .
chmod +x bin/slogate
code=0
# out/<dir>/results.json: <dir> is the server, or spec/server (docs/ci.md#run-names)
mapfile -t runs < <(find out -name results.json | sort)
bin/slogate merge -out merged "${runs[@]}" || code=$?
# The merged report on the build page, whatever the verdict.
if [ -f merged/report.md ]; then
  buildkite-agent annotate --context slogate < merged/report.md || true
fi
exit "$code"
