#!/usr/bin/env bash
# podman-setup.sh — make rootful podman run slogate's container tests on this
# machine (docs/ci.md#podman), then build the local image they use.
#
#   sudo scripts/podman-setup.sh          # .ci/run calls it; a developer can too
#
# 1. Installs podman and runc from Debian when missing (apt-get).
# 2. Writes /etc/containers/containers.conf: default ulimits no higher than
#    this machine's hard limits (podman's root defaults, nofile 1048576 and
#    nproc 4194304, fail with "setrlimit … Operation not permitted" where a
#    root process may not raise them), and the OCI runtime that works here
#    (crun 1.8.1 refuses a hybrid cgroup v1/v2 layout, runc runs it).
# 3. Builds slogate statically (CGO_ENABLED=0) and imports it as the image
#    $SLOGATE_SIM_IMAGE (default localhost/slogate-sim:test), whose entrypoint
#    `slogate sim serve` stands in for the vllm-openai image's `vllm serve`:
#    it takes MODEL and vLLM flags. No registry is needed.
# 4. Proves the setup with a real `podman run` of that image serving on a
#    published port, trying the fallbacks another machine may need (runtime
#    runc then crun; storage as configured, then vfs) before giving up, and
#    says which it used.
#
# Exit 0: podman works and the image is there. Exit 3: it could not be made
# to work (each attempt's error printed). Exit 2: usage.
set -euo pipefail
cd "$(dirname "$0")/.."

image=${SLOGATE_SIM_IMAGE:-localhost/slogate-sim:test}
conf=${CONTAINERS_CONF_PATH:-/etc/containers/containers.conf}
storage_conf=/etc/containers/storage.conf
marker="# Written by slogate's scripts/podman-setup.sh"
start=$(date +%s)

say() { echo "podman-setup: $*"; }
die() { echo "podman-setup: $*" >&2; exit 3; }

