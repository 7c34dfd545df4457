#!/usr/bin/env bash
# llamacpp-setup.sh — a Debian root file system with llama.cpp's
# llama-server in it, for slogate's real-engine tests (docs/ci.md#llamacpp)
# and for anyone who wants the same server: scripts/llama-server runs it.
#
#   sudo scripts/llamacpp-setup.sh            # .ci/run calls it; a developer can too
#   sudo scripts/llamacpp-setup.sh --podman   # also the image localhost/llama-cpp:test
#
# 1. Installs debootstrap from Debian when missing (apt-get).
# 2. Builds a minbase root file system of Debian testing (sid when testing
#    fails) with llama.cpp-tools, at $SLOGATE_LLAMACPP_ROOT (default
#    /var/cache/slogate/llamacpp-root), from the Debian mirror apt already
#    uses here ($SLOGATE_DEBIAN_MIRROR overrides it). The host's own Debian
#    has no llama.cpp (bookworm, trixie) or one too old; the root's libc is
#    its own. A root that is there and runs `llama-server --version` is
#    reused: the build happens once per machine (or CI cache).
# 3. Prints `llama-server --version` of the root.
# 4. With --podman (or SLOGATE_LLAMACPP_PODMAN=1), when podman is there,
#    imports the root as the image $SLOGATE_LLAMACPP_IMAGE (default
#    localhost/llama-cpp:test) whose entrypoint is llama-server; an image
#    of the same root is kept.
#
# It leaves nothing mounted: debootstrap mounts the target's /proc and
# /sys while it works, and a failed or interrupted build is unmounted
# before it is removed.
#
# Exit 0: the root is there and llama-server runs in it. Exit 3: it could
# not be made (the tail of debootstrap's own log printed). Exit 2: usage.
set -euo pipefail
cd "$(dirname "$0")/.."

root=${SLOGATE_LLAMACPP_ROOT:-/var/cache/slogate/llamacpp-root}
image=${SLOGATE_LLAMACPP_IMAGE:-localhost/llama-cpp:test}
podman_too=${SLOGATE_LLAMACPP_PODMAN:-0}
suites=${SLOGATE_LLAMACPP_SUITES:-testing sid}
packages=llama.cpp-tools${SLOGATE_LLAMACPP_EXTRA:+,$SLOGATE_LLAMACPP_EXTRA}
start=$(date +%s)

say() { echo "llamacpp-setup: $*"; }
die() { echo "llamacpp-setup: $*" >&2; exit 3; }

for a in "$@"; do
	case $a in
	--podman) podman_too=1 ;;
	*)
		echo "usage: $0 [--podman] (SLOGATE_LLAMACPP_ROOT names the root, SLOGATE_LLAMACPP_IMAGE the image)" >&2
		exit 2
		;;
	esac
done
if [ "$(id -u)" -ne 0 ]; then
	die "run as root: debootstrap and chroot need it"
