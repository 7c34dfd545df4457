#!/usr/bin/env bash
# Builds slogate, fetches the baseline (the merged results of the last passed
# build on main) and uploads one gate step per server of the specs, then a
# merge step. Runs in the plan step of pipeline.yml.
set -euo pipefail

CGO_ENABLED=0 go build -o bin/slogate ./cmd/slogate
bin/slogate validate -var vllm_command=vllm $SPECS

mkdir -p baseline
build=$(curl --fail --silent --header "Authorization: Bearer $BUILDKITE_API_TOKEN" \
  "https://api.buildkite.com/v2/organizations/$BUILDKITE_ORGANIZATION_SLUG/pipelines/$BUILDKITE_PIPELINE_SLUG/builds?branch=main&state=passed&per_page=1" \
  | jq -r '.[0].id // empty') || build=""
if [ -n "$build" ] && buildkite-agent artifact download "merged/**/*" . --build "$build"; then
  cp -r merged/. baseline/
else
  echo "no baseline yet: gating without -baseline"
fi

# One gate step per server, in the vllm/vllm-openai image of VLLM_TAG on an
# agent with that many GPUs; the merge step runs whatever they left.
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
  artifact_paths: ["merged/**/*"]
}])}' | buildkite-agent pipeline upload
