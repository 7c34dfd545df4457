#!/usr/bin/env bash
# Merges the results of every gate step into one report and exits with the
# worst verdict (docs/ci.md#merging-the-results).
set -euo pipefail

buildkite-agent artifact download bin/slogate .
buildkite-agent artifact download "out/**/*" .
chmod +x bin/slogate
code=0
bin/slogate merge -out merged out/* || code=$?
# The merged report on the build page, whatever the verdict.
if [ -f merged/report.md ]; then
  buildkite-agent annotate --context slogate < merged/report.md || true
fi
exit "$code"
