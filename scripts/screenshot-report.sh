#!/usr/bin/env bash
# screenshot-report.sh REPORT.html OUT.png — render a slogate report.html in
# headless Chromium (Debian package "chromium") and save a screenshot.
# Proves the report renders with no network: every fetch Chromium would make
# on its own is switched off, and the report itself references nothing.
set -euo pipefail
if [ $# -ne 2 ]; then
  echo "usage: $0 REPORT.html OUT.png" >&2
  exit 2
fi
report=$1 out=$2
if [ ! -f "$report" ]; then
  echo "$0: $report: no such file" >&2
  exit 2
fi
browser=${CHROMIUM:-}
if [ -z "$browser" ]; then
  for b in chromium chromium-browser google-chrome; do
    if command -v "$b" >/dev/null 2>&1; then browser=$b; break; fi
  done
fi
if [ -z "$browser" ]; then
  echo "$0: no chromium found; install it with: apt-get update && apt-get install -y chromium" >&2
  exit 3
fi
abs=$(cd "$(dirname "$report")" && pwd)/$(basename "$report")
case "$out" in /*) ;; *) out=$PWD/$out ;; esac
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
rm -f "$out"
# timeout: never hang a CI job on a stuck browser.
timeout 60 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --disable-dev-shm-usage --hide-scrollbars --user-data-dir="$profile" \
  --screenshot="$out" --window-size="${WINDOW_SIZE:-1400,2400}" "file://$abs" >/dev/null 2>&1 || true
if [ ! -s "$out" ]; then
  echo "$0: chromium wrote no screenshot for $report" >&2
  exit 1
fi
echo "$out"