fi
case $root in
/*) ;;
*) die "SLOGATE_LLAMACPP_ROOT must be an absolute path, not $root" ;;
esac
if [ "$root" = / ] || [ "${#root}" -lt 5 ]; then
	die "refusing SLOGATE_LLAMACPP_ROOT=$root"
fi

# unmount_below unmounts every mount at or below dir, deepest first.
unmount_below() {
	local dir=$1 m
	dir=$(realpath -m "$dir")
	awk -v d="$dir" '$2 == d || index($2, d "/") == 1 { print $2 }' /proc/self/mounts |
		sort -r | while read -r m; do
		umount "$m" 2>/dev/null || umount -l "$m" || true
	done
}

# version prints llama-server --version of the root at $1 (it prints to
# stderr), run as scripts/llama-server runs the server: its own mount
# namespace, so /proc is unmounted when it exits.
version() {
	SLOGATE_LLAMACPP_ROOT=$1 scripts/llama-server --version 2>&1
}

works() {
	[ -x "$1/usr/bin/llama-server" ] && [ -f "$1/.slogate-llamacpp" ] && version "$1" >/dev/null 2>&1
}

# mirror is the first Debian archive apt's sources name (deb822 URIs: or
# a one-line deb entry), not the security archive.
mirror() {
	if [ -n "${SLOGATE_DEBIAN_MIRROR:-}" ]; then
		echo "$SLOGATE_DEBIAN_MIRROR"
		return
	fi
	local u
	u=$( (cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '/^URIs:/ { for (i = 2; i <= NF; i++) print $i }'
		cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
			awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; break } }') |
		grep -v -e security -e '^cdrom:' | grep -i debian | head -1)
	echo "${u:-http://deb.debian.org/debian}"
}

if works "$root"; then
	say "reusing $root"
else
	if ! command -v debootstrap >/dev/null 2>&1; then
		say "installing debootstrap from Debian"
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq || die "apt-get update failed"
		apt-get install -y -qq debootstrap >/dev/null || die "apt-get install -y debootstrap failed"
	fi
	m=$(mirror)
	mkdir -p "$(dirname "$root")"
	tmp="$root.new"
	trap 'unmount_below "$tmp"' EXIT
	built=
	for suite in $suites; do
		unmount_below "$tmp"
		rm -rf --one-file-system "$tmp"
		say "debootstrap --variant=minbase --include=$packages $suite from $m (about a minute)"
		if debootstrap --variant=minbase --include="$packages" "$suite" "$tmp" "$m" >"$root.debootstrap.out" 2>&1; then
			built=$suite
			break
		fi
		unmount_below "$tmp"
		if [ -f "$tmp/debootstrap/debootstrap.log" ]; then
			echo "llamacpp-setup: debootstrap of $suite failed; the last lines of its log, $tmp/debootstrap/debootstrap.log:" >&2
			tail -15 "$tmp/debootstrap/debootstrap.log" | sed 's/^/    /' >&2
		fi
		echo "llamacpp-setup: debootstrap of $suite failed; the last lines of its output, $root.debootstrap.out:" >&2
		tail -5 "$root.debootstrap.out" | sed 's/^/    /' >&2
	done
	unmount_below "$tmp"
	[ -n "$built" ] || die "no suite of [$suites] could be bootstrapped (above); kept $tmp for a look"
	# The downloaded packages are not needed to run it.
	rm -f "$tmp"/var/cache/apt/archives/*.deb
	echo "$built $(date -u +%FT%TZ) $m" >"$tmp/.slogate-llamacpp"
	if ! out=$(version "$tmp"); then
		echo "$out" | tail -10 | sed 's/^/    /' >&2
		die "llama-server does not run in the new root (above); kept $tmp"
	fi
	unmount_below "$root"
	rm -rf --one-file-system "$root"
	mv "$tmp" "$root"
	trap - EXIT
	say "built $root from $built in $(($(date +%s) - start)) s ($(du -sh "$root" | cut -f1))"
fi
chroot "$root" dpkg-query -W -f='llamacpp-setup: package ${Package} ${Version}\n' llama.cpp-tools
version "$root" | sed 's/^/llamacpp-setup: llama-server --version: /'

if [ "$podman_too" = 1 ]; then
	if ! command -v podman >/dev/null 2>&1; then
		say "no podman: the image $image is not made"
	else
		stamp=$(cat "$root/.slogate-llamacpp")
		if [ "$(podman image inspect --format '{{.Comment}}' "$image" 2>/dev/null)" = "$stamp" ]; then
			say "reusing the image $image"
		else
			say "importing $root as $image"
			podman rmi -f "$image" >/dev/null 2>&1 || true
			# /proc, /sys and /dev are the runtime's; their empty mount
			# points stay.
			tar -C "$root" --one-file-system -c . |
				podman import --quiet --change 'ENTRYPOINT ["llama-server"]' --change 'ENV HOME=/tmp' \
					--message "$stamp" - "$image" >/dev/null ||
				die "podman import of $root failed"
		fi
		out=$(podman run --rm "$image" --version 2>&1) || {
			echo "$out" | tail -5 | sed 's/^/    /' >&2
			die "podman run --rm $image --version failed (above)"
		}
		echo "$out" | while read -r line; do say "podman run --rm $image --version: $line"; done
	fi
fi
say "done in $(($(date +%s) - start)) s"
