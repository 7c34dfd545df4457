#!/usr/bin/env bash
# Installs slogate (pinned), fetches the baseline (the merged results of the
# last passed build on main) and uploads one gate step per server of the
# specs, then a merge step. Runs in the plan step of pipeline.yml.
set -euo pipefail

mkdir -p bin
if [ -n "${SLOGATE_URL:-}" ]; then # a binary your organisation keeps (docs/ci.md#installing-slogate)
  curl -fsSL -o bin/slogate "$SLOGATE_URL"
  echo "$SLOGATE_SHA256  bin/slogate" | sha256sum -c -
  chmod +x bin/slogate
else
  CGO_ENABLED=0 GOBIN="$PWD/bin" go install "github.com/slogate/slogate/cmd/slogate@$SLOGATE_VERSION"
fi
bin/slogate --version
# shellcheck disable=SC2086 # $SPECS is a glob
bin/slogate validate -var vllm_command=vllm $SPECS
VLLM_TAG=$(tr -d '[:space:]' < vllm-tag.txt)
export VLLM_TAG

mkdir -p baseline
build=$(curl --fail --silent --header "Authorization: Bearer $BUILDKITE_API_TOKEN" \
  "${BUILDKITE_API:-https://api.buildkite.com/v2}/organizations/$BUILDKITE_ORGANIZATION_SLUG/pipelines/$BUILDKITE_PIPELINE_SLUG/builds?branch=main&state=passed&per_page=1" \
  | jq -r '.[0].id // empty') || build=""
if [ -n "$build" ] && buildkite-agent artifact download "merged/**/*" . --build "$build"; then
  cp -r merged/. baseline/
else
  echo "no passed build on main yet: gating on the specs' asserts alone"
fi

# One gate step per server, in the vllm/vllm-openai image of vllm-tag.txt on
# an agent with that many GPUs; the merge step runs whatever they left.
# shellcheck disable=SC2086
bin/slogate plan -format matrix -var vllm_command=vllm $SPECS | jq '{steps: (map({
  label: (":gpu: gate " + .job),
  key: ("gate-" + (.job | gsub("[^A-Za-z0-9_-]"; "-"))),
  command: ".buildkite/gate.sh",
  agents: {queue: "gpu", gpus: (.gpus | tostring)},
  env: {SPEC: .spec, SERVER: .server, DIR: .dir, ESTIMATED_S: (.estimated_s | tostring)},
  artifact_paths: ["out/" + .dir + "/**/*"],
  plugins: [{"docker#v5.13.0": {
    image: ("vllm/vllm-openai:" + env.VLLM_TAG),
    entrypoint: "/bin/bash",
    gpus: "all", ipc: "host", "shm-size": "16g",
    volumes: ["/srv/huggingface:/srv/huggingface"],
    environment: ["HF_HOME=/srv/huggingface", "HF_TOKEN", "VLLM_API_KEY", "SPEC", "SERVER", "DIR", "ESTIMATED_S"],
    "mount-buildkite-agent": true
  }}]
}) + [{wait: null, continue_on_failure: true}, {
  label: ":bar_chart: merge",
  key: "merge",
  command: ".buildkite/merge.sh",
  env: {VLLM_TAG: env.VLLM_TAG},
  artifact_paths: ["merged/**/*", "comment.md"]
}])}' | buildkite-agent pipeline upload