if [ $# -gt 0 ]; then
	echo "usage: $0 (no arguments; SLOGATE_SIM_IMAGE names the image)" >&2
	exit 2
fi
if [ "$(id -u)" -ne 0 ]; then
	die "run as root: the tests use rootful podman, and the setup writes $conf"
fi

# 1. Packages.
if ! command -v podman >/dev/null 2>&1 || ! command -v runc >/dev/null 2>&1; then
	say "installing podman and runc from Debian"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq || die "apt-get update failed"
	apt-get install -y -qq podman runc >/dev/null || die "apt-get install -y podman runc failed"
fi
say "$(podman --version), $(runc --version 2>/dev/null | head -1)"

# 2. Limits: a hard limit "unlimited" leaves podman's own default.
hard_nofile=$(ulimit -Hn)
hard_nproc=$(ulimit -Hu)
nofile=$hard_nofile
[ "$nofile" = unlimited ] && nofile=1048576
nproc=32768
if [ "$hard_nproc" != unlimited ] && [ "$hard_nproc" -lt "$nproc" ]; then
	nproc=$hard_nproc
fi

# keep_foreign moves aside a configuration file this script did not write,
# once, so that a developer's own settings are not lost.
keep_foreign() {
	local f=$1
	if [ -f "$f" ] && ! grep -qF "$marker" "$f" && [ ! -e "$f.before-slogate" ]; then
		mv "$f" "$f.before-slogate"
		say "moved your $f to $f.before-slogate"
	fi
}

write_conf() { # runtime
	mkdir -p "$(dirname "$conf")"
	keep_foreign "$conf"
	cat >"$conf" <<EOF
$marker (docs/ci.md#podman).
# The ulimits come from this machine's hard limits (ulimit -Hn = $hard_nofile,
# ulimit -Hu = $hard_nproc): podman's root defaults exceed them.
[containers]
default_ulimits = ["nofile=$nofile:$nofile", "nproc=$nproc:$nproc"]

[engine]
runtime = "$1"
EOF
}

write_vfs_storage() {
	keep_foreign "$storage_conf"
	# Its own folders: a store made by another driver cannot be reopened
	# with vfs, and is left as it was.
	cat >"$storage_conf" <<EOF
$marker (docs/ci.md#podman): overlay did not work here.
[storage]
driver = "vfs"
runroot = "/run/containers/storage-vfs"
graphroot = "/var/lib/containers/storage-vfs"
EOF
}

# 3. The image's root file system: slogate, static, and a /tmp.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/root/tmp"
chmod 1777 "$work/root/tmp"
say "building a static slogate for the image"
CGO_ENABLED=0 go build -trimpath -o "$work/root/slogate" ./cmd/slogate
tar -C "$work/root" -cf "$work/rootfs.tar" .

import_image() {
	podman rmi -f "$image" >/dev/null 2>&1 || true
	podman import \
		--change 'ENTRYPOINT ["/slogate", "sim", "serve"]' \
		--change 'ENV HOME=/tmp' \
		--message "slogate sim serve standing in for vllm serve (scripts/podman-setup.sh)" \
		"$work/rootfs.tar" "$image" >/dev/null
}

# free_port prints a loopback port nothing listens on.
free_port() {
	local p
	for _ in $(seq 50); do
		p=$((20000 + RANDOM % 10000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return
		fi
	done
	die "no free loopback port for the probe"
}

# probe runs the image as slogate will (--rm, a published loopback port, an
# API key by name) and waits for the server to answer.
probe() {
	local port name=slogate-setup-probe log=$work/probe.log
	port=$(free_port)
	podman rm -f "$name" >/dev/null 2>&1 || true
	VLLM_API_KEY=probe-key podman run --rm --name "$name" --label slogate.setup=probe \
		-p "127.0.0.1:$port:$port" -e VLLM_API_KEY "$image" \
		setup/probe --host 0.0.0.0 --port "$port" >"$log" 2>&1 &
	local client=$! ok=1
	for _ in $(seq 150); do
		if curl -fsS -m 2 -H "Authorization: Bearer probe-key" "http://127.0.0.1:$port/v1/models" 2>/dev/null | grep -q setup/probe; then
			ok=0
			break
		fi
		kill -0 "$client" 2>/dev/null || break
		sleep 0.2
	done
	podman stop -t 10 "$name" >/dev/null 2>&1 || true
	podman rm -f "$name" >/dev/null 2>&1 || true
	wait "$client" 2>/dev/null || true
	if [ "$ok" -ne 0 ]; then
		tail -3 "$log" | sed 's/^/    /' >&2
	fi
	return "$ok"
}

# 4. Attempts, in order: the storage as configured (overlay on Debian),
# then vfs; runc, then crun where installed.
runtimes=()
for r in runc crun; do
	command -v "$r" >/dev/null 2>&1 && runtimes+=("$r")
done
for storage in configured vfs; do
	if [ "$storage" = vfs ]; then
		say "trying the vfs storage driver (slower, works where overlay mounts are refused)"
		write_vfs_storage
	fi
	for rt in "${runtimes[@]}"; do
		write_conf "$rt"
		driver=$(podman info --format '{{.Store.GraphDriverName}}' 2>/dev/null || echo "?")
		say "trying storage $driver, runtime $rt"
		if ! out=$(import_image 2>&1); then
			echo "    podman import: $(echo "$out" | tail -1)" >&2
			continue
		fi
		if probe; then
			say "podman works: storage driver $driver, OCI runtime $rt, ulimits nofile=$nofile nproc=$nproc"
			say "image $image (entrypoint: slogate sim serve MODEL [vLLM flags])"
			say "done in $(($(date +%s) - start)) s"
			exit 0
		fi
		echo "    storage $driver with runtime $rt did not serve (above)" >&2
	done
done
die "podman could not run the image with any storage driver and runtime tried (see above); the container tests will fail under CI=true"
